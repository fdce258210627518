package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// compactions: waits by default, for a minute of quiet (SCT's
// is_compaction_running looks at the last 60 s), bounded by
// timeouts.compactions (SCT's 80 tries a minute apart); on local both are
// scenario time, with floors.
func TestCompactionsDefaults(t *testing.T) {
	local, err := Parse([]byte(minimal), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !local.Compactions.Wait || local.Compactions.Quiet != DefaultCompactionsQuiet {
		t.Errorf("compactions defaults %+v", local.Compactions)
	}
	if local.Timeouts.Compactions != Duration(MinLocalCompactions) {
		t.Errorf("local timeouts.compactions %v, want the %v floor (80m × 0.005 = 24s)", local.Timeouts.Compactions, MinLocalCompactions)
	}
	slow, err := Parse([]byte(minimal+"local:\n  time_scale: 0.05\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if slow.Timeouts.Compactions != Duration(4*time.Minute) {
		t.Errorf("timeouts.compactions at time_scale 0.05: %v, want 4m", slow.Timeouts.Compactions)
	}
	real, err := Parse([]byte(minimal+"backend: static\nstatic:\n  hosts: [10.0.0.1]\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if real.Timeouts.Compactions != Duration(80*time.Minute) {
		t.Errorf("static timeouts.compactions %v, want 80m", real.Timeouts.Compactions)
	}
	off, err := Parse([]byte(minimal+"compactions: {wait: false}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if off.Compactions.Wait {
		t.Error("compactions.wait: false kept the wait")
	}
}

func TestCompactionsValidation(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		path, msg string
	}{
		{"misspelt key", minimal + "compactions:\n  quite: 1m\n", 3, "compactions.quite", `did you mean "quiet"`},
		{"misspelt section", minimal + "compaction:\n  wait: true\n", 2, "compaction", `did you mean "compactions"`},
		{"zero quiet", minimal + "compactions:\n  quiet: 0\n", 3, "compactions.quiet", "must be > 0"},
		{"not a bool", minimal + "compactions:\n  wait: sometimes\n", 3, "compactions.wait", ""},
		{"zero timeout", minimal + "timeouts:\n  compactions: 0\n", 3, "timeouts.compactions", "must be > 0"},
		{"x plan ceiling", minimal + "thresholds:\n  durations:\n    Compactions settled: 1.5x plan\n", 4, "thresholds.durations.Compactions settled", "no plan estimate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, problemsOf(t, tc.src), nil, tc.line, tc.path, tc.msg)
		})
	}
	// Without the wait, quiet is not checked.
	if _, err := Parse([]byte(minimal+"compactions: {wait: false, quiet: 0}\n"), "x.yaml", nil); err != nil {
		t.Errorf("wait: false with quiet 0: %v", err)
	}
	// A ceiling on the wait is a duration threshold like any other.
	if _, err := Parse([]byte(minimal+"thresholds:\n  durations:\n    Compactions settled: 10m\n"), "x.yaml", nil); err != nil {
		t.Errorf("a ceiling on %q: %v", results.DurCompactions, err)
	}
}

// The plan has the wait before the calibration, its quiet period scaled
// with a floor on local, its timeout, and the duration among its figures.
func TestCompactionsPlan(t *testing.T) {
	s, err := Parse([]byte(minimal+"compactions: {quiet: 20m}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Compactions.Wait || p.Compactions.Quiet != MinLocalCompactionsQuiet || p.Compactions.TimeoutSeconds != 30 {
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
	s, _ = Parse([]byte(minimal), "x.yaml", nil)
	if p, _ = Resolve(s, nil); p.Compactions.Quiet != MinLocalCompactionsQuiet {
		t.Errorf("default local quiet %v, want the %v floor", p.Compactions.Quiet, MinLocalCompactionsQuiet)
	}
	s, _ = Parse([]byte(minimal+"compactions: {wait: false}\n"), "x.yaml", nil)
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
	calibrations := func(src string) []PlanPhase {
		t.Helper()
		p := planOf(t, src)
		var out []PlanPhase
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
