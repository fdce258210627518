package node

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// CleanupKeyspace is nodetool cleanup of a keyspace's tables on this node
// (api/storage_service.cc force_keyspace_cleanup, compaction/
// task_manager_module.cc cleanup_keyspace_compaction_task_impl): after the
// memtables are flushed, rows of tokens this node is no longer a replica of
// are dropped and the space they took is reclaimed, as a "cleanup
// compaction" task tree. Only vnodes keyspaces need it: a tablets
// keyspace's replicas drop a tablet's data when it moves away ("Keyspace X
// does not support cleanup": nothing runs); and it is refused while the
// topology changes, when ranges are still moving.
func (n *Node) CleanupKeyspace(ctx context.Context, ks string, ts []*engine.Table) error {
	op, err := n.cleanupOp(ks, ts)
	if err != nil || op == nil {
		return err
	}
	_, err = n.runKeyspaceTask(ctx, "cleanup compaction", ks, ts, true, op)
	return err
}

// cleanupOp checks that the keyspace needs and allows cleanup, flushes, and
// returns the work on one table (nil when there is nothing to do).
func (n *Node) cleanupOp(ks string, ts []*engine.Table) (tableOp, error) {
	v := n.view.Load()
	k := v.m.Keyspaces[ks]
	if k == nil {
		return nil, noSuchKeyspace(ks)
	}
	if k.TabletsEnabled {
		n.log.Logf(scyllalog.Info, "api", "Keyspace %s does not support cleanup", ks)
		return nil, nil
	}
	n.log.Logf(scyllalog.Info, "api", "force_keyspace_cleanup: keyspace=%s tables=%s", ks, tableNames(ts))
	for _, nm := range v.m.Nodes {
		if nm.State == engine.StateJoining || nm.State == engine.StateLeaving {
			const msg = "Can not perform cleanup operation when topology changes"
			n.log.Logf(scyllalog.Warn, "api", "force_keyspace_cleanup: keyspace=%s tables=%s: %s", ks, tableNames(ts), msg)
			return nil, runtimeError(msg)
		}
	}
	if err := n.flushTables(); err != nil {
		return nil, err
	}
	unowned := complementRanges(n.ownedRanges(v, k))
	return func(_ context.Context, t *engine.Table) error {
		err := n.cleanupTable(ks, t, unowned)
		n.disk.Refresh()
		return err
	}, nil
}

// cleanupTable drops the table's rows in the unowned token ranges and
// compacts the table so the bytes leave the disk.
func (n *Node) cleanupTable(ks string, t *engine.Table, unowned [][2]int64) error {
	start := tableStart(t.ID)
	end := keyUpperBound(start)
	before := n.store.DiskUsage(start, end)
	began := time.Now()
	for _, r := range unowned {
		s, e := tokenRangeKeys(t.ID, r[0], r[1])
		if err := n.store.DeleteRange(s, e, false); err != nil {
			return err
		}
	}
	if len(unowned) > 0 {
		if err := n.store.Compact(start, end); err != nil {
			return err
		}
	}
	after := n.store.DiskUsage(start, end)
	n.log.Logf(scyllalog.Info, "compaction", "[Cleanup %s.%s] Cleaned 1 sstables to [%s]. %d bytes to %d (~%d%% of original) in %dms.",
		ks, t.Name, n.store.dir, before, after, percentOf(after, before), time.Since(began).Milliseconds())
	n.recordCompaction(ks, t.Name, "Cleanup", began, before, after)
	return nil
}

func percentOf(a, b int64) int64 {
	if b == 0 {
		return 100
	}
	return a * 100 / b
}

// ownedRanges are the token intervals (inclusive) of the keyspace's ring
// ranges this node is a natural replica of.
func (n *Node) ownedRanges(v *view, k *engine.Keyspace) [][2]int64 {
	var out [][2]int64
	for _, r := range vnodeRanges(v, k) {
		if !r.hasReplica(n.hostID) {
			continue
		}
		switch {
		case r.start == r.end: // a ring of one token
			return [][2]int64{{math.MinInt64, math.MaxInt64}}
		case r.start < r.end:
			out = append(out, [2]int64{r.start + 1, r.end})
		default: // the range that wraps around the end of the ring
			if r.start < math.MaxInt64 {
				out = append(out, [2]int64{r.start + 1, math.MaxInt64})
			}
			out = append(out, [2]int64{math.MinInt64, r.end})
		}
	}
	return out
}

// complementRanges are the token intervals (inclusive) not covered by rs.
func complementRanges(rs [][2]int64) [][2]int64 {
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	var out [][2]int64
	next := int64(math.MinInt64) // the first token not yet covered or emitted
	done := false
	for _, r := range rs {
		if done {
			break
		}
		if r[0] > next {
			out = append(out, [2]int64{next, r[0] - 1})
		}
		if r[1] == math.MaxInt64 {
			done = true
		} else if r[1]+1 > next {
			next = r[1] + 1
		}
	}
	if !done {
		out = append(out, [2]int64{next, math.MaxInt64})
	}
	return out
}
