// Package enginetest provides engine.Backend implementations for tests and
// benchmarks: Memory (a single-node in-memory cluster), Null (accepts
// everything, stores nothing), Faulty (injects errors), and StartServer to run
// the CQL front end on one of them.
package enginetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/murmur3"
)

// Memory is a single-node in-memory Backend: schema and rows live in maps,
// every consistency level is satisfied by the one replica, cells are
// last-write-wins by timestamp, TTLs expire on read, deletes apply at once.
type Memory struct {
	cluster string
	discard bool // Null: keep schema, drop data

	mu     sync.RWMutex
	local  engine.NodeInfo
	peers  []engine.NodeInfo
	schema *engine.Schema
	data   map[string]map[string]*partition // "ks.table" -> partition key -> rows

	subMu sync.Mutex
	subs  map[int]chan engine.Event
	next  int
}

type cell struct {
	v   []byte
	ts  int64
	exp time.Time
}

type row struct {
	clustering []byte
	ts         int64
	exp        time.Time // row marker expiry
	cells      map[string]cell
}

type partition struct {
	rows []*row // sorted by clustering
}

// NewMemory returns an empty single-node cluster called clusterName. Its
// node listens (as far as system.local says) on 127.0.0.1:9042 until SetAddr.
func NewMemory(clusterName string) *Memory {
	var hostID [16]byte
	_, _ = rand.Read(hostID[:])
	hostID[6] = hostID[6]&0x0f | 0x40
	hostID[8] = hostID[8]&0x3f | 0x80
	m := &Memory{
		cluster: clusterName,
		local: engine.NodeInfo{
			HostID:         hostID,
			Addr:           net.IPv4(127, 0, 0, 1),
			CQLPort:        9042,
			DC:             "datacenter1",
			Rack:           "rack1",
			Tokens:         evenTokens(16),
			ReleaseVersion: "3.0.8",
			ScyllaVersion:  "2025.1.0-emulated",
			State:          engine.StateNormal,
			Up:             true,
			Shards:         1,
		},
		data: map[string]map[string]*partition{},
		subs: map[int]chan engine.Event{},
	}
	m.schema = &engine.Schema{Keyspaces: map[string]*engine.Keyspace{}, Tables: map[string]map[string]*engine.Table{}}
	m.schema.Version = schemaVersion(m.schema)
	return m
}

// NewNull returns a Backend that keeps the schema (so statements can be
// prepared) but discards writes and returns no rows: a floor for measuring
// client and front-end overhead.
func NewNull() *Memory {
	m := NewMemory("null")
	m.discard = true
	return m
}

// evenTokens spreads n Murmur3 tokens evenly over the ring.
func evenTokens(n int) []string {
	out := make([]string, n)
	step := ^uint64(0) / uint64(n)
	for i := range out {
		out[i] = strconv.FormatInt(int64(uint64(1)<<63+uint64(i)*step), 10)
	}
	return out
}

// SetAddr sets the address and CQL port system.local reports.
func (m *Memory) SetAddr(ip net.IP, port int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.local.Addr = ip
	m.local.CQLPort = port
}

// SetLocal replaces the local node description.
func (m *Memory) SetLocal(n engine.NodeInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.local = n
}

// SetPeers sets what system.peers shows.
func (m *Memory) SetPeers(peers []engine.NodeInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.peers = append([]engine.NodeInfo(nil), peers...)
}

