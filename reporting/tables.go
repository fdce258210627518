package reporting

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Cell statuses.
const (
	CellPassed = "passed"
	CellFailed = "failed"
	// CellWarning marks a value past a limit that only warns (Argus's WARNING).
	CellWarning = "warning"
)

// Table is one table of a report, shared by the markdown, HTML and
// Argus-like JSON renderers so that they always agree.
type Table struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Rows    [][]Cell `json:"rows"`
	Note    string   `json:"note,omitempty"`
}

// Cell is one value; Status is "passed"/"failed" when a threshold applies,
// and Threshold describes it.
type Cell struct {
	Value     string `json:"value"`
	Status    string `json:"status,omitempty"`
	Threshold string `json:"threshold,omitempty"`
	// Anchor is the id of the report.html section the cell links to; URL an
	// external link (report.dashboard_url).
	Anchor string `json:"anchor,omitempty"`
	URL    string `json:"url,omitempty"`
}

var latencyColumns = []string{"P90 write [ms]", "P90 read [ms]", "P99 write [ms]", "P99 read [ms]", "Throughput write [op/s]", "Throughput read [op/s]", "errors", "dropped", "duration [HH:MM:SS]", "start time", "Overview"}

// Workload names SCT uses in table names.
const (
	WorkloadMixed = "mixed"
	WorkloadWrite = "write"
	WorkloadRead  = "read"
)

// WorkloadName is SCT's word for the workload: mixed, write or read.
func WorkloadName(s *results.Setup) string {
	switch {
	case s.WriteRatio > 0 && s.ReadRatio == 0:
		return WorkloadWrite
	case s.ReadRatio > 0 && s.WriteRatio == 0:
		return WorkloadRead
	}
	return WorkloadMixed
}

// SteadyStateName is SCT's name of the steady state in table names.
const SteadyStateName = "Steady State"

// stepGroup is the cycles of one nemesis step, in order.
type stepGroup struct {
	step   string
	cycles []results.Cycle
}

// nemesisGroups groups the nemesis cycles by step, in the order the steps ran.
func nemesisGroups(res *results.Result) []stepGroup {
	var out []stepGroup
	idx := map[string]int{}
	for _, c := range res.Cycles {
		if c.Name == results.SteadyStateCycle {
			continue
		}
		step := c.Step
		if step == "" {
			step = c.Name
		}
		i, ok := idx[step]
		if !ok {
			i = len(out)
			idx[step] = i
			out = append(out, stepGroup{step: step})
		}
		out[i].cycles = append(out[i].cycles, c)
	}
	return out
}

// buildTables lays the report out as SCT/Argus name its tables:
// "<workload> - Steady State - latencies" (Cycle #0), then per nemesis step
// "<workload> - <step> - latencies" and "... - stalls - REACTOR_STALLED"
// (one row per cycle), then disk usage, durations, steps, errors, thresholds.
func buildTables(res *results.Result) []Table {
	var out []Table
	w := WorkloadName(&res.Setup)
	var steady []results.Cycle
	for _, c := range res.Cycles {
		if c.Name == results.SteadyStateCycle {
			steady = append(steady, c)
		}
	}
	st := latencyTable("steady", w+" - "+SteadyStateName+" - latencies", steady, res)
	if len(steady) == 0 {
		st.Note = "No steady-state cycle (Cycle #0) was measured."
	}
	out = append(out, st)
	if len(steady) > 0 {
		out = append(out, stallTable("steady-stalls", w+" - "+SteadyStateName+" - stalls - REACTOR_STALLED", steady))
	}
	groups := nemesisGroups(res)
	if len(groups) == 0 {
		out = append(out, Table{ID: "scaleout", Name: w + " - nemesis - latencies", Columns: append([]string{"cycle"}, latencyColumns...),
			Note: "No nemesis cycle was measured."})
	}
	for i, g := range groups {
		id := fmt.Sprintf("step-%d", i+1)
		out = append(out, latencyTable(id, w+" - "+g.step+" - latencies", g.cycles, res),
			stallTable(id+"-stalls", w+" - "+g.step+" - stalls - REACTOR_STALLED", g.cycles))
		if t, ok := nodeOpTable(id+"-nodes", g.step, res); ok {
			out = append(out, t)
		}
	}
	if t, ok := operationsTable(res); ok {
		out = append(out, t)
	}
	out = append(out, runStallTable(res), diskTable(res), durationTable(res), stepTable(res), errorTable(res), errorEventTable(res))
	out = append(out, rackBalanceTable(res)...)
	out = append(out, validationTables(res)...)
	out = append(out, thresholdTable(res))
	return out
}

