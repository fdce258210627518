package plan

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

const minimal = "name: t\n"

// planOf parses and resolves src (failing the test if either fails).
func planOf(t *testing.T, src string) *Plan {
	t.Helper()
	s, err := scenarios.Parse([]byte(src), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResultThresholdsAndScaling(t *testing.T) {
	s, err := scenarios.Parse([]byte(minimal+`thresholds:
  cycles:
    - write_p99_ms: 10
      read_p99_ms: 12
    - cycle: steady_state
      total_ops_per_sec: 500
  durations:
    "New node(s) ready": 30m
`), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Thresholds
	want := []results.Threshold{
		{Cycle: "*", Metric: "write_p99_ms", Limit: 10},
		{Cycle: "*", Metric: "read_p99_ms", Limit: 12},
		{Cycle: "steady_state", Metric: "total_ops_per_sec", Limit: 500, Floor: true},
		{Cycle: "New node(s) ready", Metric: "duration_seconds", Limit: 4.5}, // 30m × 0.0025
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if p.SteadyState != 4500*time.Millisecond { // 30m × 0.0025
		t.Errorf("scaled %v", p.SteadyState)
	}
}

func TestWarnings(t *testing.T) {
	s, err := scenarios.Parse([]byte(minimal+"workload:\n  rate: 90000/s\ndataset:\n  fill:\n    - {name: Full, target_percent: 97}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := (&scenarios.ValidationError{Problems: Warnings(s, nil)}).Error()
	for _, want := range []string{
		"x.yaml:3: workload.rate: 90000/s is above the emulated cluster's estimated capacity",
		"x.yaml:6: dataset.fill.0.target_percent: 97% leaves little room",
		"x.yaml: nemesis: no nemesis steps",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	s, err = scenarios.Load("../configs/90pct-scaleout.yaml", []string{"local.time_scale=1"})
	if err != nil {
		t.Fatal(err)
	}
	if w := (&scenarios.ValidationError{Problems: Warnings(s, nil)}).Error(); !strings.Contains(w, "--set local.time_scale=1: local.time_scale: the run is estimated at") {
		t.Errorf("time warning: %s", w)
	}
}

// Every duration results computes may carry a ceiling: "Drain node(s)" and
// "Remove node(s)" used to be rejected as unknown (issue 14).
func TestDrainAndRemoveDurationThresholdsValidate(t *testing.T) {
	s, err := scenarios.Load("../configs/scale-in-drain.yaml", []string{`thresholds.durations={"Drain node(s)": 1h, "Remove node(s)": 30m}`})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, th := range p.Thresholds {
		if th.Metric == results.MetricDurationSeconds {
			got[th.Cycle] = true
		}
	}
	if !got[results.DurDrainNodes] || !got[results.DurRemoveNodes] {
		t.Errorf("result thresholds %+v", p.Thresholds)
	}
	_, err = scenarios.Load("../configs/scale-in-drain.yaml", []string{`thresholds.durations={"Drain nodes": 1h}`})
	if err == nil || !strings.Contains(err.Error(), `unknown duration "Drain nodes"`) || !strings.Contains(err.Error(), "Drain node(s)") {
		t.Errorf("got %v", err)
	}
}

func TestRatioToSteadyThresholds(t *testing.T) {
	s, err := scenarios.Parse([]byte(minimal+"thresholds:\n  cycles:\n    - cycle: nemesis\n      read_p99_ratio_to_steady: 3\n      total_ops_ratio_to_steady: 0.9\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []results.Threshold{
		{Cycle: "nemesis", Metric: "read_p99_ms", Limit: 3, RatioToSteady: true},
		{Cycle: "nemesis", Metric: "total_ops_per_sec", Limit: 0.9, Floor: true, RatioToSteady: true},
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Thresholds; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	_, err = scenarios.Parse([]byte(minimal+"thresholds:\n  cycles:\n    - read_p99_ratio_to_steady: -1\n"), "x.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "thresholds.cycles.0.read_p99_ratio_to_steady") {
		t.Errorf("negative ratio: %v", err)
	}
}

// The plan has the wait before the calibration, its quiet period scaled
// with a floor on local, its timeout, and the duration among its figures.
func TestCompactionsPlan(t *testing.T) {
	s, err := scenarios.Parse([]byte(minimal+"compactions: {quiet: 20m}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Compactions.Wait || p.Compactions.Quiet != scenarios.MinLocalCompactionsQuiet || p.Compactions.TimeoutSeconds != 30 {
		t.Errorf("plan compactions %+v, want quiet 20m × 0.0025 = 3s, timeout 30s", p.Compactions)
	}
	if p.Waits.Compactions != 30*time.Second {
		t.Errorf("waits %+v", p.Waits)
	}
	var order []string
	for _, ph := range p.Phases {
		order = append(order, ph.Phase)
	}
	if got := strings.Join(order, " "); !strings.Contains(got, "hold compactions calibrate steady_state") {
		t.Errorf("phases %s: want compactions between the last hold and calibrate", got)
	}
	if err := p.CheckFigure(results.DurCompactions); err != nil {
		t.Errorf("figure %q: %v", results.DurCompactions, err)
	}
	var text strings.Builder
	p.WriteText(&text)
	for _, want := range []string{"compactions   Compactions settled", "until no compaction has run for 3s (up to 30s)", "compactions 30s"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("plan text lacks %q:\n%s", want, text.String())
		}
	}

	// The floor: 1m × 0.0025 = 0.15 s is raised to 3 s.
	s, _ = scenarios.Parse([]byte(minimal), "x.yaml", nil)
	if p, _ = Resolve(s, nil); p.Compactions.Quiet != scenarios.MinLocalCompactionsQuiet {
		t.Errorf("default local quiet %v, want the %v floor", p.Compactions.Quiet, scenarios.MinLocalCompactionsQuiet)
	}
	s, _ = scenarios.Parse([]byte(minimal+"compactions: {wait: false}\n"), "x.yaml", nil)
	p, _ = Resolve(s, nil)
	for _, ph := range p.Phases {
		if ph.Phase == string(results.PhaseCompactions) {
			t.Error("compactions phase planned with wait: false")
		}
	}
	if p.Compactions.Wait || p.CheckFigure(results.DurCompactions) == nil {
		t.Errorf("wait: false still plans the wait: %+v", p.Compactions)
	}
}

// The plan shows both capacity probes at the length the runner gives them
// (CalibrationSchedule: at least five 3 s levels), the second one only
// when a topology step changes what it would measure.
func TestPlanShowsBothCalibrations(t *testing.T) {
	calibrations := func(src string) []Phase {
		t.Helper()
		p := planOf(t, src)
		var out []Phase
		for _, ph := range p.Phases {
			if ph.Phase == string(results.PhaseCalibrate) {
				out = append(out, ph)
			}
		}
		return out
	}
	grow := minimal + "nemesis: [{grow_cluster: {instance_type: i4i.xlarge}}]\n"
	got := calibrations(grow)
	// The probe after starts at the first one's knee: about three levels.
	if len(got) != 2 || got[0].Name != "measure capacity" || got[1].Name != "after" || got[0].Seconds != 15 || got[1].Seconds != 9 {
		t.Errorf("calibrations %+v, want 15s and 9s", got)
	}
	if got := calibrations(grow + "workload: {capacity_after: false}\n"); len(got) != 1 {
		t.Errorf("capacity_after false: %+v", got)
	}
	if got := calibrations(minimal + "nemesis: [{hold: {duration: 1m}}]\n"); len(got) != 1 {
		t.Errorf("no topology step: %+v", got)
	}
	if got := calibrations(grow + "workload: {rate: 100}\n"); len(got) != 0 {
		t.Errorf("fixed rate: %+v", got)
	}
	if step, budget := CalibrationSchedule(time.Minute); step != 15*time.Second || budget != 75*time.Second {
		t.Errorf("1m calibration: steps %v, budget %v", step, budget)
	}
}

func TestExpectedErrorsReachThePlan(t *testing.T) {
	src := minimal + "nemesis:\n  - grow_cluster: {name: Grow, instance_type: i4i.large}\nexpected_errors:\n  - {type: NO_SPACE_ERROR, during: Grow, max_count: 50}\n  - {regex: 'Compaction failed'}\nseverities: {BAD_ALLOC: WARNING}\n"
	p := planOf(t, src)
	if len(p.ExpectedErrors) != 2 || p.ExpectedErrors[0].During != "Grow" || p.ExpectedErrors[0].MaxCount != 50 || p.ExpectedErrors[1].Regex != "Compaction failed" {
		t.Fatalf("expected errors %+v", p.ExpectedErrors)
	}
	if p.Severities["BAD_ALLOC"] != "WARNING" {
		t.Fatalf("severities %+v", p.Severities)
	}
}

const withGrow = minimal + "nemesis:\n  - grow_cluster: {name: grow}\n  - hook: {name: notify, command: 'true'}\n"

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
	var grow Step
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
	s2, err := scenarios.Parse(p.YAML, "scenario.yaml", nil)
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

// Real backends: docker scales the scenario's durations for one machine
// (docker.time_scale), static does not.
func TestRealBackendsTimeScale(t *testing.T) {
	for backend, scale := range map[string]float64{"docker": docker.DefaultTimeScale, "static": 1} {
		src := minimal + "backend: " + backend + "\n"
		if backend == "static" {
			src += "static:\n  hosts: [127.0.0.1]\n"
		}
		if p := planOf(t, src); p.TimeScale != scale {
			t.Errorf("%s time scale %v, want %v", backend, p.TimeScale, scale)
		}
	}
}

// Every shipped scenario resolves to a plan; the local defaults keep the
// flagship scenario to a few minutes and the smoke test to about one.
func TestConfigsResolve(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("configs: %v %v", files, err)
	}
	for _, f := range files {
		s, err := scenarios.Load(f, nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		p, err := Resolve(s, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if p.EstimatedSeconds <= 0 || len(p.Phases) == 0 {
			t.Errorf("%s: empty plan %+v", f, p)
		}
		if filepath.Base(f) == "90pct-scaleout.yaml" && (p.Estimated() > 10*time.Minute || p.Estimated() < time.Minute) {
			t.Errorf("90pct-scaleout estimated at %v; want a few minutes", p.Estimated())
		}
		if filepath.Base(f) == "smoke.yaml" && p.Estimated() > 2*time.Minute {
			t.Errorf("smoke estimated at %v; want about a minute", p.Estimated())
		}
	}
}
