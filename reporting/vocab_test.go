package reporting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// writeEvents writes a recorded timeline into a fresh run directory.
func writeEvents(t *testing.T, events []results.Event) string {
	t.Helper()
	dir := t.TempDir()
	w, err := results.OpenJSONL(filepath.Join(dir, results.FileEvents))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A duration threshold on "Drain node(s)" or "Remove node(s)" is judged:
// results computes those durations, so a ceiling on them must reach
// result.json (issue 14: validation used to reject them and nothing judged
// them). A threshold naming a nemesis step selects that step's cycles and
// durations (it used to select nothing).
func TestDrainAndRemoveDurationVerdicts(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const dec, drain = "Decommission one node in rack1", "Drain one node in rack2"
	setup := &results.Setup{Scenario: "scale-in-drain", InitialNodes: []results.NodeInfo{{Name: "node-1"}, {Name: "node-2"}},
		Thresholds: []results.Threshold{
			{Cycle: results.DurDrainNodes, Metric: results.MetricDurationSeconds, Limit: 3600},
			{Cycle: results.DurRemoveNodes, Metric: results.MetricDurationSeconds, Limit: 10},
			{Cycle: drain, Metric: results.MetricDurationSeconds, Limit: 3600},
			{Cycle: drain, Metric: results.MetricReadP99, Limit: 50},
		}}
	events := []results.Event{
		{Time: at(0), Type: results.EventRunStart, Setup: setup},
		{Time: at(1), Type: results.EventCycleStart, Cycle: "Cycle #0"},
		{Time: at(10), Type: results.EventCycleEnd, Cycle: "Cycle #0"},
		{Time: at(10), Type: results.EventCycleStart, Cycle: "Cycle #1", Step: dec},
		{Time: at(10), Type: results.EventStepRequested, Step: dec, Cycle: "Cycle #1", Kind: results.KindShrink, Mode: results.ModeSerial, Nodes: []string{"node-3"}},
		{Time: at(30), Type: results.EventNodesNormal, Step: dec, Cycle: "Cycle #1", Kind: results.KindShrink, Nodes: []string{"node-3"}},
		{Time: at(31), Type: results.EventStepEnd, Step: dec, Cycle: "Cycle #1", Kind: results.KindShrink},
		{Time: at(31), Type: results.EventCycleEnd, Cycle: "Cycle #1"},
		{Time: at(31), Type: results.EventCycleStart, Cycle: "Cycle #2", Step: drain},
		{Time: at(31), Type: results.EventStepRequested, Step: drain, Cycle: "Cycle #2", Kind: results.KindDrain, Mode: results.ModeParallel, Nodes: []string{"node-4"}},
		{Time: at(76), Type: results.EventNodesNormal, Step: drain, Cycle: "Cycle #2", Kind: results.KindDrain, Nodes: []string{"node-4"}},
		{Time: at(80), Type: results.EventDataBalanced, Step: drain, Cycle: "Cycle #2", Kind: results.KindDrain},
		{Time: at(81), Type: results.EventStepEnd, Step: drain, Cycle: "Cycle #2", Kind: results.KindDrain},
		{Time: at(81), Type: results.EventCycleEnd, Cycle: "Cycle #2"},
		{Time: at(82), Type: results.EventRunEnd, Status: results.StatusPassed},
	}
	dir := writeEvents(t, events)
	if _, err := Finalize(dir, "", ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.FileResult))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	type key struct{ cycle, subject string }
	got := map[key]results.Verdict{}
	for _, v := range res.Verdicts {
		got[key{v.Threshold.Cycle, v.Subject}] = v
	}
	want := map[key]struct {
		value  float64
		passed bool
	}{
		{results.DurDrainNodes, "Drain node(s) (Cycle #2)"}:   {45, true},
		{results.DurRemoveNodes, "Remove node(s) (Cycle #1)"}: {20, false},
		// The step's name selects every duration of the step and its cycle.
		{drain, "Drain node(s) (Cycle #2)"}: {45, true},
		{drain, "Data balanced (Cycle #2)"}: {49, true},
		{drain, "Cycle #2"}:                 {0, true},
	}
	if len(got) != len(want) {
		t.Errorf("verdicts %+v, want %d", res.Verdicts, len(want))
	}
	for k, w := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("no verdict of %q on %q in result.json", k.cycle, k.subject)
			continue
		}
		if v.Value != w.value || v.Passed != w.passed {
			t.Errorf("%q on %q: value %v passed %v, want %v %v", k.cycle, k.subject, v.Value, v.Passed, w.value, w.passed)
		}
	}
	if res.Status != results.StatusFailed {
		t.Errorf("status %q, want failed (Remove node(s) took 20 s > 10 s)", res.Status)
	}
}

