package node

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

const topoPort = 17931

func startMember(t *testing.T, addr string, log *syncBuf, tweak func(*Node)) *Node {
	t.Helper()
	return startMemberIn(t, addr, "rack1", log, tweak)
}

func startMemberIn(t *testing.T, addr, rack string, log *syncBuf, tweak func(*Node)) *Node {
	t.Helper()
	n := openMember(t, addr, rack, log, tweak)
	t.Cleanup(func() { n.Close() })
	return n
}

// openMember is startMemberIn for a member the test closes itself.
func openMember(t *testing.T, addr, rack string, log *syncBuf, tweak func(*Node)) *Node {
	t.Helper()
	cfg := memberConfig(addr, rack, t.TempDir(), log)
	cfg.Seeds = []string{"127.0.9.1"}
	return openConfigured(t, cfg, tweak)
}

// memberConfig is a test member's configuration; its seed is the first
// address of addr's /24 (127.0.9.1 for the topology tests' members).
func memberConfig(addr, rack, dir string, log *syncBuf) Config {
	seed := addr[:strings.LastIndex(addr, ".")+1] + "1"
	return Config{ClusterName: "topo", ListenAddress: addr, DC: "dc1", Rack: rack, DataDir: dir, VCPUs: 1, InternodePort: topoPort,
		Seeds: []string{seed}, StreamBytesPerSec: 256 << 10, InitialTablets: 8, Log: scyllalog.New(log),
		TimeScale: 0.05} // the load stats refresh every 3 s
}

// openConfigured starts a member with cfg (tweak, if any, before it joins)
// and waits until it serves.
func openConfigured(t *testing.T, cfg Config, tweak func(*Node)) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(n)
	}
	if err := n.Join(ctx); err != nil {
		n.Close()
		t.Fatal(err)
	}
	n.MarkServing()
	return n
}

// createTable makes ks.t (tablets, RF 1) and writes rows of 1 KiB.
func createTable(t *testing.T, n *Node, rows int) {
	t.Helper()
	createTableRF(t, n, rows, 1)
}

// createTableRF is createTable with rf replicas, written at ALL.
func createTableRF(t *testing.T, n *Node, rows, rf int) {
	t.Helper()
	createTableTablets(t, n, rows, rf, 8)
}

// createTableTablets is createTableRF with a number of tablets.
func createTableTablets(t *testing.T, n *Node, rows, rf, tablets int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ks := &engine.Keyspace{Name: "ks", Replication: map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": strconv.Itoa(rf)},
		DurableWrites: true, Tablets: tablets, TabletsEnabled: true}
	if _, err := n.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	tb := &engine.Table{Keyspace: "ks", Name: "t", Columns: []engine.Column{
		{Name: "k", Type: "blob", Kind: engine.PartitionKey}, {Name: "v", Type: "blob", Kind: engine.Regular, Position: -1}}}
	if _, err := n.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateTable, KeyspaceName: "ks", Table: tb}); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		m := engine.Mutation{Keyspace: "ks", Table: "t", PartitionKey: []byte(fmt.Sprintf("key-%d", i)),
			Cells: map[string][]byte{"v": make([]byte, 1024)}, Timestamp: time.Now().UnixMicro()}
		if err := n.Write(ctx, []engine.Mutation{m}, engine.All); err != nil {
			t.Fatal(err)
		}
	}
}

func tabletsOf(n *Node, host string) int { return sum(shardLoad(n.view.Load().m)[host]) }

// assigned says whether host holds a tablet replica or is a migration's target.
func assigned(n *Node, host string) bool {
	for _, tm := range n.view.Load().m.Tablets {
		for _, t := range tm.Tablets {
			if hasReplica(t, host) || (t.Pending != nil && t.Pending.Host == host) {
				return true
			}
		}
	}
	return false
}

