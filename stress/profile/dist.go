package profile

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A dist is one of cassandra-stress's distributions (settings/OptionDistribution.java):
// FIXED, UNIFORM, GAUSSIAN (aliases gauss, normal, norm), EXP, EXTREME
// (alias extr; and weibull, which the option's help lists as an alias but
// whose LOOKUP entry is null, so cassandra-stress itself refuses it), QEXTREME and SEQ,
// each possibly inverted with a leading ~. A sample is drawn from a seed,
// not from a shared random stream: the value a profile gives a partition,
// a row or a column follows from that seed alone, so readers regenerate
// what writers wrote without sharing state.
type dist interface {
	// sample draws the value of seed.
	sample(seed uint64) int64
	// bounds are the smallest and largest values sample returns.
	bounds() (lo, hi int64)
	// mean is the distribution's average (PartitionGenerator's
	// clusteringComponentAverages use it).
	mean() float64
	// invCum is the inverse cumulative probability (Distribution.inverseCumProb).
	invCum(p float64) int64
	String() string
}

// distFull and distArgs are OptionDistribution.java's FULL and ARGS patterns.
var (
	distFull = regexp.MustCompile(`(?i)^(~?)([A-Z]+)\((.+)\)$`)
	distArgs = regexp.MustCompile(`[^,]+`)
	distSpan = regexp.MustCompile(`\.\.+`)
)

// parseDist parses a distribution as OptionDistribution.get does.
func parseDist(spec string) (dist, error) {
	spec = strings.TrimSpace(spec)
	m := distFull.FindStringSubmatch(spec)
	if m == nil {
		return nil, fmt.Errorf("illegal distribution %q: want NAME(args), e.g. uniform(1..100) or ~exp(1..1k)", spec)
	}
	params := distArgs.FindAllString(m[3], -1)
	d, err := distOf(strings.ToLower(m[2]), params)
	if err != nil {
		return nil, fmt.Errorf("distribution %q: %w", spec, err)
	}
	if m[1] == "~" {
		d = inverted{d}
	}
	return d, nil
}

// distOf builds the distribution name of params (OptionDistribution's LOOKUP).
func distOf(name string, params []string) (dist, error) {
	switch name {
	case "fixed":
		if len(params) != 1 {
			return nil, fmt.Errorf("fixed takes one value, got %d", len(params))
		}
		v, err := parseLong(params[0])
		return fixed{v}, err
	case "uniform", "seq":
		if len(params) != 1 {
			return nil, fmt.Errorf("%s takes min..max, got %d parameters", name, len(params))
		}
		lo, hi, err := parseSpan(params[0])
		if err != nil {
			return nil, err
		}
		if name == "seq" {
			if lo >= hi {
				return nil, fmt.Errorf("seq needs min < max (SequenceImpl)")
			}
			return seq{lo, hi}, nil
		}
		if lo == hi {
			return fixed{lo}, nil
		}
		return uniform{lo, hi}, nil
	case "gaussian", "gauss", "normal", "norm":
		return gaussianOf(params)
	case "exp":
		return expOf(params)
	case "extreme", "extr", "weibull", "qextreme", "qextr":
		return extremeOf(strings.HasPrefix(name, "q"), params)
	}
	return nil, fmt.Errorf("unknown distribution type %q (known: fixed, uniform, gaussian, exp, extreme, qextreme, seq)", name)
}

// parseLong is OptionDistribution.parseLong: an integer with an optional
// k, m or b suffix, each a factor of 1000.
func parseLong(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'b':
			mult = 1e9
		case 'm':
			mult = 1e6
		case 'k':
			mult = 1e3
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer (k, m, b suffixes allowed)", s)
	}
	if v > math.MaxInt64/mult || v < math.MinInt64/mult {
		return 0, fmt.Errorf("%d×%d overflows", v, mult)
	}
	return v * mult, nil
}

