package reporting

import (
	"strings"
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

// TestCacheAnswer: per cycle, the hit rate over the nodes and the coldest
// node's when one looked up enough partitions; cycles without the
// counters are left out, and a run with none has no answer.
func TestCacheAnswer(t *testing.T) {
	cycles := []results.Cycle{
		{Name: "Cycle #0", Cache: &results.CacheHits{HitPct: 91.4, ColdestNode: "node-2", ColdestHitPct: 90.6}},
		{Name: "Cycle #1", Cache: &results.CacheHits{HitPct: 62.4, ColdestNode: "node-4", ColdestHitPct: 3.2}},
		{Name: "Cycle #2"},
		{Name: "Cycle #3", Cache: &results.CacheHits{HitPct: 97}},
	}
	want := "Row cache hits per cycle (partitions reads found in cache, scylla_cache_partition_hits and _misses; " +
		"coordinators send a replica with a cold cache fewer reads, so the others serve its share until it warms): " +
		"Cycle #0 91% (coldest node-2 91%), Cycle #1 62% (coldest node-4 3%), Cycle #3 97%."
	if got := cacheAnswer(cycles); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := cacheAnswer(cycles[2:3]); got != "" {
		t.Fatalf("no counters: %q", got)
	}
}

// TestHostBoundNote: the latency table's note names each host-bound cycle
// with its lags, and for one whose P99 the load generator's lagged seconds
// set, those seconds and the P99 without them (or that every second
// lagged); other cycles are left out, and with none there is no note.
func TestHostBoundNote(t *testing.T) {
	cycles := []results.Cycle{
		{Name: "Cycle #0", HostBound: true, HostLagMSPerS: 12, LoaderLagMSPerS: 3},
		{Name: "Cycle #1", HostBound: true, LoaderLagMSPerS: 2, LoaderLagged: &results.LoaderLagged{Seconds: 1, WriteP99MS: 7.77, ReadP99MS: 6.89, SetP99: true}},
		{Name: "Cycle #2", HostBound: true, HostLagMSPerS: 30, LoaderLagMSPerS: 40, LoaderLagged: &results.LoaderLagged{Seconds: 4, SetP99: true}},
		{Name: "Cycle #3", LoaderLagged: &results.LoaderLagged{Seconds: 1, WriteP99MS: 9, ReadP99MS: 9}},
	}
	got := hostBoundNote(cycles)
	for _, want := range []string{
		"Cycle #0 (host lag 12 ms/s, load generator lag 3 ms/s)",
		"Cycle #1 (host lag 0 ms/s, load generator lag 2 ms/s; the load generator lagged 10 ms/s or more in 1 s of it, without which its P99 write/read is 7.77/6.89 ms)",
		"Cycle #2 (host lag 30 ms/s, load generator lag 40 ms/s; the load generator lagged 10 ms/s or more in every second of it)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q\nlacks %q", got, want)
		}
	}
	if strings.Contains(got, "Cycle #3") {
		t.Errorf("a cycle that was not host-bound is in the note: %q", got)
	}
	if n := hostBoundNote(cycles[3:]); n != "" {
		t.Errorf("no host-bound cycle: %q", n)
	}
}