// verdictCell colours a value by the verdicts on (subject, metrics).
func verdictCell(res *results.Result, value, subject string, metrics ...string) Cell {
	c := Cell{Value: value}
	var desc []string
	for _, v := range res.Verdicts {
		if v.Subject != subject {
			continue
		}
		for _, m := range metrics {
			if v.Threshold.Metric != m {
				continue
			}
			if c.Status == "" {
				c.Status = CellPassed
			}
			if !v.Passed {
				c.Status = CellFailed
			}
			d := verdictText(v) + " → " + fmtValue(v.Value, v.Threshold.Metric)
			if v.Threshold.RatioToSteady || v.Threshold.RatioToPlan || v.Rule != nil {
				d += " (limit " + limitText(v) + ")"
			}
			desc = append(desc, d)
		}
	}
	c.Threshold = strings.Join(desc, "; ")
	return c
}

func thresholdText(th results.Threshold) string {
	op := "≤"
	if th.Floor {
		op = "≥"
	}
	switch {
	case th.RatioToSteady:
		return fmt.Sprintf("%s %s %s× %s (%s)", th.Metric, op, strconv.FormatFloat(th.Limit, 'g', -1, 64), results.SteadyStateCycle, th.Cycle)
	case th.RatioToPlan:
		return fmt.Sprintf("%s %s %s× plan (%s)", th.Metric, op, strconv.FormatFloat(th.Limit, 'g', -1, 64), th.Cycle)
	}
	return fmt.Sprintf("%s %s %s (%s)", th.Metric, op, fmtValue(th.Limit, th.Metric), th.Cycle)
}

// verdictText describes what judged a verdict: its threshold, or its
// baseline rule (Argus's, against the best of the previous runs).
func verdictText(v results.Verdict) string {
	if v.Rule == nil {
		return thresholdText(v.Threshold)
	}
	return fmt.Sprintf("%s: %s against the previous runs (%s)", v.Threshold.Metric, v.Rule, v.Threshold.Cycle)
}

// verdictLimit is the limit a verdict applied (older result.json files carry none).
func verdictLimit(v results.Verdict) float64 {
	if v.Limit == 0 && !v.Threshold.RatioToSteady && !v.Threshold.RatioToPlan && v.Rule == nil {
		return v.Threshold.Limit
	}
	return v.Limit
}

// limitText shows the limit of a verdict; for a ratio the baseline beside it.
func limitText(v results.Verdict) string {
	op := "≤ "
	if v.Threshold.Floor {
		op = "≥ "
	}
	m := v.Threshold.Metric
	switch {
	case v.Rule != nil:
		return ruleLimitText(v)
	case v.Threshold.RatioToSteady:
		return fmt.Sprintf("%s%s× %s (%s) = %s", op, strconv.FormatFloat(v.Threshold.Limit, 'g', -1, 64), results.SteadyStateCycle,
			fmtValue(v.Baseline, m), fmtValue(verdictLimit(v), m))
	case v.Threshold.RatioToPlan:
		return fmt.Sprintf("%s%s× plan (%s) = %s", op, strconv.FormatFloat(v.Threshold.Limit, 'g', -1, 64), fmtValue(v.Baseline, m), fmtValue(verdictLimit(v), m))
	}
	return op + fmtValue(verdictLimit(v), m)
}

// ruleLimitText shows a baseline rule's verdict: the limit (strict, as
// Argus's), the rule and the best previous value with its run.
func ruleLimitText(v results.Verdict) string {
	m := v.Threshold.Metric
	op := "< "
	if v.Rule.HigherIsBetter {
		op = "> "
	}
	limit := "no limit"
	if len(v.Rule.Limits(nil)) > 0 || !v.NoBaseline {
		limit = op + fmtValue(v.Limit, m)
	}
	if v.NoBaseline {
		return limit + " (" + v.Rule.String() + "; no previous run has a value)"
	}
	return fmt.Sprintf("%s (%s; baseline %s, run %s)", limit, v.Rule, fmtValue(v.Baseline, m), v.BaselineRun)
}