// Stall tables as SCT/Argus have them: SCT's unit-test stall set (13, 33, 6,
// 33 ms) gives {10ms: 1, 20ms: 1, 50ms: 2}, total 4; the write-up's "total
// 4, 20ms 3, 50ms 1" renders with exactly those columns.
func TestStallTablesAsSCT(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		stalls []float64
		table  string
		argus  map[string]float64
	}{
		{[]float64{13, 33, 6, 33}, "| Cycle #0 | 4             | 1            | 1            | 2            |",
			map[string]float64{"total": 4, "10ms": 1, "20ms": 1, "50ms": 2}},
		{[]float64{12, 15, 18.5, 31}, "| Cycle #0 | 4             | 3            | 1            |",
			map[string]float64{"total": 4, "20ms": 3, "50ms": 1}},
	} {
		events := []results.Event{
			{Time: at(0), Type: results.EventRunStart, Setup: &results.Setup{Scenario: "s", WriteRatio: 0.5, ReadRatio: 0.5}},
			{Time: at(1), Type: results.EventCycleStart, Cycle: "Cycle #0"},
		}
		for i, ms := range tc.stalls {
			events = append(events, results.Event{Time: at(2 + i), Type: results.EventStall, Node: "node-1", StallMS: ms})
		}
		events = append(events, results.Event{Time: at(10), Type: results.EventCycleEnd, Cycle: "Cycle #0"},
			results.Event{Time: at(11), Type: results.EventRunEnd, Status: results.StatusPassed})
		dir := writeEvents(t, events)
		if _, err := Finalize(dir, "", ""); err != nil {
			t.Fatal(err)
		}
		md, _ := os.ReadFile(filepath.Join(dir, results.FileReportMD))
		sec := string(md)
		i := strings.Index(sec, "## mixed - Steady State - stalls - REACTOR_STALLED")
		if i < 0 {
			t.Fatalf("no steady-state stall table:\n%s", md)
		}
		sec = sec[i:]
		sec = sec[:strings.Index(sec[3:], "## ")+3]
		var cols []string
		for _, l := range append([]string{"total"}, results.StallLabels()...) {
			if _, ok := tc.argus[l]; ok {
				cols = append(cols, l+" [count]")
			}
		}
		header := "| cycle    | " + strings.Join(cols, " | ") + " |"
		if !strings.Contains(sec, header) || !strings.Contains(sec, tc.table) || strings.Count(sec, "[count]") != len(cols) {
			t.Errorf("stalls %v: want header %q and row %q in\n%s", tc.stalls, header, tc.table, sec)
		}
		tables, err := ReadArgus(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, tb := range tables {
			if tb.Meta.Name == "mixed - Steady State - stalls - REACTOR_STALLED" {
				for _, c := range tb.Results {
					got[c.Column] = *c.Value
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.argus) {
			t.Errorf("stalls %v: argus cells %v, want %v", tc.stalls, got, tc.argus)
		}
	}
}

// Counters become one cluster-wide rate: increases per second, a restart
// (the counter falls) counts from zero, nodes sampled at different instants
// add up, and a node stops counting after its last sample.
func TestCounterRate(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := newCounterRate()
	for i, v := range []float64{0, 10, 20, 5, 15} { // restart after 20
		c.add("a", at(i*10000), v)
	}
	for i, v := range []float64{0, 20, 40} { // 300 ms later, stops at 20.3 s
		c.add("b", at(300+i*10000), v)
	}
	pts := c.points(10 * time.Second)
	got := map[int]float64{}
	for _, p := range pts {
		got[int(p.Time.Sub(t0)/time.Second)] = p.Value
	}
	// At the end of each 10 s bucket: a is 1/s, then 0.5/s after its restart, then 1/s; b is 2/s until a bucket after its last sample.
	want := map[int]float64{20: 1 + 2, 30: 0.5 + 2, 40: 1, 50: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rates %v, want %v", got, want)
	}
}

// report.dashboard_url gives every cycle a dashboard link over its window.
func TestDashboardLinks(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	setup := &results.Setup{Scenario: "s", WriteRatio: 1, ReadRatio: 1, DashboardURL: "https://grafana.example/d/o?from={from_ms}&to={to_ms}"}
	dir := writeEvents(t, []results.Event{
		{Time: t0, Type: results.EventRunStart, Setup: setup},
		{Time: t0.Add(time.Second), Type: results.EventCycleStart, Cycle: "Cycle #0"},
		{Time: t0.Add(11 * time.Second), Type: results.EventCycleEnd, Cycle: "Cycle #0"},
		{Time: t0.Add(12 * time.Second), Type: results.EventRunEnd, Status: results.StatusPassed},
	})
	if _, err := Finalize(dir, "", ""); err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf("https://grafana.example/d/o?from=%d&to=%d", t0.Add(time.Second).UnixMilli(), t0.Add(11*time.Second).UnixMilli())
	md, _ := os.ReadFile(filepath.Join(dir, results.FileReportMD))
	if !strings.Contains(string(md), "| QA dashboard") || !strings.Contains(string(md), "[view]("+link+")") {
		t.Errorf("report.md has no dashboard link %s:\n%s", link, md)
	}
	h, _ := os.ReadFile(filepath.Join(dir, results.FileReportHTML))
	if !strings.Contains(string(h), `<a href="`+strings.ReplaceAll(link, "&", "&amp;")+`">`) {
		t.Errorf("report.html has no dashboard link %s", link)
	}
	tables, err := ReadArgus(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range tables[0].Results {
		found = found || c.Column == "QA dashboard" && c.ValueText != nil && *c.ValueText == link
	}
	if !found {
		t.Errorf("no QA dashboard cell in %s", tables[0].Meta.Name)
	}
}

// Thresholds relative to the steady state (issue 19): judged against
// Cycle #0's value, which the verdict carries.
func TestRatioToSteadyThresholds(t *testing.T) {
	res := &results.Result{Status: results.StatusPassed, Cycles: []results.Cycle{
		{Name: "Cycle #0", ReadP99MS: 4, WriteOpsPerS: 500, ReadOpsPerS: 500},
		{Name: "Cycle #1", ReadP99MS: 13, WriteOpsPerS: 480, ReadOpsPerS: 470},
		{Name: "Cycle #2", ReadP99MS: 11.9, WriteOpsPerS: 500, ReadOpsPerS: 500},
	}}
	res.Setup.Thresholds = []results.Threshold{
		{Cycle: "*", Metric: results.MetricReadP99, Limit: 3, RatioToSteady: true},
		{Cycle: "nemesis", Metric: results.MetricTotalOps, Limit: 0.96, Floor: true, RatioToSteady: true},
	}
	Evaluate(res)
	type key struct{ metric, subject string }
	got := map[key]results.Verdict{}
	for _, v := range res.Verdicts {
		got[key{v.Threshold.Metric, v.Subject}] = v
	}
	if len(got) != 4 {
		t.Fatalf("verdicts %+v (Cycle #0 is not judged against itself)", res.Verdicts)
	}
	for k, w := range map[key]struct {
		limit, baseline float64
		passed          bool
	}{
		{results.MetricReadP99, "Cycle #1"}:  {12, 4, false},
		{results.MetricReadP99, "Cycle #2"}:  {12, 4, true},
		{results.MetricTotalOps, "Cycle #1"}: {960, 1000, false},
		{results.MetricTotalOps, "Cycle #2"}: {960, 1000, true},
	} {
		v := got[k]
		if math.Abs(v.Limit-w.limit) > 1e-9 || v.Baseline != w.baseline || v.Passed != w.passed {
			t.Errorf("%v: %+v, want limit %v baseline %v passed %v", k, v, w.limit, w.baseline, w.passed)
		}
	}
	if res.Status != results.StatusFailed {
		t.Errorf("status %s", res.Status)
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, MarkdownOptions{Plain: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "≤ 3× Cycle #0 (4.00) = 12.00") {
		t.Errorf("the threshold table does not show the baseline:\n%s", md.String())
	}
	// No steady state measured: nothing to be relative to, no verdict.
	res.Cycles = res.Cycles[1:]
	Evaluate(res)
	if len(res.Verdicts) != 0 {
		t.Errorf("verdicts without a Cycle #0: %+v", res.Verdicts)
	}
}