// parseSpan reads "min..max".
func parseSpan(s string) (lo, hi int64, err error) {
	parts := distSpan.Split(strings.TrimSpace(s), -1)
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("%q is not min..max", s)
	}
	if lo, err = parseLong(parts[0]); err != nil {
		return 0, 0, err
	}
	if hi, err = parseLong(parts[1]); err != nil {
		return 0, 0, err
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("min %d above max %d", lo, hi)
	}
	return lo, hi, nil
}

// gaussianOf is GaussianImpl: (min..max), (min..max, stdvrng) or (min..max, mean, stdev).
func gaussianOf(params []string) (dist, error) {
	if len(params) < 1 || len(params) > 3 {
		return nil, fmt.Errorf("gaussian takes min..max[,stdvrng] or min..max,mean,stdev, got %d parameters", len(params))
	}
	lo, hi, err := parseSpan(params[0])
	if err != nil {
		return nil, err
	}
	g := gaussian{lo: lo, hi: hi}
	switch len(params) {
	case 3:
		if g.mu, err = parseFloat(params[1]); err == nil {
			g.sd, err = parseFloat(params[2])
		}
	default:
		toEdge := 3.0
		if len(params) == 2 {
			toEdge, err = parseFloat(params[1])
		}
		g.mu, g.sd = (float64(lo)+float64(hi))/2, (float64(hi)-float64(lo))/2/toEdge
	}
	if err != nil {
		return nil, err
	}
	if lo == hi {
		return fixed{lo}, nil
	}
	if !(g.sd > 0) || math.IsInf(g.sd, 0) {
		return nil, fmt.Errorf("gaussian standard deviation %v must be positive", g.sd)
	}
	return g, nil
}

// expOf is ExponentialImpl: the mean chosen so the largest value is about
// as likely as sqrt(1/(max-min)).
func expOf(params []string) (dist, error) {
	if len(params) != 1 {
		return nil, fmt.Errorf("exp takes min..max, got %d parameters", len(params))
	}
	lo, hi, err := parseSpan(params[0])
	if err != nil {
		return nil, err
	}
	if lo == hi {
		return fixed{lo}, nil
	}
	delta := float64(hi - lo)
	// ExponentialDistribution(1).inverseCumulativeProbability(1-sqrt(1/delta)) = ln(delta)/2.
	return expo{lo: lo, hi: hi, mu: delta / (math.Log(delta) / 2)}, nil
}

// extremeOf is ExtremeImpl (min..max, shape) and QuantizedExtremeImpl
// (min..max, shape, quantas): a Weibull offset from min.
func extremeOf(quantized bool, params []string) (dist, error) {
	want := 2
	if quantized {
		want = 3
	}
	if len(params) != want {
		return nil, fmt.Errorf("extreme takes min..max,shape (qextreme also quantas), got %d parameters", len(params))
	}
	lo, hi, err := parseSpan(params[0])
	if err != nil {
		return nil, err
	}
	shape, err := parseFloat(params[1])
	if err != nil {
		return nil, err
	}
	if !(shape > 0) {
		return nil, fmt.Errorf("extreme shape %v must be positive", shape)
	}
	if lo == hi {
		return fixed{lo}, nil
	}
	delta := float64(hi - lo)
	// WeibullDistribution(shape, 1).inverseCumulativeProbability(1-sqrt(1/delta)).
	w := weibull{lo: lo, hi: hi, shape: shape, scale: delta / math.Pow(math.Log(delta)/2, 1/shape)}
	if !quantized {
		return w, nil
	}
	q, err := strconv.Atoi(strings.TrimSpace(params[2]))
	if err != nil || q < 1 || q > 1<<16 {
		return nil, fmt.Errorf("qextreme quantas %q must be an integer in 1..65536", params[2])
	}
	return newQuantized(w, q), nil
}

func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// unit is seed's uniform double in [0, 1).
func unit(seed uint64) float64 { return float64(mix64(seed)>>11) / (1 << 53) }

// mix64 is splitmix64's finaliser: seeds that differ in one bit give
// unrelated values.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

