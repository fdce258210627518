package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/matrix"
)

// A bad --expect is exit 2 before any cell runs or any directory is made.
func TestMatrixBadExpect(t *testing.T) {
	for expect, msg := range map[string]string{
		"scale_out_secs: mode=parallel / mode=serial <= 1":         `unknown figure "scale_out_secs"`,
		"Cycle #1.read_p98_ms: mode=parallel / mode=serial <= 1.2": `"read_p98_ms" is not a cycle metric`,
		"Cycle #9.read_p99_ms: mode=parallel / mode=serial <= 1.2": "measures Cycle #0 to Cycle #1",
		"scale_out_seconds: mode=fast / mode=serial <= 1":          "mode=fast matches no cell",
		"scale_out_seconds: shards=2 / mode=serial <= 1":           "shards is not an axis",
		"scale_out_seconds: mode=parallel / mode=serial":           "no comparison",
	} {
		out := filepath.Join(t.TempDir(), "m")
		code, _, errs := cli(t, "", "matrix", "../../configs/smoke.yaml", "--set", "nemesis.0.grow_cluster.mode=serial,parallel",
			"--expect", expect, "--out", out)
		if code != ExitInvalid || !strings.Contains(errs, msg) {
			t.Errorf("%q: exit %d, stderr %q (want %q)", expect, code, errs, msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: %s was created", expect, out)
		}
	}
}

func TestMatrixEmitGitHubWorkflow(t *testing.T) {
	code, out, errs := cli(t, "", "matrix", "../../configs/smoke.yaml", "--set", "nemesis.0.grow_cluster.mode=serial,parallel", "--repeat", "2",
		"--expect", `"New node(s) ready": mode=parallel / mode=serial <= 1`, "--emit", "github")
	if code != ExitPassed || !strings.Contains(out, `--expect '"New node(s) ready": mode=parallel / mode=serial <= 1'`) || !strings.Contains(out, "--repeat 2") || !strings.Contains(out, "matrix/matrix.jsonl") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
}

// `report MATRIXDIR` rebuilds a matrix's reports from matrix.jsonl (an
// interrupted matrix's too); --check takes the matrix's exit code.
func TestReportMatrixDir(t *testing.T) {
	axes, _ := matrix.ParseAxes([]string{"nemesis.0.grow_cluster.mode=serial,parallel"})
	cells := matrix.Expand(axes, 2)
	x, _ := matrix.ParseExpect("scale_out_seconds: mode=parallel / mode=serial <= 0.8")
	if err := x.Check(axes, cells); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err := matrix.Run(context.Background(), cells, matrix.Options{Out: dir, Expect: []matrix.Expectation{x},
		Run: func(context.Context, matrix.Cell, string) (string, error) { return "passed", nil },
		Figures: func(d string) (map[string]float64, error) {
			v := 600.0 + float64(len(d)%5)
			if strings.Contains(d, "parallel") {
				v = 900 + float64(len(d)%3)
			}
			return map[string]float64{"scale_out_seconds": v}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "comparison.md"))
	code, out, errs := cli(t, "", "report", dir)
	if code != ExitPassed || !strings.Contains(out, "matrix verdict: FAIL") || !strings.Contains(out, "comparison.md") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "comparison.md")); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := cli(t, "", "report", "--check", dir); code != ExitFailed {
		t.Fatalf("--check: exit %d, want 1 (the expectation FAILed)", code)
	}
}
