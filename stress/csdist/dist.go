// Package csdist is cassandra-stress's distributions
// (settings/OptionDistribution.java and OptionRatioDistribution.java,
// generate/Distribution*.java), the one implementation the cassandra-stress
// command line (stress/csstress) and user profiles (stress/profile) share.
//
// A sample is drawn from a seed, not from a shared random stream: the
// value a distribution gives a population index, a partition, a row or a
// column follows from that seed alone, so readers regenerate what writers
// wrote without sharing state. A caller that wants cassandra-stress's
// shared sequence (SEQ without a seed) passes the sequence's position.
package csdist

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The kinds of distribution (OptionDistribution's LOOKUP, aliases resolved).
const (
	KindFixed    = "fixed"
	KindUniform  = "uniform"
	KindGaussian = "gaussian"
	KindExp      = "exp"
	KindExtreme  = "extreme"
	KindQExtreme = "qextreme"
	KindSeq      = "seq"
)

// A Dist is one of cassandra-stress's distributions: FIXED(v),
// UNIFORM(min..max), GAUSSIAN(min..max[,stdvrng]) or
// GAUSSIAN(min..max,mean,stdev) (aliases gauss, normal, norm),
// EXP(min..max), EXTREME(min..max,shape) (alias extr; and weibull, which
// the option's help lists as an alias though its LOOKUP entry is null),
// QEXTREME(min..max,shape,quantas) (alias qextr) and SEQ(min..max), each
// possibly inverted with a leading ~. Like the factories, a range of one
// value is FIXED. The zero Dist is no distribution (IsZero).
type Dist struct {
	text    string // as given
	kind    string
	lo, hi  int64
	inverse bool
	mu, sd  float64 // gaussian: mean and stdev; exp: the exponential's mean
	shape   float64 // extreme, qextreme: Weibull(shape, scale)
	scale   float64
	edges   []int64 // qextreme: the quantas' bounds, edges[quantas] = hi+1
}

// Patterns of OptionDistribution.java (FULL, ARGS) and its bounds separator.
var (
	distFull = regexp.MustCompile(`(?i)^(~?)([A-Z]+)\((.+)\)$`)
	distArgs = regexp.MustCompile(`[^,]+`)
	distSpan = regexp.MustCompile(`\.\.+`)
)

// Parse reads a distribution as OptionDistribution.get does. Errors name
// the distribution; callers add the option or field it was given for.
func Parse(spec string) (Dist, error) {
	given := spec
	spec = strings.TrimSpace(spec)
	m := distFull.FindStringSubmatch(spec)
	if m == nil {
		return Dist{}, fmt.Errorf("%q is not a distribution (want NAME(args), e.g. FIXED(10), UNIFORM(1..1000), GAUSSIAN(1..1000), EXP(1..1000), EXTREME(1..1000,1.5), SEQ(1..1000) or ~EXP(1..1k))", given)
	}
	d, err := distOf(m[2], distArgs.FindAllString(m[3], -1))
	if err != nil {
		return Dist{}, fmt.Errorf("distribution %q: %w", given, err)
	}
	d.text, d.inverse = given, m[1] == "~"
	return d, nil
}

// Fixed is FIXED(v).
func Fixed(v int64) Dist { return Dist{kind: KindFixed, lo: v, hi: v} }

// Uniform is UNIFORM(lo..hi) (FIXED when lo == hi).
func Uniform(lo, hi int64) Dist {
	if lo == hi {
		return Fixed(lo)
	}
	return Dist{kind: KindUniform, lo: lo, hi: hi}
}

// SeqPart is SEQ d walking lo..hi instead (a loader's part of the
// sequence, which may be a single index), inverted if d is.
func (d Dist) SeqPart(lo, hi int64) Dist {
	if d.kind == KindSeq {
		d.lo, d.hi = lo, hi
	}
	return d
}

// distOf builds distribution name of params (OptionDistribution's LOOKUP).
func distOf(given string, params []string) (Dist, error) {
	switch name := strings.ToLower(given); name {
	case "fixed":
		if len(params) != 1 {
			return Dist{}, fmt.Errorf("FIXED takes one value, got %d parameters", len(params))
		}
		v, err := ParseLong(params[0])
		return Fixed(v), err
	case "uniform", "seq", "exp":
		if len(params) != 1 {
			return Dist{}, fmt.Errorf("%s takes min..max, got %d parameters", strings.ToUpper(name), len(params))
		}
		lo, hi, err := parseSpan(params[0])
		if err != nil {
			return Dist{}, err
		}
		switch name {
		case "seq":
			if lo >= hi {
				return Dist{}, fmt.Errorf("a sequence needs min < max (SequenceImpl)")
			}
			return Dist{kind: KindSeq, lo: lo, hi: hi}, nil
		case "exp":
			return expOf(lo, hi), nil
		}
		return Uniform(lo, hi), nil
	case "gaussian", "gauss", "normal", "norm":
		return gaussianOf(params)
	case "extreme", "extr", "weibull", "qextreme", "qextr":
		return extremeOf(strings.HasPrefix(name, "q"), params)
	}
	return Dist{}, fmt.Errorf("unknown distribution type %q (OptionDistribution knows fixed, uniform, gaussian, exp, extreme, qextreme, seq and their aliases gauss, normal, norm, extr, weibull, qextr)", given)
}

// ParseLong is OptionDistribution.parseLong: an integer with an optional
// k, m or b suffix (thousand, million, billion).
func ParseLong(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'b':
			mult = 1e9
		case 'm':
			mult = 1e6
		case 'k':
			mult = 1e3
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v > math.MaxInt64/mult || v < math.MinInt64/mult {
		return 0, fmt.Errorf("%q is not a whole number (with an optional k, m or b suffix) within 64 bits", s)
	}
	return v * mult, nil
}

// parseSpan reads "min..max".
func parseSpan(s string) (lo, hi int64, err error) {
	parts := distSpan.Split(strings.TrimSpace(s), -1)
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("%q is not a range min..max", s)
	}
	if lo, err = ParseLong(parts[0]); err != nil {
		return 0, 0, err
	}
	if hi, err = ParseLong(parts[1]); err != nil {
		return 0, 0, err
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("range %s: min above max (%d > %d)", strings.TrimSpace(s), lo, hi)
	}
	if hi-lo < 0 {
		return 0, 0, fmt.Errorf("range %s: wider than 2^63", strings.TrimSpace(s))
	}
	return lo, hi, nil
}