func fmtValue(v float64, metric string) string {
	switch {
	case metric == results.MetricDurationSeconds:
		return HMS(v)
	case strings.HasSuffix(metric, "_ms"):
		return MS(v)
	}
	return Thousands(v)
}

func latencyTable(id, name string, cycles []results.Cycle, res *results.Result) Table {
	t := Table{ID: id, Name: name, Columns: append([]string{"cycle"}, latencyColumns...)}
	dash := res.Setup.DashboardURL
	if dash != "" {
		t.Columns = append(t.Columns, "QA dashboard")
	}
	for _, c := range cycles {
		row := []Cell{{Value: c.Name}}
		row = append(row,
			verdictCell(res, MS(c.WriteP90MS), c.Name, "write_p90_ms"),
			verdictCell(res, MS(c.ReadP90MS), c.Name, "read_p90_ms"),
			verdictCell(res, MS(c.WriteP99MS), c.Name, "write_p99_ms"),
			verdictCell(res, MS(c.ReadP99MS), c.Name, "read_p99_ms"),
			verdictCell(res, Thousands(c.WriteOpsPerS), c.Name, "write_ops_per_sec", "total_ops_per_sec"),
			verdictCell(res, Thousands(c.ReadOpsPerS), c.Name, "read_ops_per_sec", "total_ops_per_sec"),
			Cell{Value: Thousands(float64(c.Errors))},
			Cell{Value: Thousands(float64(c.Dropped))},
			Cell{Value: HMS(c.DurationS)},
			Cell{Value: c.Start.UTC().Format("15:04:05")},
			Cell{Value: "view", Anchor: CycleAnchor(c.Name)},
		)
		if dash != "" {
			row = append(row, Cell{Value: "view", URL: results.DashboardLink(dash, c.Start, c.End)})
		}
		t.Rows = append(t.Rows, row)
	}
	t.Note = strings.TrimSpace(hostBoundNote(cycles) + " " + compactionBehindNote(cycles))
	return t
}

// operationsTable is every cycle's figures per operation of the workload
// model (results.Cycle.Ops): the operations a cycle's write and read
// figures aggregate by class. None for results written before it existed.
func operationsTable(res *results.Result) (Table, bool) {
	t := Table{ID: "operations", Name: "Operations per cycle",
		Columns: []string{"cycle", "operation", "class", "count", "ops/s", "P50 [ms]", "P90 [ms]", "P99 [ms]", "errors", "dropped"}}
	for _, c := range res.Cycles {
		for _, o := range c.Ops {
			t.Rows = append(t.Rows, []Cell{{Value: c.Name}, {Value: o.Name}, {Value: o.Class}, {Value: Thousands(float64(o.Count))},
				{Value: Thousands(o.OpsPerS)}, {Value: MS(o.P50MS)}, {Value: MS(o.P90MS)}, {Value: MS(o.P99MS)},
				{Value: Thousands(float64(o.Errors))}, {Value: Thousands(float64(o.Dropped))}})
		}
	}
	if len(t.Rows) == 0 {
		return t, false
	}
	t.Note = "The workload model's operations; each cycle's write and read figures above aggregate them by class."
	return t, true
}

// compactionBehindNote names the cycles of a latency table in which
// compaction fell behind the writes (results.Cycle.CompactionBehind), with
// the node whose backlog grew the most; "" when it kept up in all of them.
func compactionBehindNote(cycles []results.Cycle) string {
	var behind []string
	for _, c := range cycles {
		if g := c.CompactionBacklog; c.CompactionBehind && g != nil {
			behind = append(behind, fmt.Sprintf("%s (%s: %.1f → %.1f)", c.Name, g.Node, g.Start, g.End))
		}
	}
	if len(behind) == 0 {
		return ""
	}
	return fmt.Sprintf("Compaction fell behind: %s — the compaction backlog (normalized by shard memory, scylla_compaction_manager_normalized_backlog) grew and ended at %d or more, where ScyllaDB's controller gives compaction a quarter of a busy shard and more as it grows (half from 30): the offered load is more than this cluster sustains, and latency keeps rising with the backlog.",
		strings.Join(behind, ", "), results.CompactionBehindBacklog)
}

