package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// A QUORUM read at a coordinator whose own shard is busy (a long
// non-preemptible batch queued ahead of it) is answered by the other two
// replicas: the local read waits on a worker while the speculative retry
// asks the third replica (scylladb service/storage_proxy.cc: a speculating
// read executor sends one more data request once the retry delay passes).
// With the shard idle, the local replica answers on the coordinator's own
// goroutine (capacity.Model.Immediate), and the read is as fast.
func TestQuorumReadDoesNotWaitForABusyLocalReplica(t *testing.T) {
	var log syncBuf
	a := startMemberIn(t, "127.0.9.1", "rack1", &log, nil)
	startMemberIn(t, "127.0.9.2", "rack2", &log, nil)
	startMemberIn(t, "127.0.9.3", "rack3", &log, nil)
	createTableRF(t, a, 20, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	read := func() time.Duration {
		t.Helper()
		t0 := time.Now()
		rows, err := a.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: []byte("key-7")}, engine.Quorum)
		if err != nil || len(rows) != 1 {
			t.Fatalf("QUORUM read: %d rows, %v", len(rows), err)
		}
		return time.Since(t0)
	}
	// Bounds far from both sides, so that a loaded test machine passes.
	const fast = 500 * time.Millisecond
	if d := read(); d > fast {
		t.Errorf("a QUORUM read with every shard idle took %v", d)
	}
	// One shard (VCPUs: 1), busy for 2 s.
	busy := 2 * time.Second
	done := make(chan error, 1)
	go func() { done <- a.cap.Batch(ctx, 0, float64(busy)/float64(a.cap.ServiceTime(1))) }()
	for a.cap.Immediate(0, 1) {
		time.Sleep(time.Millisecond)
	}
	if d := read(); d > fast {
		t.Errorf("a QUORUM read took %v with the coordinator's shard busy for %v: it waited for its own replica instead of asking the third", d, busy)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := read(); d > fast {
		t.Errorf("a QUORUM read after the batch took %v", d)
	}
}

// TestQuorumReadsSpreadOverTheOtherReplicas: a coordinator orders a read's
// replicas by proximity with ties in random order (locator/topology.cc
// do_sort_by_proximity), so its QUORUM reads' remote data requests spread
// over both other racks' replicas, as each one's
// scylla_storage_proxy_replica_reads{op_type="data"} shows (absent until
// the first one, set_skip_when_empty). Taking the tablet's replicas in
// order sent every one to the same replica.
func TestQuorumReadsSpreadOverTheOtherReplicas(t *testing.T) {
	var log syncBuf
	a := startMemberIn(t, "127.0.9.1", "rack1", &log, nil)
	b := startMemberIn(t, "127.0.9.2", "rack2", &log, nil)
	c := startMemberIn(t, "127.0.9.3", "rack3", &log, nil)
	remoteReads := func(n *Node) float64 {
		f := scrapeNode(t, n)["scylla_storage_proxy_replica_reads"]
		if f == nil {
			return 0
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "op_type" && l.GetValue() == "data" {
					return m.GetCounter().GetValue()
				}
			}
		}
		t.Fatalf("scylla_storage_proxy_replica_reads has no op_type=data series: %v", f)
		return 0
	}
	if got := remoteReads(b); got != 0 {
		t.Fatalf("node b served %v remote reads before any read", got)
	}
	createTableRF(t, a, 10, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const reads = 200
	for i := range reads {
		if _, err := a.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: []byte(fmt.Sprintf("key-%d", i%10))}, engine.Quorum); err != nil {
			t.Fatal(err)
		}
	}
	rb, rc := remoteReads(b), remoteReads(c)
	t.Logf("remote data reads: rack2 %v, rack3 %v of %d QUORUM reads at rack1", rb, rc, reads)
	// Each is asked about half the time (speculative retries may add a few);
	// in order, one would get all and the other none.
	for _, r := range []float64{rb, rc} {
		if r < reads/4 {
			t.Errorf("remote data reads rack2 %v, rack3 %v of %d: the coordinator prefers one of two equally near replicas", rb, rc, reads)
			break
		}
	}
	if rb+rc < reads {
		t.Errorf("%v remote data reads for %d QUORUM reads with a local replica", rb+rc, reads)
	}
}

// TestQuorumReadsFavourTheHotReplica: with heat-weighted load balancing
// (hwlb.go, hitrate.go) a coordinator whose replicas' caches differ sends
// its QUORUM reads' remote data requests to the replica whose cache
// answers them, learning each replica's hit rate from its answers; the
// cold replica gets few. Without it each got about half
// (TestQuorumReadsSpreadOverTheOtherReplicas), and without the answers'
// hit rates the hot one would count as cold as the other.
func TestQuorumReadsFavourTheHotReplica(t *testing.T) {
	var log syncBuf
	a := startMemberIn(t, "127.0.9.1", "rack1", &log, nil)
	b := startMemberIn(t, "127.0.9.2", "rack2", &log, nil)
	// c's cache holds nothing: every read of it misses.
	c := startMemberIn(t, "127.0.9.3", "rack3", &log, func(n *Node) { n.store.cache = newRowCache(1, false) })
	createTableRF(t, a, 10, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	read := func(i int) {
		if _, err := a.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: []byte(fmt.Sprintf("key-%d", i%10))}, engine.Quorum); err != nil {
			t.Fatal(err)
		}
	}
	// Until the replicas' rates are recalculated (every 100 ms at the
	// members' time scale) and answered, the coordinator knows none.
	for i, end := 0, time.Now().Add(1500*time.Millisecond); time.Now().Before(end); i++ {
		read(i)
		time.Sleep(2 * time.Millisecond)
	}
	remote := func(n *Node) float64 { return float64(n.met.remoteReads.get()) }
	b0, c0 := remote(b), remote(c)
	const reads = 400
	for i := range reads {
		read(i)
	}
	rb, rc := remote(b)-b0, remote(c)-c0
	t.Logf("remote data reads: hot rack2 %v, cold rack3 %v of %d QUORUM reads at rack1", rb, rc, reads)
	if rb < reads*0.8 || rc > reads/10 {
		t.Errorf("remote data reads: hot replica %v, cold replica %v of %d: the reads do not follow the hit rates", rb, rc, reads)
	}
}
