package cql

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// colInfo is a column with its parsed type and its index in tableInfo.all.
type colInfo struct {
	engine.Column
	dt  datatype.DataType
	idx int
}

// tableInfo is a table definition prepared for statement execution. Rows
// are handled as [][]byte in all-columns order.
type tableInfo struct {
	keyspace, name string
	def            *engine.Table
	cols           map[string]*colInfo
	pk, ck, reg    []*colInfo
	static         []*colInfo // STATIC columns, in name order
	all            []*colInfo // SELECT * order: pk, clustering, static, regular (schema/schema.cc compute_all_columns_in_select_order)
	virtual        *virtualTable
	defaultTTL     time.Duration // table option default_time_to_live
	counter        bool          // regular columns are counters
	sig            uint64        // columnsSig of the definition it was built from
}

// columnsSig identifies a table's columns and options, so that the cache
// notices an ALTER TABLE (the id stays).
func columnsSig(t *engine.Table) uint64 {
	h := fnv.New64a()
	for _, c := range t.Columns {
		h.Write([]byte(c.Name))
		h.Write([]byte{0})
		h.Write([]byte(c.Type))
		h.Write([]byte{0})
		h.Write([]byte(c.Kind))
		h.Write([]byte{0})
	}
	h.Write([]byte(t.Options["default_time_to_live"]))
	// Indexes and a view's definition are read through tableInfo.def.
	for _, idx := range t.Indexes {
		h.Write([]byte{1})
		h.Write([]byte(idx.Name + "\x00" + idx.Options["target"]))
	}
	if t.View != nil {
		h.Write([]byte{2})
		h.Write([]byte(t.View.BaseTable + "\x00" + t.View.WhereClause))
	}
	return h.Sum64()
}

// tableInfoCache maps keyspace, name and table id to the prepared info. An
// entry stays valid while its columns do (columnsSig; ALTER TABLE keeps the
// id), even when the engine hands out fresh *engine.Table values with
// every schema snapshot, and it grows only with CREATE TABLE.
var tableInfoCache = struct {
	sync.RWMutex
	m map[tableKey]*tableInfo
}{m: map[tableKey]*tableInfo{}}

type tableKey struct {
	ks, name string
	id       [16]byte
}

func infoFor(t *engine.Table, udts userTypes) (*tableInfo, error) {
	key := tableKey{t.Keyspace, t.Name, t.ID}
	tableInfoCache.RLock()
	ti := tableInfoCache.m[key]
	tableInfoCache.RUnlock()
	if ti != nil && ti.sig == columnsSig(t) {
		return ti, nil
	}
	ti = &tableInfo{keyspace: t.Keyspace, name: t.Name, def: t, cols: map[string]*colInfo{}, sig: columnsSig(t)}
	if v, err := strconv.Atoi(t.Options["default_time_to_live"]); err == nil && v > 0 {
		ti.defaultTTL = time.Duration(v) * time.Second
	}
	var pk, ck, st, reg []*colInfo
	for _, c := range t.Columns {
		dt, err := parseTypeIn(c.Type, udts)
		if err != nil {
			return nil, fmt.Errorf("table %s.%s column %s: %w", t.Keyspace, t.Name, c.Name, err)
		}
		ci := &colInfo{Column: c, dt: dt}
		switch c.Kind {
		case engine.PartitionKey:
			pk = append(pk, ci)
		case engine.Clustering:
			ck = append(ck, ci)
		case engine.Static:
			st = append(st, ci)
		default:
			reg = append(reg, ci)
		}
	}
	sort.SliceStable(pk, func(i, j int) bool { return pk[i].Position < pk[j].Position })
	sort.SliceStable(ck, func(i, j int) bool { return ck[i].Position < ck[j].Position })
	sort.SliceStable(st, func(i, j int) bool { return st[i].Name < st[j].Name })
	sort.SliceStable(reg, func(i, j int) bool { return reg[i].Name < reg[j].Name })
	ti.pk, ti.ck, ti.static, ti.reg = pk, ck, st, reg
	ti.counter = isCounterTable(t)
	ti.all = append(append(append(append([]*colInfo{}, pk...), ck...), st...), reg...)
	for i, c := range ti.all {
		c.idx = i
		ti.cols[c.Name] = c
	}
	if len(pk) == 0 {
		return nil, fmt.Errorf("table %s.%s has no partition key", t.Keyspace, t.Name)
	}
	tableInfoCache.Lock()
	tableInfoCache.m[key] = ti
	tableInfoCache.Unlock()
	return ti, nil
}

// hasStatic reports whether the table has STATIC columns, whose cells the
// node keeps in the partition's row with an empty clustering key.
func (ti *tableInfo) hasStatic() bool { return len(ti.static) > 0 }

// isStaticRow reports whether a stored row is the partition's static row.
func (ti *tableInfo) isStaticRow(r engine.Row) bool {
	return ti.hasStatic() && len(r.Clustering) == 0
}

func (ti *tableInfo) column(name string) (*colInfo, error) {
	if c, ok := ti.cols[name]; ok {
		return c, nil
	}
	return nil, engine.Errorf(engine.CodeInvalid, "Undefined column name %s in table %s.%s", name, ti.keyspace, ti.name)
}

func (ti *tableInfo) spec(c *colInfo) *message.ColumnMetadata {
	return &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: c.Name, Type: c.dt}
}

// resolveTable finds keyspace.table (keyspace defaults to the session's).
func (s *Server) resolveTable(sessionKS, ks, name string) (*tableInfo, error) {
	ks, err := keyspaceOf(ks, sessionKS)
	if err != nil {
		return nil, err
	}
	if vt := lookupVirtual(ks, name); vt != nil {
		return vt.info, nil
	}
	if isSystemKeyspace(ks) {
		return nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", name)
	}
	sch := s.b.Schema()
	if sch == nil || sch.Keyspaces[ks] == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s does not exist", ks)
	}
	t := sch.Tables[ks][name]
	if t == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", name)
	}
	ti, err := infoFor(t, keyspaceTypes(sch, ks))
	if err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "%v", err)
	}
	return ti, nil
}

func isSystemKeyspace(ks string) bool {
	switch ks {
	case "system", "system_schema", "system_auth", "system_distributed", "system_traces", "system_distributed_everywhere":
		return true
	}
	return false
}

// splitPartitionKey splits a serialised partition key into its column
// values (the inverse of compositeKey).
func (ti *tableInfo) splitPartitionKey(pk []byte) ([][]byte, error) {
	if len(ti.pk) == 1 {
		return [][]byte{pk}, nil
	}
	parts := make([][]byte, 0, len(ti.pk))
	for len(pk) > 0 {
		if len(pk) < 2 {
			return nil, fmt.Errorf("truncated composite partition key")
		}
		n := int(pk[0])<<8 | int(pk[1])
		if len(pk) < 3+n {
			return nil, fmt.Errorf("truncated composite partition key component")
		}
		parts = append(parts, pk[2:2+n])
		pk = pk[3+n:]
	}
	if len(parts) != len(ti.pk) {
		return nil, fmt.Errorf("composite partition key has %d components, want %d", len(parts), len(ti.pk))
	}
	return parts, nil
}
