package csstress

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// A dist is one of cassandra-stress's distributions (OptionDistribution):
// FIXED(v), UNIFORM(min..max), GAUSSIAN(min..max[,stdvrng]) or
// GAUSSIAN(min..max,mean,stdev), EXP(min..max), EXTREME(min..max,shape),
// SEQ(min..max), each optionally inverted with a leading ~. Samples are
// drawn from a hash (of the operation or of the cell) instead of a
// java.util.Random, so that a value is a function of what it belongs to.
type dist struct {
	text     string // as given
	kind     string // fixed, uniform, gaussian, exp, extreme, seq
	min, max int64
	inverse  bool
	// gaussian: mean and stdev; exp: mean (in mean); extreme: shape and scale.
	mean, stdev  float64
	shape, scale float64
	next         *atomic.Int64 // seq: the shared position
}

var (
	rangeSepRE = regexp.MustCompile(`\.\.+`)                      // OptionDistribution's bounds separator
	distRE     = regexp.MustCompile(`(?i)^(~?)([a-z]+)\((.+)\)$`) // OptionDistribution.FULL
	// distAliases is OptionDistribution.LOOKUP (weibull maps to nothing there: LOOKUP.get("weibull") before it is put).
	distAliases = map[string]string{
		"exp": "exp", "extr": "extreme", "extreme": "extreme", "qextr": "qextreme", "qextreme": "qextreme",
		"gaussian": "gaussian", "normal": "gaussian", "gauss": "gaussian", "norm": "gaussian",
		"uniform": "uniform", "fixed": "fixed", "seq": "seq",
	}
)

// parseDist reads a distribution as OptionDistribution.get does.
func parseDist(spec string) (dist, error) {
	m := distRE.FindStringSubmatch(strings.TrimSpace(spec))
	if m == nil {
		return dist{}, fmt.Errorf("%q is not a distribution (want e.g. FIXED(10), UNIFORM(1..1000), GAUSSIAN(1..1000), EXP(1..1000), EXTREME(1..1000,1.5), SEQ(1..1000))", spec)
	}
	kind, ok := distAliases[strings.ToLower(m[2])]
	if !ok {
		return dist{}, fmt.Errorf("%q: unknown distribution %s (OptionDistribution knows exp, extreme, qextreme, gaussian, uniform, fixed, seq and their aliases)", spec, m[2])
	}
	d := dist{text: spec, kind: kind, inverse: m[1] == "~"}
	params := strings.Split(m[3], ",")
	var err error
	switch kind {
	case "fixed":
		err = d.parseFixed(params)
	case "uniform", "exp", "seq":
		err = d.parseRange(params, 1, 1)
		if err == nil && kind == "exp" && d.max > d.min {
			// ExponentialImpl: mean = (max-min) / Exp(1).inverseCumulativeProbability(1 - sqrt(1/(max-min)))
			delta := float64(d.max - d.min)
			d.mean = delta / (-math.Log(math.Sqrt(1 / delta)))
		}
		if err == nil && kind == "seq" {
			if d.min >= d.max { // SequenceImpl refuses min==max and min>max
				err = fmt.Errorf("a sequence needs min < max")
			}
			d.next = new(atomic.Int64)
		}
	case "gaussian":
		err = d.parseGaussian(params)
	case "extreme":
		err = d.parseExtreme(params)
	case "qextreme":
		err = fmt.Errorf("QEXTREME is not supported (quantised Weibull: use EXTREME(min..max,shape))")
	}
	if err != nil {
		return dist{}, fmt.Errorf("distribution %q: %w", spec, err)
	}
	return d, nil
}

func (d *dist) parseFixed(params []string) error {
	if len(params) != 1 {
		return fmt.Errorf("FIXED takes one value")
	}
	v, err := parseLong(params[0])
	d.min, d.max = v, v
	return err
}

// parseRange reads min..max and checks the number of parameters.
func (d *dist) parseRange(params []string, lo, hi int) error {
	if len(params) < lo || len(params) > hi {
		return fmt.Errorf("want %d to %d parameters, the first min..max", lo, hi)
	}
	bounds := rangeSepRE.Split(params[0], -1)
	if len(bounds) != 2 {
		return fmt.Errorf("%q is not a range min..max", params[0])
	}
	var err error
	if d.min, err = parseLong(bounds[0]); err != nil {
		return err
	}
	if d.max, err = parseLong(bounds[1]); err != nil {
		return err
	}
	if d.min > d.max {
		return fmt.Errorf("range %s: min above max", params[0])
	}
	if d.max-d.min < 0 {
		return fmt.Errorf("range %s: wider than 2^63", params[0])
	}
	return nil
}

