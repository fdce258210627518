package node

import (
	"context"
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
)

// Scale-in by version. Before 2026.1 a decommission or removenode request
// waits in topology.requests until the coordinator takes it, one node at a
// time: the node becomes decommissioning/removing, the tablet_draining
// transition drains it, then it leaves (node_requests.go).
//
// From scylla-2026.1.0 (gms/feature_service.hh PARALLEL_TABLET_DRAINING,
// first in scylla-2026.1.0-rc0; commit a009644c7d "raft_topology, tablets:
// Drain tablets in parallel with other topology operations") a node is
// draining as soon as it has a leave or remove request
// (service/storage_service.cc sync_raft_topology_nodes: set_draining for
// every such request); the request stays paused while the node holds
// tablet replicas (topology_state_load: paused_requests), and the load
// balancer drains every such node at once
// (service/tablet_allocator.cc make_plan: "Will drain node ... due to
// {leave,remove} request"). The coordinator skips paused requests
// (service/topology_coordinator.cc get_next_task), so joins go on
// meanwhile; once a node is empty its request is taken like any other, one
// at a time, and goes straight to write_both_read_old (the
// tablet_draining state is deprecated) and on to left.

// parallelTabletDraining reports whether a node posing as version drains
// leaving nodes in parallel (scyllaversion's ParallelTabletDraining; false
// for a version it cannot read). The emulated cluster runs one version, so
// the coordinator's own decides (ScyllaDB enables a feature once every node
// supports it).
func parallelTabletDraining(version string) bool {
	v, ok := scyllaversion.Known(version)
	return ok && v.ParallelTabletDraining()
}

// criticalDiskMode reports whether a node posing as version rejects user
// writes above critical_disk_utilization_level (scyllaversion's
// CriticalDiskMode; true for a version it cannot read, the newest
// behaviour).
func criticalDiskMode(version string) bool {
	v, ok := scyllaversion.Known(version)
	return !ok || v.CriticalDiskMode()
}

// drains reports whether the balancer moves tablets away from nm: it is
// leaving (one request at a time) or draining for a paused request.
func drains(nm *NodeMeta) bool {
	return nm != nil && (nm.State == engine.StateLeaving || nm.Draining)
}

// drainForRequest marks the node of a leave or remove request as draining
// (its request paused) and waits until it holds no tablet replica.
func (n *Node) drainForRequest(ctx context.Context, op *coordOp) error {
	err := n.mutateMeta(ctx, func(m *Meta) (*Meta, error) {
		cur := m.Nodes[op.HostID]
		if cur == nil {
			return nil, fmt.Errorf("host id %s is not a member", op.HostID)
		}
		if cur.State != engine.StateNormal || cur.Draining {
			return nil, nil
		}
		if err := canLose(m, cur); err != nil {
			return nil, err
		}
		c := m.clone()
		x := c.Nodes[op.HostID]
		x.Draining = true
		x.Removing = op.Kind == "removenode"
		x.DrainTotal = sum(shardLoad(m)[op.HostID])
		req := "leave"
		if x.Removing {
			req = "remove"
		}
		n.log.Logf(scyllalog.Info, "load_balancer", "Will drain node %s (normal) from DC %s due to %s request (%d tablet replicas to move)", x.HostID, x.DC, req, x.DrainTotal)
		return c, nil
	})
	if err != nil {
		return err
	}
	n.wakeCoordinator()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if sum(shardLoad(n.view.Load().m)[op.HostID]) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the tablets of %s to be drained: %w", op.HostID, ctx.Err())
		case <-t.C:
		}
	}
}
