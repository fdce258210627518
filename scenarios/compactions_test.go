package scenarios

import (
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
