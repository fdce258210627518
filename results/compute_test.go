package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runDir writes events, latency and metrics records into a fresh directory.
func runDir(t *testing.T, events []Event, lat []LatencyRecord, met []NodeSample) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, n int, rec func(i int) any) {
		w, err := OpenJSONL(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := w.Write(rec(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(FileEvents, len(events), func(i int) any { return events[i] })
	if lat != nil {
		write(FileLatency, len(lat), func(i int) any { return lat[i] })
	}
	if met != nil {
		write(FileMetrics, len(met), func(i int) any { return met[i] })
	}
	return dir
}

func latRec(t *testing.T, op string, start time.Time, values ...int64) LatencyRecord {
	t.Helper()
	h := NewHDR()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := EncodeHDR(h)
	if err != nil {
		t.Fatal(err)
	}
	return LatencyRecord{Start: start, End: start.Add(time.Second), Op: op, Count: int64(len(values)), ResponseHDR: enc, Response: SummarizeHDR(h)}
}

func TestComputeCyclesMergeHistograms(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events := []Event{
		{Time: at(0), Type: EventRunStart, Setup: &Setup{Scenario: "s", FillTargets: []FillTarget{{Name: "Soft Limit", TargetPercent: 50}}}},
		{Time: at(0), Type: EventPhaseStart, Phase: "fill", Name: "Soft Limit"},
		{Time: at(2), Type: EventPhaseEnd, Phase: "fill", Name: "Soft Limit"},
		{Time: at(2), Type: EventCycleStart, Cycle: "Cycle #0"},
		{Time: at(3), Type: EventStall, Node: "n1", StallMS: 25},
		{Time: at(4), Type: EventCycleEnd, Cycle: "Cycle #0"},
		{Time: at(4), Type: EventCycleStart, Cycle: "Cycle #1", Step: "grow"},
		{Time: at(4), Type: EventStepRequested, Step: "grow", Cycle: "Cycle #1", Kind: "grow", Mode: "parallel"},
		{Time: at(5), Type: EventNodesNormal, Step: "grow", Cycle: "Cycle #1", Kind: "grow", Nodes: []string{"n2"}},
		{Time: at(5), Type: EventStall, Node: "n2", StallMS: 2500},
		{Time: at(5), Type: EventStallsSuppressed, Node: "n2", Count: 6}, // reports, not stalls
		{Time: at(5), Type: EventDBError, Node: "n2", ErrorType: "BAD_ALLOC", Line: "first"},
		{Time: at(6), Type: EventDBError, Node: "n2", ErrorType: "BAD_ALLOC", Line: "second"},
		// no cycle_end, no run_end: interrupted
	}
	lat := []LatencyRecord{
		latRec(t, OpFill, at(0), 50_000),
		latRec(t, OpWrite, at(2), 1000, 1000, 1000, 1000),
		latRec(t, OpWrite, at(3), 1000, 1000, 1000, 9000), // merged P99 = 9 ms, mean of interval P99s would differ
		latRec(t, OpRead, at(2), 2000),
		latRec(t, OpWrite, at(4), 3000),
		latRec(t, OpWrite, at(6), 4000),
	}
	met := []NodeSample{
		{Time: at(1), Node: "n1", Rack: "r1", DiskTotalBytes: 100e9, DiskUsedBytes: 40e9},
		{Time: at(2), Node: "n1", Rack: "r1", DiskTotalBytes: 100e9, DiskUsedBytes: 50e9},
		{Time: at(7), Node: "n1", Rack: "r1", DiskTotalBytes: 100e9, DiskUsedBytes: 30e9},
		{Time: at(7), Node: "n2", Rack: "r1", InstanceType: "big", DiskTotalBytes: 200e9, DiskUsedBytes: 20e9, Source: DiskSourceRESTLoadFallback},
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusInterrupted {
		t.Errorf("status %q", res.Status)
	}
	if len(res.Cycles) != 2 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	c0, c1 := res.Cycles[0], res.Cycles[1]
	if c0.WriteP99MS < 8.9 || c0.WriteP99MS > 9.1 || c0.WriteP90MS < 0.99 || c0.WriteP90MS > 1.01 {
		t.Errorf("Cycle #0 write P90/P99 = %v/%v, want 1/9 ms from the merged histogram", c0.WriteP90MS, c0.WriteP99MS)
	}
	if c0.WriteOpsPerS != 4 || c0.ReadOpsPerS != 0.5 {
		t.Errorf("Cycle #0 throughput %v/%v, want 4/0.5", c0.WriteOpsPerS, c0.ReadOpsPerS)
	}
	if !c1.End.Equal(at(7)) {
		t.Errorf("open Cycle #1 ends %v, want the last record %v", c1.End, at(7))
	}
	if c1.WriteP99MS < 3.9 || c1.WriteP99MS > 4.01 {
		t.Errorf("Cycle #1 write P99 %v", c1.WriteP99MS)
	}
	if c0.Stalls.SuppressedReports != 0 || c1.Stalls.SuppressedReports != 6 || res.Stalls.SuppressedReports != 6 {
		t.Errorf("suppressed reports %d %d %d, want 0 6 6", c0.Stalls.SuppressedReports, c1.Stalls.SuppressedReports, res.Stalls.SuppressedReports)
	}
	if c0.Stalls.Total != 1 || c1.Stalls.Total != 1 || res.Stalls.Total != 2 {
		t.Errorf("stalls %+v %+v %+v", c0.Stalls, c1.Stalls, res.Stalls)
	}
	// A 25 ms and a 2500 ms stall: once each, in 30ms and 2000ms+ (SCT's buckets).
	if s := res.Stalls; s.Count("30ms") != 1 || s.Count("2000ms+") != 1 || s.Count("10ms") != 0 || s.Count("20ms") != 0 {
		t.Errorf("stall buckets %+v", s.Buckets)
	}
	if len(res.Errors) != 1 || res.Errors[0].Count != 2 || res.Errors[0].Line != "first" {
		t.Errorf("errors %+v", res.Errors)
	}
	// Soft Limit has no snapshot: read from metrics at the fill's end; Final from the last samples.
	if len(res.Disk) != 2 || res.Disk[0].Phase != "Soft Limit" || res.Disk[0].Source != "metrics" || res.Disk[0].Cluster.UsagePercent != 50 {
		t.Fatalf("disk %+v", res.Disk)
	}
	if f := res.Disk[1]; f.Phase != "Final" || len(f.Nodes) != 2 || f.Cluster.UsedGB != 50 {
		t.Errorf("final disk %+v", f)
	}
	// n2's disk came from the REST load fallback: the report warns (Limitations).
	if l := res.Setup.Limitations; len(l) != 1 || !strings.Contains(l[0], "disk usage of n2 came from the REST load fallback") {
		t.Errorf("limitations %q", l)
	}
	var names []string
	for _, d := range res.Durations {
		names = append(names, d.Name)
	}
	if len(names) != 2 || names[0] != "Soft Limit" || names[1] != DurAddNodes {
		t.Errorf("durations %v", names)
	}
	if len(res.Nodes) != 1 || res.Nodes[0].Name != "n2" || res.Nodes[0].InstanceType != "big" {
		t.Errorf("nodes %+v", res.Nodes)
	}
}

func TestComputeNotARunDir(t *testing.T) {
	if _, err := Compute(t.TempDir()); err == nil {
		t.Error("a directory without events.jsonl computed")
	}
	if _, err := Compute(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory computed")
	}
}

func TestComputeBadLatencyLine(t *testing.T) {
	dir := runDir(t, []Event{{Time: time.Now(), Type: EventRunStart}}, nil, nil)
	if err := os.WriteFile(filepath.Join(dir, FileLatency), []byte("{\"op\":\"write\"}\nnot json\n{\"op\":\"read\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Compute(dir)
	var le *LineError
	if err == nil || !asLineError(err, &le) || le.Line != 2 {
		t.Fatalf("error %v, want line 2", err)
	}
}

func asLineError(err error, le **LineError) bool {
	for err != nil {
		if e, ok := err.(*LineError); ok {
			*le = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// SCT's unit test (unit_tests/unit/test_events.py::test_count_reactor_stall):
// stalls of 13, 33, 6 and 33 ms count {10ms: 1, 20ms: 1, 50ms: 2}, total 4.
func TestStallsCountedAsSCT(t *testing.T) {
	s := stallsOf([]float64{13, 33, 6, 33, 2000, 2500, 1999, 10}, map[string]int64{"n": 8})
	want := map[string]int64{"10ms": 1, "20ms": 2, "50ms": 2, "2000ms": 1, "2000ms+": 2}
	var sum int64
	for _, b := range s.Buckets {
		sum += b.Count
		if b.Count != want[b.Label] {
			t.Errorf("%s = %d, want %d", b.Label, b.Count, want[b.Label])
		}
	}
	if s.Total != 8 || sum != s.Total || len(s.Buckets) != 9 {
		t.Errorf("total %d, sum %d, %d buckets", s.Total, sum, len(s.Buckets))
	}
	s = stallsOf([]float64{13, 33, 6, 33}, nil)
	if s.Total != 4 || s.Count("10ms") != 1 || s.Count("20ms") != 1 || s.Count("50ms") != 2 || s.Count("30ms") != 0 {
		t.Errorf("SCT's example: %+v", s)
	}
}

// tenSecondCycles is a run of n back-to-back 10 s cycles (Cycle #0 ...)
// from a fixed start, and the time at a second of it.
func tenSecondCycles(n int) (at func(sec int) time.Time, events []Event) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at = func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events = []Event{{Time: at(0), Type: EventRunStart, Setup: &Setup{Scenario: "s"}}}
	for i := range n {
		name := fmt.Sprintf("Cycle #%d", i)
		events = append(events, Event{Time: at(10 * i), Type: EventCycleStart, Cycle: name}, Event{Time: at(10 * (i + 1)), Type: EventCycleEnd, Cycle: name})
	}
	return at, append(events, Event{Time: at(10 * n), Type: EventRunEnd})
}

// writePerCycle is a write record in each of tenSecondCycles' n cycles.
func writePerCycle(t *testing.T, at func(sec int) time.Time, n int) []LatencyRecord {
	var lat []LatencyRecord
	for i := range n {
		lat = append(lat, latRec(t, OpWrite, at(10*i+1), 1000))
	}
	return lat
}

// TestHostLagPerCycle: each cycle's host lag is the most-lagged node's
// steal-time rate over the cycle; a cycle lagging 1% of the time or more is
// host-bound and the limitations say so, with every cycle's figure.
func TestHostLagPerCycle(t *testing.T) {
	at, events := tenSecondCycles(2)
	lat := []LatencyRecord{latRec(t, OpWrite, at(1), 1000), latRec(t, OpWrite, at(11), 1000)}
	s := func(sec int, node string, steal float64) NodeSample {
		return NodeSample{Time: at(sec), Node: node, DiskTotalBytes: 1e9, Metrics: map[string]float64{"reactor_cpu_steal_time_ms": steal}}
	}
	met := []NodeSample{
		s(0, "n1", 100), s(0, "n2", 0),
		s(10, "n1", 120), s(10, "n2", 30), // Cycle #0: n1 2 ms/s, n2 3 ms/s
		s(20, "n1", 420), s(20, "n2", 40), // Cycle #1: n1 30 ms/s
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cycles) != 2 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	c0, c1 := res.Cycles[0], res.Cycles[1]
	if c0.HostLagMSPerS != 3 || c0.HostBound || c1.HostLagMSPerS != 30 || !c1.HostBound {
		t.Errorf("host lag %v (bound %v), %v (bound %v), want 3 ms/s not bound, 30 ms/s bound", c0.HostLagMSPerS, c0.HostBound, c1.HostLagMSPerS, c1.HostBound)
	}
	l := strings.Join(res.Setup.Limitations, "\n")
	if !strings.Contains(l, "Cycle #0 3.0 ms/s, Cycle #1 30.0 ms/s") || !strings.Contains(l, "Host-bound") || !strings.Contains(l, ": Cycle #1 —") {
		t.Errorf("limitations %q", l)
	}
	if strings.Contains(l, "Load generator lag") {
		t.Errorf("no loader lag was recorded, yet the limitations name one: %q", l)
	}
}

// TestCompactionBehindPerCycle: a cycle's compaction backlog is that of
// the node whose normalized backlog grew the most during it; compaction
// fell behind when it ended at 9 or more (a quarter of a busy shard to
// compaction) having grown by 1.5 and an eighth. A high backlog that holds
// (the controller's equilibrium) and a low one that doubles (one
// compaction's sawtooth) are not behind; a high one that keeps growing is.
func TestCompactionBehindPerCycle(t *testing.T) {
	at, events := tenSecondCycles(5)
	lat := writePerCycle(t, at, 5)
	s := func(sec int, node string, backlog float64) NodeSample {
		return NodeSample{Time: at(sec), Node: node, DiskTotalBytes: 1e9, Metrics: map[string]float64{"compaction_manager_normalized_backlog": backlog}}
	}
	met := []NodeSample{
		s(0, "n1", 0.2), s(0, "n2", 1.5),
		s(5, "n1", 0.3), s(5, "n2", 2.2),
		s(10, "n1", 0.4), s(10, "n2", 3.6), // Cycle #0: n2 1.5 → 3.6, low
		s(15, "n1", 6), s(15, "n2", 3.1),
		s(20, "n1", 12), s(20, "n2", 1.0), // Cycle #1: n1 0.4 → 12, behind
		s(25, "n1", 14), s(25, "n2", 1.0),
		s(30, "n1", 13), s(30, "n2", 1.0), // Cycle #2: n1 12 → 13, holding
		s(40, "n1", 15.5), s(40, "n2", 0.0), // Cycle #3: n1 13 → 15.5, growing again
		s(50, "n1", 4), s(50, "n2", 0.5), // Cycle #4: draining
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cycles) != 5 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	want := []struct {
		node       string
		start, end float64
		behind     bool
	}{{"n2", 1.5, 3.6, false}, {"n1", 0.4, 12, true}, {"n1", 12, 13, false}, {"n1", 13, 15.5, true}, {"n2", 0, 0.5, false}}
	for i, w := range want {
		c := res.Cycles[i]
		g := c.CompactionBacklog
		if g == nil || g.Node != w.node || g.Start != w.start || g.End != w.end || c.CompactionBehind != w.behind {
			t.Errorf("%s: backlog %+v behind %v, want %s %.1f → %.1f behind %v", c.Name, g, c.CompactionBehind, w.node, w.start, w.end, w.behind)
		}
	}
}

// TestBusiestReactorPerCycle: a cycle's busiest reactor is the node whose
// busiest shard read the highest utilization in it. A reading stands for
// the time since the node's reading before it: it counts that time's part
// inside the cycle as saturated when it is ReactorSaturatedPct or more,
// and for the peak when at least half of that time is inside, so a high
// reading just after a cycle starts belongs to the phase before it. On a
// tie the node saturated longer wins; samples with only the mean over
// shards say nothing, and a cycle without readings has none.
func TestBusiestReactorPerCycle(t *testing.T) {
	at, events := tenSecondCycles(4)
	lat := writePerCycle(t, at, 4)
	s := func(sec int, node string, busiest float64) NodeSample {
		m := map[string]float64{SampleReactorUtilization: 50}
		if busiest >= 0 {
			m[SampleReactorUtilizationBusiest] = busiest
		}
		return NodeSample{Time: at(sec), Node: node, DiskTotalBytes: 1e9, Metrics: m}
	}
	met := []NodeSample{
		s(0, "n1", 50), s(0, "n2", 60),
		s(4, "n1", 60), s(4, "n2", 70),
		s(8, "n1", 70), s(8, "n2", 80),
		s(11, "n2", 100), // 8 → 11: two thirds in Cycle #0
		s(12, "n1", 96),  // 8 → 12: half in Cycle #1
		s(14, "n2", 80), s(15, "n1", 100),
		s(17, "n2", 80), s(18, "n1", 94),
		s(20, "n2", 80),
		s(22, "n1", 98), s(23, "n2", 98),
		s(25, "n1", 98), s(26, "n2", 97),
		s(28, "n1", 40), s(29, "n2", 98), // Cycle #2: a tie at 98
		s(35, "n1", -1), s(35, "n2", -1), // Cycle #3: the mean only
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	want := []*ReactorPeak{
		{Node: "n2", PeakPct: 100, SaturatedS: 2}, // 8 → 10
		{Node: "n1", PeakPct: 100, SaturatedS: 7}, // 10 → 12 → 15, and 18 → 20 of the 98 at 22
		{Node: "n2", PeakPct: 98, SaturatedS: 9},  // 20 → 23 → 26 → 29; n1 5
		nil,
	}
	if len(res.Cycles) != len(want) {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	for i, w := range want {
		got := res.Cycles[i].BusiestReactor
		if (got == nil) != (w == nil) || got != nil && *got != *w {
			t.Errorf("%s: busiest reactor %+v, want %+v", res.Cycles[i].Name, got, w)
		}
	}
}

// TestCacheHitsPerCycle: a cycle's row cache hit rate is the nodes' hits
// over their look-ups between their readings around it, and the coldest
// node is the one with the lowest rate among those that looked up at least
// MinCacheLookups partitions (a node that gave its data away reads little
// and is not named); a cycle without the counters has none.
func TestCacheHitsPerCycle(t *testing.T) {
	at, events := tenSecondCycles(3)
	lat := writePerCycle(t, at, 3)
	s := func(sec int, node string, hits, misses float64) NodeSample {
		m := map[string]float64{}
		if hits >= 0 {
			m[SampleCacheHits], m[SampleCacheMisses] = hits, misses
		}
		return NodeSample{Time: at(sec), Node: node, DiskTotalBytes: 1e9, Metrics: m}
	}
	met := []NodeSample{
		s(0, "n1", 0, 0), s(0, "n2", 0, 0),
		s(10, "n1", 900, 100), s(10, "n2", 1800, 200), // Cycle #0: 90% on both
		s(11, "n3", 0, 0), // joins cold
		s(20, "n1", 950, 140), s(20, "n2", 3600, 400), s(20, "n3", 20, 380),
		// Cycle #1: n1 50 hits of 90 look-ups (too few to be named), n2 90%, n3 5%
		s(30, "n1", -1, 0), s(30, "n2", -1, 0), s(30, "n3", -1, 0), // Cycle #2: no counters
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	want := []*CacheHits{
		{HitPct: 90, ColdestNode: "n1", ColdestHitPct: 90, ColdestLookupsPerS: 100},
		{HitPct: 100 * (50 + 1800 + 20) / (90.0 + 2000 + 400), ColdestNode: "n3", ColdestHitPct: 5, ColdestLookupsPerS: 400.0 / 9},
		nil,
	}
	if len(res.Cycles) != len(want) {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	for i, w := range want {
		got := res.Cycles[i].Cache
		if (got == nil) != (w == nil) || got != nil && (math.Abs(got.HitPct-w.HitPct) > 1e-9 || got.ColdestNode != w.ColdestNode ||
			math.Abs(got.ColdestHitPct-w.ColdestHitPct) > 1e-9 || math.Abs(got.ColdestLookupsPerS-w.ColdestLookupsPerS) > 1e-9) {
			t.Errorf("%s: cache %+v, want %+v", res.Cycles[i].Name, got, w)
		}
	}
}

// TestLoaderLagPerCycle: the load generator's own lag (each record's
// loader_lag_ms, one figure per loader and interval whatever the number of
// operation types) is a cycle's too: the most-lagged loader's rate over the
// cycle. An operation waits while its loader or its coordinator does not
// run, so the two add up: enough of the loader's makes a cycle host-bound
// even when the nodes ran on time, and neither alone needs to reach the
// bound.
func TestLoaderLagPerCycle(t *testing.T) {
	at, events := tenSecondCycles(3)
	rec := func(op string, sec int, source string, lag float64) LatencyRecord {
		r := latRec(t, op, at(sec), 1000)
		r.Source, r.LoaderLagMS = source, lag
		return r
	}
	var lat []LatencyRecord
	for sec := 0; sec < 30; sec++ {
		lag := 2.0 // Cycle #0: 2 ms/s
		if sec >= 10 {
			lag = 15 // Cycle #1: 15 ms/s on loader-1, 1 ms/s on loader-2
		}
		if sec >= 20 {
			lag = 5 // Cycle #2: 5 ms/s, and the nodes 6 ms/s
		}
		lat = append(lat, rec(OpWrite, sec, "loader-1", lag), rec(OpRead, sec, "loader-1", lag), rec(OpWrite, sec, "loader-2", 1), rec(OpRead, sec, "loader-2", 1))
	}
	met := []NodeSample{
		{Time: at(0), Node: "n1", DiskTotalBytes: 1e9, Metrics: map[string]float64{"reactor_cpu_steal_time_ms": 0}},
		{Time: at(20), Node: "n1", DiskTotalBytes: 1e9, Metrics: map[string]float64{"reactor_cpu_steal_time_ms": 20}},
		{Time: at(30), Node: "n1", DiskTotalBytes: 1e9, Metrics: map[string]float64{"reactor_cpu_steal_time_ms": 80}},
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cycles) != 3 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	c0, c1, c2 := res.Cycles[0], res.Cycles[1], res.Cycles[2]
	if c2.LoaderLagMSPerS != 5 || c2.HostLagMSPerS != 6 || !c2.HostBound {
		t.Errorf("Cycle #2: loader %v + nodes %v ms/s (bound %v), want 5 + 6 = 11 ms/s, bound", c2.LoaderLagMSPerS, c2.HostLagMSPerS, c2.HostBound)
	}
	if c0.LoaderLagMSPerS != 2 || c0.HostBound || c1.LoaderLagMSPerS != 15 || !c1.HostBound || c1.HostLagMSPerS != 1 {
		t.Errorf("loader lag %v (bound %v), %v (bound %v, nodes %v ms/s), want 2 ms/s not bound, 15 ms/s bound with the nodes at 1 ms/s",
			c0.LoaderLagMSPerS, c0.HostBound, c1.LoaderLagMSPerS, c1.HostBound, c1.HostLagMSPerS)
	}
	l := strings.Join(res.Setup.Limitations, "\n")
	if !strings.Contains(l, "Load generator lag") || !strings.Contains(l, "Cycle #0 2.0 ms/s, Cycle #1 15.0 ms/s, Cycle #2 5.0 ms/s") || !strings.Contains(l, ": Cycle #1, Cycle #2 —") {
		t.Errorf("limitations %q", l)
	}
}

// TestLoaderLagBurstSetsP99: a loader that lagged 10 ms/s or more in one
// second of a cycle whose mean lag stays low delayed that second's
// operations. When they set the cycle's P99 (without that second it is at
// most LaggedSetP99Share of itself) the cycle is host-bound, with its P99
// without them; a lagged second whose operations were no slower leaves the
// cycle alone, and a cycle with no lagged second has no figure.
func TestLoaderLagBurstSetsP99(t *testing.T) {
	at, events := tenSecondCycles(3)
	second := func(sec int, lag float64, us int64) []LatencyRecord {
		var out []LatencyRecord
		for _, op := range []string{OpWrite, OpRead} {
			v := make([]int64, 50)
			for i := range v {
				v[i] = us
			}
			r := latRec(t, op, at(sec), v...)
			r.Source, r.LoaderLagMS = "loader-1", lag
			out = append(out, r)
		}
		return out
	}
	var lat []LatencyRecord
	for sec := 0; sec < 30; sec++ {
		lag, us := 1.0, int64(2000)
		switch {
		case sec < 5: // Cycle #0: 3 ms before its lagged second
			us = 3000
		case sec == 5: // Cycle #0: 16 ms late in one second, its operations 25 ms
			lag, us = 16, 25000
		case sec == 15: // Cycle #1: as late, its operations no slower
			lag = 16
		}
		lat = append(lat, second(sec, lag, us)...)
	}
	res, err := Compute(runDir(t, events, lat, nil))
	if err != nil {
		t.Fatal(err)
	}
	c0, c1, c2 := res.Cycles[0], res.Cycles[1], res.Cycles[2]
	if c0.LoaderLagMSPerS >= HostBoundLagMSPerS {
		t.Fatalf("Cycle #0's mean loader lag %v ms/s: the test wants it under the bound", c0.LoaderLagMSPerS)
	}
	if l := c0.LoaderLagged; !c0.HostBound || l == nil || !l.SetP99 || l.Seconds != 1 || math.Abs(l.WriteP99MS-3) > 0.01 || math.Abs(l.ReadP99MS-3) > 0.01 {
		t.Errorf("Cycle #0: host-bound %v, lagged %+v (P99 %v/%v ms), want host-bound, 1 s, 3/3 ms without it (the seconds before it)", c0.HostBound, l, c0.WriteP99MS, c0.ReadP99MS)
	}
	if l := c1.LoaderLagged; c1.HostBound || l == nil || l.SetP99 || l.Seconds != 1 {
		t.Errorf("Cycle #1: host-bound %v, lagged %+v, want a lagged second that did not set P99", c1.HostBound, l)
	}
	if c2.LoaderLagged != nil || c2.HostBound {
		t.Errorf("Cycle #2: lagged %+v, host-bound %v, want neither", c2.LoaderLagged, c2.HostBound)
	}
}

// TestCPUStealPerCycle: a cycle's CPU steal is the most-stolen node
// machine's share of its CPU time that was steal (node_exporter's
// node_cpu_seconds_total), which no process sees as lag; 1% of it counts as
// 10 ms/s towards host-bound, added to the nodes' and the loader's lag.
func TestCPUStealPerCycle(t *testing.T) {
	at, events := tenSecondCycles(3)
	lat := []LatencyRecord{latRec(t, OpWrite, at(1), 1000), latRec(t, OpWrite, at(11), 1000), latRec(t, OpWrite, at(21), 1000)}
	// Two CPUs: 20 CPU seconds per 10 s.
	s := func(sec int, node string, steal, all float64, lag float64) NodeSample {
		return NodeSample{Time: at(sec), Node: node, DiskTotalBytes: 1e9, CPUStealSeconds: steal, CPUSeconds: all,
			Metrics: map[string]float64{"reactor_cpu_steal_time_ms": lag}}
	}
	met := []NodeSample{
		s(0, "n1", 100, 1000, 0), s(0, "n2", 50, 1000, 0),
		s(10, "n1", 100.1, 1020, 0), s(10, "n2", 50.08, 1020, 0), // Cycle #0: 0.5% and 0.4% steal
		s(20, "n1", 106.1, 1040, 0), s(20, "n2", 50.08, 1040, 0), // Cycle #1: 30% on n1
		s(30, "n1", 106.2, 1060, 60), s(30, "n2", 50.18, 1060, 0), // Cycle #2: 0.5% steal and 6 ms/s lag
	}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cycles) != 3 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	c0, c1, c2 := res.Cycles[0], res.Cycles[1], res.Cycles[2]
	if !near(c0.CPUStealPct, 0.5) || c0.HostBound {
		t.Errorf("Cycle #0: steal %v%% (bound %v), want 0.5%%, not bound", c0.CPUStealPct, c0.HostBound)
	}
	if !near(c1.CPUStealPct, 30) || !c1.HostBound || c1.HostLagMSPerS != 0 {
		t.Errorf("Cycle #1: steal %v%% (bound %v, lag %v), want 30%%, bound with no lag", c1.CPUStealPct, c1.HostBound, c1.HostLagMSPerS)
	}
	if !near(c2.CPUStealPct, 0.5) || c2.HostLagMSPerS != 6 || !c2.HostBound {
		t.Errorf("Cycle #2: steal %v%% + lag %v ms/s (bound %v), want 5 + 6 = 11 ms/s, bound", c2.CPUStealPct, c2.HostLagMSPerS, c2.HostBound)
	}
	l := strings.Join(res.Setup.Limitations, "\n")
	if !strings.Contains(l, "CPU steal") || !strings.Contains(l, "Cycle #0 0.5%, Cycle #1 30.0%, Cycle #2 0.5%") || !strings.Contains(l, ": Cycle #1, Cycle #2 —") {
		t.Errorf("limitations %q", l)
	}
	if v, ok := cycleFigure(&c1, FigCycleSteal); !ok || !near(v, 30) {
		t.Errorf("figure %s = %v %v", FigCycleSteal, v, ok)
	}
}

// A cycle holds the whole intervals whose midpoint it holds: a 4.5 s cycle
// under 1 s intervals holds four or five of them, and its throughput is per
// second of those, not of its 4.5 s (which read 11% low or high).
func TestCycleThroughputIsPerSecondOfItsIntervals(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	events := []Event{
		{Time: at(0), Type: EventRunStart, Setup: &Setup{Scenario: "s"}},
		{Time: at(200), Type: EventCycleStart, Cycle: "Cycle #0"},
		{Time: at(4700), Type: EventCycleEnd, Cycle: "Cycle #0"},
		{Time: at(6000), Type: EventRunEnd},
	}
	var lat []LatencyRecord
	for s := range 6 {
		vals := make([]int64, 100) // 100 writes a second
		for i := range vals {
			vals[i] = 1000
		}
		lat = append(lat, latRec(t, OpWrite, at(s*1000), vals...))
	}
	res, err := Compute(runDir(t, events, lat, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cycles) != 1 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	// Midpoints 0.5 s .. 5.5 s: 0.5 to 4.5 s fall in [0.2, 4.7), five
	// intervals, 500 writes: 100/s (over the cycle's 4.5 s, 111/s).
	if c := res.Cycles[0]; c.WriteOpsPerS != 100 || c.DurationS != 4.5 {
		t.Errorf("Cycle #0: %.1f writes/s over %.1f s, want 100/s over 4.5 s", c.WriteOpsPerS, c.DurationS)
	}
}

// Disk figures read from the host's file system (docker.data_mount none)
// are called out in the report's limitations, naming the nodes.
func TestComputeHostFSDiskIsCalledOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	events := []Event{{Time: t0, Type: EventRunStart, Setup: &Setup{Scenario: "s"}}}
	met := []NodeSample{
		{Time: t0.Add(time.Second), Node: "node-1", DiskTotalBytes: 270e9, DiskUsedBytes: 188e9, Source: DiskSourceContainerDFHost},
		{Time: t0.Add(time.Second), Node: "node-2", DiskTotalBytes: 270e9, DiskUsedBytes: 188e9, Source: DiskSourceContainerDFHost},
		{Time: t0.Add(time.Second), Node: "node-3", DiskTotalBytes: 2e9, DiskUsedBytes: 1e9, Source: DiskSourceContainerDF},
	}
	res, err := Compute(runDir(t, events, nil, met))
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Setup.Limitations; len(l) != 1 || !strings.Contains(l[0], "disk figures of node-1, node-2 are the host's file system") {
		t.Errorf("limitations %q", l)
	}
}

// TestCapacityProbesJudgedAsCycles: a capacity probe carries its load
// generator's lag and machine CPU; the reduction adds the nodes' lag over
// the probe's window and calls it host-bound as a cycle (lags and steal
// together ≥ 10 ms/s) or when the load generator's machine had no CPU left;
// host-bound or unsaturated, its capacity is a lower bound.
func TestCapacityProbesJudgedAsCycles(t *testing.T) {
	at, events := tenSecondCycles(4)
	probe := func(name string, from, to int, p CapacityProbe) Event {
		p.Name, p.Start, p.End, p.CapacityOps = name, at(from), at(to), 1000
		return Event{Time: at(to), Type: EventCapacity, Name: name, CapacityOps: 1000, Probe: &p}
	}
	events = append(events[:len(events)-1],
		probe("node lag", 0, 10, CapacityProbe{LoaderLagMSPerS: 4}),     // 4 + 8 ms/s of the node
		probe("quiet", 10, 20, CapacityProbe{LoaderLagMSPerS: 4}),       // 4 + 1 ms/s
		probe("busy", 20, 30, CapacityProbe{MachineBusyPct: 96}),        // the machine had no CPU left
		probe("unsaturated", 30, 40, CapacityProbe{MachineBusyPct: 94}), // the budget ended first
		events[len(events)-1])
	events[len(events)-2].Probe.Unsaturated = true
	lat := []LatencyRecord{latRec(t, OpWrite, at(1), 1000)}
	s := func(sec int, steal float64) NodeSample {
		return NodeSample{Time: at(sec), Node: "n1", DiskTotalBytes: 1e9, Metrics: map[string]float64{"reactor_cpu_steal_time_ms": steal}}
	}
	met := []NodeSample{s(0, 0), s(10, 80), s(20, 90), s(30, 100), s(40, 110)}
	res, err := Compute(runDir(t, events, lat, met))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{"node lag": {true, true}, "quiet": {false, false}, "busy": {true, true}, "unsaturated": {false, true}}
	if len(res.CapacityProbes) != len(want) {
		t.Fatalf("probes %+v", res.CapacityProbes)
	}
	for _, p := range res.CapacityProbes {
		if w := want[p.Name]; p.HostBound != w[0] || p.LowerBound != w[1] {
			t.Errorf("%s: host-bound %v, lower bound %v, want %v, %v (%+v)", p.Name, p.HostBound, p.LowerBound, w[0], w[1], p)
		}
	}
	if p := res.Probe("node lag"); p.HostLagMSPerS != 8 {
		t.Errorf("node lag during the probe %v ms/s, want 8", p.HostLagMSPerS)
	}
}

// TestCapacityProbeWithIdleReactorsIsALowerBound: a saturated probe during
// which no node's busiest shard reached ProbeReactorSaturatedPct was not
// ended by the nodes' CPU and is a lower bound (on a quiet host that is
// the only sign); one whose busiest shard saturated is the cluster's
// capacity, however low the mean over shards (a hot shard) and however
// idle the other nodes; samples outside the probe, nodes without the
// metric (Cassandra) and samples with only the mean over shards (which
// hides a hot shard) say nothing.
func TestCapacityProbeWithIdleReactorsIsALowerBound(t *testing.T) {
	at, events := tenSecondCycles(6)
	util := func(sec int, node string, mean, busiest float64) NodeSample {
		m := map[string]float64{SampleReactorUtilization: mean}
		if busiest >= 0 {
			m[SampleReactorUtilizationBusiest] = busiest
		}
		return NodeSample{Time: at(sec), Node: node, DiskTotalBytes: 1e9, Metrics: m}
	}
	var met []NodeSample
	probes := []struct {
		name       string
		samples    []NodeSample
		lowerBound bool
		peak       float64 // -1: no reactor figure
	}{
		{"host-bound", []NodeSample{util(2, "n1", 20, 26), util(3, "n2", 25, 33), util(4, "n1", 22, 30)}, true, 33},
		{"model-bound", []NodeSample{util(12, "n1", 60, 70), util(13, "n1", 100, 100), util(13, "n2", 99, 100)}, false, 100},
		{"hot shard", []NodeSample{util(22, "n1", 6, 95), util(23, "n1", 11, 100), util(23, "n2", 5, 12)}, false, 100},
		{"one node saturated", []NodeSample{util(32, "n1", 10, 20), util(33, "n2", 97, 99)}, false, 99},
		{"mean only", []NodeSample{util(42, "n1", 5, -1), util(43, "n1", 10, -1)}, false, -1},
		{"no reactor metric", []NodeSample{{Time: at(62), Node: "n1", DiskTotalBytes: 1e9, Metrics: map[string]float64{"reactor_cpu_steal_time_ms": 0}}}, false, -1},
	}
	// Around every probe, outside its window, a saturated reading.
	for i, pr := range probes {
		met = append(met, util(10*i, "n1", 100, 100))
		met = append(met, pr.samples...)
		met = append(met, util(10*i+9, "n2", 100, 100))
		p := CapacityProbe{Name: pr.name, Start: at(10*i + 1), End: at(10*i + 8), CapacityOps: 15000}
		events = append(events[:len(events)-1], Event{Time: p.End, Type: EventCapacity, Name: p.Name, CapacityOps: 15000, Probe: &p}, events[len(events)-1])
	}
	res, err := Compute(runDir(t, events, []LatencyRecord{latRec(t, OpWrite, at(1), 1000)}, met))
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range probes {
		p := res.Probe(pr.name)
		if p == nil {
			t.Fatalf("no probe %q: %+v", pr.name, res.CapacityProbes)
		}
		switch {
		case pr.peak < 0 && p.ReactorUtilizationPct != nil:
			t.Errorf("%s: reactor utilization %v, want none", pr.name, *p.ReactorUtilizationPct)
		case pr.peak >= 0 && (p.ReactorUtilizationPct == nil || *p.ReactorUtilizationPct != pr.peak):
			t.Errorf("%s: reactor utilization %v, want %v", pr.name, p.ReactorUtilizationPct, pr.peak)
		}
		if p.LowerBound != pr.lowerBound || p.ReactorsUnsaturated != pr.lowerBound || p.HostBound {
			t.Errorf("%s: lower bound %v, reactors unsaturated %v, host-bound %v; want %v, %v, false", pr.name, p.LowerBound, p.ReactorsUnsaturated, p.HostBound, pr.lowerBound, pr.lowerBound)
		}
	}
}
