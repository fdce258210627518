package node

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// The compaction operations of a keyspace, each run as a compaction module
// task tree (tasks.go): synchronously at storage_service/{op}/{keyspace}
// (api/storage_service.cc), in the background at
// tasks/compaction/{op}/{keyspace}, which answers the task's id
// (api/tasks.cc).

// compactionOp describes one operation: its task type, the answer of its
// synchronous route, and prepare, which checks the request and does what
// comes before the tables' tasks (a flush); a nil tableOp means there is
// nothing to run (no task).
type compactionOp struct {
	method, path, typ string
	reply             any
	prepare           func(r *http.Request, ks string, ts []*engine.Table) (tableOp, error)
}

func (n *Node) restCompactionOps(rt *restRouter) {
	noop := func(context.Context, *engine.Table) error { return nil }
	ops := []compactionOp{
		{"POST", "keyspace_compaction", "major compaction", voidReply{}, func(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
			return n.majorCompactionOp(r, ks, ts)
		}},
		{"POST", "keyspace_cleanup", "cleanup compaction", 0, func(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
			return n.cleanupOp(ks, ts)
		}},
		// Streamed data is ingested straight into the tree: no table has
		// sstables waiting for off-strategy compaction (the answer: false).
		{"POST", "keyspace_offstrategy_compaction", "offstrategy compaction", false, func(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
			return noop, nil
		}},
		// Every sstable is of the current format: nothing to rewrite.
		{"GET", "keyspace_upgrade_sstables", "upgrade sstables compaction", 0, func(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
			_, err := boolParam(r, "exclude_current_version", false)
			return noop, err
		}},
		{"GET", "keyspace_scrub", "scrub sstables compaction", 0, func(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
			return n.scrubOp(r, ks, ts)
		}},
	}
	for _, op := range ops {
		n.keyspaceOp(rt, op.method+" /storage_service/"+op.path+"/{keyspace}", "cf", func(r *http.Request, ks string, ts []*engine.Table) (any, error) {
			f, err := op.prepare(r, ks, ts)
			if err != nil || f == nil {
				return op.reply, err
			}
			if _, err := n.runKeyspaceTask(r.Context(), op.typ, ks, ts, true, f); err != nil {
				return nil, runtimeError("%v", err)
			}
			return op.reply, nil
		})
		n.keyspaceOp(rt, op.method+" /tasks/compaction/"+op.path+"/{keyspace}", "cf", func(r *http.Request, ks string, ts []*engine.Table) (any, error) {
			f, err := op.prepare(r, ks, ts)
			if err != nil || f == nil {
				return "", err
			}
			t, _ := n.runKeyspaceTask(r.Context(), op.typ, ks, ts, false, f)
			return t.ID, nil
		})
	}
	// Global major compaction: a task for every keyspace under one root
	// (compaction/task_manager_module.hh global_major_compaction_task_impl).
	rt.handle("POST /storage_service/compact", func(r *http.Request) (any, error) {
		flush, err := boolParam(r, "flush_memtables", true)
		if err != nil {
			return nil, err
		}
		n.log.Logf(scyllalog.Info, "api", "force_compaction: flush=%v", flush)
		if flush {
			if err := n.flushTables(); err != nil {
				return nil, err
			}
		}
		_, err = n.runTaskTree(r.Context(), "major compaction", "global", "", true, func(root *task) func(context.Context) error {
			var work []func(context.Context) error
			var kts []*task
			for _, ks := range n.sortedKeyspaces() {
				ts, _ := n.tableInfos(ks, "")
				kt := root.child("keyspace", "")
				kt.Keyspace = ks
				kts = append(kts, kt)
				ksName := ks
				work = append(work, keyspaceSubtree(kt, ts, func(_ context.Context, t *engine.Table) error { return n.compactTable(ksName, t) }))
			}
			return func(ctx context.Context) error {
				for i, kt := range kts {
					if err := kt.run(ctx, work[i]); err != nil {
						return err
					}
				}
				return nil
			}
		})
		if err != nil {
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	})
}

// majorCompactionOp flushes (unless flush_memtables=false) and compacts
// each table into the bottom level, as major compaction does
// (compaction/task_manager_module.cc major_keyspace_compaction_task_impl).
func (n *Node) majorCompactionOp(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
	flush, err := boolParam(r, "flush_memtables", true)
	if err != nil {
		return nil, err
	}
	n.log.Logf(scyllalog.Info, "api", "force_keyspace_compaction: keyspace=%s tables=%s, flush=%v", ks, tableNames(ts), flush)
	if flush {
		if err := n.flushTables(); err != nil {
			return nil, err
		}
	}
	return func(_ context.Context, t *engine.Table) error { return n.compactTable(ks, t) }, nil
}

// compactTable compacts one table's data and records it in the history.
func (n *Node) compactTable(ks string, t *engine.Table) error {
	start := tableStart(t.ID)
	end := keyUpperBound(start)
	before := n.store.DiskUsage(start, end)
	began := time.Now()
	if err := n.store.MajorCompact(start, end); err != nil {
		return fmt.Errorf("major compaction of %s.%s: %w", ks, t.Name, err)
	}
	n.recordCompaction(ks, t.Name, "Major", began, before, n.store.DiskUsage(start, end))
	n.disk.Refresh()
	return nil
}

// scrubOp checks the options and takes the pre-scrub snapshot
// (parse_scrub_options, set_snapshot's scrub); the emulator's rows are
// never corrupt, so each table's scrub finds nothing (status 0).
func (n *Node) scrubOp(r *http.Request, ks string, ts []*engine.Table) (tableOp, error) {
	if err := checkScrubOptions(r); err != nil {
		return nil, err
	}
	noSnap, err := boolParam(r, "disable_snapshot", false)
	if err != nil {
		return nil, err
	}
	if !noSnap && len(ts) > 0 {
		if err := n.flushTables(); err != nil {
			return nil, err
		}
		if _, err := n.takeSnapshot(fmt.Sprintf("pre-scrub-%d", time.Now().UnixMilli()), map[string][]*engine.Table{ks: ts}); err != nil {
			return nil, err
		}
	}
	mode := scrubModeName(r.URL.Query().Get("scrub_mode"))
	return func(_ context.Context, t *engine.Table) error {
		n.log.Logf(scyllalog.Info, "compaction", "Finished scrubbing in %s mode %s.%s", mode, ks, t.Name)
		return nil
	}, nil
}
