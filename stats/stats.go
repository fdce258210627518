// Package stats holds the few statistics the reports and the matrix use:
// mean, median and standard deviation of a group, Welch's t-test between two
// groups, and a confidence interval of the ratio of two means (Fieller).
// Samples are small (a benchmark's 2–10 repeats), so every interval uses
// Student's t (exact quantiles, fractional degrees of freedom), never the
// normal approximation.
package stats

import (
	"encoding/json"
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

// T975 is the two-sided 95% critical value of Student's t with df degrees
// of freedom (df may be fractional: Welch–Satterthwaite), found by
// bisection on the t distribution's CDF; df below 1 counts as 1.
func T975(df float64) float64 {
	if math.IsNaN(df) || df < 1 {
		df = 1
	}
	if math.IsInf(df, 1) || df > 1e7 {
		return 1.959964
	}
	lo, hi := 0.0, 20.0 // t(0.975, 1) = 12.706
	for range 100 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < 0.975 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2)/2 with x = df/(df+t²).
func tCDF(t, df float64) float64 {
	return 1 - 0.5*regIncBeta(df/2, 0.5, df/(df+t*t))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), as in Numerical Recipes' betai.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const eps = 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1/nonZero(1-qab*x/qap)
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		m2 := 2 * fm
		// Even then odd step of the continued fraction.
		var f float64
		c, d, f = lentz(fm*(b-fm)*x/((qam+m2)*(a+m2)), c, d)
		h *= f
		c, d, f = lentz(-(a+fm)*(qab+fm)*x/((a+m2)*(qap+m2)), c, d)
		h *= f
		if math.Abs(f-1) < eps {
			break
		}
	}
	return h
}

// lentz is one step of Lentz's method: the new c and d and the factor c·d.
func lentz(aa, c, d float64) (float64, float64, float64) {
	d = 1 / nonZero(1+aa*d)
	c = nonZero(1 + aa/c)
	return c, d, c * d
}

func nonZero(v float64) float64 {
	if math.Abs(v) < 1e-300 {
		return 1e-300
	}
	return v
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

// ratioJSON is Ratio on the wire: an unbounded end is null (JSON has no infinity).
type ratioJSON struct {
	Ratio   float64  `json:"ratio"`
	Lo      *float64 `json:"lo"`
	Hi      *float64 `json:"hi"`
	Bounded bool     `json:"bounded"`
	DF      float64  `json:"df"`
}

// MarshalJSON writes an unbounded end as null.
func (r Ratio) MarshalJSON() ([]byte, error) {
	w := ratioJSON{Ratio: r.Ratio, Bounded: r.Bounded, DF: r.DF}
	if !math.IsInf(r.Lo, 0) && !math.IsNaN(r.Lo) {
		w.Lo = &r.Lo
	}
	if !math.IsInf(r.Hi, 0) && !math.IsNaN(r.Hi) {
		w.Hi = &r.Hi
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a null end as unbounded.
func (r *Ratio) UnmarshalJSON(b []byte) error {
	var w ratioJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Ratio{Ratio: w.Ratio, Lo: math.Inf(-1), Hi: math.Inf(1), Bounded: w.Bounded, DF: w.DF}
	if w.Lo != nil {
		r.Lo = *w.Lo
	}
	if w.Hi != nil {
		r.Hi = *w.Hi
	}
	return nil
}