// parseGaussian mirrors GaussianImpl: mean and stdev explicit, or
// mean=(min+max)/2 and stdev=((max-min)/2)/stdvrng (stdvrng default 3).
func (d *dist) parseGaussian(params []string) error {
	if err := d.parseRange(params, 1, 3); err != nil {
		return err
	}
	var err error
	switch len(params) {
	case 3:
		if d.mean, err = strconv.ParseFloat(params[1], 64); err == nil {
			d.stdev, err = strconv.ParseFloat(params[2], 64)
		}
	default:
		stdvrng := 3.0
		if len(params) == 2 {
			stdvrng, err = strconv.ParseFloat(params[1], 64)
		}
		d.mean = float64(d.min+d.max) / 2
		d.stdev = float64(d.max-d.min) / 2 / stdvrng
	}
	if err != nil || d.stdev < 0 || math.IsNaN(d.stdev) || math.IsInf(d.stdev, 0) || math.IsNaN(d.mean) {
		return fmt.Errorf("want GAUSSIAN(min..max), GAUSSIAN(min..max,stdvrng) or GAUSSIAN(min..max,mean,stdev) with numbers")
	}
	return nil
}

// parseExtreme mirrors ExtremeImpl: Weibull(shape) scaled so that the
// range's top is the 1-sqrt(1/(max-min)) quantile.
func (d *dist) parseExtreme(params []string) error {
	if len(params) != 2 {
		return fmt.Errorf("want EXTREME(min..max,shape)")
	}
	if err := d.parseRange(params[:1], 1, 1); err != nil {
		return err
	}
	shape, err := strconv.ParseFloat(params[1], 64)
	if err != nil || shape <= 0 || math.IsInf(shape, 0) {
		return fmt.Errorf("shape %q: want a positive number", params[1])
	}
	d.shape = shape
	if delta := float64(d.max - d.min); delta > 0 {
		d.scale = delta / math.Pow(-math.Log(math.Sqrt(1/delta)), 1/shape)
	}
	return nil
}

// parseLong mirrors OptionDistribution.parseLong: a number with an optional
// k, m or b suffix (thousand, million, billion).
func parseLong(s string) (int64, error) {
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
		return 0, fmt.Errorf("%q is not a whole number (with an optional k, m or b suffix)", s)
	}
	return v * mult, nil
}

// unit is a uniform float in [0, 1) from a hash.
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// sample draws the distribution's value for hash h (for seq: the next
// value of the shared sequence, h unused), bounded as cassandra-stress
// bounds it (DistributionBoundApache clamps, DistributionOffsetApache
// offsets from min and clamps; DistributionInverted mirrors in the range).
func (d *dist) sample(h uint64) int64 {
	var v int64
	switch d.kind {
	case "fixed":
		return d.min
	case "uniform":
		v = d.min + int64(keygen.Mix64(h)%(uint64(d.max-d.min)+1))
	case "seq":
		v = d.min + int64(uint64(d.next.Add(1)-1)%(uint64(d.max-d.min)+1)) // DistributionSequence: wraps
	case "gaussian":
		x := d.mean + normal(h)*d.stdev
		switch {
		case x <= float64(d.min) || math.IsNaN(x):
			v = d.min
		case x >= float64(d.max):
			v = d.max
		default:
			v = clamp(int64(x), d.min, d.max)
		}
	case "exp":
		if d.max == d.min {
			return d.min
		}
		x := -d.mean * math.Log(1-unit(keygen.Mix64(h)))
		v = d.min + clampFloat(x, d.max-d.min)
	case "extreme":
		if d.max == d.min {
			return d.min
		}
		x := d.scale * math.Pow(-math.Log(1-unit(keygen.Mix64(h))), 1/d.shape)
		v = d.min + clampFloat(x, d.max-d.min)
	}
	if d.inverse {
		v = d.max - (v - d.min)
	}
	return v
}

// normal is a standard normal deviate from h (Box-Muller on two hashes).
func normal(h uint64) float64 {
	u1 := unit(keygen.Mix64(h ^ 0xa5a5a5a5a5a5a5a5))
	u2 := unit(keygen.Mix64(h + 0x1234567))
	if u1 < 1e-300 {
		u1 = 1e-300
	}
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func clamp(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}

// clampFloat is x truncated into 0..hi (DistributionOffsetApache's offset),
// NaN and infinities included.
func clampFloat(x float64, hi int64) int64 {
	switch {
	case x <= 0 || math.IsNaN(x):
		return 0
	case x >= float64(hi):
		return hi
	}
	return min(int64(x), hi)
}
