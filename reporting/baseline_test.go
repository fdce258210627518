package reporting

import (
	"bytes"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

func fp(v float64) *float64 { return &v }

func tableByID(t *testing.T, res *results.Result, id string) Table {
	t.Helper()
	for _, tb := range buildTables(res) {
		if tb.ID == id {
			return tb
		}
	}
	t.Fatalf("no table %s", id)
	return Table{}
}

// Baseline rules are judged against the best previous value; the verdict,
// the markdown report and the Argus table carry the rule and the baseline.
func TestEvaluateBaselineRules(t *testing.T) {
	res := &results.Result{Status: results.StatusPassed,
		Cycles: []results.Cycle{{Name: "Cycle #0", ReadP99MS: 3, WriteOpsPerS: 100, ReadOpsPerS: 100},
			{Name: "Cycle #1", ReadP99MS: 30, WriteOpsPerS: 100, ReadOpsPerS: 100}},
		Durations: []results.Duration{{Name: results.DurNodesReady, Cycle: "Cycle #1", Seconds: 100, PlanSeconds: 80}},
	}
	res.Setup.BaselineRules = []results.BaselineRule{
		{Cycle: "*", Metric: results.MetricReadP99, BestPct: fp(20)},
		{Cycle: "steady_state", Metric: results.MetricTotalOps, HigherIsBetter: true, BestPct: fp(10)},
		{Cycle: results.DurNodesReady, Metric: results.MetricDurationSeconds, BestPct: fp(50), FixedLimit: fp(1000)},
	}
	res.Setup.Baseline = &results.Baseline{Source: "history runs", Runs: []results.BaselineRun{{RunID: "run-a"}},
		Best: []results.BestValue{
			{Subject: "Cycle #0", Metric: results.MetricReadP99, Value: 2.4, RunID: "run-a"},
			{Subject: "Cycle #0", Metric: results.MetricTotalOps, Value: 210, RunID: "run-a"},
			// Cycle #1 read P99 and the duration have no previous value.
		}}
	res.Setup.Thresholds = []results.Threshold{{Cycle: results.DurNodesReady, Metric: results.MetricDurationSeconds, Limit: 1.5, RatioToPlan: true}}
	Evaluate(res)
	by := map[string]results.Verdict{}
	for _, v := range res.Verdicts {
		k := v.Subject + " " + v.Threshold.Metric
		if v.Rule == nil {
			k += " plan"
		}
		by[k] = v
	}
	if v := by["Cycle #0 read_p99_ms"]; v.Passed || v.Baseline != 2.4 || v.BaselineRun != "run-a" || v.Limit < 2.879 || v.Limit > 2.881 {
		t.Errorf("3 ms against best 2.4 ms +20%%: %+v", v)
	}
	if v := by["Cycle #0 total_ops_per_sec"]; !v.Passed || v.Limit != 189 || !v.Threshold.Floor {
		t.Errorf("200 op/s against best 210 -10%%: %+v", v)
	}
	if v := by["Cycle #1 read_p99_ms"]; !v.Passed || !v.NoBaseline {
		t.Errorf("no previous value and no fixed limit passes: %+v", v)
	}
	if v := by["New node(s) ready (Cycle #1) duration_seconds"]; !v.Passed || !v.NoBaseline || v.Limit != 1000 {
		t.Errorf("fixed_limit alone without a previous value: %+v", v)
	}
	if v := by["New node(s) ready (Cycle #1) duration_seconds plan"]; !v.Passed || v.Limit != 120 || v.Baseline != 80 {
		t.Errorf("1.5x plan of 80 s: %+v", v)
	}
	if res.Status != results.StatusFailed {
		t.Errorf("status %s, want failed (Cycle #0 read P99 over the baseline rule)", res.Status)
	}

	th := tableByID(t, res, "thresholds")
	var md bytes.Buffer
	if err := mdTable(&md, th, MarkdownOptions{Plain: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lt; 2.88 (best_pct 20; baseline 2.40, run run-a)", "gt; 189 (best_pct 10; baseline 210, run run-a)",
		"no limit (best_pct 20; no previous run has a value)", "00:16:40 (best_pct 50, fixed_limit 1000; no previous run has a value)",
		"≤ 1.5× plan (00:01:20) = 00:02:00"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("thresholds table lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(th.Note, "best of 1 previous run(s) from history runs: run-a") {
		t.Errorf("note %q", th.Note)
	}
	dt := tableByID(t, res, "durations")
	if got := dt.Columns[len(dt.Columns)-1]; got != "plan [HH:MM:SS]" || dt.Rows[0][2].Value != "00:01:20" || dt.Rows[0][1].Value != "00:01:40" {
		t.Errorf("durations %v %+v", dt.Columns, dt.Rows)
	}

	// Argus: the latency column shares one rule on every row of the steady
	// state table, which travels as the column's validation rule.
	for _, tb := range ArgusResults(res) {
		if !strings.Contains(tb.Meta.Name, "Steady State - latencies") {
			continue
		}
		r, ok := tb.Meta.ValidationRules["P99 read"]
		if !ok {
			for k := range tb.Meta.ValidationRules {
				t.Logf("rule on %s", k)
			}
			t.Fatalf("no validation rule on the P99 read column: %+v", tb.Meta.ValidationRules)
		}
		if r.BestPct == nil || *r.BestPct != 20 || r.FixedLimit != nil {
			t.Errorf("rule %+v", r)
		}
	}
}
