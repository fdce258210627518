package csdist

import (
	"fmt"
	"math"

	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// unit is seed's uniform double in [0, 1).
func unit(seed uint64) float64 { return float64(keygen.Mix64(seed)>>11) / (1 << 53) }

// Sample draws d's value for seed, bounded as cassandra-stress bounds it
// (DistributionBoundApache clamps a gaussian, DistributionOffsetApache
// offsets exp and extreme from min and truncates within the range,
// DistributionInverted mirrors within it). SEQ is DistributionSequence
// after setSeed(seed): min + seed, wrapping; a caller walking the
// sequence passes its position.
func (d Dist) Sample(seed uint64) int64 { return d.invert(d.sample(seed)) }

// invert is DistributionInverted: v mirrored within the range when d is
// inverted.
func (d Dist) invert(v int64) int64 {
	if d.inverse {
		return d.hi - (v - d.lo)
	}
	return v
}

func (d Dist) sample(seed uint64) int64 {
	switch d.kind {
	case KindUniform:
		return d.lo + int64(keygen.Mix64(seed)%(uint64(d.hi-d.lo)+1))
	case KindSeq:
		return d.lo + int64(seed%(uint64(d.hi-d.lo)+1))
	case KindExp, KindExtreme, KindGaussian:
		return d.invCum(unit(seed))
	case KindQExtreme:
		return d.pickQuanta(seed)
	}
	return d.lo // fixed
}

// InvCum is the inverse cumulative probability of p (Distribution.inverseCumProb).
func (d Dist) InvCum(p float64) int64 { return d.invert(d.invCum(p)) }

func (d Dist) invCum(p float64) int64 {
	switch d.kind {
	case KindUniform, KindSeq:
		return d.lo + int64(p*float64(d.hi-d.lo))
	case KindExp:
		return offset(d.lo, d.hi, -d.mu*math.Log1p(-p))
	case KindExtreme, KindQExtreme:
		return offset(d.lo, d.hi, d.scale*math.Pow(-math.Log1p(-p), 1/d.shape))
	case KindGaussian:
		if d.sd == 0 {
			return bound(d.lo, d.hi, d.mu)
		}
		return bound(d.lo, d.hi, d.mu+d.sd*math.Sqrt2*math.Erfinv(2*p-1))
	}
	return d.lo // fixed
}

// Mean is the distribution's average (PartitionGenerator's
// clusteringComponentAverages).
func (d Dist) Mean() float64 {
	var m float64
	switch d.kind {
	case KindUniform, KindSeq:
		m = (float64(d.lo) + float64(d.hi)) / 2
	case KindGaussian:
		m = d.mu
	case KindExp:
		m = float64(d.lo) + math.Min(d.mu, float64(d.hi-d.lo))
	case KindExtreme, KindQExtreme:
		m = float64(d.lo) + d.scale*math.Gamma(1+1/d.shape)
	default:
		m = float64(d.lo)
	}
	if d.inverse {
		m = float64(d.hi) - (m - float64(d.lo))
	}
	return m
}

// String is d in canonical form (lower case, parameters as resolved).
func (d Dist) String() string {
	var s string
	switch d.kind {
	case "":
		return ""
	case KindFixed:
		s = fmt.Sprintf("fixed(%d)", d.lo)
	case KindGaussian:
		s = fmt.Sprintf("gaussian(%d..%d,%g,%g)", d.lo, d.hi, d.mu, d.sd)
	case KindExtreme:
		s = fmt.Sprintf("extreme(%d..%d,%g)", d.lo, d.hi, d.shape)
	case KindQExtreme:
		s = fmt.Sprintf("qextreme(%d..%d,%g)/%d", d.lo, d.hi, d.shape, len(d.edges)-1)
	default:
		s = fmt.Sprintf("%s(%d..%d)", d.kind, d.lo, d.hi)
	}
	if d.inverse {
		s = "~" + s
	}
	return s
}

// quantaEdges cut d's range into q quantas of equal probability
// (DistributionQuantized).
func quantaEdges(d Dist, q int) []int64 {
	edges := make([]int64, q+1)
	edges[0], edges[q] = d.lo, d.hi+1
	for i := 1; i < q; i++ {
		edges[i] = d.invCum(float64(i) / float64(q))
	}
	return edges
}

// pickQuanta is DistributionQuantized.next: the quanta the Weibull's draw
// falls in, and a uniform value within it.
func (d Dist) pickQuanta(seed uint64) int64 {
	v := d.invCum(unit(seed))
	i := 0
	for i < len(d.edges)-2 && d.edges[i+1] <= v {
		i++
	}
	width := d.edges[i+1] - d.edges[i]
	if width <= 0 {
		return d.edges[i]
	}
	return d.edges[i] + int64(keygen.Mix64(seed^0x5bd1e995)%uint64(width))
}

// offset is DistributionOffsetApache.offset: min + v truncated, within 0..max-min.
func offset(lo, hi int64, v float64) int64 {
	r := int64(0)
	if v > 0 {
		r = int64(math.Min(v, float64(hi-lo)))
	}
	return lo + min(r, hi-lo)
}

// bound is DistributionBoundApache.bound.
func bound(lo, hi int64, v float64) int64 {
	switch {
	case math.IsNaN(v) || v <= float64(lo):
		return lo
	case v >= float64(hi):
		return hi
	}
	return int64(v)
}

// DrawSamples is how many draws DrawMean averages.
const DrawSamples = 4096

// DrawMean is the mean of d's draws kept within 0..hi, over fixed seeds
// (so a plan is the same every time): what a generator that keeps its
// draws so writes on average. The closed-form Mean misses the bounds (an
// EXP(1..3) clamps most draws at its maximum); this is the draws'.
func (d Dist) DrawMean(hi int64) float64 {
	var sum float64
	for s := uint64(0); s < DrawSamples; s++ {
		sum += float64(max(0, min(d.Sample(keygen.Mix64(s)), hi)))
	}
	return sum / DrawSamples
}
