package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Topology coordination: the oldest live NORMAL member is the topology
// coordinator. It alone changes the cluster metadata (schema, members,
// tablet maps) and runs the tablet load balancer; other members forward
// changes to it.

type coordOp struct {
	Kind    string // schema, join, decommission, removenode, balancing
	Change  *engine.SchemaChange
	Node    *NodeMeta
	HostID  string
	Enabled bool
	// Forwarded marks an operation already sent on to the coordinator.
	Forwarded bool
}

// coordinator returns the host id of the topology coordinator in v.
func (n *Node) coordinator(v *view) *NodeMeta {
	for _, nm := range sortedNodes(v.m) {
		if (nm.State == engine.StateNormal || (nm.State == engine.StateLeaving && !nm.Removing)) && n.isUp(nm.HostID) {
			return nm
		}
	}
	return nil
}

func (n *Node) isCoordinator() bool {
	v := n.view.Load()
	// After a restart, learn who is alive (and newer metadata) before
	// acting as coordinator on a possibly stale copy.
	if len(v.m.Nodes) > 1 && time.Since(n.started) < downAfter+heartbeatInterval {
		return false
	}
	// A member has newer metadata (e.g. this node was paused while another
	// coordinated): catch up before acting.
	if n.epochAhead() != 0 {
		return false
	}
	c := n.coordinator(v)
	return c != nil && c.HostID == n.hostID
}

// coord runs op on the topology coordinator.
func (n *Node) coord(ctx context.Context, op *coordOp) error {
	c := n.coordinator(n.view.Load())
	if c == nil {
		return engine.Errorf(engine.CodeServerError, "no live topology coordinator")
	}
	if c.HostID == n.hostID {
		return n.execCoord(ctx, op)
	}
	fwd := *op
	fwd.Forwarded = true
	_, err := n.tr.call(ctx, c.internode(), &msg{Op: opCoord, Coord: &fwd})
	return err
}

// handleCoord runs an operation that arrived over internode: forwarded once
// to the coordinator when this node is not it.
func (n *Node) handleCoord(ctx context.Context, op *coordOp) error {
	if !op.Forwarded {
		return n.coord(ctx, op)
	}
	return n.execCoord(ctx, op)
}

