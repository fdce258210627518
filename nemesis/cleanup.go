package nemesis

import (
	"context"
	"fmt"
	"strings"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/results"
)

// Cleaner runs nodetool cleanup of the run's keyspace on one node (REST
// POST /storage_service/keyspace_cleanup/{keyspace}); it returns when the
// node has dropped the data it no longer owns.
type Cleaner interface {
	Cleanup(ctx context.Context, n *cluster.Node) error
}

// Cleanup says whether a grow is followed by nodetool cleanup.
type Cleanup struct {
	// Cleaner runs it; nil: no cleanup and nothing recorded.
	Cleaner Cleaner
	// Skip, when set, is why cleanup is not run (a tablets keyspace): it is
	// recorded with the step instead.
	Skip string
}

// cleanupAfterGrow runs nodetool cleanup on every node that was a member
// before the grow, all in parallel, as SCT does after adding nodes
// (scylla-cluster-tests sdcm/nemesis/__init__.py
// nodetool_cleanup_on_all_nodes_parallel: "after add_node, the left nodes
// have data that isn't part of their tokens anymore"). The new nodes have
// nothing to clean. SCT's _shrink_cluster runs no cleanup, and none is
// needed: a decommission streams the leaving node's ranges to their new
// owners, who own everything they receive.
func cleanupAfterGrow(ctx context.Context, env *Env, s Step, base results.Event, what string, added []*cluster.Node) error {
	c := env.Cleanup
	if c.Skip != "" {
		ev := base
		ev.Type, ev.Message = results.EventCleanupSkipped, c.Skip
		env.emit(ev)
		env.logf("%s: cleanup skipped: %s", what, c.Skip)
		return nil
	}
	if c.Cleaner == nil {
		return nil
	}
	isNew := map[string]bool{}
	for _, n := range added {
		isNew[n.Name] = true
	}
	var old []*cluster.Node
	for _, n := range env.Cluster.Nodes() {
		if !isNew[n.Name] {
			old = append(old, n)
		}
	}
	if len(old) == 0 {
		return nil
	}
	env.progress(fmt.Sprintf("%s: cleanup on %s", what, strings.Join(names(old), ", ")))
	ev := base
	ev.Type, ev.Nodes = results.EventCleanupStart, names(old)
	env.emit(ev)
	t := env.Timeouts.For(WaitCleanup, env.Timeouts.dataBytes(), s.Timeouts)
	err := wait(ctx, env, what+": cleanup", t, nil, func(ctx context.Context) error {
		return eachNode(ctx, old, func(ctx context.Context, n *cluster.Node) error {
			if err := c.Cleaner.Cleanup(ctx, n); err != nil {
				return fmt.Errorf("cleanup on %s: %w", n.Name, err)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("cleanup after the grow: %w", err)
	}
	ev = base
	ev.Type, ev.Nodes = results.EventCleanupEnd, names(old)
	env.emit(ev)
	return nil
}
