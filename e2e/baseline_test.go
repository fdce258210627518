package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

// Two runs of the smoke scenario (no fill, to stay short): the second,
// with --baseline on the first and a best_pct rule, has a verdict naming
// the first run's value and run id, in result.json and in report.md; its
// grow step records the plan's estimates beside the measured durations,
// and a "x plan" ceiling is judged against them (issue 19, items 3 and 5).
func TestBaselineRun(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	common := append(shrink("127.0.5.120"), "--set", "dataset.fill=[]", "--set", "final_hold=2m")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd, log := start(t, ctx, first, common...)
	if code := exitCode(cmd.Wait()); code != 0 && code != 1 {
		t.Fatalf("first run: exit %d\n%s", code, log)
	}
	checkNoNodes(t)
	base := readResult(t, first)
	var best float64
	for _, c := range base.Cycles {
		if c.Name == results.SteadyStateCycle {
			best = c.WriteOpsPerS + c.ReadOpsPerS
		}
	}
	if best <= 0 {
		t.Fatalf("first run has no steady-state throughput: %+v", base.Cycles)
	}

	args := append(common, "--baseline", first,
		"--set", "thresholds.baseline.cycles=[{cycle: steady_state, total_ops_per_sec: {best_pct: 50}}]",
		"--set", `thresholds.durations={"Add new node(s)": 100x plan}`)
	cmd, log = start(t, ctx, second, args...)
	err := cmd.Wait()
	defer checkNoNodes(t)
	if code := exitCode(err); code != 0 && code != 1 {
		t.Fatalf("second run: exit %d\n%s", code, log)
	}
	res := readResult(t, second)
	if res.Setup.Baseline == nil || len(res.Setup.Baseline.Runs) != 1 || res.Setup.Baseline.Runs[0].RunID != base.Setup.RunID {
		t.Fatalf("baseline %+v, want the first run %s", res.Setup.Baseline, base.Setup.RunID)
	}
	var rv *results.Verdict
	for i, v := range res.Verdicts {
		if v.Rule != nil {
			rv = &res.Verdicts[i]
		}
	}
	if rv == nil || rv.Subject != results.SteadyStateCycle || rv.Baseline != best || rv.BaselineRun != base.Setup.RunID || rv.Limit != best*0.5 {
		t.Fatalf("baseline verdict %+v, want Cycle #0 against %.2f op/s of %s", rv, best, base.Setup.RunID)
	}
	t.Logf("verdict: %s %s %.1f, limit > %.1f (best_pct 50 of %.1f from %s), passed %v", rv.Subject, rv.Threshold.Metric, rv.Value, rv.Limit, rv.Baseline, rv.BaselineRun, rv.Passed)
	md, err := os.ReadFile(filepath.Join(second, results.FileReportMD))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("best_pct 50; baseline %s, run %s", reporting.Thousands(best), base.Setup.RunID); !strings.Contains(string(md), want) {
		t.Errorf("report.md does not name the baseline (%q)", want)
	}
	var planned, judged bool
	for _, d := range res.Durations {
		planned = planned || (d.Name == results.DurAddNodes && d.PlanSeconds > 0)
	}
	for _, v := range res.Verdicts {
		judged = judged || (v.Threshold.RatioToPlan && v.Baseline > 0 && v.Limit == 100*v.Baseline)
	}
	if !planned || !judged || !strings.Contains(string(md), "plan [HH:MM:SS]") {
		t.Errorf("plan estimates: recorded %v, judged %v; durations %+v", planned, judged, res.Durations)
	}
}
