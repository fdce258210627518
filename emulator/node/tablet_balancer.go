package node

import (
	"net"
	"strconv"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// The tablet load balancer, run by the topology coordinator: plans migrations
// (for joins, drains and imbalance), starts their streaming and switches
// ownership once streamed. State: migMu.

// balancerLoop is the topology coordinator's fiber (scylladb
// service/topology_coordinator.cc run()): while it has work (migrations in
// flight, or a round that changed something) it goes on, here at a 200 ms
// pace standing in for the migration stages; once a round had nothing to
// do it sleeps until the topology state machine's event (await_event):
// metadata changes, a node up or down, a streamed migration, the periodic
// load stats refresh. A node that is not coordinator checks every 200 ms
// whether it has become one.
func (n *Node) balancerLoop() {
	defer n.wg.Done()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	idle := false
	for {
		if idle {
			select {
			case <-n.ctx.Done():
				return
			case <-n.wake:
			}
		} else {
			select {
			case <-n.ctx.Done():
				return
			case <-t.C:
			case <-n.wake:
			}
		}
		began := time.Now()
		idle = n.isCoordinator() && !n.balanceOnce()
		if !idle {
			// Wakes that came during a round with work are served by the
			// next round, minRoundInterval after this one began, not by a
			// round each.
			select {
			case <-n.ctx.Done():
				return
			case <-time.After(time.Until(began.Add(minRoundInterval))):
			}
		}
	}
}

// minRoundInterval is the least time between two rounds of the
// coordinator that had work. A ScyllaDB round that advances tablet
// transitions commits them through group 0 and then runs
// global_tablet_token_metadata_barrier: a barrier_and_drain RPC to every
// node, which waits for the requests of older topology versions to finish,
// and a second group 0 commit of the fence version
// (service/topology_coordinator.cc handle_tablet_migration,
// global_token_metadata_barrier), so rounds take raft commits and a drain
// of in-flight requests each. Here a round publishes at once, and with
// 1,024 small tablets every finished stream woke a round of its own: some
// 300 metadata epochs a second while a node joined, each decoded and
// installed by every node, and a join raised P99 from 3 to 8-11 ms for
// 2-3 s (issue 17). 20 ms stands for those commits and that drain; it is
// assumed, not a ScyllaDB setting.
var minRoundInterval = 20 * time.Millisecond

// wakeCoordinator is _topo_sm.event.broadcast().
func (n *Node) wakeCoordinator() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

type move struct {
	table    string
	index    int
	from, to Replica
	op       string
	rate     float64
	err      error
}

func (mv *move) key() string { return mv.table + "/" + strconv.Itoa(mv.index) }

// migrationLimit is how many migrations a node takes part in at once. The
// bandwidth stays bounded regardless: streaming chunks queue FIFO on the
// tablet's shard in the capacity model; more migrations in flight only
// hide the per-round metadata latency for small tablets.
func migrationLimit(nm *NodeMeta) int {
	if nm == nil {
		return 1
	}
	return 4 * max(1, nm.Shards)
}

// balanceOnce is one round of the topology coordinator: finish streamed
// migrations, let drained nodes leave, roll back orphaned migrations, then
// plan and start new ones. Each step is one metadata change, so that
// thousands of tablets do not mean thousands of publications. It reports
// whether the coordinator had work (handle_topology_transition's answer):
// false when nothing is in flight and the plan is empty.
func (n *Node) balanceOnce() bool {
	n.migMu.Lock()
	done := n.finished
	n.finished = nil
	n.migMu.Unlock()
	if len(done) > 0 {
		err := n.mutateMeta(n.ctx, func(m *Meta) (*Meta, error) {
			c := m.clone()
			for _, mv := range done {
				tm := c.Tablets[mv.table]
				if tm == nil || mv.index >= len(tm.Tablets) {
					continue
				}
				t := &tm.Tablets[mv.index]
				if t.Pending == nil || t.Pending.Host != mv.to.Host {
					continue
				}
				if mv.err == nil {
					for i, r := range t.Replicas {
						if r.Host == mv.from.Host {
							t.Replicas[i] = *t.Pending
						}
					}
				}
				t.Pending, t.Leaving = nil, ""
			}
			return c, nil
		})
		n.migMu.Lock()
		if err != nil {
			n.finished = append(n.finished, done...)
		} else {
			for _, mv := range done {
				delete(n.migrations, mv.key())
				if mv.err != nil && n.ctx.Err() == nil {
					n.log.Logf(scyllalog.Warn, "load_balancer", "Migration of tablet %d of %s from %s to %s failed: %v", mv.index, mv.table, mv.from.Host, mv.to.Host, mv.err)
				}
			}
		}
		n.migMu.Unlock()
		if err != nil {
			return true
		}
	}

	v := n.view.Load()
	m := v.m
	load := shardLoad(m)
	// Leaving nodes with nothing left have left.
	var gone []string
	for id, nm := range m.Nodes {
		if nm.State == engine.StateLeaving && sum(load[id]) == 0 {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if n.mutateMeta(n.ctx, func(m *Meta) (*Meta, error) {
			c := m.clone()
			for _, id := range gone {
				c.Nodes[id].State = engine.StateLeft
				n.log.Logf(scyllalog.Info, "raft_topology", "Node %s has left the cluster", c.Nodes[id].Addr)
			}
			return c, nil
		}) != nil {
			return true
		}
		v = n.view.Load()
		m = v.m
		load = shardLoad(m)
	}
	// Migrations left half-way by a previous coordinator are rolled back
	// (writes went to both replicas; the old one is still complete).
	orphans := 0
	for key, tm := range m.Tablets {
		for i, t := range tm.Tablets {
			if t.Pending != nil && !n.migrating(key, i) {
				orphans++
			}
		}
	}
	if orphans > 0 {
		n.log.Logf(scyllalog.Info, "load_balancer", "Rolling back %d orphaned tablet migrations", orphans)
		n.mutateMeta(n.ctx, func(m *Meta) (*Meta, error) {
			c := m.clone()
			for key, tm := range c.Tablets {
				for i := range tm.Tablets {
					if tm.Tablets[i].Pending != nil && !n.migrating(key, i) {
						tm.Tablets[i].Pending, tm.Tablets[i].Leaving = nil, ""
					}
				}
			}
			return c, nil
		})
		return true
	}
	busy := map[string]int{}
	for _, tm := range m.Tablets {
		for _, t := range tm.Tablets {
			if t.Pending != nil {
				busy[t.Pending.Host]++
				busy[t.Leaving]++
			}
		}
	}
	var moves []move
	if nm := n.capacityUnknown(v); nm != nil {
		if n.statsLoggedAt != v.m.Epoch {
			n.statsLoggedAt = v.m.Epoch
			n.log.Logf(scyllalog.Info, "load_balancer", "Cannot balance because capacity of node %s (or more) is unknown", nm.HostID)
		}
	} else {
		moves = n.plan(v, load, busy)
	}
	if len(moves) == 0 {
		// An empty plan ends the tablet_migration transition state.
		n.migMu.Lock()
		inflight := len(n.migrations) > 0 || len(n.finished) > 0
		if !inflight {
			n.tstate.Store(false)
		}
		n.migMu.Unlock()
		return inflight || len(done) > 0 || len(gone) > 0
	}
	var started []*move
	err := n.mutateMeta(n.ctx, func(m *Meta) (*Meta, error) {
		c := m.clone()
		started = started[:0]
		for i := range moves {
			mv := &moves[i]
			tm := c.Tablets[mv.table]
			if tm == nil || mv.index >= len(tm.Tablets) || n.migrating(mv.table, mv.index) {
				continue
			}
			t := &tm.Tablets[mv.index]
			if t.Pending != nil || !hasReplica(*t, mv.from.Host) || hasReplica(*t, mv.to.Host) {
				continue
			}
			p := mv.to
			t.Pending, t.Leaving = &p, mv.from.Host
			from, to := c.Nodes[mv.from.Host], c.Nodes[mv.to.Host]
			mv.rate = to.StreamBPS / float64(max(1, to.Shards))
			if from != nil && n.isUp(from.HostID) {
				mv.rate = min(mv.rate, from.StreamBPS/float64(max(1, from.Shards)))
			}
			started = append(started, mv)
		}
		if len(started) == 0 {
			return nil, nil
		}
		return c, nil
	})
	if err != nil || len(started) == 0 {
		return true
	}
	n.tstate.Store(true)
	n.met.migrations.Add(float64(len(started)))
	for _, mv := range started {
		n.migMu.Lock()
		n.migrations[mv.key()] = true
		n.migMu.Unlock()
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			mv.err = n.stream(n.ctx, mv)
			n.migMu.Lock()
			n.finished = append(n.finished, mv)
			n.migMu.Unlock()
			n.wakeCoordinator()
		}()
	}
	return true
}

// plan chooses migrations: drain leaving and draining nodes first (all of
// them at once: one leaving node before 2026.1, every node with a leave or
// remove request from 2026.1), then even out tablets per shard among the
// normal nodes of each rack.
func (n *Node) plan(v *view, load map[string][]int, busy map[string]int) []move {
	m := v.m
	var moves []move
	canUse := func(h string) bool { return busy[h] < migrationLimit(m.Nodes[h]) }
	take := func(mv move) {
		moves = append(moves, mv)
		busy[mv.from.Host]++
		busy[mv.to.Host]++
		load[mv.to.Host][mv.to.Shard]++
		if l := load[mv.from.Host]; mv.from.Shard < len(l) {
			l[mv.from.Shard]--
		}
	}
	// Candidates for a tablet: normal live nodes not yet replicas, same rack
	// preferred, least loaded per shard.
	target := func(t Tablet, from *NodeMeta) *NodeMeta {
		var best *NodeMeta
		bestSameRack := false
		for _, nm := range sortedNodes(m) {
			if nm.State != engine.StateNormal || nm.Draining || nm.DC != from.DC || !n.isUp(nm.HostID) || hasReplica(t, nm.HostID) || !canUse(nm.HostID) {
				continue
			}
			same := nm.Rack == from.Rack
			if best == nil || (same && !bestSameRack) || (same == bestSameRack && density(load[nm.HostID]) < density(load[best.HostID])) {
				best, bestSameRack = nm, same
			}
		}
		return best
	}
	for _, key := range sortedKeys(m.Tablets) {
		tm := m.Tablets[key]
		for i, t := range tm.Tablets {
			if t.Pending != nil {
				continue
			}
			for _, r := range t.Replicas {
				from := m.Nodes[r.Host]
				if !drains(from) || (!from.Removing && !canUse(r.Host)) {
					continue
				}
				to := target(t, from)
				if to == nil {
					continue
				}
				take(move{table: key, index: i, from: r, to: Replica{Host: to.HostID, Shard: leastLoadedShard(load[to.HostID])}, op: map[bool]string{true: "removenode", false: "decommission"}[from.Removing]})
				break
			}
		}
	}
	if !m.Balancing || len(moves) > 0 {
		return moves
	}
	// Even out per rack.
	racks := map[string][]*NodeMeta{}
	for _, nm := range sortedNodes(m) {
		if nm.State == engine.StateNormal && !nm.Draining && n.isUp(nm.HostID) {
			racks[nm.DC+"/"+nm.Rack] = append(racks[nm.DC+"/"+nm.Rack], nm)
		}
	}
	for _, nodes := range racks {
		for iter := 0; iter < 256; iter++ {
			var hi, lo *NodeMeta
			for _, nm := range nodes {
				if hi == nil || density(load[nm.HostID]) > density(load[hi.HostID]) {
					hi = nm
				}
				if lo == nil || density(load[nm.HostID]) < density(load[lo.HostID]) {
					lo = nm
				}
			}
			if hi == nil || hi == lo || !canUse(hi.HostID) || !canUse(lo.HostID) {
				break
			}
			lh, ll := load[hi.HostID], load[lo.HostID]
			if float64(sum(lh))/float64(len(lh)) <= float64(sum(ll)+1)/float64(len(ll)) {
				break
			}
			found := false
			for _, key := range sortedKeys(m.Tablets) {
				tm := m.Tablets[key]
				for i, t := range tm.Tablets {
					if t.Pending != nil || hasReplica(t, lo.HostID) || n.migrating(key, i) || pendingIn(moves, key, i) {
						continue
					}
					for _, r := range t.Replicas {
						if r.Host == hi.HostID {
							take(move{table: key, index: i, from: r, to: Replica{Host: lo.HostID, Shard: leastLoadedShard(ll)}, op: "rebalance"})
							found = true
							break
						}
					}
					if found {
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				break
			}
		}
	}
	return moves
}

func pendingIn(moves []move, key string, i int) bool {
	for _, mv := range moves {
		if mv.table == key && mv.index == i {
			return true
		}
	}
	return false
}

func (n *Node) migrating(key string, i int) bool {
	n.migMu.Lock()
	defer n.migMu.Unlock()
	return n.migrations[key+"/"+strconv.Itoa(i)]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// addrOf is host:port of a member's internode listener.
func addrOf(nm *NodeMeta) string { return net.JoinHostPort(nm.Addr, strconv.Itoa(nm.InternodePort)) }
