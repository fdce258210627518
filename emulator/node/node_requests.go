package node

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Node requests (join, removenode, decommission) run one at a time, as the
// topology coordinator has them (scylladb service/topology_coordinator.cc,
// get_next_task): while a node is in transition (topology.transition_nodes,
// here a JOINING or LEAVING member) the coordinator keeps working on it and
// other requests wait in topology.requests; the next is the one of lowest
// topology_request value (service/topology_state_machine.hh: replace, join,
// remove, leave, rebuild), first come first served among equals. Before
// 2026.1 that holds for the whole of a decommission or removenode; from
// 2026.1 the nodes drain first, all at once, and only the final step
// queues here (tablet_draining.go).

// requestPriority is topology_request's order.
func requestPriority(kind string) int {
	switch kind {
	case "join":
		return 1
	case "removenode":
		return 2
	case "decommission":
		return 3
	}
	return 4
}

type queuedRequest struct {
	kind string
	prio int
	seq  uint64
	host string
}

// admitNodeRequest waits until op may start: no node in transition and no
// queued request ahead of it. It returns a function that takes the request
// off the queue (call it once the request has changed the metadata, or failed).
func (n *Node) admitNodeRequest(ctx context.Context, kind, host string) (func(), error) {
	n.reqMu.Lock()
	n.reqSeq++
	q := &queuedRequest{kind: kind, prio: requestPriority(kind), seq: n.reqSeq, host: host}
	n.reqQueue = append(n.reqQueue, q)
	n.reqMu.Unlock()
	done := func() {
		n.reqMu.Lock()
		defer n.reqMu.Unlock()
		for i, r := range n.reqQueue {
			if r == q {
				n.reqQueue = append(n.reqQueue[:i], n.reqQueue[i+1:]...)
				return
			}
		}
	}
	logged := false
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		busy := n.transitionNode()
		n.reqMu.Lock()
		first := true
		for _, r := range n.reqQueue {
			if r != q && (r.prio < q.prio || (r.prio == q.prio && r.seq < q.seq)) {
				first = false
			}
		}
		n.reqMu.Unlock()
		if busy == nil && first {
			n.reqMu.Lock()
			n.reqActive = q
			n.reqMu.Unlock()
			return func() {
				n.reqMu.Lock()
				if n.reqActive == q {
					n.reqActive = nil
				}
				n.reqMu.Unlock()
				done()
			}, nil
		}
		if !logged && busy != nil {
			logged = true
			n.log.Logf(scyllalog.Info, "raft_topology", "%s request for %s queued: node %s is in transition (%s)", kind, host, busy.Addr, busy.State)
		}
		select {
		case <-ctx.Done():
			done()
			return nil, fmt.Errorf("waiting for the topology coordinator to take the %s request: %w", kind, ctx.Err())
		case <-t.C:
		}
	}
}

// transitionNode is a member in the middle of a topology operation, or nil.
func (n *Node) transitionNode() *NodeMeta {
	for _, nm := range sortedNodes(n.view.Load().m) {
		if nm.State == engine.StateJoining || nm.State == engine.StateLeaving {
			return nm
		}
	}
	return nil
}

// QueuedRequests lists the node requests waiting for the coordinator
// (kind and host), in the order they will run.
func (n *Node) QueuedRequests() []string {
	n.reqMu.Lock()
	defer n.reqMu.Unlock()
	var qs []*queuedRequest
	for _, r := range n.reqQueue {
		if r != n.reqActive {
			qs = append(qs, r)
		}
	}
	sort.Slice(qs, func(i, j int) bool {
		if qs[i].prio != qs[j].prio {
			return qs[i].prio < qs[j].prio
		}
		return qs[i].seq < qs[j].seq
	})
	out := make([]string, len(qs))
	for i, r := range qs {
		out[i] = r.kind + " " + r.host
	}
	return out
}
