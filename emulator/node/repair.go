package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Repair of a vnodes keyspace between replicas, as nodetool repair asks it
// of one node (api/storage_service.cc set_repair, repair/repair.cc
// repair_start, repair/row_level.cc): for each token range of the keyspace
// this node replicates (all of them, its primary ones with primaryRange, or
// those inside startToken/endToken or ranges), every table's rows are
// exchanged with the range's other replicas so that each ends up with the
// newest version of every row: this node pulls each peer's rows and merges
// them, then each peer pulls this node's. The rows travel as streaming does
// (paced, in the streaming scheduling group: scanOut), and a row merges
// cell by cell by timestamp (the store's merge operator), so a replica
// that missed writes gets them and none loses newer ones. A replica that
// is down fails the repair, as ScyllaDB's does without ignore_nodes.
//
// The emulator's deletes remove rows instead of writing tombstones: a row
// deleted while one replica was down comes back from that replica on
// repair (ScyllaDB's tombstones prevent that within gc_grace_seconds).

// repairJob is one repair_async request's state, by its sequence number.
type repairJob struct {
	done chan struct{}
	err  error
}

// repairJobs are the repairs this node ran, for repair_async's status.
type repairJobs struct {
	mu   sync.Mutex
	jobs map[int]*repairJob
}

// repairOptionsOf parses repair_async's token options into inclusive token
// intervals (nil: every range); the bounds are exclusive starts and
// inclusive ends, as dht::token_range.
func repairRangesOf(q map[string][]string) ([][2]int64, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	parse := func(name, s string) (int64, error) {
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, badParam("%s (%s): type error - should be a token", name, s)
		}
		return x, nil
	}
	var spans [][2]int64
	add := func(start, end int64) {
		if start < end {
			spans = append(spans, [2]int64{start + 1, end})
			return
		}
		if start < math.MaxInt64 { // wraps around the end of the ring
			spans = append(spans, [2]int64{start + 1, math.MaxInt64})
		}
		spans = append(spans, [2]int64{math.MinInt64, end})
	}
	if s, e := get("startToken"), get("endToken"); s != "" || e != "" {
		start, err := parse("startToken", s)
		if err != nil {
			return nil, err
		}
		end, err := parse("endToken", e)
		if err != nil {
			return nil, err
		}
		add(start, end)
	}
	if r := get("ranges"); r != "" {
		for _, part := range strings.Split(r, ",") {
			se := strings.Split(part, ":")
			if len(se) != 2 {
				return nil, badParam("Invalid range %q: want start_token:end_token", part)
			}
			start, err := parse("ranges", se[0])
			if err != nil {
				return nil, err
			}
			end, err := parse("ranges", se[1])
			if err != nil {
				return nil, err
			}
			add(start, end)
		}
	}
	return spans, nil
}

// repairWork is one table's token interval and the peers to exchange it with.
type repairWork struct {
	table      *engine.Table
	first, end int64 // inclusive token bounds
	peers      []string
}

// planRepair lists the intervals of the keyspace's ranges this node
// replicates (only those it is the first replica of with primary),
// clipped to spans (nil: all).
func (n *Node) planRepair(v *view, k *engine.Keyspace, ts []*engine.Table, spans [][2]int64, primary bool) []repairWork {
	var out []repairWork
	for _, r := range vnodeRanges(v, k) {
		var peers []string
		mine := false
		for i, rep := range r.replicas {
			if rep.Host == n.hostID {
				mine = !primary || i == 0
			} else {
				peers = append(peers, rep.Host)
			}
		}
		if !mine || len(peers) == 0 {
			continue
		}
		rs := [][2]int64{{r.start + 1, r.end}}
		if r.start == r.end {
			rs = [][2]int64{{math.MinInt64, math.MaxInt64}}
		} else if r.start > r.end {
			rs = [][2]int64{{math.MinInt64, r.end}}
			if r.start < math.MaxInt64 {
				rs = append(rs, [2]int64{r.start + 1, math.MaxInt64})
			}
		}
		for _, iv := range rs {
			for _, c := range clip(iv, spans) {
				for _, t := range ts {
					out = append(out, repairWork{table: t, first: c[0], end: c[1], peers: peers})
				}
			}
		}
	}
	return out
}

// clip intersects iv with spans (nil spans: iv itself).
func clip(iv [2]int64, spans [][2]int64) [][2]int64 {
	if spans == nil {
		return [][2]int64{iv}
	}
	var out [][2]int64
	for _, s := range spans {
		lo, hi := max(iv[0], s[0]), min(iv[1], s[1])
		if lo <= hi {
			out = append(out, [2]int64{lo, hi})
		}
	}
	return out
}