// After a join, quiesce_topology returns once the topology is not busy
// (scylladb service/storage_service.cc await_topology_quiesced →
// topology_state_machine::await_not_busy), and the balancer plans nothing
// until the coordinator has the new node's load stats
// (service/topology_coordinator.cc refresh_tablet_load_stats, triggered
// after bootstrap; service/tablet_allocator.cc "Cannot balance because
// capacity of node ... is unknown"): a quiesce in that window returns while
// the new node holds no tablets. Tablet migrations use file streaming
// (enable_file_stream), so scylla_streaming_total_*_bytes stay at zero.
func TestQuiesceWindowAfterJoin(t *testing.T) {
	var log syncBuf
	a := startMember(t, "127.0.9.1", &log, nil)
	createTable(t, a, 100)
	// Hold the coordinator's next stats refresh (its injection point
	// wait_refresh_tablet_load_stats), so that the window stays open.
	for wait := time.Now().Add(10 * time.Second); a.capacityUnknown(a.view.Load()) != nil && time.Now().Before(wait); {
		time.Sleep(20 * time.Millisecond) // the coordinator's first refresh
	}
	// Past the coordinator's post-start grace, so that it stays coordinator
	// (and its refresher's loop keeps its pace) while b joins.
	for time.Since(a.started) < downAfter+heartbeatInterval {
		time.Sleep(20 * time.Millisecond)
	}
	release := make(chan struct{})
	a.statsHold.Store(&release)
	b := startMember(t, "127.0.9.2", &log, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Quiesce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tabletsOf(a, b.HostID()); got != 0 {
		t.Fatalf("new node holds %d tablets before its capacity is known", got)
	}
	// The balancer runs meanwhile (once the coordinator is past its
	// post-start grace) and plans nothing.
	line := "load_balancer - Cannot balance because capacity of node " + b.HostID() + " (or more) is unknown"
	for wait := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), line) && time.Now().Before(wait); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(log.String(), line) {
		t.Errorf("no %q line", line)
	}
	if got := tabletsOf(a, b.HostID()); got != 0 {
		t.Fatalf("new node holds %d tablets before its capacity is known", got)
	}
	// The refresh triggered by the join does not wake the idle
	// coordinator: the new node gets tablets only after the refresher's
	// next periodic run broadcasts the event (start_tablet_load_stats_refresher),
	// every tablet_load_stats_refresh_interval × the time scale.
	// As if the refresher's periodic run had just happened (the hold
	// kept it from running), so that the next one is a full interval away.
	a.statsMu.Lock()
	a.statsPeriodAt = time.Now()
	a.statsMu.Unlock()
	released := time.Now()
	close(release)
	deadline := time.Now().Add(20 * time.Second)
	for !assigned(a, b.HostID()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if wait := time.Since(released); wait < a.statsInterval()/2 {
		t.Errorf("the first migration to the new node started %s after its capacity was known, before the periodic refresh (%s)", wait.Round(time.Millisecond), a.statsInterval())
	}
	for tabletsOf(a, b.HostID()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	a.statsMu.Lock()
	periodic, known := a.statsPeriodAt, a.statsKnown[b.HostID()]
	a.statsMu.Unlock()
	if !known || !periodic.After(released) {
		t.Fatalf("tablets moved to the new node %s after the release, before the periodic refresh (last at %s, capacity known: %v)",
			time.Since(released).Round(time.Millisecond), periodic.Sub(released).Round(time.Millisecond), known)
	}
	if wait := time.Since(released); wait > a.statsInterval()+2*time.Second {
		t.Errorf("tablets moved %s after the release, refresh interval %s", wait.Round(time.Millisecond), a.statsInterval())
	}
	if err := a.Quiesce(ctx); err != nil { // the balancer is running: this one waits for it
		t.Fatal(err)
	}
	ta, tb := tabletsOf(a, a.HostID()), tabletsOf(a, b.HostID())
	if ta != 4 || tb != 4 {
		t.Fatalf("after the quiesce: %d and %d tablets, want 4 and 4", ta, tb)
	}
	for _, n := range []*Node{a, b} {
		fams := scrapeNode(t, n)
		for _, name := range []string{"scylla_streaming_total_incoming_bytes", "scylla_streaming_total_outgoing_bytes"} {
			if f := fams[name]; f == nil || f.Metric[0].Counter.GetValue() != 0 {
				t.Errorf("%s: %s = %v after tablet migrations (file streaming leaves it alone)", n.cfg.ListenAddress, name, f)
			}
		}
	}
}

// Scale-in by the version the nodes pose as. Before 2026.1 node requests run
// one at a time (scylladb service/topology_coordinator.cc get_next_task: a
// node in transition is worked on until done, other requests wait in
// topology.requests): of two decommissions asked at once, one drains while
// the other is queued. From scylla-2026.1.0 (PARALLEL_TABLET_DRAINING,
// gms/feature_service.hh; service/storage_service.cc marks every node with
// a leave or remove request draining, service/tablet_allocator.cc drains
// them all) both drain at once, and only the final step, LEAVING to LEFT,
// is one node at a time.
func TestScaleInByVersion(t *testing.T) {
	for _, tc := range []struct {
		version  string
		parallel bool
	}{
		{"2025.4.0", false},
		{"2026.1.0", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			var log syncBuf
			asVersion := func(n *Node) { n.cfg.Version = tc.version }
			a := startMember(t, "127.0.9.1", &log, asVersion)
			createTable(t, a, 400) // 400 KiB at 256 KiB/s: each drain takes a while
			b := startMember(t, "127.0.9.2", &log, asVersion)
			c := startMember(t, "127.0.9.3", &log, asVersion)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			deadline := time.Now().Add(30 * time.Second)
			for (tabletsOf(a, b.HostID()) == 0 || tabletsOf(a, c.HostID()) == 0) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if err := a.Quiesce(ctx); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			for _, n := range []*Node{b, c} {
				go func() { errs <- n.Decommission(ctx) }()
			}
			sawQueued, maxLeaving, maxDraining := false, 0, 0
			for done := 0; done < 2; {
				select {
				case err := <-errs:
					if err != nil {
						t.Fatal(err)
					}
					done++
				case <-time.After(5 * time.Millisecond):
				}
				m := a.view.Load().m
				load := shardLoad(m)
				leaving, draining := 0, 0
				for id, nm := range m.Nodes {
					if nm.State == engine.StateLeaving {
						leaving++
					}
					if drains(nm) && sum(load[id]) > 0 {
						draining++
					}
				}
				maxLeaving, maxDraining = max(maxLeaving, leaving), max(maxDraining, draining)
				if len(a.QueuedRequests()) > 0 {
					sawQueued = true
				}
			}
			if maxLeaving != 1 {
				t.Errorf("%d nodes were LEAVING at once, want 1 (the final step is one node at a time)", maxLeaving)
			}
			if want := map[bool]int{false: 1, true: 2}[tc.parallel]; maxDraining != want {
				t.Errorf("%d nodes had tablets drained at once, want %d", maxDraining, want)
			}
			queuedLog := strings.Contains(log.String(), "decommission request for 127.0.9.") && strings.Contains(log.String(), "queued: node")
			if !tc.parallel && (!sawQueued || !queuedLog) {
				t.Errorf("the second decommission was never seen queued (queue %v, log line %v)", sawQueued, queuedLog)
			}
			if tc.parallel && !strings.Contains(log.String(), "due to leave request") {
				t.Error("no \"Will drain node ... due to leave request\" log line")
			}
			for _, n := range []*Node{b, c} {
				if st := a.view.Load().m.Nodes[n.HostID()].State; st != engine.StateLeft {
					t.Errorf("%s is %s, want LEFT", n.cfg.ListenAddress, st)
				}
			}
		})
	}
}

