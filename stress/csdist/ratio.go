package csdist

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// A Ratio is RatioDistribution ("DIST/divisor",
// settings/OptionRatioDistribution.java): a distribution's value divided
// by the divisor, within 0..1. The zero Ratio is none (IsZero).
type Ratio struct {
	d       Dist
	divisor float64
	text    string
}

var ratioFull = regexp.MustCompile(`(?i)^(.*)/([0-9]+[KMB]?)$`)

// ParseRatio reads a ratio distribution as OptionRatioDistribution.get does.
func ParseRatio(spec string) (Ratio, error) {
	spec = strings.TrimSpace(spec)
	m := ratioFull.FindStringSubmatch(spec)
	if m == nil {
		return Ratio{}, fmt.Errorf("invalid ratio %q: want DIST/divisor, e.g. fixed(1)/10", spec)
	}
	d, err := Parse(m[1])
	if err != nil {
		return Ratio{}, err
	}
	div, err := ParseLong(m[2])
	if err != nil || div <= 0 {
		return Ratio{}, fmt.Errorf("ratio %q: divisor must be a positive integer", spec)
	}
	return Ratio{d: d, divisor: float64(div), text: spec}, nil
}

// IsZero says r is no ratio (not given).
func (r Ratio) IsZero() bool { return r.d.IsZero() }

// Next is RatioDistribution.next for seed.
func (r Ratio) Next(seed uint64) float64 {
	return math.Max(0, math.Min(1, float64(r.d.Sample(seed))/r.divisor))
}

// Min is the smallest ratio Next returns, before the bound to 0..1.
func (r Ratio) Min() float64 { lo, _ := r.d.Bounds(); return float64(lo) / r.divisor }

// Max is RatioDistribution.max.
func (r Ratio) Max() float64 { _, hi := r.d.Bounds(); return math.Min(1, float64(hi)/r.divisor) }

// String is the ratio as given.
func (r Ratio) String() string { return r.text }
