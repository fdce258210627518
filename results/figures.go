package results

import (
	"fmt"
	"slices"
	"strings"
)

// Figures are a run's numbers by one flat name each, so that a matrix can
// compare and judge any of them (`elasticity matrix --expect`) and record
// them in one JSON line per pass:
//   - a derived value by its result.json key: scale_out_seconds, ops_per_vcpu_after ...
//   - a named duration: "New node(s) ready", "Soft Limit" ... (the total over the
//     run's steps and batches), or one batch's: "Cycle #2.Add new node(s)";
//   - a cycle metric: "Cycle #1.read_p99_ms", "Cycle #0.total_ops_per_sec" ...
//   - one operation's figure in a cycle (Cycle.Ops, named by the model's
//     operation): "Cycle #1.op.read1.p99_ms", "Cycle #0.op.insert.ops_per_sec".

// Derived figure names (result.json's derived keys).
const (
	FigScaleOut         = "scale_out_seconds"
	FigNodesNormal      = "nodes_normal_seconds"
	FigDataBalanced     = "data_balanced_seconds"
	FigLatencyRecovered = "latency_recovered_seconds"
	FigVCPUsBefore      = "vcpus_before"
	FigVCPUsAfter       = "vcpus_after"
	FigOpsPerVCPUBefore = "ops_per_vcpu_before"
	FigOpsPerVCPUAfter  = "ops_per_vcpu_after"
)

// DerivedFigures are the derived figure names in report order.
var DerivedFigures = []string{FigScaleOut, FigNodesNormal, FigDataBalanced, FigLatencyRecovered,
	FigVCPUsBefore, FigVCPUsAfter, FigOpsPerVCPUBefore, FigOpsPerVCPUAfter}

// Cycle figure metrics besides the threshold metrics (CycleMetrics).
const (
	FigCycleDuration = "duration_seconds"
	FigCycleErrors   = "errors"
	FigCycleDropped  = "dropped"
	FigCycleStalls   = "stalls"
	FigCycleHostLag  = "host_lag_ms_per_sec"
	FigCycleLoadLag  = "loader_lag_ms_per_sec"
	FigCycleSteal    = "cpu_steal_pct"
	// FigCycleBacklog is the normalized compaction backlog at the cycle's
	// end of the node whose backlog grew the most (Cycle.CompactionBacklog);
	// absent when the nodes do not export it.
	FigCycleBacklog = "compaction_backlog"
	// FigCycleSaturated is how long the cycle's busiest reactor was
	// saturated, in seconds (Cycle.BusiestReactor); absent when the nodes
	// do not export their busiest shard's utilization.
	FigCycleSaturated = "reactor_saturated_s"
)

// CycleFigures are the metrics a "Cycle #N.<metric>" figure may name.
func CycleFigures() []string {
	out := make([]string, 0, len(CycleMetrics)+9)
	for _, m := range CycleMetrics {
		out = append(out, m.Name)
	}
	return append(out, FigCycleDuration, FigCycleErrors, FigCycleDropped, FigCycleStalls, FigCycleHostLag, FigCycleLoadLag, FigCycleSteal, FigCycleBacklog, FigCycleSaturated)
}

// OpFigurePrefix starts a cycle's per-operation figure: "Cycle #N.op.<operation>.<metric>".
const OpFigurePrefix = "op."

// OpFigureMetrics are the metrics of an operation's figures, in report
// order: OpFigures' result.json keys.
var OpFigureMetrics = []string{"p50_ms", "p90_ms", "p99_ms", "ops_per_sec", "errors", "dropped"}

// OpFigure names one operation's figure in a cycle: "Cycle #1.op.read1.p99_ms".
func OpFigure(cycle, op, metric string) string {
	return CycleFigure(cycle, OpFigurePrefix+op+"."+metric)
}