// Removenode of a dead node completes in both ways: from 2026.1 the dead
// node stays NORMAL while its tablets are rebuilt elsewhere, and the
// balancer needs no capacity of a draining node (service/tablet_allocator.cc
// "We may not have capacity information for the drained node"), so its
// silence does not stop balancing.
func TestRemoveDeadNodeByVersion(t *testing.T) {
	for _, version := range []string{"2025.4.0", "2026.1.0"} {
		t.Run(version, func(t *testing.T) {
			var log syncBuf
			asVersion := func(n *Node) { n.cfg.Version = version }
			a := startMember(t, "127.0.9.1", &log, asVersion)
			b := startMember(t, "127.0.9.2", &log, asVersion)
			createTableRF(t, a, 100, 2)
			c := openMember(t, "127.0.9.3", "rack1", &log, asVersion) // closed below, not at cleanup
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			dead := c.HostID()
			waitFor(t, "tablets on 127.0.9.3", func() bool { return tabletsOf(a, dead) > 0 })
			if err := a.Quiesce(ctx); err != nil {
				t.Fatal(err)
			}
			c.Close()
			waitFor(t, "127.0.9.3 seen down", func() bool { return !a.isUp(dead) && !b.isUp(dead) })
			// A load stats refresh has found it silent: its capacity is unknown.
			waitFor(t, "127.0.9.3's capacity unknown", func() bool {
				nm := a.capacityUnknown(a.view.Load())
				return nm != nil && nm.HostID == dead
			})
			if err := b.RemoveNode(ctx, dead); err != nil {
				t.Fatalf("removenode: %v", err)
			}
			if st := a.view.Load().m.Nodes[dead].State; st != engine.StateLeft || tabletsOf(a, dead) != 0 {
				t.Errorf("removed node is %s with %d tablets, want LEFT with none", st, tabletsOf(a, dead))
			}
		})
	}
}

