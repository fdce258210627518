package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/matrix"
)

// TestMatrixTwoByTwo runs a 2×2 matrix of smoke runs (two rates × two grow
// modes) and checks the four run directories, matrix.json and the one
// comparison report that lists all four.
func TestMatrixTwoByTwo(t *testing.T) {
	if testing.Short() {
		t.Skip("four smoke runs; skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "matrix")
	args := []string{"matrix", "../configs/smoke.yaml", "--out", out,
		"--set", "workload.rate=100/s,150/s",
		"--set", "nemesis.0.grow_cluster.mode=serial,parallel",
		// Single values apply to every cell: keep each run short and on our addresses.
		"--set", "local.base_address=127.0.9.2",
		"--set", "steady_state=8m",
		"--set", "final_hold=4m",
		"--set", "dataset.fill.0.hold=2m",
	}
	cmd := exec.Command(binary, args...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	// 0: every cell passed; 1: a threshold failed somewhere (P99 on a busy machine). Both ran all cells.
	if code := exitCode(err); code != 0 && code != 1 {
		t.Fatalf("matrix exit %d:\n%s", code, log.String())
	}
	defer checkNoNodes(t)

	b, err := os.ReadFile(filepath.Join(out, "matrix.json"))
	if err != nil {
		t.Fatalf("matrix.json: %v\n%s", err, log.String())
	}
	var sum matrix.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Outcomes) != 4 {
		t.Fatalf("want 4 cells, got %d:\n%s", len(sum.Outcomes), log.String())
	}
	cmp, err := os.ReadFile(filepath.Join(out, "comparison.md"))
	if err != nil {
		t.Fatalf("comparison report: %v\n%s", err, log.String())
	}
	for _, o := range sum.Outcomes {
		if o.Status != "passed" && o.Status != "failed" {
			t.Errorf("cell %s: status %s %s", o.Cell.Name, o.Status, o.Error)
		}
		dir := filepath.Join(out, o.Dir)
		for _, f := range []string{"result.json", "report.md", "events.jsonl", "latency.jsonl"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("cell %s: %v", o.Cell.Name, err)
			}
		}
		if !strings.Contains(string(cmp), o.Dir) {
			t.Errorf("comparison.md does not list run %s", o.Dir)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "comparison.html")); err != nil {
		t.Errorf("comparison.html: %v", err)
	}
}
