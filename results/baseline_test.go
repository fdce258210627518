package results

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fp(v float64) *float64 { return &v }

// Rules are judged as Argus's Cell.update_cell_status_based_on_rules: a
// value passes only when strictly better than every limit (fixed_limit,
// best × (1 ± pct), best ± abs); with no best only fixed_limit applies.
func TestBaselineRuleJudge(t *testing.T) {
	best := fp(10)
	for _, tc := range []struct {
		name      string
		rule      BaselineRule
		v         float64
		best      *float64
		wantLimit float64
		want      bool
	}{
		// argus/backend/tests/results_service/test_cell.py
		{"fixed, higher is better, better", BaselineRule{HigherIsBetter: true, FixedLimit: fp(5)}, 10, nil, 5, true},
		{"fixed, higher is better, worse", BaselineRule{HigherIsBetter: true, FixedLimit: fp(5)}, 3, nil, 5, false},
		{"fixed, lower is better", BaselineRule{FixedLimit: fp(5)}, 10, nil, 5, false},
		{"fixed, equal is not better", BaselineRule{FixedLimit: fp(5)}, 5, nil, 5, false},
		{"best_pct latency within", BaselineRule{BestPct: fp(20)}, 11.9, best, 12, true},
		{"best_pct latency over", BaselineRule{BestPct: fp(20)}, 12.1, best, 12, false},
		{"best_pct throughput within", BaselineRule{HigherIsBetter: true, BestPct: fp(10)}, 9.1, best, 9, true},
		{"best_pct throughput under", BaselineRule{HigherIsBetter: true, BestPct: fp(10)}, 8.9, best, 9, false},
		{"best_abs latency", BaselineRule{BestAbs: fp(3)}, 12.5, best, 13, true},
		{"tightest of all", BaselineRule{BestPct: fp(50), BestAbs: fp(2), FixedLimit: fp(30)}, 12.5, best, 12, false},
		{"no previous run: fixed only", BaselineRule{BestPct: fp(10), FixedLimit: fp(30)}, 25, nil, 30, true},
	} {
		limit, ok := tc.rule.Judge(tc.v, tc.best)
		if ok != tc.want || math.Abs(limit-tc.wantLimit) > 1e-9 {
			t.Errorf("%s: limit %v passed %v, want %v %v", tc.name, limit, ok, tc.wantLimit, tc.want)
		}
	}
	// No limit at all (best_pct without a previous value) passes, as in Argus.
	if limit, ok := (BaselineRule{BestPct: fp(10)}).Judge(50, nil); !ok || !math.IsNaN(limit) {
		t.Errorf("no limit: %v %v", limit, ok)
	}
	if got := (BaselineRule{BestPct: fp(20), FixedLimit: fp(50)}).String(); got != "best_pct 20, fixed_limit 50" {
		t.Errorf("String %q", got)
	}
}

// writeRun writes a minimal completed run directory.
func writeRun(t *testing.T, dir, scenario, backend, status, runID string, started time.Time, p99, ops, ready float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := &Result{FormatVersion: FormatVersion, Status: status, StartedAt: started,
		Setup:     Setup{Scenario: scenario, Backend: backend, RunID: runID},
		Cycles:    []Cycle{{Name: SteadyStateCycle, ReadP99MS: p99, WriteOpsPerS: ops / 2, ReadOpsPerS: ops / 2}, {Name: "Cycle #1", ReadP99MS: 2 * p99}},
		Durations: []Duration{{Name: DurNodesReady, Cycle: "Cycle #1", Seconds: ready}},
	}
	if err := WriteResult(dir, res); err != nil {
		t.Fatal(err)
	}
}

