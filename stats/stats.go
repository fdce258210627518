// Package stats holds the few statistics the reports and the matrix use:
// mean, median and standard deviation of a group, Welch's t-test between two
// groups, and a confidence interval of the ratio of two means (Fieller).
// Samples are small (a benchmark's 2–10 repeats), so every interval uses
// Student's t, never the normal approximation.
package stats

import (
	"math"
	"sort"
)

// Mean is the arithmetic mean (0 for no samples).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// SD is the sample standard deviation (n-1 in the denominator; 0 below two samples).
func SD(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := Mean(x)
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}

// Median is the middle value (the mean of the two middle values for an even count).
func Median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// tTable975 are the 0.975 quantiles of Student's t for 1..30 degrees of freedom.
var tTable975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// T975 is the two-sided 95% critical value of Student's t with df degrees
// of freedom. A fractional df (Welch–Satterthwaite) is rounded down, which
// widens the interval slightly: the conservative side.
func T975(df float64) float64 {
	if math.IsNaN(df) || df < 1 {
		return tTable975[0]
	}
	i := int(math.Floor(df))
	if i > len(tTable975) {
		return 1.96
	}
	return tTable975[i-1]
}

// Welch compares sample b against the baseline a with Welch's t-test
// (two-sided, 95%): "better", "worse" or "inconclusive". lowerBetter says
// which direction is an improvement.
func Welch(a, b []float64, lowerBetter bool) string {
	if len(a) < 2 || len(b) < 2 {
		return "inconclusive"
	}
	ma, sa := Mean(a), SD(a)
	mb, sb := Mean(b), SD(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	if va+vb == 0 {
		if ma == mb {
			return "inconclusive"
		}
	} else {
		t := (mb - ma) / math.Sqrt(va+vb)
		df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
		if math.Abs(t) < T975(df) {
			return "inconclusive"
		}
	}
	if (mb < ma) == lowerBetter {
		return "better"
	}
	return "worse"
}

// Ratio is the ratio of the means of two independent samples with its 95%
// confidence interval.
type Ratio struct {
	Ratio float64 `json:"ratio"`
	// Lo and Hi bound the interval; Bounded is false when the denominator's
	// mean is not clearly away from zero, and the interval is then unbounded
	// (Lo = -Inf, Hi = +Inf): nothing can be concluded.
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Bounded bool    `json:"bounded"`
	// DF are the Welch–Satterthwaite degrees of freedom of the t used.
	DF float64 `json:"df"`
}

// RatioCI is the ratio of means mean(a)/mean(b) with Fieller's 95%
// confidence interval for independent samples.
//
// Fieller rather than the delta method or a bootstrap: with the 2–5 repeats
// of a benchmark a bootstrap has almost nothing to resample, and the delta
// method's symmetric interval is wrong exactly when it matters (a noisy
// denominator makes the true interval skewed, or unbounded). Fieller's
// interval is exact for normal means, skews as it should, and says
// "unbounded" instead of inventing a bound when the denominator is not
// clearly non-zero. The t quantile uses the Welch–Satterthwaite degrees of
// freedom of the linearised ratio, as the two groups' variances differ.
//
// ok is false when either sample is empty or b's mean is zero.
func RatioCI(a, b []float64) (r Ratio, ok bool) {
	if len(a) == 0 || len(b) == 0 {
		return r, false
	}
	ma, mb := Mean(a), Mean(b)
	if mb == 0 {
		return r, false
	}
	r.Ratio = ma / mb
	if len(a) < 2 || len(b) < 2 {
		// No variance estimate on one side: no interval at all.
		r.Lo, r.Hi = math.Inf(-1), math.Inf(1)
		return r, true
	}
	sa, sb := SD(a), SD(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b)) // variances of the means
	ra, rb := va, r.Ratio*r.Ratio*vb
	if ra+rb == 0 {
		r.Lo, r.Hi, r.Bounded = r.Ratio, r.Ratio, true
		r.DF = float64(len(a) + len(b) - 2)
		return r, true
	}
	r.DF = (ra + rb) * (ra + rb) / (ra*ra/float64(len(a)-1) + rb*rb/float64(len(b)-1))
	t := T975(r.DF)
	g := t * t * vb / (mb * mb)
	if g >= 1 {
		r.Lo, r.Hi = math.Inf(-1), math.Inf(1)
		return r, true
	}
	half := t / math.Abs(mb) * math.Sqrt(va*(1-g)+r.Ratio*r.Ratio*vb)
	r.Lo = (r.Ratio - half) / (1 - g)
	r.Hi = (r.Ratio + half) / (1 - g)
	r.Bounded = true
	return r, true
}
