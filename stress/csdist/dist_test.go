package csdist

import (
	"strings"
	"testing"
)

// Distributions parse as OptionDistribution does and their draws stay
// within their bounds.
func TestDistributions(t *testing.T) {
	cases := []struct {
		spec   string
		lo, hi int64
	}{
		{"fixed(5)", 5, 5}, {"FIXED(2k)", 2000, 2000}, {"uniform(1..1M)", 1, 1e6}, {"uniform(3...3)", 3, 3},
		{"UNIFORM(1..100)", 1, 100}, {"uniform(1k..2k)", 1000, 2000}, {"UNIFORM(1..10,)", 1, 10},
		{"gaussian(1..100)", 1, 100}, {"normal(1..100,5)", 1, 100}, {"gauss(6000..12000,9000,1250)", 6000, 12000},
		{"gauss(1..100,50,0)", 1, 100}, {"GAUSSIAN(0..9223372036854775807)", 0, 9223372036854775807},
		{"exp(1..10)", 1, 10}, {"~exp(1..10)", 1, 10}, {"EXP(1..100)", 1, 100}, {"extreme(1..100,1.5)", 1, 100},
		{"weibull(1..100,2)", 1, 100}, {"~EXTREME(1..10,0.0001)", 1, 10},
		{"qextreme(1..1000,2,10)", 1, 1000}, {"~qextr(1..1000,2,10)", 1, 1000}, {"seq(1..50)", 1, 50}, {"SEQ(1..100)", 1, 100},
		{" uniform( 1 .. 10 ) ", 1, 10},
	}
	for _, c := range cases {
		d, err := Parse(c.spec)
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if lo, hi := d.Bounds(); lo != c.lo || hi != c.hi {
			t.Errorf("%s: bounds %d..%d, want %d..%d", c.spec, lo, hi, c.lo, c.hi)
		}
		if d.Text() != c.spec {
			t.Errorf("%s: text %q", c.spec, d.Text())
		}
		for s := uint64(0); s < 2000; s++ {
			if v := d.Sample(s * 7919); v < c.lo || v > c.hi {
				t.Fatalf("%s: sample %d outside %d..%d", c.spec, v, c.lo, c.hi)
			}
		}
	}
}

// Refused distributions say why, naming the distribution.
func TestDistributionErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"uniform(10..1)", "min above max"}, {"GAUSSIAN(10..1)", "min above max"},
		{"seq(5..5)", "min < max"}, {"fixed()", "not a distribution"}, {"exp(1..10,2)", "EXP takes min..max"},
		{"extreme(1..10)", "EXTREME takes"}, {"gaussian(1..10,0)", "standard deviation"},
		{"gauss(1..10,5,-1)", "standard deviation"}, {"uniform", "not a distribution"},
		{"nosuch(1..2)", `unknown distribution type "nosuch"`}, {"ZIPF(1..10)", `unknown distribution type "ZIPF"`},
		{"uniform(1x..2)", "not a whole number"}, {"FIXED(x)", "not a whole number"},
		{"uniform(-9223372036854775808..9223372036854775807)", "wider than 2^63"},
		{"extreme(1..10,0)", "shape"}, {"qextreme(1..10,2,0)", "quantas"}, {"uniform(1..99999999999b)", "within 64 bits"},
	} {
		_, err := Parse(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.spec, err, c.want)
		}
	}
}

// GaussianImpl's stdvrng defaults to 3; exp favours the low end, ~exp the
// high end (DistributionInverted); seq numbers the draws from min.
func TestDistributionShapes(t *testing.T) {
	g, _ := Parse("GAUSSIAN(1..100)")
	if g.mu != 50.5 || g.sd != 49.5/3 {
		t.Fatalf("gaussian mean %v stdev %v", g.mu, g.sd)
	}
	e, _ := Parse("exp(1..100)")
	ie, _ := Parse("~exp(1..100)")
	var se, sie float64
	for s := uint64(0); s < 5000; s++ {
		se, sie = se+float64(e.Sample(s)), sie+float64(ie.Sample(s))
	}
	if se/5000 > 40 || sie/5000 < 60 {
		t.Errorf("mean of exp(1..100) %.1f, of ~exp %.1f", se/5000, sie/5000)
	}
	sq, _ := Parse("seq(1..1000)")
	if sq.Sample(0) != 1 || sq.Sample(41) != 42 || sq.Sample(1000) != 1 {
		t.Errorf("seq draws %d %d %d", sq.Sample(0), sq.Sample(41), sq.Sample(1000))
	}
	if u, _ := Parse("uniform(3..3)"); u.Kind() != KindFixed || u.String() != "fixed(3)" {
		t.Errorf("uniform(3..3) is %s %s", u.Kind(), u)
	}
}

func TestRatio(t *testing.T) {
	r, err := ParseRatio("fixed(2)/10240M")
	if err != nil || r.Max() != 2/10240e6 {
		t.Errorf("ratio: %v %v", r, err)
	}
	if _, err := ParseRatio("fixed(1)"); err == nil {
		t.Error("ratio without divisor accepted")
	}
}

// Parse never panics and a parsed distribution's draws stay in its bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"EXP(1..2)", "GAUSSIAN(0..9223372036854775807)", "~EXTREME(1..10,0.0001)", "UNIFORM(-9223372036854775808..9223372036854775807)", "qextr(1..5,1,3)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := Parse(spec)
		if err != nil {
			return
		}
		lo, hi := d.Bounds()
		for i := uint64(0); i < 20; i++ {
			if v := d.Sample(i); v < lo || v > hi {
				t.Fatalf("%s: %d outside %d..%d", spec, v, lo, hi)
			}
		}
		_ = d.Mean()
		_ = d.String()
	})
}

// DrawMean is the mean of the draws, kept within 0..hi.
func TestDrawMean(t *testing.T) {
	f, _ := Parse("FIXED(7)")
	u, _ := Parse("UNIFORM(100..200)")
	if got := f.DrawMean(100); got != 7 {
		t.Errorf("FIXED(7): %v", got)
	}
	if got := u.DrawMean(200); got < 148.5 || got > 151.5 {
		t.Errorf("UNIFORM(100..200): %v, want 150 ±1%%", got)
	}
	if got := u.DrawMean(120); got < 117 || got > 119 { // a fifth below 120, at 110 on average; the rest 120
		t.Errorf("UNIFORM(100..200) within 0..120: %v, want about 118", got)
	}
	if ie, _ := Parse("~exp(1..100)"); ie.InvCum(0) != 100 || ie.InvCum(0.999999) > 10 {
		t.Errorf("~exp(1..100): InvCum(0) %d, InvCum(~1) %d", ie.InvCum(0), ie.InvCum(0.999999))
	}
}
