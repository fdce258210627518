package results

import (
	"strings"
	"testing"
	"time"
)

// The wait for compactions before the steady state is the duration
// "Compactions settled"; a warning it records (compactions still running
// at its timeout) is a limitation of the run, also when a later setup
// event (calibrated) replaces the setup.
func TestComputeCompactionsWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	warning := "compactions still running after 30s (node-1: 2): the steady state starts with them"
	events := []Event{
		{Time: at(0), Type: EventRunStart, Setup: &Setup{Scenario: "s"}},
		{Time: at(1), Type: EventPhaseStart, Phase: PhaseCompactions},
		{Time: at(31), Type: EventWarning, Phase: PhaseCompactions, Message: warning},
		{Time: at(31), Type: EventPhaseEnd, Phase: PhaseCompactions},
		{Time: at(31), Type: EventWarning, Phase: PhaseTeardown, Message: "teardown: something else"},
		{Time: at(32), Type: EventProgress, Phase: PhaseSteady, Name: "calibrated", Setup: &Setup{Scenario: "s", RateOpsPerSec: 10}},
		{Time: at(40), Type: EventRunEnd, Status: StatusPassed},
	}
	res, err := Compute(runDir(t, events, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got *Duration
	for i := range res.Durations {
		if res.Durations[i].Name == DurCompactions {
			got = &res.Durations[i]
		}
	}
	if got == nil || got.Seconds != 30 || !got.Start.Equal(at(1)) {
		t.Fatalf("durations %+v, want %q of 30 s", res.Durations, DurCompactions)
	}
	lim := strings.Join(res.Setup.Limitations, "\n")
	if !strings.Contains(lim, "Warning: "+warning) || strings.Contains(lim, "something else") {
		t.Fatalf("limitations %q, want the compactions warning only", res.Setup.Limitations)
	}
}
