package node

import (
	"context"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Tablet load stats, as the topology coordinator keeps them (scylladb
// service/topology_coordinator.cc): refresh_tablet_load_stats asks every
// token owner for its load and capacity; start_tablet_load_stats_refresher
// refreshes every tablet_load_stats_refresh_interval (60 s) and then wakes
// the balancer; once a bootstrap completes the coordinator triggers a
// refresh without waiting for it ("Make sure the load balancer knows the
// capacity for the new node immediately"). Until the new node's capacity is
// known the balancer plans nothing (service/tablet_allocator.cc: "Cannot
// balance because capacity of node {} (or more) is unknown"), so the
// topology is idle and quiesce_topology returns although the new node holds
// no tablets yet. The refresh triggered after a bootstrap does not wake the
// balancer (only the refresher's own loop broadcasts the event), so an idle
// coordinator plans again on its next event: the periodic refresh (every
// tablet_load_stats_refresh_interval after the previous periodic one), a
// topology or tablet change, a node going up or down (tablet_balancer.go).
const tabletLoadStatsRefreshInterval = 60 * time.Second

// statsInterval is the refresh interval scaled by the node's time scale.
func (n *Node) statsInterval() time.Duration {
	s := n.cfg.TimeScale
	if s <= 0 {
		s = 1
	}
	return max(time.Duration(float64(tabletLoadStatsRefreshInterval)*s), 20*time.Millisecond)
}

// capacityUnknown is a normal member whose capacity the coordinator does not
// know yet (drained nodes need none), or nil.
func (n *Node) capacityUnknown(v *view) *NodeMeta {
	n.statsMu.Lock()
	defer n.statsMu.Unlock()
	for _, nm := range sortedNodes(v.m) {
		// A draining node is no target: its capacity is not needed
		// (service/tablet_allocator.cc: "We may not have capacity
		// information for the drained node"), and a dead one being removed
		// never answers.
		if nm.State == engine.StateNormal && !nm.Draining && !n.statsKnown[nm.HostID] {
			return nm
		}
	}
	return nil
}

// triggerLoadStatsRefresh asks for a refresh without waiting for it.
func (n *Node) triggerLoadStatsRefresh() {
	select {
	case n.statsTrigger <- struct{}{}:
	default:
	}
}

// refreshLoadStats asks every normal and leaving member for its stats (one
// heartbeat each, in parallel) and records who answered.
func (n *Node) refreshLoadStats(ctx context.Context) {
	if ch := n.statsHold.Load(); ch != nil { // injection point, as wait_refresh_tablet_load_stats
		select {
		case <-*ch:
		case <-ctx.Done():
			return
		}
	}
	v := n.view.Load()
	n.log.Logf(scyllalog.Info, "raft_topology", "raft topology: Refreshing table load stats for %d token owners", owners(v.m))
	known := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, nm := range v.m.Nodes {
		if nm.State != engine.StateNormal && nm.State != engine.StateLeaving {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n.ping(ctx, id) {
				mu.Lock()
				known[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	n.statsMu.Lock()
	n.statsKnown, n.statsAt = known, time.Now()
	n.statsMu.Unlock()
}

// statsLoop is the coordinator's refresher (topology_coordinator.cc
// start_tablet_load_stats_refresher): at once when this node becomes
// coordinator, then every refresh interval after its own previous run,
// each time waking the balancer; and when triggered, without waking it.
// It sleeps until the next refresh is due, or, on a node that is not the
// coordinator, coordinatorPoll (a tenth of the interval when that is
// longer) before it looks again: a tick at a tenth of the interval on
// every node was, at the local backend's time scale, 200 wake-ups a second
// of an idle 3-node host (issue 45).
func (n *Node) statsLoop() {
	defer n.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	wasCoordinator := false
	for {
		t.Reset(n.statsWait(wasCoordinator))
		triggered := false
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		case <-n.statsTrigger:
			triggered = true
		}
		if !n.isCoordinator() {
			wasCoordinator = false
			continue
		}
		if triggered { // a refresh on request: it wakes no one
			n.refreshLoadStats(n.ctx)
		}
		n.statsMu.Lock()
		due := time.Since(n.statsPeriodAt) >= n.statsInterval()
		n.statsMu.Unlock()
		if !wasCoordinator || due { // the refresher's own loop
			n.refreshLoadStats(n.ctx)
			n.statsMu.Lock()
			n.statsPeriodAt = time.Now()
			n.statsMu.Unlock()
			n.wakeCoordinator() // _topo_sm.event.broadcast(): wake up load balancer
		}
		wasCoordinator = true
	}
}

// coordinatorPoll is how soon a node that has become the coordinator
// starts its refresher: half the balancer loop's tick (tablet_balancer.go),
// so that the first refresh has run when the balancer next looks.
const coordinatorPoll = 100 * time.Millisecond

// statsWait is how long statsLoop sleeps: on the coordinator until its
// next refresh is due, elsewhere until it looks again whether this node has
// become the coordinator.
func (n *Node) statsWait(coordinator bool) time.Duration {
	if !coordinator {
		return min(time.Second, max(n.statsInterval()/10, coordinatorPoll))
	}
	n.statsMu.Lock()
	due := n.statsPeriodAt.Add(n.statsInterval())
	n.statsMu.Unlock()
	return max(time.Until(due), time.Millisecond)
}

// owners is the number of token owners (normal and leaving members).
func owners(m *Meta) int {
	k := 0
	for _, nm := range m.Nodes {
		if nm.State == engine.StateNormal || nm.State == engine.StateLeaving {
			k++
		}
	}
	return k
}
