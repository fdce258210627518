package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

const withGrow = minimal + "nemesis:\n  - grow_cluster: {name: grow}\n  - hook: {name: notify, command: 'true'}\n"

// Every key of issue 19's verdicts is validated like the rest: file:line,
// field path, did-you-mean.
func TestVerdictKeysBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		sets      []string
		line      int
		path, msg string
	}{
		{"recovery intervals zero", minimal + "thresholds:\n  recovery:\n    intervals: 0\n", nil, 4, "thresholds.recovery.intervals", "within 1..3600"},
		{"recovery intervals text", minimal + "thresholds:\n  recovery:\n    intervals: many\n", nil, 4, "thresholds.recovery.intervals", "expected an integer"},
		{"recovery misspelt", minimal + "thresholds:\n  recovery:\n    interval: 5\n", nil, 4, "thresholds.recovery.interval", `did you mean "intervals"`},
		{"recovery by --set", minimal, []string{"thresholds.recovery.intervals=-2"}, 0, "thresholds.recovery.intervals", "within 1..3600"},
		{"baseline misspelt", minimal + "thresholds:\n  basline: {}\n", nil, 3, "thresholds.basline", `did you mean "baseline"`},
		{"baseline rule misspelt", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {bets_pct: 10}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms.bets_pct", `did you mean "best_pct"`},
		{"baseline metric misspelt", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99: {best_pct: 10}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99", `did you mean "read_p99_ms"`},
		{"baseline rule empty", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms", "sets no limit (best_pct, best_abs, fixed_limit)"},
		{"baseline entry empty", minimal + "thresholds:\n  baseline:\n    cycles:\n      - cycle: nemesis\n", nil, 5, "thresholds.baseline.cycles.0", "sets no rule"},
		{"baseline negative pct", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms:\n          best_pct: -5\n", nil, 6, "thresholds.baseline.cycles.0.read_p99_ms.best_pct", "must be >= 0"},
		{"baseline throughput pct", minimal + "thresholds:\n  baseline:\n    cycles:\n      - total_ops_per_sec: {best_pct: 100}\n", nil, 5, "thresholds.baseline.cycles.0.total_ops_per_sec.best_pct", "below 100 for a throughput"},
		{"baseline pct not a number", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {best_pct: lots}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms.best_pct", "expected a number"},
		{"baseline fixed zero", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {fixed_limit: 0}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms.fixed_limit", "must be > 0"},
		{"baseline bad cycle", minimal + "thresholds:\n  baseline:\n    cycles:\n      - cycle: cycle1\n        read_p99_ms: {best_pct: 5}\n", nil, 5, "thresholds.baseline.cycles.0.cycle", "is not \"*\", steady_state"},
		{"baseline unknown duration", minimal + "thresholds:\n  baseline:\n    durations:\n      \"Data balance\": {best_pct: 5}\n", nil, 5, "thresholds.baseline.durations.Data balance", `did you mean "Data balanced"`},
		{"baseline duration not a rule", minimal + "thresholds:\n  baseline:\n    durations:\n      \"Data balanced\": 5m\n", nil, 5, "thresholds.baseline.durations.Data balanced", "expected a mapping"},
		{"baseline durations list", minimal + "thresholds:\n  baseline:\n    durations: [a]\n", nil, 4, "thresholds.baseline.durations", "expected a mapping of duration names to rules"},
		{"plan factor bad", minimal + "thresholds:\n  durations:\n    \"New node(s) ready\": fastx plan\n", nil, 4, "thresholds.durations.New node(s) ready", "invalid multiple of the plan"},
		{"plan factor zero", minimal + "thresholds:\n  durations:\n    \"New node(s) ready\": 0x plan\n", nil, 4, "thresholds.durations.New node(s) ready", "want a positive number"},
		{"plan factor on a hook", withGrow + "thresholds:\n  durations:\n    notify: 2x plan\n", nil, 7, "thresholds.durations.notify", "has no plan estimate"},
		{"duration misspelt", minimal + "thresholds:\n  durations:\n    \"New node ready\": 1.5x plan\n", nil, 4, "thresholds.durations.New node ready", `did you mean "New node(s) ready"`},
		{"plan factor by --set", minimal, []string{`thresholds.durations={"Data balanced": "-1x plan"}`}, 0, "thresholds.durations.Data balanced", "invalid multiple of the plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, problemsOf(t, tc.src, tc.sets...), tc.sets, tc.line, tc.path, tc.msg)
		})
	}
}

// The new keys resolve into the plan: rules with their direction, a plan
// multiple never scaled, duration rules' seconds scaled like durations,
// the recovery N; and the resolved scenario.yaml loads back the same.
func TestVerdictKeysResolve(t *testing.T) {
	src := withGrow + `thresholds:
  durations:
    "New node(s) ready": 1.5x plan
    "Data balanced": 30m
  recovery: {intervals: 4}
  baseline:
    cycles:
      - cycle: nemesis
        read_p99_ms: {best_pct: 20, best_abs: 2}
        total_ops_per_sec: {best_pct: 10, fixed_limit: 150}
    durations:
      "Data balanced": {best_pct: 50, fixed_limit: 600}
`
	p := planOf(t, src)
	if p.RecoveryIntervals != 4 {
		t.Errorf("recovery intervals %d", p.RecoveryIntervals)
	}
	scale := p.TimeScale
	wantTh := []results.Threshold{
		{Cycle: "New node(s) ready", Metric: results.MetricDurationSeconds, Limit: 1.5, RatioToPlan: true},
		{Cycle: "Data balanced", Metric: results.MetricDurationSeconds, Limit: 1800 * scale},
	}
	if !reflect.DeepEqual(p.Thresholds, wantTh) {
		t.Errorf("thresholds %+v\nwant %+v", p.Thresholds, wantTh)
	}
	f := func(v float64) *float64 { return &v }
	wantRules := []results.BaselineRule{
		{Cycle: "nemesis", Metric: results.MetricReadP99, BestPct: f(20), BestAbs: f(2)},
		{Cycle: "nemesis", Metric: results.MetricTotalOps, HigherIsBetter: true, BestPct: f(10), FixedLimit: f(150)},
		{Cycle: "Data balanced", Metric: results.MetricDurationSeconds, BestPct: f(50), FixedLimit: f(600 * scale)},
	}
	if !reflect.DeepEqual(p.BaselineRules, wantRules) {
		t.Errorf("rules %+v\nwant %+v", p.BaselineRules, wantRules)
	}
	// Each grow batch carries the plan's estimates of its durations.
	var grow PlanStep
	for _, st := range p.Steps {
		if st.Name == "grow" {
			grow = st
		}
	}
	if len(grow.Estimates) != 3 { // serial: one node per rack, three racks
		t.Fatalf("estimates %+v", grow.Estimates)
	}
	for _, e := range grow.Estimates {
		if e[results.DurAddNodes] <= 0 || e[results.DurNodesReady] <= 0 || e[results.DurDataBalanced] < e[results.DurNodesReady] || e[results.DurLatencyRecov] < e[results.DurDataBalanced] {
			t.Errorf("estimate %+v", e)
		}
	}
	if p.Fill[0].EstimatedSeconds <= 0 {
		t.Errorf("fill estimate %+v", p.Fill[0])
	}
	// Round trip through the resolved scenario.yaml.
	s2, err := Parse(p.YAML, "scenario.yaml", nil)
	if err != nil {
		t.Fatalf("resolved YAML does not load back: %v\n%s", err, p.YAML)
	}
	p2, err := Resolve(s2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p2.Thresholds, p.Thresholds) || !reflect.DeepEqual(p2.BaselineRules, p.BaselineRules) || p2.RecoveryIntervals != 4 {
		t.Errorf("round trip changed the verdict keys:\n%s", p.YAML)
	}
	// The plan text names them.
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<= 1.5x plan", "best_pct 20, best_abs 2 against the best previous run"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan text lacks %q", want)
		}
	}
}