type fixed struct{ v int64 }

func (f fixed) sample(uint64) int64        { return f.v }
func (f fixed) bounds() (int64, int64)     { return f.v, f.v }
func (f fixed) mean() float64              { return float64(f.v) }
func (f fixed) invCum(float64) int64       { return f.v }
func (f fixed) String() string             { return fmt.Sprintf("fixed(%d)", f.v) }
func (u uniform) bounds() (int64, int64)   { return u.lo, u.hi }
func (u uniform) mean() float64            { return (float64(u.lo) + float64(u.hi)) / 2 }
func (u uniform) String() string           { return fmt.Sprintf("uniform(%d..%d)", u.lo, u.hi) }
func (s seq) bounds() (int64, int64)       { return s.lo, s.hi }
func (s seq) mean() float64                { return (float64(s.lo) + float64(s.hi)) / 2 }
func (s seq) String() string               { return fmt.Sprintf("seq(%d..%d)", s.lo, s.hi) }
func (g gaussian) bounds() (int64, int64)  { return g.lo, g.hi }
func (g gaussian) mean() float64           { return g.mu }
func (e expo) bounds() (int64, int64)      { return e.lo, e.hi }
func (e expo) mean() float64               { return float64(e.lo) + math.Min(e.mu, float64(e.hi-e.lo)) }
func (e expo) String() string              { return fmt.Sprintf("exp(%d..%d)", e.lo, e.hi) }
func (w weibull) bounds() (int64, int64)   { return w.lo, w.hi }
func (w weibull) String() string           { return fmt.Sprintf("extreme(%d..%d,%g)", w.lo, w.hi, w.shape) }
func (q quantized) bounds() (int64, int64) { return q.w.bounds() }
func (q quantized) mean() float64          { return q.w.mean() }
func (q quantized) String() string         { return fmt.Sprintf("q%s/%d", q.w, len(q.edges)-1) }
func (g gaussian) String() string {
	return fmt.Sprintf("gaussian(%d..%d,%g,%g)", g.lo, g.hi, g.mu, g.sd)
}
func (i inverted) bounds() (int64, int64) { return i.d.bounds() }
func (i inverted) String() string         { return "~" + i.d.String() }
func (w weibull) mean() float64           { return float64(w.lo) + w.scale*math.Gamma(1+1/w.shape) }
func (u uniform) invCum(p float64) int64  { return u.lo + int64(p*float64(u.hi-u.lo)) }
func (s seq) invCum(p float64) int64      { return s.lo + int64(p*float64(s.hi-s.lo)) }
func (e expo) invCum(p float64) int64     { return offset(e.lo, e.hi, -e.mu*math.Log1p(-p)) }
func (w weibull) invCum(p float64) int64 {
	return offset(w.lo, w.hi, w.scale*math.Pow(-math.Log1p(-p), 1/w.shape))
}
func (g gaussian) invCum(p float64) int64 {
	return clamp(g.lo, g.hi, g.mu+g.sd*math.Sqrt2*math.Erfinv(2*p-1))
}
func (i inverted) invCum(p float64) int64 { lo, hi := i.d.bounds(); return hi - (i.d.invCum(p) - lo) }
func (i inverted) sample(seed uint64) int64 {
	lo, hi := i.d.bounds()
	return hi - (i.d.sample(seed) - lo)
}
func (i inverted) mean() float64 {
	lo, hi := i.d.bounds()
	return float64(hi) - (i.d.mean() - float64(lo))
}
func (u uniform) sample(seed uint64) int64   { return u.lo + int64(mix64(seed)%uint64(u.hi-u.lo+1)) }
func (e expo) sample(seed uint64) int64      { return e.invCum(unit(seed)) }
func (w weibull) sample(seed uint64) int64   { return w.invCum(unit(seed)) }
func (g gaussian) sample(seed uint64) int64  { return g.invCum(unit(seed)) }
func (q quantized) invCum(p float64) int64   { return q.w.invCum(p) }
func (s seq) sample(seed uint64) int64       { return s.lo + int64(seed%uint64(s.hi-s.lo+1)) }
func (q quantized) sample(seed uint64) int64 { return q.pick(seed) }

