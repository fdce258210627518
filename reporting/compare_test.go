package reporting

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
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

func TestVariantOf(t *testing.T) {
	for in, want := range map[string]string{"/m/01-load=50-r2": "01-load=50", "/m/02-base": "02-base", "x-r10/": "x"} {
		if got := VariantOf(in); got != want {
			t.Errorf("VariantOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareWritesPages(t *testing.T) {
	a := copyRun(t, filepath.Join("testdata", "run1"))
	b := interruptedRun(t)
	out := filepath.Join(t.TempDir(), "cmp")
	if err := Compare([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, FileCompareMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Runs", "## Cycle #0", "## Cycle #3", "interrupted", "(×1.00)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, FileCompareHTML))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "http") {
		t.Error("comparison HTML references a URL")
	}
	if err := Compare(nil, out); err == nil {
		t.Error("Compare of nothing succeeded")
	}
}

func TestArgusTables(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	if _, err := Render(dir, Options{Formats: []string{FormatJSON}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileArgus))
	if err != nil {
		t.Fatal(err)
	}
	var tables []Table
	if err := json.Unmarshal(b, &tables); err != nil {
		t.Fatal(err)
	}
	byID := map[string]Table{}
	for _, tb := range tables {
		byID[tb.ID] = tb
	}
	sc := byID["scaleout"]
	if len(sc.Rows) != 3 || sc.Columns[2] != "P90 read [ms]" {
		t.Fatalf("scale-out table: %+v", sc)
	}
	if c := sc.Rows[0][2]; c.Status != CellFailed || c.Threshold == "" {
		t.Errorf("Cycle #1 P90 read cell %+v, want failed with its threshold", c)
	}
	if c := sc.Rows[1][2]; c.Status != CellPassed {
		t.Errorf("Cycle #2 P90 read cell %+v, want passed", c)
	}
	if _, err := ReadResult(filepath.Join(dir, results.FileResult)); err != nil {
		t.Fatal(err)
	}
}