// repair runs the planned exchanges.
func (n *Node) repair(ctx context.Context, id int, ks string, work []repairWork) error {
	n.log.Logf(scyllalog.Info, "repair", "repair[%d]: starting user-requested repair for keyspace %s, %d table ranges", id, ks, len(work))
	for _, w := range work {
		for _, p := range w.peers {
			if !n.isUp(p) {
				nm := n.view.Load().m.Nodes[p]
				return fmt.Errorf("repair[%d]: Repair failed: node %s is down", id, nm.Addr)
			}
		}
		start, end := tokenRangeKeys(w.table.ID, w.first, w.end)
		for _, p := range w.peers {
			if err := n.pullRepair(ctx, p, w.table.ID, start, end); err != nil {
				return fmt.Errorf("repair[%d]: pulling %s.%s from %s: %w", id, ks, w.table.Name, p, err)
			}
		}
		for _, p := range w.peers {
			req := &scanReq{Table: w.table.ID, Start: start, End: end, From: n.hostID}
			if _, err := n.call(ctx, p, &msg{Op: opRepairPull, Scan: req}); err != nil {
				return fmt.Errorf("repair[%d]: %s pulling %s.%s: %w", id, p, ks, w.table.Name, err)
			}
		}
	}
	n.log.Logf(scyllalog.Info, "repair", "repair[%d]: completed successfully", id)
	return nil
}

// pullRepair merges src's rows of [start, end) into this node's store.
func (n *Node) pullRepair(ctx context.Context, src string, table [16]byte, start, end []byte) error {
	for cur := start; cur != nil; {
		r, err := n.call(ctx, src, &msg{Op: opScan, Scan: &scanReq{Table: table, Start: cur, End: end, Max: streamChunkBytes}})
		if err != nil {
			return err
		}
		var b int64
		for _, kv := range r.KVs {
			b += int64(len(kv.K) + len(kv.V))
		}
		if err := n.disk.CheckWrite(b); err != nil {
			return err
		}
		if err := n.store.MergeKVs(r.KVs); err != nil {
			return err
		}
		cur = r.Next
	}
	return nil
}

// MergeKVs merges rows as their writes do (cell by cell, newest wins).
func (s *Store) MergeKVs(kvs []KV) error {
	if len(kvs) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, kv := range kvs {
		if err := b.Merge(kv.K, kv.V, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		s.cache.invalidate()
		return err
	}
	for _, kv := range kvs {
		s.cache.merged(kv.K, bytes.Clone(kv.V))
	}
	return nil
}

// startRepair plans and starts a repair_async request in the background
// and returns its sequence number.
func (n *Node) startRepair(r *http.Request, ks string, k *engine.Keyspace) (int, error) {
	q := r.URL.Query()
	spans, err := repairRangesOf(q)
	if err != nil {
		return 0, err
	}
	ts, err := n.tableInfos(ks, q.Get("columnFamilies"))
	if err != nil {
		return 0, err
	}
	primary, err := boolParam(r, "primaryRange", false)
	if err != nil {
		return 0, err
	}
	work := n.planRepair(n.view.Load(), k, ts, spans, primary)
	// The repair's id is its task's sequence number (repair/repair.cc
	// repair_start; task tree: user_requested_repair → shard_repair,
	// repair/task_manager_module.hh).
	root, ctx := n.tasks.newRoot(n.ctx, "repair", "user_requested_repair", "keyspace", ks, "", true)
	shard := root.child("shard", "")
	shard.Type = "shard_repair"
	id := int(root.Seq)
	job := &repairJob{done: make(chan struct{})}
	n.repairs.mu.Lock()
	if n.repairs.jobs == nil {
		n.repairs.jobs = map[int]*repairJob{}
	}
	n.repairs.jobs[id] = job
	n.repairs.mu.Unlock()
	go func() {
		defer n.tasks.finished(root)
		job.err = root.run(ctx, func(ctx context.Context) error {
			return shard.run(ctx, func(ctx context.Context) error { return n.repair(ctx, id, ks, work) })
		})
		if job.err != nil {
			n.log.Logf(scyllalog.Warn, "repair", "%v", job.err)
		}
		close(job.done)
	}()
	return id, nil
}

// repairStatus is repair_async's status of a sequence number.
func (n *Node) repairStatus(id int) (string, error) {
	n.repairs.mu.Lock()
	job := n.repairs.jobs[id]
	n.repairs.mu.Unlock()
	if job == nil {
		return "", badParam("unknown repair id %d", id)
	}
	select {
	case <-job.done:
		if job.err != nil {
			return "FAILED", nil
		}
		return "SUCCESSFUL", nil
	default:
		return "RUNNING", nil
	}
}

var errNoSource = errors.New("repair pull without a source")

// repairPull serves a peer's request to pull its rows (opRepairPull).
func (n *Node) repairPull(ctx context.Context, req *scanReq) error {
	if req == nil || req.From == "" {
		return errNoSource
	}
	return n.pullRepair(ctx, req.From, req.Table, req.Start, req.End)
}