// parallelTabletDraining follows the version a node poses as:
// PARALLEL_TABLET_DRAINING is in scylla-2026.1.0-rc0 and later tags and in
// no 2025.x one (gms/feature_service.hh at each tag).
func TestParallelTabletDrainingByVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"2025.1.0-emulated": false, "2025.4.10": false, "2026.1.0-rc0": true, "2026.1": true,
		"2026.3.0": true, "2027.1.0": true, "": false, "latest": false,
	} {
		if got := parallelTabletDraining(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

// The coordinator's rounds with work are at least minRoundInterval apart,
// as ScyllaDB's take group 0 commits and a global barrier_and_drain each
// (service/topology_coordinator.cc): the many small tablets a join moves do
// not each get metadata epochs of their own (unpaced: 124 epochs in 408 ms
// for these 64 migrations).
func TestCoordinatorRoundsArePaced(t *testing.T) {
	old := minRoundInterval
	t.Cleanup(func() { minRoundInterval = old }) // after the nodes' own cleanups
	minRoundInterval = 100 * time.Millisecond
	var log syncBuf
	a := startMember(t, "127.0.9.1", &log, nil)
	createTableTablets(t, a, 200, 1, 128)
	for time.Since(a.started) < downAfter+heartbeatInterval {
		time.Sleep(20 * time.Millisecond) // past the coordinator's post-start grace
	}
	b := startMember(t, "127.0.9.2", &log, nil)
	deadline := time.Now().Add(30 * time.Second)
	for !assigned(a, b.HostID()) { // the first migration round
		if time.Now().After(deadline) {
			t.Fatal("no tablet migrates to the new node in 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	e0, t0 := a.view.Load().m.Epoch, time.Now()
	for tabletsOf(a, b.HostID()) < 64 || !a.topologyIdle() {
		if time.Now().After(deadline) {
			t.Fatalf("new node holds %d of 128 tablets 30 s after joining", tabletsOf(a, b.HostID()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	epochs, took := a.view.Load().m.Epoch-e0, time.Since(t0)
	// A round commits at most twice (the migrations it finishes, those
	// it starts), and one round may be in progress.
	limit := 2 * (uint64(took/minRoundInterval) + 1)
	if epochs > limit {
		t.Errorf("%d metadata epochs in %v while 64 tablets moved, want at most %d (one round per %v)", epochs, took.Round(time.Millisecond), limit, minRoundInterval)
	}
	t.Logf("%d epochs in %v for 64 migrations", epochs, took.Round(time.Millisecond))
}
