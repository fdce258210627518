package results

import (
	"strings"
	"testing"
)

func TestFiguresFlattenResult(t *testing.T) {
	res := &Result{
		Derived:   &Derived{ScaleOutSeconds: 42, OpsPerVCPUAfter: 900},
		Durations: []Duration{{Name: DurAddNodes, Cycle: "Cycle #1", Seconds: 10}, {Name: DurAddNodes, Cycle: "Cycle #2", Seconds: 12}, {Name: "Soft Limit", Seconds: 30}},
		Cycles:    []Cycle{{Name: "Cycle #0", ReadP99MS: 3, WriteOpsPerS: 100, ReadOpsPerS: 100, Stalls: Stalls{Total: 2}}},
	}
	f := Figures(res)
	for name, want := range map[string]float64{
		FigScaleOut: 42, FigOpsPerVCPUAfter: 900, DurAddNodes: 22, "Cycle #2." + DurAddNodes: 12, "Soft Limit": 30,
		"Cycle #0.read_p99_ms": 3, "Cycle #0.total_ops_per_sec": 200, "Cycle #0.stalls": 2,
	} {
		if f[name] != want {
			t.Errorf("%s = %g, want %g", name, f[name], want)
		}
	}
	// Not measured is absent, never 0.
	if _, ok := f[FigLatencyRecovered]; ok {
		t.Error("an unmeasured derived value is a figure")
	}
	if _, ok := f["Cycle #0."+FigCycleBacklog]; ok {
		t.Error("a compaction backlog the nodes did not export is a figure")
	}
	res.Cycles[0].CompactionBacklog = &BacklogGrowth{Node: "node-1", Start: 2, End: 24}
	if v := Figures(res)["Cycle #0."+FigCycleBacklog]; v != 24 {
		t.Errorf("Cycle #0.compaction_backlog = %g, want the backlog at the cycle's end (24)", v)
	}
	if _, ok := f["Cycle #0."+FigCycleSaturated]; ok {
		t.Error("a reactor utilization the nodes did not export is a figure")
	}
	res.Cycles[0].BusiestReactor = &ReactorPeak{Node: "node-1", PeakPct: 100, SaturatedS: 3.5}
	if v := Figures(res)["Cycle #0."+FigCycleSaturated]; v != 3.5 {
		t.Errorf("Cycle #0.%s = %g, want the busiest reactor's saturated time (3.5)", FigCycleSaturated, v)
	}
	// Every flattened name passes the syntax check.
	for name := range f {
		if err := CheckFigureSyntax(name, []string{DurAddNodes, "Soft Limit"}, nil); err != nil {
			t.Error(err)
		}
	}
	if err := CheckFigureSyntax("Cycle #1.p99", nil, nil); err == nil || !strings.Contains(err.Error(), "not a cycle metric") {
		t.Errorf("bad cycle metric: %v", err)
	}
	if FigureLowerBetter("Cycle #1.total_ops_per_sec") || !FigureLowerBetter(DurNodesReady) {
		t.Error("direction of figures")
	}
}

// A cycle's operations have figures by name, their direction follows the
// metric, and a name whose operation holds dots splits at the last one.
func TestOpFigures(t *testing.T) {
	res := &Result{Cycles: []Cycle{{Name: "Cycle #1", Ops: []OpFigures{
		{Name: "read1", Class: OpRead, OpsPerS: 120, P50MS: 1, P90MS: 2, P99MS: 3.5, Errors: 2, Dropped: 1},
		{Name: "q.v2", Class: OpRead, P99MS: 7},
	}}}}
	f := Figures(res)
	for name, want := range map[string]float64{"Cycle #1.op.read1.p99_ms": 3.5, "Cycle #1.op.read1.ops_per_sec": 120,
		"Cycle #1.op.read1.errors": 2, "Cycle #1.op.read1.dropped": 1, "Cycle #1.op.q.v2.p99_ms": 7} {
		if got, ok := f[name]; !ok || got != want {
			t.Errorf("%s = %v %v, want %v", name, got, ok, want)
		}
	}
	if FigureLowerBetter("Cycle #1.op.read1.ops_per_sec") || !FigureLowerBetter("Cycle #1.op.read1.p99_ms") {
		t.Error("op/s is better higher, latency lower")
	}
	if op, m, ok := SplitOpFigure("op.q.v2.p99_ms"); !ok || op != "q.v2" || m != "p99_ms" {
		t.Errorf("split %q %q %v", op, m, ok)
	}
	if err := CheckFigureSyntax("Cycle #1.op.q.v2.p99_ms", nil, []string{"q.v2"}); err != nil {
		t.Error(err)
	}
	if err := CheckFigureSyntax("Cycle #1.op.read1.p95_ms", nil, []string{"read1"}); err == nil || !strings.Contains(err.Error(), "p50_ms, p90_ms, p99_ms") {
		t.Errorf("unknown op metric: %v", err)
	}
}