type uniform struct{ lo, hi int64 }

// seq is DistributionSequence: min, min+1, ... wrapping, from the seed
// (setSeed sets the next value); drawn for the seq-th partition it is the
// seq-th value, which is what a population of seq(1..N) is for.
type seq struct{ lo, hi int64 }

// gaussian is DistributionBoundApache over a normal distribution: values
// outside min..max are clamped to the bound.
type gaussian struct {
	lo, hi int64
	mu, sd float64
}

// expo is DistributionOffsetApache over an exponential distribution:
// min plus the sample, clamped to 0..max-min.
type expo struct {
	lo, hi int64
	mu     float64
}

// weibull is DistributionOffsetApache over a Weibull distribution.
type weibull struct {
	lo, hi       int64
	shape, scale float64
}

// inverted is DistributionInverted: max - (x - min).
type inverted struct{ d dist }

// quantized is DistributionQuantized: the delegate's range cut into
// quantas of equal probability, uniform within the chosen one.
type quantized struct {
	w     weibull
	edges []int64
}

func newQuantized(w weibull, q int) quantized {
	edges := make([]int64, q+1)
	edges[0], edges[q] = w.lo, w.hi+1
	for i := 1; i < q; i++ {
		edges[i] = w.invCum(float64(i) / float64(q))
	}
	return quantized{w: w, edges: edges}
}

func (q quantized) pick(seed uint64) int64 {
	v := q.w.sample(seed)
	i := 0
	for i < len(q.edges)-2 && q.edges[i+1] <= v {
		i++
	}
	width := q.edges[i+1] - q.edges[i]
	if width <= 0 {
		return q.edges[i]
	}
	return q.edges[i] + int64(mix64(seed^0x5bd1e995)%uint64(width))
}

// offset is DistributionOffsetApache.offset: min + v truncated, within 0..max-min.
func offset(lo, hi int64, v float64) int64 {
	r := int64(0)
	if v > 0 {
		r = int64(math.Min(v, float64(hi-lo)))
	}
	return lo + min(r, hi-lo)
}

// clamp is DistributionBoundApache.bound.
func clamp(lo, hi int64, v float64) int64 {
	switch {
	case math.IsNaN(v) || v <= float64(lo):
		return lo
	case v >= float64(hi):
		return hi
	}
	return int64(v)
}

// ratio is RatioDistribution ("DIST/divisor", settings/OptionRatioDistribution.java):
// a distribution's value divided by the divisor, within 0..1.
type ratio struct {
	d       dist
	divisor float64
	text    string
}

var ratioFull = regexp.MustCompile(`(?i)^(.*)/([0-9]+[KMB]?)$`)

// parseRatio parses a ratio distribution as OptionRatioDistribution.get does.
func parseRatio(spec string) (ratio, error) {
	spec = strings.TrimSpace(spec)
	m := ratioFull.FindStringSubmatch(spec)
	if m == nil {
		return ratio{}, fmt.Errorf("invalid ratio %q: want DIST/divisor, e.g. fixed(1)/10", spec)
	}
	d, err := parseDist(m[1])
	if err != nil {
		return ratio{}, err
	}
	div, err := parseLong(m[2])
	if err != nil || div <= 0 {
		return ratio{}, fmt.Errorf("ratio %q: divisor must be a positive integer", spec)
	}
	return ratio{d: d, divisor: float64(div), text: spec}, nil
}

// next is RatioDistribution.next for seed.
func (r ratio) next(seed uint64) float64 {
	return math.Max(0, math.Min(1, float64(r.d.sample(seed))/r.divisor))
}

// max is RatioDistribution.max.
func (r ratio) max() float64 { _, hi := r.d.bounds(); return math.Min(1, float64(hi)/r.divisor) }
