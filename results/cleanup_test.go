package results

import (
	"testing"
	"time"
)

// A grow's cleanup_start/cleanup_end become its "Cleanup" duration; a
// skipped cleanup is kept with its reason and gives no duration.
func TestComputeCleanupDuration(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	grow := func(s int, typ string) Event {
		return Event{Time: at(s), Type: typ, Step: "grow", Cycle: "Cycle #1", Kind: KindGrow, Mode: ModeSerial}
	}
	skip := Event{Time: at(60), Type: EventCleanupSkipped, Step: "grow2", Cycle: "Cycle #2", Kind: KindGrow, Message: "tablets keyspace"}
	events := []Event{
		{Time: at(0), Type: EventRunStart, Setup: &Setup{Scenario: "s"}},
		grow(10, EventStepRequested), grow(20, EventNodesNormal), grow(25, EventDataBalanced),
		grow(26, EventCleanupStart), grow(38, EventCleanupEnd), grow(40, EventStepEnd),
		{Time: at(50), Type: EventStepRequested, Step: "grow2", Cycle: "Cycle #2", Kind: KindGrow}, skip,
		{Time: at(70), Type: EventRunEnd, Status: StatusPassed},
	}
	res, err := Compute(runDir(t, events, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []Duration
	for _, d := range res.Durations {
		if d.Name == DurCleanup {
			got = append(got, d)
		}
	}
	if len(got) != 1 || got[0].Step != "grow" || got[0].Seconds != 12 {
		t.Fatalf("Cleanup durations %+v, want one of 12 s for grow", got)
	}
	var skipped string
	for _, s := range res.Steps {
		if s.Step == "grow2" {
			skipped = s.CleanupSkipped
		}
	}
	if skipped != "tablets keyspace" {
		t.Fatalf("grow2's cleanup skip %q", skipped)
	}
}