// Emit pushes an event to all subscribers (dropping it for full ones).
func (m *Memory) Emit(ev engine.Event) {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	for _, ch := range m.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

// Schema implements engine.Backend.
func (m *Memory) Schema() *engine.Schema {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.schema
}

// ApplySchema implements engine.Backend.
func (m *Memory) ApplySchema(ctx context.Context, ch engine.SchemaChange) (*engine.Schema, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	next, err := applyChange(m.schema, ch)
	if err != nil || next == m.schema {
		s := m.schema
		m.mu.Unlock()
		return s, err
	}
	m.schema = next
	switch ch.Kind {
	case engine.DropKeyspace:
		for k := range m.data {
			if len(k) > len(ch.KeyspaceName) && k[:len(ch.KeyspaceName)+1] == ch.KeyspaceName+"." {
				delete(m.data, k)
			}
		}
	case engine.DropTable:
		delete(m.data, ch.KeyspaceName+"."+ch.TableName)
	}
	local := m.local
	m.mu.Unlock()
	c := ch
	m.Emit(engine.Event{Kind: engine.SchemaChanged, Addr: local.Addr, Port: local.CQLPort, Change: &c})
	return next, nil
}

// applyChange returns a new schema with ch applied (or the same one for a
// no-op IF [NOT] EXISTS).
func applyChange(cur *engine.Schema, ch engine.SchemaChange) (*engine.Schema, error) {
	next := &engine.Schema{Keyspaces: map[string]*engine.Keyspace{}, Tables: map[string]map[string]*engine.Table{}, Types: map[string]map[string]*engine.UserType{}}
	for k, v := range cur.Types {
		t := map[string]*engine.UserType{}
		for n, d := range v {
			t[n] = d
		}
		next.Types[k] = t
	}
	next.Functions = cur.Functions
	for k, v := range cur.Keyspaces {
		next.Keyspaces[k] = v
	}
	for k, v := range cur.Tables {
		t := map[string]*engine.Table{}
		for n, d := range v {
			t[n] = d
		}
		next.Tables[k] = t
	}
	switch ch.Kind {
	case engine.CreateKeyspace:
		if ch.Keyspace == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "CREATE KEYSPACE without a definition")
		}
		name := ch.Keyspace.Name
		if cur.Keyspaces[name] != nil {
			if ch.IfNotExists {
				return cur, nil
			}
			return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: fmt.Sprintf("Keyspace '%s' already exists", name), Keyspace: name}
		}
		ks := *ch.Keyspace
		next.Keyspaces[name] = &ks
		next.Tables[name] = map[string]*engine.Table{}
	case engine.DropKeyspace:
		if cur.Keyspaces[ch.KeyspaceName] == nil {
			if ch.IfExists {
				return cur, nil
			}
			return nil, engine.Errorf(engine.CodeConfigError, "Cannot drop non existing keyspace '%s'.", ch.KeyspaceName)
		}
		delete(next.Keyspaces, ch.KeyspaceName)
		delete(next.Tables, ch.KeyspaceName)
	case engine.CreateTable:
		if ch.Table == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "CREATE TABLE without a definition")
		}
		ks, name := ch.Table.Keyspace, ch.Table.Name
		if cur.Keyspaces[ks] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Keyspace '%s' doesn't exist", ks)
		}
		if cur.Tables[ks][name] != nil {
			if ch.IfNotExists {
				return cur, nil
			}
			return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: fmt.Sprintf("Table '%s.%s' already exists", ks, name), Keyspace: ks, Table: name}
		}
		t := *ch.Table
		next.Tables[ks][name] = &t
	case engine.DropTable:
		if cur.Tables[ch.KeyspaceName][ch.TableName] == nil {
			if ch.IfExists {
				return cur, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Table '%s.%s' doesn't exist", ch.KeyspaceName, ch.TableName)
		}
		delete(next.Tables[ch.KeyspaceName], ch.TableName)
	case engine.AlterKeyspace:
		if ch.Keyspace == nil || cur.Keyspaces[ch.Keyspace.Name] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown keyspace %s", ch.KeyspaceName)
		}
		ks := *ch.Keyspace
		next.Keyspaces[ks.Name] = &ks
	case engine.AlterTable:
		if ch.Table == nil || cur.Tables[ch.Table.Keyspace][ch.Table.Name] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "ALTER TABLE of a table that does not exist")
		}
		t := *ch.Table
		next.Tables[t.Keyspace][t.Name] = &t
	case engine.CreateType:
		if ch.Type == nil || cur.Keyspaces[ch.KeyspaceName] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s doesn't exist", ch.KeyspaceName)
		}
		if cur.Types[ch.KeyspaceName][ch.Type.Name] != nil {
			if ch.IfNotExists {
				return cur, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "A user type of name %s.%s already exists", ch.KeyspaceName, ch.Type.Name)
		}
		if next.Types[ch.KeyspaceName] == nil {
			next.Types[ch.KeyspaceName] = map[string]*engine.UserType{}
		}
		ut := *ch.Type
		next.Types[ch.KeyspaceName][ut.Name] = &ut
	case engine.CreateFunction, engine.DropFunction:
		fns, noop, err := engine.ApplyFunctionChange(cur.Functions, ch)
		if err != nil {
			return nil, err
		}
		if noop {
			return cur, nil
		}
		next.Functions = fns
	case engine.DropType:
		if cur.Types[ch.KeyspaceName][ch.TableName] == nil {
			if ch.IfExists {
				return cur, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "No user type named %s exists.", ch.TableName)
		}
		delete(next.Types[ch.KeyspaceName], ch.TableName)
	default:
		return nil, engine.Errorf(engine.CodeInvalid, "unknown schema change %d", ch.Kind)
	}
	next.Version = schemaVersion(next)
	return next, nil
}