// hostBoundNote marks the cycles of a latency table whose host lag (the
// nodes' scylla_reactor_cpu_steal_time_ms, the load generator's own, and
// the machines' CPU steal) was high enough to set their P99 (results.HostBoundLagMSPerS); "" when none was.
func hostBoundNote(cycles []results.Cycle) string {
	var bound []string
	for _, c := range cycles {
		if !c.HostBound {
			continue
		}
		lag := fmt.Sprintf("host lag %.0f ms/s", c.HostLagMSPerS)
		if c.LoaderLagMSPerS > 0 {
			lag += fmt.Sprintf(", load generator lag %.0f ms/s", c.LoaderLagMSPerS)
		}
		if c.CPUStealPct > 0 {
			lag += fmt.Sprintf(", CPU steal %.0f%%", c.CPUStealPct)
		}
		switch l := c.LoaderLagged; {
		case l == nil || !l.SetP99:
		case l.WriteP99MS == 0 && l.ReadP99MS == 0:
			lag += fmt.Sprintf("; the load generator lagged %d ms/s or more in every second of it", results.HostBoundLagMSPerS)
		default:
			lag += fmt.Sprintf("; the load generator lagged %d ms/s or more in %.0f s of it, without which its P99 write/read is %.2f/%.2f ms",
				results.HostBoundLagMSPerS, l.Seconds, l.WriteP99MS, l.ReadP99MS)
		}
		bound = append(bound, fmt.Sprintf("%s (%s)", c.Name, lag))
	}
	if len(bound) == 0 {
		return ""
	}
	return fmt.Sprintf("Host-bound: %s — these latencies are this machine's, not the model's (nodes and load generator together runnable but not running, or their CPUs stolen by the hypervisor, at least %d ms per second over the cycle, or in the seconds that set its P99).",
		strings.Join(bound, ", "), results.HostBoundLagMSPerS)
}

// stallNote says how stalls are counted.
const stallNote = "Each stall counts once, in the bucket of the smallest bound above it (10ms: under 10 ms, 20ms: 10–19 ms, …, 2000ms+: 2 s and more), as SCT counts them; empty buckets are left out."

