package acceptance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	small = "i4i.large"
	big   = "i4i.4xlarge"
	racks = []string{"rack1", "rack2", "rack3"}
)

func threeSmall() []nodeSpec {
	var s []nodeSpec
	for _, r := range racks {
		s = append(s, nodeSpec{Type: small, Rack: r})
	}
	return s
}

// scaleOpts: 468 GB i4i.large → ~23 MiB, so 70% is a few seconds of writes.
var scaleOpts = clusterOpts{StorageScaleMiBPerGB: 0.05, OpsPerVCPU: 4000, StreamMiBPerVCPU: 8}

func TestScaleOutParallel(t *testing.T) { testScaleOut(t, true) }
func TestScaleOutSerial(t *testing.T)   { testScaleOut(t, false) }

// testScaleOut: 3 × i4i.large (one per rack), RF=3 with tablets, filled to
// ~70%; add one i4i.4xlarge per rack (in parallel or one at a time); after
// quiesce_topology the new nodes hold tablets, the old nodes' disk usage
// has fallen and every row is readable at QUORUM.
func testScaleOut(t *testing.T, parallel bool) {
	if testing.Short() {
		t.Skip("scale-out of a filled cluster takes tens of seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := newCluster(t, scaleOpts, threeSmall()...)
	s := c.session(t)
	createSchema(t, s, 3, 32)
	old := slices.Clone(c.Nodes)
	t0 := time.Now()
	rows := fillTo(ctx, t, c, s, old, 0.70)
	// Usage moves by a few percent as Pebble flushes and recycles its WAL:
	// take the highest of a few samples as the level before scale-out.
	before := map[string]float64{}
	for range 5 {
		for _, n := range old {
			u, err := n.diskUsage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before[n.Addr] = max(before[n.Addr], u)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("filled %d rows in %v; usage %v", rows, time.Since(t0).Round(time.Millisecond), before)

	t0 = time.Now()
	// Moving tablets away only reads on the old nodes: their usage must not
	// climb towards full while they stream (at 90% that would be ENOSPC).
	stopPeak := samplePeakUsage(ctx, old, 50*time.Millisecond)
	var added []*tnode
	if parallel {
		var specs []nodeSpec
		for _, r := range racks {
			specs = append(specs, nodeSpec{Type: big, Rack: r})
		}
		nodes, err := c.add(ctx, specs...)
		if err != nil {
			t.Fatalf("adding 3 × %s in parallel: %v", big, err)
		}
		added = nodes
	} else {
		for _, r := range racks {
			nodes, err := c.add(ctx, nodeSpec{Type: big, Rack: r})
			if err != nil {
				t.Fatalf("adding %s in %s: %v", big, r, err)
			}
			quiesceAndCheckTablets(ctx, t, old[0], nodes)
			added = append(added, nodes...)
		}
	}
	joined := time.Since(t0)
	quiesceAndCheckTablets(ctx, t, old[0], added)
	t.Logf("added %d nodes in %v, balanced after %v", len(added), joined.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	peak := stopPeak()
	for _, n := range old {
		t.Logf("old node %s: peak usage during scale-out %.1f%% (before %.1f%%)", n.Addr, 100*peak[n.Addr], 100*before[n.Addr])
		if peak[n.Addr] > before[n.Addr]+0.10 {
			t.Errorf("old node %s: disk usage rose from %.1f%% to %.1f%% during scale-out (tablet cleanup/compaction needs transient space)", n.Addr, 100*before[n.Addr], 100*peak[n.Addr])
		}
	}
	// Usage falls once moved tablets are cleaned up; the disk model refreshes
	// every 200 ms and compaction may lag, so allow a few seconds.
	for _, n := range old {
		var now float64
		err := eventually(ctx, 200*time.Millisecond, func() error {
			u, err := n.diskUsage(ctx)
			if err != nil {
				return err
			}
			now = u
			if u > before[n.Addr]-0.05 {
				return fmt.Errorf("old node %s: disk usage %.1f%% → %.1f%%: did not fall", n.Addr, 100*before[n.Addr], 100*u)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		t.Logf("old node %s: usage %.1f%% → %.1f%%", n.Addr, 100*before[n.Addr], 100*now)
	}
	bad, err := checkRows(ctx, s, 0, rows, 16)
	if err != nil {
		t.Errorf("reading back: %v", err)
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d rows lost or wrong after scale-out, e.g. %v", len(bad), rows, bad[:min(10, len(bad))])
	}
}

// TestDecommission: an added node leaves (gone from the live endpoints and
// the host id list) and no row is lost.
func TestDecommission(t *testing.T) {
	if testing.Short() {
		t.Skip("join and decommission take tens of seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newCluster(t, scaleOpts, threeSmall()...)
	s := c.session(t)
	createSchema(t, s, 3, 32)
	const rows = 2000
	if err := writeRows(ctx, s, 0, rows, 16); err != nil {
		t.Fatal(err)
	}
	added, err := c.add(ctx, nodeSpec{Type: big, Rack: "rack1"})
	if err != nil {
		t.Fatalf("adding: %v", err)
	}
	nd := added[0]
	quiesceAndCheckTablets(ctx, t, c.Nodes[0], added)
	t0 := time.Now()
	if err := nd.REST.Decommission(ctx); err != nil {
		t.Fatalf("decommission %s: %v", nd.Addr, err)
	}
	t.Logf("decommissioned %s in %v", nd.Addr, time.Since(t0).Round(time.Millisecond))
	err = eventually(ctx, 200*time.Millisecond, func() error {
		live, err := c.Nodes[0].REST.Live(ctx)
		if err != nil {
			return err
		}
		if slices.Contains(live, nd.Addr) {
			return fmt.Errorf("%s still in /gossiper/endpoint/live/: %v", nd.Addr, live)
		}
		ids, err := c.Nodes[0].REST.HostIDs(ctx)
		if err != nil {
			return err
		}
		if _, ok := ids[nd.Addr]; ok {
			return fmt.Errorf("%s still in the host id list: %v", nd.Addr, ids)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	bad, err := checkRows(ctx, s, 0, rows, 16)
	if err != nil {
		t.Errorf("reading back: %v", err)
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d rows lost after decommission, e.g. %v", len(bad), rows, bad[:min(10, len(bad))])
	}
}

// TestDiskFull: writing past a node's capacity fails writes with a clear
// error and logs "No space left on device"; the node keeps serving reads.
func TestDiskFull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// i4i.large at 0.01 MiB/GB: ~4.7 MiB of disk.
	c := newCluster(t, clusterOpts{StorageScaleMiBPerGB: 0.01, OpsPerVCPU: 4000, StreamMiBPerVCPU: 8}, nodeSpec{Type: small, Rack: "rack1"})
	s := c.session(t)
	createSchema(t, s, 1, 4)
	nd := c.Nodes[0]
	size, _, err := nd.disk(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	var k int64
	limit := int64(3 * size / valueLen) // far more than fits
	for k = 0; k < limit; k += 64 {
		if err := writeRows(ctx, s, k, k+64, 8); err != nil {
			failed = err
			break
		}
	}
	if failed == nil {
		t.Fatalf("wrote %d rows of %d bytes (%.0f MiB) to a %.1f MiB disk without an error", k, valueLen, float64(k*valueLen)/(1<<20), size/(1<<20))
	}
	t.Logf("write failed after %d rows: %v", k, failed)
	if !strings.Contains(failed.Error(), "No space left on device") {
		t.Errorf("write error %q does not say No space left on device", failed)
	}
	line := mustContainLog(ctx, t, nd, "No space left on device")
	if !strings.HasPrefix(line, "ERROR ") || !strings.Contains(line, "[shard ") {
		t.Errorf("log line %q is not a ScyllaDB ERROR line", line)
	}
	if warn := mustContainLog(ctx, t, nd, "the critical disk utilization level"); !strings.HasPrefix(warn, "WARN ") {
		t.Errorf("critical disk utilization line %q is not a WARN line", warn)
	}
	bad, err := checkRows(ctx, s, 0, min(k, 500), 8)
	if err != nil || len(bad) > 0 {
		t.Errorf("reads after the disk filled: %d bad rows, error %v", len(bad), err)
	}
}

// quiesceAndCheckTablets waits for data to be balanced after a join the way
// it holds against ScyllaDB: quiesce_topology alone can return before the
// balancer has the new node's load stats (scylladb service/
// topology_coordinator.cc, service/tablet_allocator.cc), so it waits for the
// new nodes to hold tablets, then quiesces.
func quiesceAndCheckTablets(ctx context.Context, t *testing.T, via *tnode, added []*tnode) {
	t.Helper()
	waitBalanced(ctx, t, via, added)
}

// waitBalanced quiesces until every node of added holds tablets (working
// around a quiesce_topology that returns before the balancer has planned).
func waitBalanced(ctx context.Context, t testing.TB, via *tnode, added []*tnode) {
	t.Helper()
	t0 := time.Now()
	empty := func() []string {
		var e []string
		for _, n := range added {
			v, err := n.metric(ctx, "scylla_tablets_count")
			if err != nil {
				t.Fatal(err)
			}
			if v <= 0 {
				e = append(e, n.Addr)
			}
		}
		return e
	}
	for range 40 {
		if err := via.REST.QuiesceTopology(ctx); err != nil {
			t.Fatalf("quiesce_topology: %v", err)
		}
		if len(empty()) == 0 {
			// The balancer is running now: this quiesce waits for the rest.
			if err := via.REST.QuiesceTopology(ctx); err != nil {
				t.Fatalf("quiesce_topology: %v", err)
			}
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("new node(s) %v still hold no tablets %v after joining", empty(), time.Since(t0).Round(time.Millisecond))
}
