package node

import (
	"context"
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