// schemaVersion derives a UUID-shaped version from the schema content, so
// equal schemas have equal versions.
func schemaVersion(s *engine.Schema) [16]byte {
	type tdef struct {
		K, N    string
		ID      [16]byte
		Columns []engine.Column
		Options map[string]string
	}
	var kss []*engine.Keyspace
	for _, k := range s.Keyspaces {
		kss = append(kss, k)
	}
	sort.Slice(kss, func(i, j int) bool { return kss[i].Name < kss[j].Name })
	var ts []tdef
	for _, m := range s.Tables {
		for _, t := range m {
			ts = append(ts, tdef{t.Keyspace, t.Name, t.ID, t.Columns, t.Options})
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].K+"."+ts[i].N < ts[j].K+"."+ts[j].N })
	b, _ := json.Marshal(struct {
		K []*engine.Keyspace
		T []tdef
		U map[string]map[string]*engine.UserType // json sorts map keys
		F map[string]map[string]*engine.Function `json:",omitempty"`
	}{kss, ts, s.Types, s.Functions})
	v := md5.Sum(b)
	v[6] = v[6]&0x0f | 0x30 // a name-based (v3) uuid
	v[8] = v[8]&0x3f | 0x80
	return v
}

func (m *Memory) checkTable(ks, table string) error {
	if m.schema.Tables[ks][table] == nil {
		return engine.Errorf(engine.CodeInvalid, "unconfigured table %s", table)
	}
	return nil
}

