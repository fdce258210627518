package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Token-range reads (full scans, SELECT ... WHERE token(pk) > ? ...): like
// ScyllaDB's storage_proxy::query_partition_key_range, the coordinator
// walks the range in pieces that each have one replica set (a tablet, or
// the ring interval ending at a vnode token), reads each piece from as
// many replicas as the consistency level needs, merges their rows and
// stops once it has the rows asked for.

// rangeReq asks a replica for the rows of [First, Last] after the data key
// After (nil: from First), at most Limit (0: all).
type rangeReq struct {
	Keyspace, Table string
	First, Last     int64
	After           []byte
	Limit           int
	CellMeta        bool
}

// ReadRange implements engine.Backend.
func (n *Node) ReadRange(ctx context.Context, rr engine.RangeRead, cl engine.Consistency) ([]engine.RangeRow, error) {
	v := n.view.Load()
	ks, t, err := n.lookup(v, rr.Keyspace, rr.Table)
	if err != nil {
		return nil, err
	}
	first := rr.Start
	var after []byte
	if rr.After != nil {
		tok := Token(rr.After.PartitionKey)
		after = rowKey(t.ID, tok, rr.After.PartitionKey, rr.After.Clustering)
		first = max(first, tok)
	}
	counter := isCounterTable(t)
	var out []engine.RangeRow
	for first <= rr.End {
		last := min(v.segmentEnd(t, first), rr.End)
		want := 0
		if rr.Limit > 0 {
			want = rr.Limit - len(out)
		}
		req := rangeReq{Keyspace: rr.Keyspace, Table: rr.Table, First: first, Last: last, After: after, Limit: want, CellMeta: rr.CellMeta}
		rows, err := n.readSegment(ctx, v, ks, t, &req, cl, counter)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if (rr.Limit > 0 && len(out) >= rr.Limit) || last == math.MaxInt64 {
			break
		}
		first = last + 1
	}
	if counter {
		for _, r := range out {
			for name, c := range r.Cells {
				if c != nil {
					r.Cells[name] = counterTotal(c)
				}
			}
		}
	}
	return out, nil
}

// segmentEnd is the last token that has the same replicas as tok: the end
// of its tablet, or the next vnode token at or after it (tokens past the
// last vnode token belong to the first one, up to the maximum token).
func (v *view) segmentEnd(t *engine.Table, tok int64) int64 {
	if tm := v.tablets[t.ID]; tm != nil && len(tm.Tablets) > 0 {
		_, last := tabletRange(tm.index(tok), len(tm.Tablets))
		return last
	}
	i := sort.Search(len(v.ring), func(i int) bool { return v.ring[i].token >= tok })
	if i == len(v.ring) {
		return math.MaxInt64
	}
	return v.ring[i].token
}

// readSegment reads one piece of a range from the replicas cl needs (the
// next live one standing in for one that fails) and merges their answers.
func (n *Node) readSegment(ctx context.Context, v *view, ks *engine.Keyspace, t *engine.Table, req *rangeReq, cl engine.Consistency, counter bool) ([]engine.RangeRow, error) {
	reps, _ := v.replicasOf(ks, t, req.First)
	alive, need, err := n.liveReplicas(v, reps, cl)
	if err != nil {
		return nil, err
	}
	type result struct {
		rows []engine.RangeRow
		err  error
	}
	res := make(chan result, len(alive))
	send := func(h string) {
		go func() {
			if h == n.hostID {
				rows, err := n.localReadRange(ctx, req)
				res <- result{rows, err}
				return
			}
			m, err := n.call(ctx, h, &msg{Op: opRangeRead, Range: req})
			if err != nil {
				res <- result{nil, err}
				return
			}
			res <- result{m.RangeRows, nil}
		}()
	}
	sent := 0
	for ; sent < need; sent++ {
		send(alive[sent])
	}
	var got [][]engine.RangeRow
	fails := 0
	var lastErr error
	for len(got) < need {
		select {
		case rr := <-res:
			if rr.err == nil {
				got = append(got, rr.rows)
				continue
			}
			fails++
			lastErr = rr.err
			if sent < len(alive) {
				send(alive[sent])
				sent++
				continue
			}
			var ee *engine.Error
			if errors.As(rr.err, &ee) && ee.Code == engine.CodeOverloaded {
				return nil, ee
			}
			return nil, &engine.Error{Code: engine.CodeReadFailure, Message: fmt.Sprintf("Operation failed for %s - received %d responses and %d failures: %v", cl, len(got), fails, lastErr),
				Consistency: cl, Required: need, Alive: len(got), Failures: fails}
		case <-ctx.Done():
			n.met.readTimeouts.Inc()
			return nil, &engine.Error{Code: engine.CodeReadTimeout, Message: fmt.Sprintf("Operation timed out for read - received only %d responses from %d CL=%s.", len(got), need, cl),
				Consistency: cl, Required: need, Alive: len(got)}
		}
	}
	return mergeRangeRows(got, req.Limit, counter), nil
}

// mergeRangeRows merges replica answers in data-key order: the newest row
// wins, or, for counters, cells merge shard by shard. Each replica sent
// its first limit rows, so the first limit of the union are right.
func mergeRangeRows(sets [][]engine.RangeRow, limit int, counter bool) []engine.RangeRow {
	if len(sets) == 1 {
		return sets[0]
	}
	type keyed struct {
		k string
		r engine.RangeRow
	}
	by := map[string]*keyed{}
	for _, s := range sets {
		for _, r := range s {
			k := string(rowKey([16]byte{}, Token(r.PartitionKey), r.PartitionKey, r.Clustering))
			o := by[k]
			switch {
			case o == nil:
				cp := r
				if counter {
					cp.Cells = map[string][]byte{}
					for name, c := range r.Cells {
						cp.Cells[name] = c
					}
				}
				by[k] = &keyed{k, cp}
			case counter:
				for name, c := range r.Cells {
					o.r.Cells[name] = mergeShards(o.r.Cells[name], c)
				}
				o.r.Timestamp = max(o.r.Timestamp, r.Timestamp)
			case r.Timestamp > o.r.Timestamp:
				o.r = r
			}
		}
	}
	all := make([]*keyed, 0, len(by))
	for _, kr := range by {
		all = append(all, kr)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].k < all[j].k })
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out := make([]engine.RangeRow, len(all))
	for i, kr := range all {
		out[i] = kr.r
	}
	return out
}

// localReadRange serves a piece of a range scan as a replica.
func (n *Node) localReadRange(ctx context.Context, req *rangeReq) ([]engine.RangeRow, error) {
	v := n.view.Load()
	_, t, err := n.lookup(v, req.Keyspace, req.Table)
	if err != nil {
		return nil, err
	}
	if err := n.cap.Do(ctx, n.shardOf(v, t, req.First), 1); err != nil {
		return nil, err
	}
	hidden := t.ReaddedColumns()
	rows, err := n.store.ReadRange(t.ID, req.First, req.Last, req.After, req.Limit, req.CellMeta || hidden != nil)
	if err != nil {
		return nil, fmt.Errorf("scanning %s.%s: %w", req.Keyspace, req.Table, err)
	}
	for i := range rows {
		engine.HideDropped(&rows[i].Row, hidden, req.CellMeta)
	}
	return rows, nil
}
