package stats

import (
	"encoding/json"
	"math"
	"testing"
)

func TestWelch(t *testing.T) {
	base := []float64{10, 11, 9, 10.5, 9.5}
	cases := []struct {
		name  string
		b     []float64
		lower bool
		want  string
	}{
		{"clearly lower latency", []float64{5, 5.5, 4.5, 5.2, 4.8}, true, "better"},
		{"clearly higher latency", []float64{20, 21, 19, 20.5, 19.5}, true, "worse"},
		{"within the noise", []float64{10.2, 9.8, 11, 9.1, 10.4}, true, "inconclusive"},
		{"higher throughput", []float64{20, 21, 19, 20.5, 19.5}, false, "better"},
		{"single run", []float64{5}, true, "inconclusive"},
	}
	for _, c := range cases {
		if got := Welch(base, c.b, c.lower); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestMeanSDMedian(t *testing.T) {
	x := []float64{317.20, 334.58, 323.35} // the stage-metrics retest's batch_blocks=4 throughput
	if m := Mean(x); math.Abs(m-325.04) > 0.01 {
		t.Errorf("mean %g, want 325.04", m)
	}
	if m := Median(x); m != 323.35 {
		t.Errorf("median %g, want 323.35", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("even median %g, want 2.5", m)
	}
	if sd := SD([]float64{2, 4, 4, 4, 5, 5, 7, 9}); math.Abs(sd-2.138) > 0.001 {
		t.Errorf("sd %g, want 2.138", sd)
	}
	if SD([]float64{1}) != 0 || Mean(nil) != 0 || Median(nil) != 0 {
		t.Error("degenerate samples")
	}
}

// The interval's ends are the roots of Fieller's quadratic
// (mA - θ mB)² = t² (vA + θ² vB), and the interval of B/A is the
// reciprocal of A/B's.
func TestRatioCIFieller(t *testing.T) {
	a := []float64{300, 312, 305, 298}
	b := []float64{610, 598, 625, 604}
	r, ok := RatioCI(a, b)
	if !ok || !r.Bounded {
		t.Fatalf("%+v %v", r, ok)
	}
	if !(r.Lo < r.Ratio && r.Ratio < r.Hi) || math.Abs(r.Ratio-Mean(a)/Mean(b)) > 1e-12 {
		t.Fatalf("ratio %+v", r)
	}
	va, vb := SD(a)*SD(a)/4, SD(b)*SD(b)/4
	tq := T975(r.DF)
	for _, th := range []float64{r.Lo, r.Hi} {
		lhs := math.Pow(Mean(a)-th*Mean(b), 2)
		rhs := tq * tq * (va + th*th*vb)
		if math.Abs(lhs-rhs) > 1e-6*rhs {
			t.Errorf("θ=%g: %g != %g", th, lhs, rhs)
		}
	}
	inv, _ := RatioCI(b, a)
	if math.Abs(inv.Lo-1/r.Hi) > 1e-9 || math.Abs(inv.Hi-1/r.Lo) > 1e-9 {
		t.Errorf("B/A %+v is not the reciprocal of A/B %+v", inv, r)
	}
}

func TestRatioCIUnboundedAndDegenerate(t *testing.T) {
	// A denominator within its noise of zero: no bound can be claimed.
	if r, ok := RatioCI([]float64{10, 11}, []float64{-1, 2}); !ok || r.Bounded || !math.IsInf(r.Hi, 1) {
		t.Errorf("noisy denominator: %+v", r)
	}
	// One pass a side: a ratio, no interval.
	if r, ok := RatioCI([]float64{10}, []float64{20}); !ok || r.Bounded || r.Ratio != 0.5 {
		t.Errorf("single passes: %+v", r)
	}
	// No noise at all: the interval is the point.
	if r, ok := RatioCI([]float64{3, 3}, []float64{6, 6}); !ok || !r.Bounded || r.Lo != 0.5 || r.Hi != 0.5 {
		t.Errorf("exact: %+v", r)
	}
	if _, ok := RatioCI(nil, []float64{1}); ok {
		t.Error("empty side")
	}
	if _, ok := RatioCI([]float64{1, 2}, []float64{0, 0}); ok {
		t.Error("zero denominator")
	}
}

func TestRatioJSONUnbounded(t *testing.T) {
	for _, r := range []Ratio{{Ratio: 0.9, Lo: math.Inf(-1), Hi: math.Inf(1), DF: 1}, {Ratio: 0.5, Lo: 0.4, Hi: 0.6, Bounded: true, DF: 3}} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Ratio
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Fatalf("%s: %+v %v, want %+v", b, back, err, r)
		}
	}
}

func TestT975(t *testing.T) {
	// Quantiles from the t table (fractional df: numerical integration of the t density).
	for df, want := range map[float64]float64{1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 10: 2.228, 30: 2.042, 1e9: 1.960, 0.5: 12.706,
		2.5: 3.575, 45: 2.014, 1.5: 6.017,
	} {
		if got := T975(df); math.Abs(got-want) > 0.001*want {
			t.Errorf("T975(%g) = %.3f, want %.3f", df, got, want)
		}
	}
	prev := math.Inf(1)
	for df := 1.0; df < 100; df += 0.25 {
		if v := T975(df); v > prev {
			t.Fatalf("T975 rises at df %g", df)
		} else {
			prev = v
		}
	}
}