func (n *Node) execCoord(ctx context.Context, op *coordOp) error {
	switch op.Kind {
	case "schema":
		return n.mutateMeta(ctx, func(m *Meta) (*Meta, error) {
			nm, err := applySchemaChange(m, *op.Change, n.cfg.InitialTablets)
			if nm != nil {
				c := *op.Change
				nm.LastChange = &c
			}
			return nm, err
		})
	case "join":
		nm := op.Node
		if nm == nil {
			return errors.New("join without a node")
		}
		if cur := n.view.Load().m.Nodes[nm.HostID]; cur != nil && cur.State == engine.StateNormal {
			return nil
		}
		release, err := n.admitNodeRequest(ctx, "join", nm.Addr)
		if err != nil {
			return err
		}
		defer release()
		for _, s := range []engine.NodeState{engine.StateJoining, engine.StateNormal} {
			err := n.mutateMeta(ctx, func(m *Meta) (*Meta, error) {
				if cur := m.Nodes[nm.HostID]; cur != nil && cur.State == engine.StateLeft {
					return nil, fmt.Errorf("host id %s was removed from the cluster", nm.HostID)
				}
				for _, o := range m.Nodes {
					if o.Addr == nm.Addr && o.HostID != nm.HostID && o.State != engine.StateLeft {
						return nil, fmt.Errorf("address %s is already used by host %s", nm.Addr, o.HostID)
					}
				}
				c := m.clone()
				x := *nm
				x.State = s
				x.Since = m.Epoch + 1
				if cur := m.Nodes[nm.HostID]; cur != nil {
					x.Since = cur.Since
				}
				c.Nodes[nm.HostID] = &x
				return c, nil
			})
			if err != nil {
				return err
			}
			n.markSeen(nm.HostID)
			// Joining: it streams its vnodes ranges; normal: the rows
			// written meanwhile (bootstrap.go).
			if err := n.bootstrapVnodes(ctx, nm.HostID); err != nil {
				return fmt.Errorf("bootstrap of %s: %w", nm.Addr, err)
			}
		}
		n.log.Logf(scyllalog.Info, "raft_topology", "Node %s (%s) joined the cluster", nm.Addr, nm.HostID)
		// "Make sure the load balancer knows the capacity for the new node
		// immediately" — triggered, not awaited (topology_coordinator.cc).
		n.triggerLoadStatsRefresh()
		return nil
	case "decommission", "removenode":
		if op.Kind == "removenode" && n.isUp(op.HostID) && n.ping(ctx, op.HostID) {
			nm := n.view.Load().m.Nodes[op.HostID]
			return fmt.Errorf("cannot remove node %s: it is alive; decommission it instead", nm.Addr)
		}
		cur := n.view.Load().m.Nodes[op.HostID]
		if cur == nil {
			return fmt.Errorf("host id %s is not a member", op.HostID)
		}
		if cur.State == engine.StateLeaving || cur.State == engine.StateLeft {
			return nil
		}
		if parallelTabletDraining(n.cfg.Version) {
			if err := n.drainForRequest(ctx, op); err != nil {
				return err
			}
		}
		release, err := n.admitNodeRequest(ctx, op.Kind, cur.Addr)
		if err != nil {
			return err
		}
		defer release()
		return n.mutateMeta(ctx, func(m *Meta) (*Meta, error) {
			cur := m.Nodes[op.HostID]
			if cur == nil {
				return nil, fmt.Errorf("host id %s is not a member", op.HostID)
			}
			if cur.State == engine.StateLeaving || cur.State == engine.StateLeft {
				return nil, nil
			}
			if !cur.Draining {
				if err := canLose(m, cur); err != nil {
					return nil, err
				}
			}
			c := m.clone()
			x := c.Nodes[op.HostID]
			x.State = engine.StateLeaving
			x.Removing = op.Kind == "removenode"
			left := sum(shardLoad(m)[op.HostID])
			if !x.Draining {
				x.DrainTotal = left
			}
			x.Draining = false
			n.log.Logf(scyllalog.Info, "raft_topology", "Starting %s of %s (%d tablet replicas to move)", op.Kind, x.Addr, left)
			return c, nil
		})
	case "balancing":
		return n.mutateMeta(ctx, func(m *Meta) (*Meta, error) {
			if m.Balancing == op.Enabled {
				return nil, nil
			}
			c := m.clone()
			c.Balancing = op.Enabled
			return c, nil
		})
	case "quiesce":
		return n.quiesce(ctx)
	}
	return fmt.Errorf("unknown coordinator operation %q", op.Kind)
}

// canLose checks that the other normal nodes of nm's datacenter, draining
// ones left out, can still hold every tablet keyspace's replicas once nm is
// gone.
func canLose(m *Meta, nm *NodeMeta) error {
	left := 0
	var dcs []string
	seen := map[string]bool{}
	for _, o := range m.Nodes {
		if !seen[o.DC] {
			seen[o.DC] = true
			dcs = append(dcs, o.DC)
		}
		if o.HostID != nm.HostID && o.DC == nm.DC && o.State == engine.StateNormal && !o.Draining {
			left++
		}
	}
	for _, ks := range m.Keyspaces {
		if !ks.TabletsEnabled {
			continue
		}
		rfs, simple := replicationFactors(ks, dcs)
		rf := rfs[nm.DC]
		if simple {
			rf = rfs[""]
		}
		if rf > left {
			return engine.Errorf(engine.CodeInvalid, "Cannot remove %s: keyspace %s needs %d replicas in %s and only %d other normal nodes would remain", nm.Addr, ks.Name, rf, nm.DC, left)
		}
	}
	return nil
}

// ping says whether a member answers a heartbeat within a second.
func (n *Node) ping(ctx context.Context, host string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := n.call(ctx, host, &msg{Op: opHeartbeat, Heartbeat: &heartbeat{HostID: n.hostID, Addr: n.cfg.ListenAddress, Epoch: n.view.Load().m.Epoch}})
	return err == nil
}

