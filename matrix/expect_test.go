package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseExpect(t *testing.T) {
	e, err := ParseExpect(`"New node(s) ready": mode=parallel / mode=serial <= 0.8`)
	if err != nil {
		t.Fatal(err)
	}
	if e.Metric != "New node(s) ready" || e.Op != "<=" || e.Limit != 0.8 || SideLabel(e.A) != "mode=parallel" || SideLabel(e.B) != "mode=serial" {
		t.Fatalf("%+v", e)
	}
	// Values with a '/' need spaces around the ratio's.
	e, err = ParseExpect("Cycle #1.read_p99_ms: rate=150/s,mode=serial / rate=100/s,mode=serial >= 1.1")
	if err != nil || SideLabel(e.A) != "rate=150/s,mode=serial" || e.Op != ">=" {
		t.Fatalf("%+v %v", e, err)
	}
	// An operation's figure (results.OpFigure) is a metric like any other.
	e, err = ParseExpect("Cycle #1.op.read1.p99_ms: loaders=2 / loaders=1 <= 1.2")
	if err != nil || e.Metric != "Cycle #1.op.read1.p99_ms" || e.Limit != 1.2 {
		t.Fatalf("%+v %v", e, err)
	}
	for _, bad := range []string{"scale_out_seconds mode=a / mode=b <= 1", "x: mode=a / mode=b", "x: mode=a <= 1", "x: mode=a / mode=b <= -1", "x: a / b <= 1", ": a=1 / a=2 <= 1"} {
		if _, err := ParseExpect(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestExpectationCheck(t *testing.T) {
	axes, _ := ParseAxes([]string{"nemesis.0.grow_cluster.mode=serial,parallel", "workload.load_percent=50,70"})
	cells := Expand(axes, 1)
	ok, _ := ParseExpect("scale_out_seconds: mode=parallel / nemesis.0.grow_cluster.mode=serial <= 1")
	if err := ok.Check(axes, cells); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"x: mode=fast / mode=serial <= 1":         "matches no cell",
		"x: shards=2 / mode=serial <= 1":          "not an axis",
		"x: mode=parallel / load_percent=70 <= 1": "selected by both",
		"x: mode=serial / mode=serial <= 1":       "selected by both",
	} {
		e, err := ParseExpect(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Check(axes, cells); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func passesOf(variant string, values map[string]string, status string, xs ...float64) []Pass {
	var out []Pass
	for i, x := range xs {
		out = append(out, Pass{Variant: variant, Repeat: i + 1, Values: values, Status: status, Figures: map[string]float64{"scale_out_seconds": x}})
	}
	return out
}

func TestEvaluateVerdicts(t *testing.T) {
	par := map[string]string{"nemesis.0.grow_cluster.mode": "parallel"}
	ser := map[string]string{"nemesis.0.grow_cluster.mode": "serial"}
	e, _ := ParseExpect("scale_out_seconds: mode=parallel / mode=serial <= 0.8")
	axes, _ := ParseAxes([]string{"nemesis.0.grow_cluster.mode=serial,parallel"})
	if err := e.Check(axes, Expand(axes, 1)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		a, b    []float64
		aStatus string
		want    string
		wantWhy string
	}{
		{"clearly faster", []float64{300, 310, 305}, []float64{600, 612, 590}, "passed", ExpectPass, ""},
		{"clearly not", []float64{580, 600, 590}, []float64{600, 612, 590}, "failed", ExpectFail, ""},
		{"straddles", []float64{300, 520}, []float64{600, 610}, "passed", ExpectInconclusive, "contains 0.8"},
		{"one pass a side", []float64{300}, []float64{600}, "passed", ExpectInconclusive, "fewer than 2"},
		{"A not measured", []float64{300, 300}, []float64{600, 610}, "skipped", ExpectInconclusive, "pending"},
	}
	for _, c := range cases {
		passes := append(passesOf("mode=parallel", par, c.aStatus, c.a...), passesOf("mode=serial", ser, "passed", c.b...)...)
		r := e.Evaluate(passes)
		if r.Verdict != c.want || !strings.Contains(r.Why, c.wantWhy) {
			t.Errorf("%s: %s (%s) %+v", c.name, r.Verdict, r.Why, r.CI)
		}
		if !strings.Contains(r.Line(), r.Verdict) {
			t.Errorf("%s: line %q", c.name, r.Line())
		}
	}
}

func TestOutliersLeaveOneOut(t *testing.T) {
	if o := Outliers([]float64{10, 10.2, 9.9, 10.1, 30}); len(o) != 1 || o[0].Index != 4 || o[0].Distance < 2 {
		t.Fatalf("%+v", o)
	}
	if o := Outliers([]float64{10, 12, 11, 10.5, 11.5}); len(o) != 0 {
		t.Fatalf("no outlier expected: %+v", o)
	}
	if o := Outliers([]float64{10, 30}); o != nil {
		t.Fatal("two passes cannot flag")
	}
}

// An interrupted matrix still reports: matrix.json carries the
// expectations from the first pass, and Report judges them on the passes
// matrix.jsonl holds and writes the comparison.
func TestReportOfInterruptedMatrix(t *testing.T) {
	axes, _ := ParseAxes([]string{"nemesis.0.grow_cluster.mode=serial,parallel"})
	cells := Expand(axes, 3)
	e, _ := ParseExpect("scale_out_seconds: mode=parallel / mode=serial <= 0.8")
	if err := e.Check(axes, cells); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	figs := map[string]float64{"serial": 600, "parallel": 300}
	_, err := Run(ctx, cells, Options{Out: out, Expect: []Expectation{e},
		Run: func(_ context.Context, c Cell, _ string) (string, error) {
			if c.Index == 3 {
				cancel() // killed during the fourth pass
				return "interrupted", nil
			}
			return "passed", nil
		},
		Figures: func(dir string) (map[string]float64, error) {
			mode := "serial"
			if strings.Contains(dir, "parallel") {
				mode = "parallel"
			}
			return map[string]float64{"scale_out_seconds": figs[mode] + float64(len(dir)%7)}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(out)
	if err != nil || len(s.Expect) != 1 {
		t.Fatalf("matrix.json: %+v %v", s, err)
	}
	if err := Report(out, s); err != nil {
		t.Fatal(err)
	}
	if s.Verdict != "interrupted" || len(s.Passes) != 4 || len(s.Expectations) != 1 {
		t.Fatalf("%+v", s)
	}
	r := s.Expectations[0]
	if r.SideA.N != 1 || r.SideB.N != 2 || r.SideA.Pending != 1 || r.Verdict != ExpectInconclusive {
		t.Fatalf("expectation on the recorded passes: %+v", r)
	}
	md, err := os.ReadFile(filepath.Join(out, "comparison.md"))
	if err != nil || !strings.Contains(string(md), "## Expectations") || !strings.Contains(string(md), "interrupted") {
		t.Fatalf("comparison: %v\n%s", err, md)
	}
}
