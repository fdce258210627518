package results

import "testing"

func TestThresholdSelects(t *testing.T) {
	c0 := &Cycle{Name: SteadyStateCycle}
	c1 := &Cycle{Name: "Cycle #1", Step: "Add 3 x i4i.4xlarge"}
	for _, tc := range []struct {
		sel    string
		c0, c1 bool
	}{
		{"", true, true}, {SelectAll, true, true}, {SelectSteady, true, false}, {SelectNemesis, false, true},
		{"Cycle #1", false, true}, {"Add 3 x i4i.4xlarge", false, true}, {"Cycle #2", false, false},
	} {
		th := Threshold{Cycle: tc.sel, Metric: MetricReadP99, Limit: 1}
		if th.Selects(c0) != tc.c0 || th.Selects(c1) != tc.c1 {
			t.Errorf("%q selects Cycle #0 %v, Cycle #1 %v; want %v %v", tc.sel, th.Selects(c0), th.Selects(c1), tc.c0, tc.c1)
		}
	}
	d := &Duration{Name: DurDrainNodes, Step: "drain one", Cycle: "Cycle #2"}
	for sel, want := range map[string]bool{SelectAll: true, DurDrainNodes: true, "drain one": true, DurRemoveNodes: false, "Cycle #2": false} {
		th := Threshold{Cycle: sel, Metric: MetricDurationSeconds, Limit: 1}
		if th.SelectsDuration(d) != want {
			t.Errorf("duration threshold %q selects %v, want %v", sel, !want, want)
		}
		if th.Selects(c1) {
			t.Errorf("duration threshold %q selects a cycle", sel)
		}
	}
	if (Threshold{Cycle: SelectAll, Metric: MetricReadP99}).SelectsDuration(d) {
		t.Error("a cycle threshold selects a duration")
	}
}

func TestCycleMetricsAndKinds(t *testing.T) {
	c := &Cycle{WriteP90MS: 1, WriteP99MS: 2, ReadP90MS: 3, ReadP99MS: 4, WriteOpsPerS: 5, ReadOpsPerS: 6}
	want := map[string]float64{MetricWriteP90: 1, MetricWriteP99: 2, MetricReadP90: 3, MetricReadP99: 4, MetricWriteOps: 5, MetricReadOps: 6, MetricTotalOps: 11}
	for _, m := range CycleMetrics {
		v, ok := c.Metric(m.Name)
		if !ok || v != want[m.Name] {
			t.Errorf("%s = %v %v, want %v", m.Name, v, ok, want[m.Name])
		}
		if m.Floor != (m.Name == MetricWriteOps || m.Name == MetricReadOps || m.Name == MetricTotalOps) {
			t.Errorf("%s floor %v", m.Name, m.Floor)
		}
	}
	if _, ok := c.Metric(MetricDurationSeconds); ok {
		t.Error("duration_seconds is not a cycle metric")
	}
	for k, want := range map[StepKind]bool{KindGrow: true, KindShrink: true, KindDrain: true, KindHold: false, KindHook: false} {
		if k.IsTopology() != want {
			t.Errorf("%s.IsTopology() = %v", k, !want)
		}
	}
	if (Threshold{Limit: 5, Floor: true}).Passes(4) || !(Threshold{Limit: 5}).Passes(5) || (Threshold{Limit: 5}).Passes(nan()) {
		t.Error("Passes")
	}
}

func nan() float64 { z := 0.0; return z / z }
