package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Counters, as ScyllaDB replicates them (service/storage_proxy.cc
// mutate_counters, find_leader_for_counter_update; counters.cc): a counter
// cell is a set of shards, one per replica that has led an increment, each
// shard keyed by that node's host id (counter_id(local_host_id)) and
// holding a logical clock and a value. An increment goes to one leader
// replica, which, holding the cell's lock, reads its own shard, writes it
// back with the delta added and the clock advanced, and then sends the new
// shard to the other replicas at the statement's consistency level.
// Replicas, and readers combining replica answers, merge shards host by
// host, the higher clock winning; a counter's value is the sum of its
// shards. Only its leader ever changes a shard, so concurrent increments
// through different coordinators and leaders all count.
//
// Differences from ScyllaDB: the leader is the coordinator when it is a
// live replica (as in ScyllaDB), else the first live replica (ScyllaDB
// picks a random live replica of the local DC, else the closest one); the
// leader's lock covers a row, not a cell; deleting a counter removes it
// outright (ScyllaDB keeps a tombstone, after which increments of that
// cell are lost until it is purged); counters are not streamed specially:
// bootstrap and repair merge their shards as a write does (bootstrap.go,
// repair.go).

// shardSize is one encoded shard: host id, clock, value.
const shardSize = 16 + 8 + 8

type counterShard struct {
	host         [16]byte
	clock, value int64
}

func decodeShards(b []byte) []counterShard {
	out := make([]counterShard, 0, len(b)/shardSize)
	for ; len(b) >= shardSize; b = b[shardSize:] {
		var s counterShard
		copy(s.host[:], b[:16])
		s.clock = int64(binary.BigEndian.Uint64(b[16:]))
		s.value = int64(binary.BigEndian.Uint64(b[24:]))
		out = append(out, s)
	}
	return out
}

func encodeShards(ss []counterShard) []byte {
	sort.Slice(ss, func(i, j int) bool { return bytes.Compare(ss[i].host[:], ss[j].host[:]) < 0 })
	out := make([]byte, 0, len(ss)*shardSize)
	for _, s := range ss {
		out = append(out, s.host[:]...)
		out = binary.BigEndian.AppendUint64(out, uint64(s.clock))
		out = binary.BigEndian.AppendUint64(out, uint64(s.value))
	}
	return out
}

// mergeShards merges two encoded shard sets, host by host, the higher
// clock winning.
func mergeShards(a, b []byte) []byte {
	by := map[[16]byte]counterShard{}
	for _, set := range [][]byte{a, b} {
		for _, s := range decodeShards(set) {
			if o, ok := by[s.host]; !ok || s.clock > o.clock {
				by[s.host] = s
			}
		}
	}
	ss := make([]counterShard, 0, len(by))
	for _, s := range by {
		ss = append(ss, s)
	}
	return encodeShards(ss)
}

// counterTotal is a counter's value: the sum of its shards, as a CQL bigint.
func counterTotal(b []byte) []byte {
	var sum int64
	for _, s := range decodeShards(b) {
		sum += s.value
	}
	return binary.BigEndian.AppendUint64(nil, uint64(sum))
}

// isCounterTable reports whether t's regular columns are counters.
func isCounterTable(t *engine.Table) bool {
	for _, c := range t.Columns {
		if c.Kind == engine.Regular && c.Type == "counter" {
			return true
		}
	}
	return false
}

// mergeCounterRows merges replica answers of a counter table by clustering
// key, cell by cell shard by shard.
func mergeCounterRows(sets [][]engine.Row) []engine.Row {
	by := map[string]*engine.Row{}
	var keys []string
	for _, s := range sets {
		for _, r := range s {
			k := string(r.Clustering)
			o := by[k]
			if o == nil {
				c := engine.Row{Clustering: r.Clustering, Cells: map[string][]byte{}, Timestamp: r.Timestamp}
				o = &c
				by[k] = o
				keys = append(keys, k)
			}
			o.Timestamp = max(o.Timestamp, r.Timestamp)
			for name, v := range r.Cells {
				o.Cells[name] = mergeShards(o.Cells[name], v)
			}
		}
	}
	sort.Strings(keys)
	out := make([]engine.Row, 0, len(keys))
	for _, k := range keys {
		out = append(out, *by[k])
	}
	return out
}

// finishCounterRows replaces shards by totals, for the client.
func finishCounterRows(rows []engine.Row) {
	for _, r := range rows {
		for name, v := range r.Cells {
			if v != nil {
				r.Cells[name] = counterTotal(v)
			}
		}
	}
}

// counterLocks serialise a leader's read-modify-write of one counter row.
type counterLocks struct {
	locks [256]sync.Mutex
}

func (l *counterLocks) lock(id [16]byte, pk, ck []byte) func() {
	h := fnv.New64a()
	h.Write(id[:])
	h.Write(pk)
	h.Write([]byte{0})
	h.Write(ck)
	mu := &l.locks[h.Sum64()%uint64(len(l.locks))]
	mu.Lock()
	return mu.Unlock
}

// writeCounter sends an increment to its leader replica.
func (n *Node) writeCounter(ctx context.Context, m *engine.Mutation, cl engine.Consistency) error {
	v := n.view.Load()
	ks, t, err := n.lookup(v, m.Keyspace, m.Table)
	if err != nil {
		return err
	}
	if err := n.coordinate(ctx, v, t, m.PartitionKey); err != nil {
		return err
	}
	reps, _ := v.replicasOf(ks, t, Token(m.PartitionKey))
	leader := ""
	for _, r := range reps {
		if n.isUp(r.Host) && (leader == "" || r.Host == n.hostID) {
			leader = r.Host
		}
	}
	if leader == "" {
		n.met.unavailable.Inc()
		need := blockFor(cl, len(reps))
		return &engine.Error{Code: engine.CodeUnavailable, Message: fmt.Sprintf("Cannot achieve consistency level for cl %s. Requires %d, alive %d", cl, need, 0),
			Consistency: cl, Required: need}
	}
	if leader == n.hostID {
		return n.leadCounter(ctx, m, cl)
	}
	_, err = n.call(ctx, leader, &msg{Op: opCounterLead, Muts: []engine.Mutation{*m}, CL: cl})
	return err
}

// leadCounter applies an increment as its leader: the new own shards are
// written locally under the row's lock, then replicated at cl.
func (n *Node) leadCounter(ctx context.Context, m *engine.Mutation, cl engine.Consistency) error {
	v := n.view.Load()
	_, t, err := n.lookup(v, m.Keyspace, m.Table)
	if err != nil {
		return err
	}
	self := parseUUID(n.hostID)
	unlock := n.counterLocks.lock(t.ID, m.PartitionKey, m.Clustering)
	rows, err := n.store.Read(t.ID, engine.Read{Keyspace: m.Keyspace, Table: m.Table, PartitionKey: m.PartitionKey, ClusteringPrefix: m.Clustering, Limit: 1})
	if err != nil {
		unlock()
		return engine.Errorf(engine.CodeWriteFailure, "reading counter shards: %v", err)
	}
	var cur map[string][]byte
	if len(rows) == 1 && bytes.Equal(rows[0].Clustering, m.Clustering) {
		cur = rows[0].Cells
	}
	shards := engine.Mutation{Keyspace: m.Keyspace, Table: m.Table, PartitionKey: m.PartitionKey, Clustering: m.Clustering, Timestamp: m.Timestamp, Cells: map[string][]byte{}}
	for name, d := range m.Counters {
		own := counterShard{host: self}
		for _, s := range decodeShards(cur[name]) {
			if s.host == self {
				own = s
			}
		}
		own.clock++
		own.value += d
		shards.Cells[name] = encodeShards([]counterShard{own})
	}
	err = n.localWrite(ctx, []engine.Mutation{shards}, true)
	unlock()
	if err != nil {
		return err
	}
	return n.replicate(ctx, &shards, cl, true, true)
}