// Write implements engine.Backend.
func (m *Memory) Write(ctx context.Context, ms []engine.Mutation, cl engine.Consistency) error {
	if m.discard {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mu := range ms {
		if err := m.checkTable(mu.Keyspace, mu.Table); err != nil {
			return err
		}
	}
	for _, mu := range ms {
		m.apply(mu, now)
	}
	return nil
}

func (m *Memory) apply(mu engine.Mutation, now time.Time) {
	key := mu.Keyspace + "." + mu.Table
	parts := m.data[key]
	if parts == nil {
		parts = map[string]*partition{}
		m.data[key] = parts
	}
	p := parts[string(mu.PartitionKey)]
	if mu.Delete {
		if p == nil {
			return
		}
		if len(mu.Clustering) == 0 {
			delete(parts, string(mu.PartitionKey))
			return
		}
		i := sort.Search(len(p.rows), func(i int) bool { return bytes.Compare(p.rows[i].clustering, mu.Clustering) >= 0 })
		if i < len(p.rows) && bytes.Equal(p.rows[i].clustering, mu.Clustering) {
			p.rows = append(p.rows[:i], p.rows[i+1:]...)
		}
		return
	}
	if p == nil {
		p = &partition{}
		parts[string(mu.PartitionKey)] = p
	}
	i := sort.Search(len(p.rows), func(i int) bool { return bytes.Compare(p.rows[i].clustering, mu.Clustering) >= 0 })
	var r *row
	if i < len(p.rows) && bytes.Equal(p.rows[i].clustering, mu.Clustering) {
		r = p.rows[i]
	} else {
		r = &row{clustering: append([]byte(nil), mu.Clustering...), cells: map[string]cell{}}
		p.rows = append(p.rows, nil)
		copy(p.rows[i+1:], p.rows[i:])
		p.rows[i] = r
	}
	var exp time.Time
	if mu.TTL > 0 {
		exp = now.Add(mu.TTL)
	}
	if mu.Timestamp >= r.ts {
		r.ts, r.exp = mu.Timestamp, exp
	}
	for name, d := range mu.Counters {
		// One replica: a counter is its running sum.
		var cur int64
		if old, ok := r.cells[name]; ok && len(old.v) == 8 {
			cur = int64(binary.BigEndian.Uint64(old.v))
		}
		r.cells[name] = cell{v: binary.BigEndian.AppendUint64(nil, uint64(cur+d)), ts: mu.Timestamp}
	}
	for name, v := range mu.Cells {
		if old, ok := r.cells[name]; ok && old.ts > mu.Timestamp {
			continue
		}
		c := cell{ts: mu.Timestamp, exp: exp}
		if v != nil { // keep empty values distinct from null
			c.v = make([]byte, len(v))
			copy(c.v, v)
		}
		r.cells[name] = c
	}
}

// Read implements engine.Backend.
func (m *Memory) Read(ctx context.Context, rd engine.Read, cl engine.Consistency) ([]engine.Row, error) {
	if m.discard {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.readLocked(rd)
}

func (m *Memory) readLocked(rd engine.Read) ([]engine.Row, error) {
	now := time.Now()
	if err := m.checkTable(rd.Keyspace, rd.Table); err != nil {
		return nil, err
	}
	p := m.data[rd.Keyspace+"."+rd.Table][string(rd.PartitionKey)]
	if p == nil {
		return nil, nil
	}
	hidden := m.schema.Tables[rd.Keyspace][rd.Table].ReaddedColumns()
	wantMeta := rd.CellMeta
	rd.CellMeta = rd.CellMeta || hidden != nil
	start := sort.Search(len(p.rows), func(i int) bool { return bytes.Compare(p.rows[i].clustering, rd.ClusteringPrefix) >= 0 })
	var out []engine.Row
	for _, r := range p.rows[start:] {
		if !bytes.HasPrefix(r.clustering, rd.ClusteringPrefix) {
			break
		}
		live := r.exp.IsZero() || now.Before(r.exp)
		cells := map[string][]byte{}
		var meta map[string]engine.CellMeta
		for name, c := range r.cells {
			if c.v != nil && (c.exp.IsZero() || now.Before(c.exp)) {
				cells[name] = c.v
				live = true
				if rd.CellMeta {
					if meta == nil {
						meta = map[string]engine.CellMeta{}
					}
					cm := engine.CellMeta{Timestamp: c.ts}
					if !c.exp.IsZero() {
						cm.Expiry = c.exp.Unix()
					}
					meta[name] = cm
				}
			}
		}
		if !live {
			continue
		}
		row := engine.Row{Clustering: r.clustering, Cells: cells, Timestamp: r.ts, Meta: meta}
		engine.HideDropped(&row, hidden, wantMeta)
		out = append(out, row)
		if rd.Limit > 0 && len(out) >= rd.Limit {
			break
		}
	}
	return out, nil
}

// ReadRange implements engine.Backend: partitions in token order (ties by
// key bytes), rows in clustering order.
func (m *Memory) ReadRange(ctx context.Context, rr engine.RangeRead, cl engine.Consistency) ([]engine.RangeRow, error) {
	if m.discard {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.checkTable(rr.Keyspace, rr.Table); err != nil {
		return nil, err
	}
	type pkey struct {
		tok int64
		k   string
	}
	var keys []pkey
	for k := range m.data[rr.Keyspace+"."+rr.Table] {
		if t := murmur3.Token([]byte(k)); t >= rr.Start && t <= rr.End {
			keys = append(keys, pkey{t, k})
		}
	}
	less := func(a, b pkey) bool { return a.tok < b.tok || (a.tok == b.tok && a.k < b.k) }
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	var after *pkey
	if rr.After != nil {
		after = &pkey{murmur3.Token(rr.After.PartitionKey), string(rr.After.PartitionKey)}
	}
	var out []engine.RangeRow
	for _, k := range keys {
		if after != nil && less(k, *after) {
			continue
		}
		rows, err := m.readLocked(engine.Read{Keyspace: rr.Keyspace, Table: rr.Table, PartitionKey: []byte(k.k), CellMeta: rr.CellMeta})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if after != nil && *after == k && bytes.Compare(r.Clustering, rr.After.Clustering) <= 0 {
				continue
			}
			out = append(out, engine.RangeRow{PartitionKey: []byte(k.k), Row: r})
			if rr.Limit > 0 && len(out) >= rr.Limit {
				return out, nil
			}
		}
	}
	return out, nil
}

// Truncate implements engine.Backend.
func (m *Memory) Truncate(ctx context.Context, keyspace, table string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.checkTable(keyspace, table); err != nil {
		return err
	}
	delete(m.data, keyspace+"."+table)
	return nil
}

// Local implements engine.Backend.
func (m *Memory) Local() engine.NodeInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.local
}

// Peers implements engine.Backend.
func (m *Memory) Peers() []engine.NodeInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]engine.NodeInfo(nil), m.peers...)
}

// Subscribe implements engine.Backend.
func (m *Memory) Subscribe() (<-chan engine.Event, func()) {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	id := m.next
	m.next++
	ch := make(chan engine.Event, 64)
	m.subs[id] = ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			m.subMu.Lock()
			delete(m.subs, id)
			m.subMu.Unlock()
		})
	}
}

// ClusterName implements engine.Backend.
func (m *Memory) ClusterName() string { return m.cluster }

var _ engine.Backend = (*Memory)(nil)
