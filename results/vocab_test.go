package results

import (
	"testing"
	"time"
)

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

// Sustained recovery on a recorded interval series: a single good second
// inside a bad stretch is not recovery; the first run of n good intervals is.
func TestSustainedRecovery(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var ivs []*RecoveryInterval
	//            0123456789012345678
	pattern := "bbbgbbbbggggbgggggg"
	for i, c := range pattern {
		p99, bad := 50.0, int64(0)
		if c == 'g' {
			p99 = 3
		}
		if i == 12 { // within target but 2% of operations failed
			p99, bad = 3, 2
		}
		ivs = append(ivs, &RecoveryInterval{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second),
			Ops: map[string]RecoveryOp{OpRead: {Count: 98, Bad: bad, P99MS: p99}}})
	}
	targets := map[string]float64{OpRead: 5}
	at, ok := SustainedRecovery(ivs, targets, 4, t0, time.Time{})
	if !ok || !at.Equal(t0.Add(8*time.Second)) {
		t.Errorf("n=4: %v %v, want the start of interval 8", at, ok)
	}
	at, ok = SustainedRecovery(ivs, targets, 5, t0, time.Time{})
	if !ok || !at.Equal(t0.Add(13*time.Second)) {
		t.Errorf("n=5: %v %v, want interval 13 (12 had 2%% failures)", at, ok)
	}
	if _, ok := SustainedRecovery(ivs, targets, 5, t0, t0.Add(10*time.Second)); ok {
		t.Error("recovered although no good run begins before the next step")
	}
	if _, ok := SustainedRecovery(ivs, targets, 7, t0, time.Time{}); ok {
		t.Error("recovered with no 7 good intervals")
	}
	if at, ok := SustainedRecovery(ivs, targets, 1, t0, time.Time{}); !ok || !at.Equal(t0.Add(3*time.Second)) {
		t.Errorf("n=1 is the old rule: %v", at)
	}
	// Targets: the steady-state P99 threshold, else 1.5 × Cycle #0's P99 (at least 1 ms).
	steady := &Cycle{Name: SteadyStateCycle, WriteP99MS: 0.4, ReadP99MS: 4}
	got := RecoveryTargets([]Threshold{{Cycle: SelectSteady, Metric: MetricReadP99, Limit: 9}, {Cycle: SelectNemesis, Metric: MetricWriteP99, Limit: 2}}, steady)
	if got[OpRead] != 9 || got[OpWrite] != MinRecoveryTargetMS {
		t.Errorf("targets %v", got)
	}
}