// gaussianOf is GaussianImpl: (min..max), (min..max,stdvrng) with
// mean=(min+max)/2 and stdev=((max-min)/2)/stdvrng (stdvrng default 3), or
// (min..max,mean,stdev). A stdev of 0 is the mean, bounded.
func gaussianOf(params []string) (Dist, error) {
	if len(params) < 1 || len(params) > 3 {
		return Dist{}, fmt.Errorf("GAUSSIAN takes min..max[,stdvrng] or min..max,mean,stdev, got %d parameters", len(params))
	}
	lo, hi, err := parseSpan(params[0])
	if err != nil {
		return Dist{}, err
	}
	d := Dist{kind: KindGaussian, lo: lo, hi: hi}
	switch len(params) {
	case 3:
		if d.mu, err = parseFloat(params[1]); err == nil {
			d.sd, err = parseFloat(params[2])
		}
	default:
		stdvrng := 3.0
		if len(params) == 2 {
			stdvrng, err = parseFloat(params[1])
		}
		d.mu, d.sd = (float64(lo)+float64(hi))/2, (float64(hi)-float64(lo))/2/stdvrng
	}
	if err != nil {
		return Dist{}, err
	}
	if d.sd < 0 || math.IsNaN(d.sd) || math.IsInf(d.sd, 0) {
		return Dist{}, fmt.Errorf("GAUSSIAN's standard deviation %v: want a number of at least 0 (stdvrng above 0)", d.sd)
	}
	if lo == hi {
		return Fixed(lo), nil
	}
	return d, nil
}

// expOf is ExponentialImpl: the mean chosen so that max-min is the
// 1-sqrt(1/(max-min)) quantile of the exponential.
func expOf(lo, hi int64) Dist {
	if lo == hi {
		return Fixed(lo)
	}
	delta := float64(hi - lo)
	// ExponentialDistribution(1).inverseCumulativeProbability(1-sqrt(1/delta)) = ln(delta)/2.
	return Dist{kind: KindExp, lo: lo, hi: hi, mu: delta / (math.Log(delta) / 2)}
}

// extremeOf is ExtremeImpl (min..max,shape) and QuantizedExtremeImpl
// (min..max,shape,quantas): a Weibull offset from min, scaled so that
// max-min is its 1-sqrt(1/(max-min)) quantile.
func extremeOf(quantized bool, params []string) (Dist, error) {
	want := 2
	if quantized {
		want = 3
	}
	if len(params) != want {
		return Dist{}, fmt.Errorf("EXTREME takes min..max,shape and QEXTREME min..max,shape,quantas, got %d parameters", len(params))
	}
	lo, hi, err := parseSpan(params[0])
	if err != nil {
		return Dist{}, err
	}
	shape, err := parseFloat(params[1])
	if err != nil || !(shape > 0) {
		return Dist{}, fmt.Errorf("shape %q: want a positive number", params[1])
	}
	q := 0
	if quantized {
		q, err = strconv.Atoi(strings.TrimSpace(params[2]))
		if err != nil || q < 1 || q > 1<<16 {
			return Dist{}, fmt.Errorf("QEXTREME's quantas %q: want an integer in 1..65536", params[2])
		}
	}
	if lo == hi {
		return Fixed(lo), nil
	}
	delta := float64(hi - lo)
	// WeibullDistribution(shape, 1).inverseCumulativeProbability(1-sqrt(1/delta)).
	d := Dist{kind: KindExtreme, lo: lo, hi: hi, shape: shape, scale: delta / math.Pow(math.Log(delta)/2, 1/shape)}
	if quantized {
		d.kind, d.edges = KindQExtreme, quantaEdges(d, q)
	}
	return d, nil
}

func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// IsZero says d is no distribution (not given).
func (d Dist) IsZero() bool { return d.kind == "" }

// Kind is the distribution's kind, its aliases resolved (one of the Kind
// constants); a range of one value is KindFixed.
func (d Dist) Kind() string { return d.kind }

// Bounds are the smallest and largest values Sample returns.
func (d Dist) Bounds() (lo, hi int64) { return d.lo, d.hi }

// Text is the distribution as given to Parse (its String when built).
func (d Dist) Text() string {
	if d.text == "" {
		return d.String()
	}
	return d.text
}

// WithText is d named text (a -pop seq=A..B is SEQ(A..B) named A..B).
func (d Dist) WithText(text string) Dist { d.text = text; return d }
