package reporting

import (
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

// TestLatencyAnswer: every cycle's P99 against Cycle #0's, and the nodes'
// own beside it when they export it, so that a rise the nodes did not see
// shows as such; none for a run of one cycle.
func TestLatencyAnswer(t *testing.T) {
	cycles := []results.Cycle{
		{Name: "Cycle #0", WriteP99MS: 4, ReadP99MS: 5, NodeWriteP99MS: 2, NodeReadP99MS: 2.5},
		{Name: "Cycle #1", WriteP99MS: 12, ReadP99MS: 10, NodeWriteP99MS: 5, NodeReadP99MS: 2.5},
	}
	want := "P99 write/read per cycle, and against Cycle #0: Cycle #0 4.00/5.00 ms, Cycle #1 12.00/10.00 ms (×3.00/×2.00); " +
		"the nodes' own (their coordinators' latency): Cycle #0 2.00/2.50 ms, Cycle #1 5.00/2.50 ms (×2.50/×1.00)."
	if got := latencyAnswer(cycles); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := latencyAnswer(cycles[:1]); got != "" {
		t.Fatalf("one cycle: %q", got)
	}
}

// TestReactorAnswer: per cycle, the node whose busiest shard was the most
// utilized, how long it was saturated when it was, and whether the host
// bounded the cycle; cycles without the reading are left out, and a run
// with none has no answer.
func TestReactorAnswer(t *testing.T) {
	cycles := []results.Cycle{
		{Name: "Cycle #0", BusiestReactor: &results.ReactorPeak{Node: "node-2", PeakPct: 78.6}},
		{Name: "Cycle #1", BusiestReactor: &results.ReactorPeak{Node: "node-1", PeakPct: 100, SaturatedS: 1234.4}},
		{Name: "Cycle #2"},
		{Name: "Cycle #3", HostBound: true, BusiestReactor: &results.ReactorPeak{Node: "node-3", PeakPct: 99, SaturatedS: 0.3}},
	}
	want := "Busiest reactor per cycle (the node whose busiest shard was the most utilized, scylla_reactor_utilization; " +
		"a shard at 95% or more is saturated and queues its requests): Cycle #0 node-2 79%, Cycle #1 node-1 100% (saturated 1,234 s), " +
		"Cycle #3 node-3 99% (host-bound)."
	if got := reactorAnswer(cycles); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := reactorAnswer(cycles[2:3]); got != "" {
		t.Fatalf("no readings: %q", got)
	}
}
