package results

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The vocabulary of a run lives here, once: the words events.jsonl and
// result.json use for phases, step kinds, durations, metrics and threshold
// selectors. Scenario validation, the nemesis, the phase runner and
// reporting all take them from this file, so a name a run computes is a name
// a threshold may use.

// Phase is a phase of a run (the Phase of phase_start/phase_end and progress events).
type Phase string

// Phases in run order.
const (
	PhaseProvision Phase = "provision"
	PhaseSchema    Phase = "schema"
	PhaseFill      Phase = "fill"
	PhaseHold      Phase = "hold"
	// PhaseCompactions waits for the compactions left by the fills to
	// settle before the steady state (SCT's wait_no_compactions_running).
	PhaseCompactions Phase = "compactions"
	PhaseCalibrate   Phase = "calibrate"
	PhaseSteady      Phase = "steady_state"
	PhaseNemesis     Phase = "nemesis"
	PhaseFinalHold   Phase = "final_hold"
	PhaseValidate    Phase = "validate"
	PhaseTeardown    Phase = "teardown"
)

// StepKind is the kind of a nemesis step as events and results record it.
type StepKind string

// Step kinds. A scenario's shrink_cluster and decommission are both shrink.
const (
	KindGrow   StepKind = "grow"
	KindShrink StepKind = "shrink"
	KindDrain  StepKind = "drain"
	KindHold   StepKind = "hold"
	KindHook   StepKind = "hook"
)

// IsTopology reports whether a step of this kind changes the cluster's membership.
func (k StepKind) IsTopology() bool {
	return k == KindGrow || k == KindShrink || k == KindDrain
}

// Step modes of topology steps.
const (
	ModeSerial   = "serial"
	ModeParallel = "parallel"
)

// Names of the durations computed from nemesis step events.
const (
	DurAddNodes     = "Add new node(s)"   // grow requested → all new nodes UN
	DurNodesReady   = "New node(s) ready" // new nodes UN → data balanced (they serve their share)
	DurRemoveNodes  = "Remove node(s)"    // shrink requested → nodes left
	DurDrainNodes   = "Drain node(s)"     // drain requested → nodes left
	DurDataBalanced = "Data balanced"     // step requested → no tablet migrations in flight
	DurLatencyRecov = "Latency recovered" // step requested → P99 back under its target
	// DurCleanup: nodetool cleanup on the pre-existing nodes after a grow on
	// a vnodes keyspace, all nodes in parallel (SCT sdcm/nemesis
	// nodetool_cleanup_on_all_nodes_parallel): cleanup requested → every node done.
	DurCleanup = "Cleanup"
	// DurCompactions: the compactions phase, the wait before the steady
	// state until no compaction had run for the quiet period (or its timeout).
	DurCompactions = "Compactions settled"
)

// DurHookPrefix prefixes the duration of a hook step: "Hook <step name>".
const DurHookPrefix = "Hook "

// StandardDurations are the named durations a run measures for topology
// steps and the wait for compactions before the steady state (besides one
// per fill phase, named after it, and one per hook step). A duration
// threshold may name any of them.
var StandardDurations = []string{DurAddNodes, DurNodesReady, DurRemoveNodes, DurDrainNodes, DurDataBalanced, DurLatencyRecov, DurCleanup, DurCompactions}

// SteadyStateCycle is the name of the steady-state cycle.
const SteadyStateCycle = "Cycle #0"

// Threshold cycle selectors besides an exact cycle name or a nemesis step name.
const (
	SelectAll     = "*"
	SelectSteady  = "steady_state"
	SelectNemesis = "nemesis"
)

// Threshold metrics.
const (
	MetricWriteP90        = "write_p90_ms"
	MetricWriteP99        = "write_p99_ms"
	MetricReadP90         = "read_p90_ms"
	MetricReadP99         = "read_p99_ms"
	MetricWriteOps        = "write_ops_per_sec"
	MetricReadOps         = "read_ops_per_sec"
	MetricTotalOps        = "total_ops_per_sec"
	MetricDurationSeconds = "duration_seconds"
)

// CycleMetric is a per-cycle threshold metric.
type CycleMetric struct {
	Name  string
	Floor bool // a floor (value must be at least the limit), else a ceiling
}