// SplitOpFigure reads a cycle figure's metric part ("op.read1.p99_ms") as
// an operation's: its operation and metric; ok is false for any other
// name (an operation's name may hold dots: the metric is the last part).
func SplitOpFigure(metric string) (op, m string, ok bool) {
	rest, ok := strings.CutPrefix(metric, OpFigurePrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, ".")
	if i <= 0 || !slices.Contains(OpFigureMetrics, rest[i+1:]) {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// opFigureValue is an operation's value of one of OpFigureMetrics.
func opFigureValue(o *OpFigures, metric string) float64 {
	switch metric {
	case "p50_ms":
		return o.P50MS
	case "p90_ms":
		return o.P90MS
	case "p99_ms":
		return o.P99MS
	case "ops_per_sec":
		return o.OpsPerS
	case "errors":
		return float64(o.Errors)
	}
	return float64(o.Dropped)
}

// FigureLowerBetter says which way a figure improves: durations, latencies,
// errors and stalls are better lower; throughput and capacity higher.
func FigureLowerBetter(name string) bool {
	if _, m, ok := strings.Cut(name, "."); ok && strings.HasPrefix(name, "Cycle #") {
		name = m
	}
	if _, m, ok := SplitOpFigure(name); ok {
		return m != "ops_per_sec"
	}
	switch name {
	case FigOpsPerVCPUBefore, FigOpsPerVCPUAfter, FigVCPUsBefore, FigVCPUsAfter, MetricWriteOps, MetricReadOps, MetricTotalOps:
		return false
	}
	return true
}

func derivedValue(d *Derived, name string) (float64, bool) {
	switch name {
	case FigScaleOut:
		return d.ScaleOutSeconds, true
	case FigNodesNormal:
		return d.NodesNormalSeconds, true
	case FigDataBalanced:
		return d.DataBalancedSeconds, true
	case FigLatencyRecovered:
		return d.LatencyRecoveredSeconds, true
	case FigVCPUsBefore:
		return float64(d.VCPUsBefore), true
	case FigVCPUsAfter:
		return float64(d.VCPUsAfter), true
	case FigOpsPerVCPUBefore:
		return d.OpsPerVCPUBefore, true
	case FigOpsPerVCPUAfter:
		return d.OpsPerVCPUAfter, true
	}
	return 0, false
}

func cycleFigure(c *Cycle, name string) (float64, bool) {
	if v, ok := c.Metric(name); ok {
		return v, true
	}
	switch name {
	case FigCycleDuration:
		return c.DurationS, true
	case FigCycleErrors:
		return float64(c.Errors), true
	case FigCycleDropped:
		return float64(c.Dropped), true
	case FigCycleStalls:
		return float64(c.Stalls.Total), true
	case FigCycleHostLag:
		return c.HostLagMSPerS, true
	case FigCycleLoadLag:
		return c.LoaderLagMSPerS, true
	case FigCycleSteal:
		return c.CPUStealPct, true
	case FigCycleBacklog:
		if c.CompactionBacklog == nil {
			return 0, false
		}
		return c.CompactionBacklog.End, true
	case FigCycleSaturated:
		if c.BusiestReactor == nil {
			return 0, false
		}
		return c.BusiestReactor.SaturatedS, true
	}
	return 0, false
}

// CycleFigure names a cycle's figure: "Cycle #1.read_p99_ms".
func CycleFigure(cycle, metric string) string { return cycle + "." + metric }

// Figures flattens a result into its figures. A derived value the run did
// not measure (zero: no topology step, no recovery) is left out, so that a
// missing figure never counts as a measured 0.
func Figures(res *Result) map[string]float64 {
	out := map[string]float64{}
	if res.Derived != nil {
		for _, n := range DerivedFigures {
			if v, _ := derivedValue(res.Derived, n); v != 0 {
				out[n] = v
			}
		}
	}
	for _, d := range res.Durations {
		out[d.Name] += d.Seconds
		if d.Cycle != "" {
			out[CycleFigure(d.Cycle, d.Name)] += d.Seconds
		}
	}
	for i := range res.Cycles {
		c := &res.Cycles[i]
		for _, m := range CycleFigures() {
			if v, ok := cycleFigure(c, m); ok {
				out[CycleFigure(c.Name, m)] = v
			}
		}
		for j := range c.Ops {
			for _, m := range OpFigureMetrics {
				out[OpFigure(c.Name, c.Ops[j].Name, m)] = opFigureValue(&c.Ops[j], m)
			}
		}
	}
	return out
}

// FigureError is a figure name that is not in the vocabulary.
type FigureError struct {
	Name string
	Why  string
}

func (e *FigureError) Error() string { return fmt.Sprintf("unknown figure %q: %s", e.Name, e.Why) }

// CheckFigureSyntax checks that a name is a figure of the vocabulary: a
// derived key, "Cycle #N.<metric>" with a cycle metric, a duration name,
// or "Cycle #N.op.<operation>.<metric>" with one of ops (the plan decides
// which durations, cycles and operations a run has: see
// plan.Plan.CheckFigure).
func CheckFigureSyntax(name string, durations, ops []string) error {
	for _, n := range DerivedFigures {
		if name == n {
			return nil
		}
	}
	for _, n := range durations {
		if name == n {
			return nil
		}
	}
	if cyc, m, ok := strings.Cut(name, "."); ok && strings.HasPrefix(cyc, "Cycle #") {
		for _, n := range CycleFigures() {
			if m == n {
				return nil
			}
		}
		for _, n := range durations {
			if m == n {
				return nil
			}
		}
		if strings.HasPrefix(m, OpFigurePrefix) {
			return checkOpFigure(name, m, ops)
		}
		return &FigureError{Name: name, Why: fmt.Sprintf("%q is not a cycle metric (%s), a duration or op.<operation>.<metric>", m, strings.Join(CycleFigures(), ", "))}
	}
	return &FigureError{Name: name, Why: "not a derived value (" + strings.Join(DerivedFigures, ", ") + "), a duration (" + strings.Join(durations, ", ") + ") or \"Cycle #N.<metric>\""}
}

// checkOpFigure checks a cycle's "op.<operation>.<metric>" part against
// the operations the workload has.
func checkOpFigure(name, m string, ops []string) error {
	op, _, ok := SplitOpFigure(m)
	if !ok {
		return &FigureError{Name: name, Why: fmt.Sprintf("%q is not op.<operation>.<metric> with a metric of %s", m, strings.Join(OpFigureMetrics, ", "))}
	}
	if !slices.Contains(ops, op) {
		return &FigureError{Name: name, Why: fmt.Sprintf("the workload has no operation %q (it has %s)", op, strings.Join(ops, ", "))}
	}
	return nil
}