// stallTable is SCT's per-step REACTOR_STALLED table: one row per cycle,
// the total and the non-empty buckets.
func stallTable(id, name string, cycles []results.Cycle) Table {
	labels := results.StallLabels()
	used := make([]bool, len(labels))
	for _, c := range cycles {
		for i, l := range labels {
			used[i] = used[i] || c.Stalls.Count(l) > 0
		}
	}
	suppressed := false
	for _, c := range cycles {
		suppressed = suppressed || c.Stalls.SuppressedReports > 0
	}
	t := Table{ID: id, Name: name, Columns: []string{"cycle", "total [count]"}, Note: stallNote}
	for i, l := range labels {
		if used[i] {
			t.Columns = append(t.Columns, l+" [count]")
		}
	}
	if suppressed {
		t.Columns = append(t.Columns, "suppressed reports [count]")
		t.Note += " " + suppressedNote
	}
	for _, c := range cycles {
		r := []Cell{{Value: c.Name}, {Value: strconv.FormatInt(c.Stalls.Total, 10)}}
		for i, l := range labels {
			if used[i] {
				r = append(r, Cell{Value: strconv.FormatInt(c.Stalls.Count(l), 10)})
			}
		}
		if suppressed {
			r = append(r, Cell{Value: strconv.FormatInt(c.Stalls.SuppressedReports, 10)})
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// suppressedNote says what Seastar's "Rate-limit: suppressed N backtraces"
// counts (seastar src/core/reactor.cc, maybe_report and
// report_suppressions): reports beyond 5 a minute per shard, a long stall's
// re-reports as much as new stalls.
const suppressedNote = "Suppressed reports are the stall reports Seastar's rate limit (--blocked-reactor-reports-per-minute, 5 per shard) kept out of the log, as its \"Rate-limit: suppressed N backtraces\" line counts them: a stall is reported again each time it doubles, so they may all be re-reports of a stall counted here, or up to as many further stalls of unknown length; they are not in the total. The count is printed after Seastar's minute, in the cycle that was running then."

// runStallTable counts the stalls of the whole run, per node.
func runStallTable(res *results.Result) Table {
	t := stallTable("stalls", "REACTOR_STALLED - whole run", []results.Cycle{{Name: "whole run", Stalls: res.Stalls}})
	t.Note = ""
	if res.Stalls.SuppressedReports > 0 {
		t.Note = suppressedNote
	}
	if len(res.Stalls.PerNode) > 0 {
		var parts []string
		for _, n := range sortedKeys(res.Stalls.PerNode) {
			parts = append(parts, fmt.Sprintf("%s: %d", n, res.Stalls.PerNode[n]))
		}
		t.Note = strings.TrimSpace("Stalls per node: " + strings.Join(parts, ", ") + ". " + t.Note)
	}
	if n := StallThresholdNote(res.Stalls.ThresholdMS); n != "" {
		t.Note = strings.TrimSpace(t.Note + " " + n)
	}
	return t
}

// StallThresholdNote says what each node's stall threshold was (from its
// command line) and which nodes report no stalls at all.
func StallThresholdNote(th map[string]float64) string {
	if len(th) == 0 {
		return ""
	}
	byValue := map[float64][]string{}
	var values []float64
	for _, n := range sortedKeys(th) {
		v := th[n]
		if _, ok := byValue[v]; !ok {
			values = append(values, v)
		}
		byValue[v] = append(byValue[v], n)
	}
	var parts, off []string
	for _, v := range values {
		parts = append(parts, fmt.Sprintf("%s ms on %s", strconv.FormatFloat(v, 'f', -1, 64), strings.Join(byValue[v], ", ")))
		if v >= results.NoStallReportsMS {
			off = append(off, byValue[v]...)
		}
	}
	s := "Stall threshold (--blocked-reactor-notify-ms, from each node's command line): " + strings.Join(parts, "; ") + "; no shorter stall is reported."
	if len(off) > 0 {
		s += fmt.Sprintf(" %s report no stalls at all: their threshold is beyond any stall (the scylladb/scylla images of 2025.1–2025.3 hard-code 999999999, dist/docker/scyllasetup.py), so a zero here measures nothing.", strings.Join(off, ", "))
	}
	return s
}

func diskTable(res *results.Result) Table {
	t := Table{ID: "disk", Name: "Disk usage", Columns: []string{"node [phase]", "Total [GB]", "Used [GB]", "Available [GB]", "Usage %"}}
	row := func(d results.NodeDisk, phase string) []Cell {
		return []Cell{{Value: fmt.Sprintf("%s [%s]", d.Node, phase)}, {Value: GB(d.TotalGB)}, {Value: GB(d.UsedGB)}, {Value: GB(d.AvailGB)}, {Value: GB(d.UsagePercent)}}
	}
	var fromMetrics []string
	for _, p := range res.Disk {
		for _, n := range p.Nodes {
			t.Rows = append(t.Rows, row(n, p.Phase))
		}
		cl := p.Cluster
		cl.Node = "cluster"
		t.Rows = append(t.Rows, row(cl, p.Phase))
		if p.Source == "metrics" {
			fromMetrics = append(fromMetrics, p.Phase)
		}
	}
	if len(fromMetrics) > 0 {
		t.Note = "No disk snapshot was recorded for " + strings.Join(fromMetrics, ", ") + ": read from the nearest metrics samples."
	}
	return t
}

func durationTable(res *results.Result) Table {
	t := Table{ID: "durations", Name: "Durations", Columns: []string{"phase", "duration [HH:MM:SS]"},
		Note: "Add new node(s): requested → new nodes UN; New node(s) ready: UN → data balanced; Data balanced and Latency recovered: from the request. Latency recovered is sustained: the start of the first run of consecutive intervals (thresholds.recovery.intervals, 10 by default) within target with under 1% failed or dropped operations, begun before the next step."}
	// The plan's estimates, when the run recorded them, stand beside the
	// measured durations ("New node(s) ready 00:14:29, plan 00:12:00").
	withPlan := false
	for _, d := range res.Durations {
		withPlan = withPlan || d.PlanSeconds > 0
	}
	if withPlan {
		t.Columns = append(t.Columns, "plan [HH:MM:SS]")
	}
	plan := func(secs float64) []Cell {
		switch {
		case !withPlan:
			return nil
		case secs <= 0:
			return []Cell{{Value: "—"}}
		}
		return []Cell{{Value: HMS(secs)}}
	}
	for _, d := range res.Durations {
		subj := d.Subject()
		t.Rows = append(t.Rows, append([]Cell{{Value: subj}, verdictCell(res, HMS(d.Seconds), subj, results.MetricDurationSeconds)}, plan(d.PlanSeconds)...))
	}
	n := res.Setup.RecoveryIntervals
	if n <= 0 {
		n = results.DefaultRecoveryIntervals
	}
	var skipped []string
	for _, s := range res.Steps {
		if s.CleanupSkipped != "" {
			t.Rows = append(t.Rows, append([]Cell{{Value: (results.Duration{Name: results.DurCleanup, Cycle: s.Cycle}).Subject()}, {Value: "skipped", Threshold: s.CleanupSkipped}}, plan(0)...))
			skipped = append(skipped, s.CleanupSkipped)
		}
		if s.NotRecovered {
			t.Rows = append(t.Rows, append([]Cell{{Value: (results.Duration{Name: results.DurLatencyRecov, Cycle: s.Cycle}).Subject()}, {Value: "not recovered", Status: CellFailed,
				Threshold: fmt.Sprintf("no %d consecutive intervals within target before the next step", n)}}, plan(s.PlanSeconds[results.DurLatencyRecov])...))
		}
	}
	for _, d := range res.Durations {
		if d.Name == results.DurCleanup {
			t.Note += " " + cleanupNote
			break
		}
	}
	if len(skipped) > 0 {
		t.Note += " Cleanup skipped: " + skipped[0] + "."
	}
	return t
}

// cleanupNote says what the Cleanup duration measures.
const cleanupNote = "Cleanup: nodetool cleanup on the nodes that were members before a grow batch, in parallel, once the data is balanced (SCT's nodetool_cleanup_on_all_nodes_parallel): they drop the vnodes ranges the new nodes took over."

func stepTable(res *results.Result) Table {
	t := Table{ID: "steps", Name: "Topology steps", Columns: []string{"step", "cycle", "kind", "mode", "nodes", "requested", "nodes normal", "data balanced", "latency recovered", "ended"}}
	at := func(p *time.Time) string {
		if p == nil {
			return "—"
		}
		return p.UTC().Format("15:04:05")
	}
	for _, s := range res.Steps {
		t.Rows = append(t.Rows, []Cell{{Value: s.Step}, {Value: s.Cycle}, {Value: string(s.Kind)}, {Value: s.Mode}, {Value: strings.Join(s.Nodes, ", ")},
			{Value: s.RequestedAt.UTC().Format("15:04:05")}, {Value: at(s.NormalAt)}, {Value: at(s.BalancedAt)}, {Value: at(s.RecoveredAt)}, {Value: at(s.EndedAt)}})
	}
	return t
}

// nodeOpTable is one topology step's nodes: when each was requested and
// when it joined or left, as the topology coordinator executed them. The
// note says how that coordinator runs requests made together: joins one
// at a time, removals by the database version (results.ScaleInNote).
func nodeOpTable(id, step string, res *results.Result) (Table, bool) {
	t := Table{ID: id, Name: step + " - nodes", Columns: []string{"cycle", "node", "requested", "joined", "left", "from request [s]"},
		Note: results.JoinNote}
	for _, s := range res.Steps {
		if s.Step == step && (s.Kind == results.KindShrink || s.Kind == results.KindDrain) {
			t.Note = results.ScaleInNote(res.Setup.DatabaseVersion)
		}
	}
	at := func(p *time.Time) string {
		if p == nil {
			return "—"
		}
		return p.UTC().Format("15:04:05.0")
	}
	for _, s := range res.Steps {
		if s.Step != step {
			continue
		}
		for _, op := range s.NodeOps {
			took := "—"
			if done := op.JoinedAt; done != nil || op.LeftAt != nil {
				if done == nil {
					done = op.LeftAt
				}
				took = strconv.FormatFloat(done.Sub(op.RequestedAt).Seconds(), 'f', 1, 64)
			}
			t.Rows = append(t.Rows, []Cell{{Value: s.Cycle}, {Value: op.Node}, {Value: op.RequestedAt.UTC().Format("15:04:05.0")},
				{Value: at(op.JoinedAt)}, {Value: at(op.LeftAt)}, {Value: took}})
		}
	}
	return t, len(t.Rows) > 0
}

// MaxErrorRows bounds the database errors shown.
const MaxErrorRows = 20

func errorTable(res *results.Result) Table {
	t := Table{ID: "errors", Name: "Database errors", Columns: []string{"type", "severity", "node", "count", "first seen", "first line"}}
	for i, e := range res.Errors {
		if i == MaxErrorRows {
			t.Note = fmt.Sprintf("%d more error groups not shown (see result.json).", len(res.Errors)-MaxErrorRows)
			break
		}
		t.Rows = append(t.Rows, []Cell{{Value: e.Type}, {Value: e.Severity}, {Value: e.Node}, {Value: strconv.FormatInt(e.Count, 10)},
			{Value: e.First.UTC().Format("15:04:05")}, {Value: e.Line}})
	}
	if len(res.Errors) == 0 {
		t.Note = "No database errors."
	}
	return t
}

// errorEventTable lists the database error events one by one, where in the
// run they happened (as the write-up's during_nemesis lines do) and whether
// an expected_errors filter expected them.
func errorEventTable(res *results.Result) Table {
	t := Table{ID: "error-events", Name: "Database error events", Columns: []string{"time", "node", "type", "severity", "phase", "step", "cycle", "verdict", "line"}}
	for i, e := range res.ErrorEvents {
		if i == MaxErrorRows {
			t.Note = fmt.Sprintf("%d more error events not shown (see result.json).", len(res.ErrorEvents)-MaxErrorRows)
			break
		}
		verdict := "fails the run"
		switch {
		case e.Expected:
			verdict = "expected"
		case !e.Failing():
			verdict = "tolerated (" + e.Severity + ")"
		}
		t.Rows = append(t.Rows, []Cell{{Value: e.Time.UTC().Format("15:04:05")}, {Value: e.Node}, {Value: e.Type}, {Value: e.Severity},
			{Value: string(e.Phase)}, {Value: e.Step}, {Value: e.Cycle}, {Value: verdict}, {Value: e.Line}})
	}
	if len(res.ErrorEvents) == 0 {
		t.Note = "No database error events."
	}
	return t
}

func thresholdTable(res *results.Result) Table {
	t := Table{ID: "thresholds", Name: "Thresholds", Columns: []string{"subject", "metric", "limit", "value", "verdict"}}
	for _, v := range res.Verdicts {
		st, word := CellPassed, "pass"
		if !v.Passed {
			st, word = CellFailed, "FAIL"
		}
		t.Rows = append(t.Rows, []Cell{{Value: v.Subject}, {Value: v.Threshold.Metric}, {Value: limitText(v)},
			{Value: fmtValue(v.Value, v.Threshold.Metric), Status: st, Threshold: verdictText(v)}, {Value: word, Status: st}})
	}
	if b := res.Setup.Baseline; b != nil && len(res.Setup.BaselineRules) > 0 {
		var runs []string
		for _, r := range b.Runs {
			runs = append(runs, r.RunID)
		}
		switch len(runs) {
		case 0:
			t.Note = "Baseline rules: no previous run of this scenario in " + b.Source + "; only their fixed limits apply."
		default:
			t.Note = fmt.Sprintf("Baseline rules (Argus best_pct, best_abs, fixed_limit; a value passes when strictly better than every limit) against the best of %d previous run(s) from %s: %s.",
				len(runs), b.Source, strings.Join(runs, ", "))
		}
	}
	if len(res.Setup.Thresholds) == 0 && len(res.Setup.BaselineRules) == 0 {
		t.Note = "The scenario sets no thresholds."
	} else if len(res.Verdicts) == 0 {
		t.Note = "No threshold applied to anything measured."
	}
	return t
}

// MS formats milliseconds with two decimals.
func MS(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// GB formats gigabytes (and percents) with two decimals, three below 1
// (emulated nodes have disks of a fraction of a GB).
func GB(v float64) string {
	if v != 0 && math.Abs(v) < 1 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Thousands formats a rate rounded to an integer with thousands separators.
func Thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// HMS formats seconds as HH:MM:SS.
func HMS(secs float64) string {
	if secs < 0 || math.IsNaN(secs) {
		return "—"
	}
	s := int64(math.Round(secs))
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}