// CycleMetrics are the metrics a cycle threshold may limit, in report order.
var CycleMetrics = []CycleMetric{
	{MetricWriteP90, false}, {MetricWriteP99, false}, {MetricReadP90, false}, {MetricReadP99, false},
	{MetricWriteOps, true}, {MetricReadOps, true}, {MetricTotalOps, true},
}

// Metric returns the cycle's value of a cycle metric; false for an unknown name.
func (c *Cycle) Metric(name string) (float64, bool) {
	switch name {
	case MetricWriteP90:
		return c.WriteP90MS, true
	case MetricWriteP99:
		return c.WriteP99MS, true
	case MetricReadP90:
		return c.ReadP90MS, true
	case MetricReadP99:
		return c.ReadP99MS, true
	case MetricWriteOps:
		return c.WriteOpsPerS, true
	case MetricReadOps:
		return c.ReadOpsPerS, true
	case MetricTotalOps:
		return c.WriteOpsPerS + c.ReadOpsPerS, true
	}
	return 0, false
}

// IsDuration reports whether the threshold limits a named duration rather than a cycle metric.
func (t Threshold) IsDuration() bool { return t.Metric == MetricDurationSeconds }

// Selects reports whether a cycle threshold applies to the cycle: every
// cycle ("*" or empty), the steady state, every nemesis cycle, the cycle of
// that exact name, or every cycle of the nemesis step of that name.
func (t Threshold) Selects(c *Cycle) bool {
	if t.IsDuration() || (t.RatioToSteady && c.Name == SteadyStateCycle) {
		return false
	}
	switch t.Cycle {
	case SelectAll, "":
		return true
	case SelectSteady:
		return c.Name == SteadyStateCycle
	case SelectNemesis:
		return c.Name != SteadyStateCycle
	}
	return t.Cycle == c.Name || (c.Step != "" && t.Cycle == c.Step)
}

// SelectsDuration reports whether a duration threshold applies to the
// duration: every duration ("*"), the durations of that name (of every step),
// or every duration of the nemesis step of that name.
func (t Threshold) SelectsDuration(d *Duration) bool {
	if !t.IsDuration() {
		return false
	}
	return t.Cycle == SelectAll || t.Cycle == d.Name || (d.Step != "" && t.Cycle == d.Step)
}

// Passes reports whether a value meets the threshold (NaN never does).
func (t Threshold) Passes(v float64) bool { return passesLimit(v, t.Limit, t.Floor) }

// Judge returns the limit a value is held to — the threshold's, or for a
// ratio to the steady state or to the plan that ratio times the baseline
// (Cycle #0's value, the plan's estimate) — and whether the value meets it.
func (t Threshold) Judge(v, baseline float64) (limit float64, passed bool) {
	limit = t.Limit
	if t.RatioToSteady || t.RatioToPlan {
		limit = t.Limit * baseline
	}
	return limit, passesLimit(v, limit, t.Floor)
}

func passesLimit(v, limit float64, floor bool) bool {
	if v != v || limit != limit {
		return false
	}
	if floor {
		return v >= limit
	}
	return v <= limit
}

// Placeholders of a dashboard URL template (report.dashboard_url).
const (
	DashboardFrom = "{from_ms}"
	DashboardTo   = "{to_ms}"
)

// CheckDashboardURL checks a dashboard URL template: an http(s) URL whose
// only placeholders are {from_ms} and {to_ms}.
func CheckDashboardURL(tmpl string) error {
	rest := strings.NewReplacer(DashboardFrom, "0", DashboardTo, "0").Replace(tmpl)
	if strings.ContainsAny(rest, "{}") {
		return fmt.Errorf("%q: the only placeholders are %s and %s", tmpl, DashboardFrom, DashboardTo)
	}
	u, err := url.Parse(rest)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", tmpl)
	}
	return nil
}

// DashboardLink fills a dashboard URL template with a window (Unix milliseconds).
func DashboardLink(tmpl string, from, to time.Time) string {
	return strings.NewReplacer(DashboardFrom, strconv.FormatInt(from.UnixMilli(), 10), DashboardTo, strconv.FormatInt(to.UnixMilli(), 10)).Replace(tmpl)
}
