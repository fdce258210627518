package nemesis

import (
	"context"
	"maps"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
)

// balanced returns the wait for "data balanced" after a topology step, a
// rule that holds against real ScyllaDB and the emulator alike.
//
// quiesce_topology only waits while the topology state machine is busy
// (scylladb service/storage_service.cc await_topology_quiesced →
// topology_state_machine::await_not_busy). After a join the balancer plans
// nothing until the coordinator has the new node's load stats
// (service/topology_coordinator.cc refresh_tablet_load_stats, triggered
// after bootstrap; service/tablet_allocator.cc "Cannot balance because
// capacity of node ... is unknown"), so a quiesce in that window returns
// before anything moved. Hence: first every added node holds tablets (when
// the cluster has tablets at all), then a quiesce, repeated until the
// per-node tablet counts (scylla_tablets_count) are the same after two
// quiesces in a row.
func balanced(env *Env, s Step, added []*cluster.Node) func(ctx context.Context) error {
	poll := env.BalancePoll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	return func(ctx context.Context) error {
		sleep := func() error {
			t := time.NewTimer(poll)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
		for len(added) > 0 {
			counts := tabletCounts(ctx, env)
			total, empty := 0, false
			for _, c := range counts {
				total += max(c, 0)
			}
			for _, n := range added {
				if counts[n.Name] <= 0 {
					empty = true
				}
			}
			if total == 0 || !empty {
				break
			}
			if err := sleep(); err != nil {
				return err
			}
		}
		var prev map[string]int
		for {
			if err := env.Cluster.Quiesce(ctx); err != nil {
				return err
			}
			cur := tabletCounts(ctx, env)
			if prev != nil && maps.Equal(prev, cur) {
				return nil
			}
			prev = cur
			if err := sleep(); err != nil {
				return err
			}
		}
	}
}

// tabletCounts is the tablet replicas each current node holds (-1 for a node
// that cannot be read: a read that fails once and then works is a change).
func tabletCounts(ctx context.Context, env *Env) map[string]int {
	out := map[string]int{}
	for _, n := range env.Cluster.Nodes() {
		l, err := env.Cluster.Load(ctx, n)
		if err != nil {
			out[n.Name] = -1
			continue
		}
		out[n.Name] = l.Tablets
	}
	return out
}
