package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// A --baseline that is not a completed run of the same scenario, or a
// --history that does not exist, stops `run` with exit 2 before anything
// starts, and says why.
func TestRunBaselineBadInput(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteResult(other, &results.Result{FormatVersion: results.FormatVersion, Status: results.StatusPassed, StartedAt: time.Now(),
		Setup: results.Setup{Scenario: "90pct-scaleout", Backend: "local", RunID: "r-other"}}); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	rule := []string{"--set", "thresholds.baseline.cycles=[{read_p99_ms: {best_pct: 20}}]"}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--baseline", filepath.Join(dir, "missing")}, "--baseline " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{[]string{"--baseline", empty}, "is not a run: it has no result.json"},
		{[]string{"--baseline", other}, `a run of scenario "90pct-scaleout", not "smoke"`},
		{append([]string{"--history", filepath.Join(dir, "nope")}, rule...), "--history " + filepath.Join(dir, "nope")},
		{[]string{"--set", "thresholds.recovery.intervals=0"}, "thresholds.recovery.intervals: must be within 1..3600"},
		{[]string{"--set", "thresholds.baseline.cycles=[{read_p99_ms: {bets_pct: 20}}]"}, `did you mean "best_pct"`},
	} {
		out := filepath.Join(t.TempDir(), "run")
		args := append([]string{"run", "../../configs/smoke.yaml", "--out", out, "--skip-preflight"}, tc.args...)
		code, _, errs := cli(t, "", args...)
		if code != ExitInvalid || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d (want 2), stderr %q (want %q)", tc.args, code, errs, tc.msg)
		}
		if _, err := os.Stat(filepath.Join(out, results.FileEvents)); err == nil {
			t.Errorf("%v: the run started", tc.args)
		}
	}
}
