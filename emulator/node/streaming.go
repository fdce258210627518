package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Streaming: a new replica pulls a tablet from live replicas (streamIn, via
// scanOut on the source), paced per shard (pacing.go); replicas that lost a
// tablet delete and compact its range (cleanup). State: cleanMu.

type streamReq struct {
	Table   [16]byte
	Index   int
	Count   int
	Sources []string // host ids, in order of preference
	Rate    float64  // bytes per second
	Op      string   // bootstrap, decommission, removenode, rebalance
}

type scanReq struct {
	Table      [16]byte
	Start, End []byte
	Max        int
	Rate       float64
	Shard      int
	From       string // opRepairPull: the host id to pull the range from
}

// streamIn copies a tablet's rows from a source replica into this node, as
// file streaming does (store_ingest.go). File streaming does not call
// stream_manager::update_progress (storage_service.cc stream_tablet), so
// scylla_streaming_total_incoming_bytes stays put.
func (n *Node) streamIn(ctx context.Context, req *streamReq) error {
	first, last := tabletRange(req.Index, req.Count)
	start, end := tokenRangeKeys(req.Table, first, last)
	var lastErr error = errors.New("no live source replica")
	for _, src := range req.Sources {
		if !n.isUp(src) {
			continue
		}
		// Streaming runs in its scheduling group (capacity.StreamingShares).
		err := inBackground(capacity.StreamingShares, func() error { return n.streamFrom(ctx, src, req, start, end) })
		if err == nil {
			return nil
		}
		var se sourceError
		if !errors.As(err, &se) {
			return err
		}
		lastErr = se.err
	}
	return lastErr
}

// sourceError is a failure to get a chunk from a source: the next one is tried.
type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }

// streamFrom streams [start, end) of a tablet from src into new sstables.
func (n *Node) streamFrom(ctx context.Context, src string, req *streamReq, start, end []byte) (err error) {
	t := n.store.NewStreamedTablet(start, end)
	defer func() {
		if aerr := t.Abort(); aerr != nil { // a no-op once loaded
			err = errors.Join(err, fmt.Errorf("aborting a streamed tablet: %w", aerr))
		}
	}()
	for cur := start; cur != nil; {
		r, err := n.call(ctx, src, &msg{Op: opScan, Scan: &scanReq{Table: req.Table, Start: cur, End: end, Max: streamChunkBytes, Rate: req.Rate}})
		if err != nil {
			return sourceError{err}
		}
		var b int64
		for _, kv := range r.KVs {
			b += int64(len(kv.K) + len(kv.V))
		}
		if err := n.disk.CheckWrite(b); err != nil {
			return err
		}
		if err := t.Add(r.KVs); err != nil {
			return fmt.Errorf("writing streamed rows: %w", err)
		}
		cur = r.Next
	}
	if err := t.Load(); err != nil {
		return fmt.Errorf("loading streamed rows: %w", err)
	}
	return nil
}

// scanOut serves one streaming chunk, paced by the capacity model.
func (n *Node) scanOut(ctx context.Context, req *scanReq) (*msg, error) {
	// The source's reads are streaming work too (capacity.StreamingShares).
	var kvs []KV
	var next []byte
	err := inBackground(capacity.StreamingShares, func() (err error) {
		kvs, next, err = n.store.Scan(req.Start, req.End, req.Max)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("scanning for streaming: %w", err)
	}
	var b int64
	for _, kv := range kvs {
		b += int64(len(kv.K) + len(kv.V))
	}
	rate := req.Rate
	if rate <= 0 || math.IsInf(rate, 0) {
		rate = n.cfg.StreamBytesPerSec
	}
	// The chunk takes streaming time on the shard that owns the tablet here.
	shard := 0
	if len(req.Start) >= 25 {
		tok := int64(binary.BigEndian.Uint64(req.Start[17:25]) ^ (1 << 63))
		v := n.view.Load()
		if t := v.byID[req.Table]; t != nil {
			shard = n.shardOf(v, t, tok)
		}
	}
	// Data moves at most at the shard's streaming rate whatever the number
	// of migrations (a FIFO pacer per shard). Moving it costs streamShare
	// of the shard's time at that rate, run in the streaming scheduling
	// group (capacity.Stream): it yields to requests at the groups' shares,
	// so a busy shard streams slower than the rate.
	end := n.pace(shard, time.Duration(float64(b)/rate*float64(time.Second)))
	if err := n.cap.Stream(ctx, shard, b, rate/streamShare); err != nil {
		return nil, err
	}
	if d := time.Until(end); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	// File streaming: scylla_streaming_total_outgoing_bytes stays put too.
	return &msg{KVs: kvs, Next: next}, nil
}

// stream has the new replica copy the tablet from a live replica (the
// leaving one first). The coordinator switches ownership afterwards; the
// old replica deletes the range when it sees the new map.
func (n *Node) stream(ctx context.Context, mv *move) error {
	v := n.view.Load()
	tm := v.m.Tablets[mv.table]
	if tm == nil || mv.index >= len(tm.Tablets) {
		return errors.New("tablet no longer exists")
	}
	t := tm.Tablets[mv.index]
	var sources []string
	if n.isUp(mv.from.Host) {
		sources = append(sources, mv.from.Host)
	}
	for _, r := range t.Replicas {
		if r.Host != mv.from.Host {
			sources = append(sources, r.Host)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	_, err := n.call(sctx, mv.to.Host, &msg{Op: opStream, Stream: &streamReq{Table: parseUUID(mv.table), Index: mv.index, Count: len(tm.Tablets), Sources: sources, Rate: mv.rate, Op: mv.op}})
	return err
}
func (n *Node) cleanup(start, end []byte) {
	if err := n.store.DeleteRange(start, end, false); err != nil {
		n.log.Logf(scyllalog.Warn, "tablets", "Cleaning up a moved tablet: %v", err)
		return
	}
	n.cleanMu.Lock()
	n.cleanQ = append(n.cleanQ, [2][]byte{start, end})
	n.cleanMu.Unlock()
}

// cleanupLoop compacts deleted ranges (every few seconds) so that the real
// bytes on disk fall after tablets moved away.
func (n *Node) cleanupLoop() {
	defer n.wg.Done()
	t := time.NewTicker(cleanupInterval)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		n.cleanMu.Lock()
		q := n.cleanQ
		n.cleanQ = nil
		n.cleanMu.Unlock()
		if len(q) == 0 {
			continue
		}
		// Compact each range (adjacent ones merged): only files overlapping
		// moved tablets are rewritten, not everything the node holds.
		sort.Slice(q, func(i, j int) bool { return bytes.Compare(q[i][0], q[j][0]) < 0 })
		merged := [][2][]byte{q[0]}
		for _, r := range q[1:] {
			last := &merged[len(merged)-1]
			if bytes.Compare(r[0], last[1]) <= 0 {
				if bytes.Compare(r[1], last[1]) > 0 {
					last[1] = r[1]
				}
				continue
			}
			merged = append(merged, r)
		}
		if err := n.store.Flush(); err != nil {
			n.log.Logf(scyllalog.Warn, "compaction", "Flushing before cleanup: %v", err)
			continue
		}
		for _, r := range merged {
			if n.ctx.Err() != nil {
				return
			}
			if err := n.store.CompactRange(r[0], r[1]); err != nil && n.ctx.Err() == nil {
				n.log.Logf(scyllalog.Warn, "compaction", "Compacting a cleaned up range: %v", err)
			}
		}
	}
}