// mutateMeta makes a change to the metadata as coordinator and publishes it.
// f returns nil metadata for no change.
func (n *Node) mutateMeta(ctx context.Context, f func(*Meta) (*Meta, error)) error {
	n.coordMu.Lock()
	defer n.coordMu.Unlock()
	// Never build on stale metadata: wait for the heartbeat pulls.
	for deadline := time.Now().Add(3 * time.Second); n.epochAhead() != 0; {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return engine.Errorf(engine.CodeServerError, "cluster metadata on this node is behind (epoch %d < %d); retry", n.view.Load().m.Epoch, n.epochAhead())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cur := n.view.Load().m
	next, err := f(cur)
	if err != nil || next == nil {
		return err
	}
	next.Epoch = cur.Epoch + 1
	return n.publish(ctx, cur, next)
}

// publish installs m locally and on every live member, waiting for them.
func (n *Node) publish(ctx context.Context, old, m *Meta) error {
	if err := n.installMeta(m); err != nil {
		return err
	}
	targets := map[string]*NodeMeta{}
	for _, mm := range []*Meta{old, m} {
		for id, nm := range mm.Nodes {
			if id != n.hostID && nm.State != engine.StateLeft && n.isUp(id) {
				targets[id] = nm
			}
		}
	}
	// A member that has just become LEFT still gets told.
	for id, nm := range m.Nodes {
		if o := old.Nodes[id]; o != nil && o.State != engine.StateLeft && nm.State == engine.StateLeft && n.isUp(id) {
			targets[id] = nm
		}
	}
	var wg sync.WaitGroup
	for _, nm := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, publishTimeout)
			defer cancel()
			if _, err := n.metaCall(cctx, nm.internode(), &msg{Op: opPushMeta, Meta: m}); err != nil {
				n.log.Logf(scyllalog.Warn, "raft_topology", "Publishing metadata epoch %d to %s: %v", m.Epoch, nm.Addr, err)
			}
		}()
	}
	wg.Wait()
	return nil
}

// quiesce waits until the topology is not busy (scylladb
// service/storage_service.cc await_topology_quiesced →
// topology_state_machine::await_not_busy: no transition state): no node
// joining or leaving and no tablet migration plan in progress. It does not
// wait for the balancer to plan: right after a join it can return before
// anything moved (see load_stats.go).
func (n *Node) quiesce(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if n.topologyIdle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for topology to quiesce: %w", ctx.Err())
		case <-t.C:
		}
	}
}

func (n *Node) topologyIdle() bool {
	v := n.view.Load()
	for _, nm := range v.m.Nodes {
		if nm.State == engine.StateJoining || drains(nm) {
			return false
		}
	}
	for _, tm := range v.m.Tablets {
		for _, t := range tm.Tablets {
			if t.Pending != nil {
				return false
			}
		}
	}
	n.migMu.Lock()
	inflight := len(n.migrations)
	n.migMu.Unlock()
	return inflight == 0 && (!n.tstate.Load() || !v.m.Balancing)
}

// Decommission streams this node's tablets away and leaves; it returns once
// the node has left (as ScyllaDB's REST call does).
func (n *Node) Decommission(ctx context.Context) error {
	n.log.Logf(scyllalog.Info, "storage_service", "DECOMMISSIONING: starting")
	if err := n.coord(ctx, &coordOp{Kind: "decommission", HostID: n.hostID}); err != nil {
		return fmt.Errorf("starting decommission: %w", err)
	}
	if err := n.waitState(ctx, n.hostID, engine.StateLeft); err != nil {
		return err
	}
	n.log.Logf(scyllalog.Info, "storage_service", "DECOMMISSIONING: done")
	return nil
}

// RemoveNode removes a dead member, re-replicating its tablets from the
// other replicas; it returns when done.
func (n *Node) RemoveNode(ctx context.Context, hostID string) error {
	if n.view.Load().m.Nodes[hostID] == nil {
		return fmt.Errorf("host id %s is not a member of the cluster", hostID)
	}
	if err := n.coord(ctx, &coordOp{Kind: "removenode", HostID: hostID}); err != nil {
		return err
	}
	return n.waitState(ctx, hostID, engine.StateLeft)
}

// SetBalancing enables or disables the tablet load balancer.
func (n *Node) SetBalancing(ctx context.Context, enabled bool) error {
	return n.coord(ctx, &coordOp{Kind: "balancing", Enabled: enabled})
}

// Quiesce returns when no topology operation or migration is in flight.
func (n *Node) Quiesce(ctx context.Context) error {
	return n.coord(ctx, &coordOp{Kind: "quiesce"})
}

func (n *Node) waitState(ctx context.Context, host string, s engine.NodeState) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if nm := n.view.Load().m.Nodes[host]; nm != nil && nm.State == s {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to become %s: %w", host, s, ctx.Err())
		case <-t.C:
		}
	}
}