// The history baseline is the best of the previous completed runs of the
// same scenario on the same backend, per subject and metric, with its run.
func TestHistoryBaseline(t *testing.T) {
	h := t.TempDir()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	writeRun(t, filepath.Join(h, "a"), "smoke", "local", StatusPassed, "run-a", t0, 5, 190, 30)
	writeRun(t, filepath.Join(h, "b"), "smoke", "local", StatusFailed, "run-b", t0.Add(time.Hour), 4, 180, 40)
	writeRun(t, filepath.Join(h, "other"), "90pct", "local", StatusPassed, "run-o", t0, 1, 9999, 1)
	writeRun(t, filepath.Join(h, "docker"), "smoke", "docker", StatusPassed, "run-d", t0, 1, 9999, 1)
	writeRun(t, filepath.Join(h, "broken"), "smoke", "local", StatusInterrupted, "run-i", t0, 1, 9999, 1)
	writeRun(t, filepath.Join(h, "self"), "smoke", "local", StatusPassed, "run-self", t0, 1, 9999, 1)
	if err := os.MkdirAll(filepath.Join(h, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := HistoryBaseline(h, "smoke", "local", filepath.Join(h, "self"), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Runs) != 2 || b.Runs[0].RunID != "run-a" || b.Runs[1].RunID != "run-b" {
		t.Fatalf("runs %+v", b.Runs)
	}
	for _, tc := range []struct {
		subject, metric string
		want            float64
		run             string
	}{
		{SteadyStateCycle, MetricReadP99, 4, "run-b"},    // lower is better
		{SteadyStateCycle, MetricTotalOps, 190, "run-a"}, // higher is better
		{"New node(s) ready (Cycle #1)", MetricDurationSeconds, 30, "run-a"},
	} {
		v, ok := b.Lookup(tc.subject, tc.metric)
		if !ok || v.Value != tc.want || v.RunID != tc.run {
			t.Errorf("%s %s: %+v %v, want %v from %s", tc.subject, tc.metric, v, ok, tc.want, tc.run)
		}
	}
	if _, ok := b.Lookup("Cycle #1", MetricWriteP99); ok {
		t.Error("a P99 of 0 (no writes measured) is no value")
	}
	// No history yet: no runs, no error; unless the directory was asked for.
	if b, err := HistoryBaseline(filepath.Join(h, "nope"), "smoke", "local", "", false); err != nil || len(b.Runs) != 0 {
		t.Errorf("missing default history: %+v %v", b, err)
	}
	if _, err := HistoryBaseline(filepath.Join(h, "nope"), "smoke", "local", "", true); !errors.Is(err, ErrBaseline) || !strings.Contains(err.Error(), "--history") {
		t.Errorf("missing --history: %v", err)
	}
}

// --baseline DIR must be a completed run of the same scenario and backend.
func TestLoadBaselineBadInput(t *testing.T) {
	h := t.TempDir()
	t0 := time.Now()
	writeRun(t, filepath.Join(h, "good"), "smoke", "local", StatusPassed, "run-g", t0, 5, 190, 30)
	writeRun(t, filepath.Join(h, "other"), "90pct", "local", StatusPassed, "run-o", t0, 5, 190, 30)
	writeRun(t, filepath.Join(h, "docker"), "smoke", "docker", StatusPassed, "run-d", t0, 5, 190, 30)
	writeRun(t, filepath.Join(h, "interrupted"), "smoke", "local", StatusInterrupted, "run-i", t0, 5, 190, 30)
	if err := os.MkdirAll(filepath.Join(h, "events-only"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, "events-only", FileEvents), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(filepath.Join(h, "good"), "smoke", "local")
	if err != nil || len(b.Runs) != 1 || b.Runs[0].RunID != "run-g" || !strings.HasPrefix(b.Source, "--baseline ") {
		t.Fatalf("good: %+v %v", b, err)
	}
	for dir, want := range map[string]string{
		"missing":     "no such file or directory",
		"file":        "is not a directory",
		"events-only": "render it first with `elasticity report",
		".":           "is not a run: it has no result.json",
		"other":       `a run of scenario "90pct", not "smoke"`,
		"docker":      "a run on backend docker, not local",
		"interrupted": "did not complete (status interrupted)",
	} {
		_, err := LoadBaseline(filepath.Join(h, dir), "smoke", "local")
		if !errors.Is(err, ErrBaseline) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--baseline") {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
	}
}
