package cql

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"math"
	"net"
	"sort"
	"strconv"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// virtualTable is a system table computed from the Backend on each read.
type virtualTable struct {
	info *tableInfo
	rows func(s *Server) []map[string][]byte
	// scylla marks the tables of db/virtual_tables.cc: a write to one is
	// handed to its apply (virtual_table::apply), which by default fails
	// with "this virtual table doesn't allow updates"; the other system
	// tables refuse writes as unauthorized.
	scylla bool
	// apply takes an INSERT or UPDATE of one partition: its key and the
	// cells it sets (nil value: null).
	apply func(s *Server, key []byte, cells map[string][]byte) error
}

type vcol struct {
	name string
	typ  string
}

var virtualTables = map[string]*virtualTable{}

func defineVirtual(ks, name string, cols []vcol, rows func(s *Server) []map[string][]byte) *virtualTable {
	ti := &tableInfo{keyspace: ks, name: name, cols: map[string]*colInfo{}}
	for i, c := range cols {
		dt, err := parseType(c.typ)
		if err != nil {
			panic("cql: bad system column type " + c.typ) // programming error, caught by tests
		}
		kind := engine.Regular
		if i == 0 {
			kind = engine.PartitionKey
		}
		ci := &colInfo{Column: engine.Column{Name: c.name, Type: c.typ, Kind: kind}, dt: dt, idx: i}
		ti.all = append(ti.all, ci)
		ti.cols[c.name] = ci
	}
	vt := &virtualTable{info: ti, rows: rows}
	ti.virtual = vt
	virtualTables[ks+"."+name] = vt
	return vt
}

func lookupVirtual(ks, name string) *virtualTable {
	return virtualTables[ks+"."+name]
}

// virtualRows evaluates a WHERE clause (equality/IN on any column) over a
// system table.
func (ec *execCtx) virtualRows(ti *tableInfo, where []cqlparse.Relation) ([][][]byte, error) {
	type cond struct {
		col  *colInfo
		vals [][]byte
	}
	var conds []cond
	for _, r := range where {
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, err
		}
		switch r.Op {
		case "=":
			v, unset, err := ec.value(r.Value, c.Name, c.dt)
			if err != nil {
				return nil, err
			}
			if unset || v == nil {
				return nil, engine.Errorf(engine.CodeInvalid, "Invalid null value in condition for column %s", c.Name)
			}
			conds = append(conds, cond{c, [][]byte{v}})
		case "IN":
			vs, err := ec.inValues(r.Value, c)
			if err != nil {
				return nil, err
			}
			conds = append(conds, cond{c, vs})
		default:
			return nil, engine.Errorf(engine.CodeInvalid, "Only EQ and IN relations are supported on system table %s.%s", ti.keyspace, ti.name)
		}
	}
	var out [][][]byte
	for _, m := range ti.virtual.rows(ec.s) {
		row := make([][]byte, len(ti.all))
		for _, c := range ti.all {
			row[c.idx] = m[c.Name]
		}
		ok := true
		for _, cd := range conds {
			hit := false
			for _, v := range cd.vals {
				hit = hit || bytes.Equal(row[cd.col.idx], v)
			}
			ok = ok && hit
		}
		if ok {
			out = append(out, row)
		}
	}
	return out, nil
}

// Encoders for system table values.

func encText(s string) []byte { return []byte(s) }

func encInet(ip net.IP) []byte {
	if ip == nil {
		return nil
	}
	if v4 := ip.To4(); v4 != nil {
		return []byte(v4)
	}
	return []byte(ip.To16())
}

func encUUID(u [16]byte) []byte { return append([]byte(nil), u[:]...) }

func encInt(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(int32(n))) }

func encBool(b bool) []byte {
	if b {
		return []byte{1}
	}
	return []byte{0}
}

func encDouble(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }

func encTextList(items []string) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(items)))
	for _, s := range items {
		out = binary.BigEndian.AppendUint32(out, uint32(len(s)))
		out = append(out, s...)
	}
	return out
}

func encTextSet(items []string) []byte {
	s := append([]string(nil), items...)
	sort.Strings(s)
	return encTextList(s)
}

func encTextMap(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := binary.BigEndian.AppendUint32(nil, uint32(len(keys)))
	for _, k := range keys {
		out = binary.BigEndian.AppendUint32(out, uint32(len(k)))
		out = append(out, k...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(m[k])))
		out = append(out, m[k]...)
	}
	return out
}

const partitioner = "org.apache.cassandra.dht.Murmur3Partitioner"

func schemaOf(s *Server) *engine.Schema {
	if sch := s.b.Schema(); sch != nil {
		return sch
	}
	return &engine.Schema{}
}

func sortedKeyspaces(sch *engine.Schema) []string {
	names := make([]string, 0, len(sch.Keyspaces))
	for n := range sch.Keyspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sortedTables(sch *engine.Schema) []*engine.Table {
	var ts []*engine.Table
	for _, m := range sch.Tables {
		for _, t := range m {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Keyspace != ts[j].Keyspace {
			return ts[i].Keyspace < ts[j].Keyspace
		}
		return ts[i].Name < ts[j].Name
	})
	return ts
}

// schemaTables are the tables system_schema lists: the system tables the
// node serves, then the users' (in keyspace, name order).
func schemaTables(s *Server) []*engine.Table {
	var ts []*engine.Table
	for _, vt := range virtualTables {
		ts = append(ts, vt.def())
	}
	ts = append(ts, sortedTables(schemaOf(s))...)
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Keyspace != ts[j].Keyspace {
			return ts[i].Keyspace < ts[j].Keyspace
		}
		return ts[i].Name < ts[j].Name
	})
	return ts
}

// def is a system table's definition as system_schema shows it; its id is
// derived from its name, as ScyllaDB's system tables' ids are
// (schema/schema.cc generate_legacy_id: a name-based UUID).
func (vt *virtualTable) def() *engine.Table {
	ti := vt.info
	t := &engine.Table{Keyspace: ti.keyspace, Name: ti.name, Options: map[string]string{}}
	sum := md5.Sum([]byte(ti.keyspace + ti.name))
	t.ID = sum
	t.ID[6] = t.ID[6]&0x0f | 0x30
	t.ID[8] = t.ID[8]&0x3f | 0x80
	for _, c := range ti.all {
		col := c.Column
		if col.Kind != engine.PartitionKey {
			col.Position = -1
		}
		t.Columns = append(t.Columns, col)
	}
	return t
}

func optMap(t *engine.Table, name string, def map[string]string) []byte {
	if v, ok := t.Options[name]; ok {
		var m map[string]string
		if json.Unmarshal([]byte(v), &m) == nil {
			return encTextMap(m)
		}
	}
	return encTextMap(def)
}

func optInt(t *engine.Table, name string, def int) []byte {
	if v, ok := t.Options[name]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return encInt(n)
		}
	}
	return encInt(def)
}

func optDouble(t *engine.Table, name string, def float64) []byte {
	if v, ok := t.Options[name]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return encDouble(f)
		}
	}
	return encDouble(def)
}

func optText(t *engine.Table, name, def string) []byte {
	if v, ok := t.Options[name]; ok {
		return encText(v)
	}
	return encText(def)
}

func nodeRow(s *Server, n engine.NodeInfo, sch *engine.Schema) map[string][]byte {
	return map[string][]byte{
		"data_center":        encText(n.DC),
		"host_id":            encUUID(n.HostID),
		"rack":               encText(n.Rack),
		"release_version":    encText(orDefault(n.ReleaseVersion, "3.0.8")),
		"rpc_address":        encInet(n.Addr),
		"schema_version":     encUUID(sch.Version),
		"tokens":             encTextSet(n.Tokens),
		"supported_features": encText(supportedFeatures(n.ScyllaVersion)),
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func init() {
	defineVirtual("system", "local", []vcol{
		{"key", "text"}, {"bootstrapped", "text"}, {"broadcast_address", "inet"}, {"cluster_name", "text"},
		{"cql_version", "text"}, {"data_center", "text"}, {"gossip_generation", "int"}, {"host_id", "uuid"},
		{"listen_address", "inet"}, {"native_protocol_version", "text"}, {"partitioner", "text"}, {"rack", "text"},
		{"release_version", "text"}, {"rpc_address", "inet"}, {"rpc_port", "int"}, {"native_port", "int"},
		{"schema_version", "uuid"}, {"supported_features", "text"}, {"tokens", "set<text>"},
		{"scylla_version", "text"},
	}, func(s *Server) []map[string][]byte {
		n := s.b.Local()
		sch := schemaOf(s)
		r := nodeRow(s, n, sch)
		r["key"] = encText("local")
		r["bootstrapped"] = encText("COMPLETED")
		r["broadcast_address"] = encInet(n.Addr)
		r["listen_address"] = encInet(n.Addr)
		r["cluster_name"] = encText(s.b.ClusterName())
		r["cql_version"] = encText("3.3.1")
		r["gossip_generation"] = encInt(1)
		r["native_protocol_version"] = encText("4")
		r["partitioner"] = encText(partitioner)
		r["rpc_port"] = encInt(n.CQLPort)
		r["native_port"] = encInt(n.CQLPort)
		r["scylla_version"] = encText(n.ScyllaVersion)
		return []map[string][]byte{r}
	})

	peers := func(s *Server) []map[string][]byte {
		local := s.b.Local()
		sch := schemaOf(s)
		var rows []map[string][]byte
		for _, p := range s.b.Peers() {
			if p.State == engine.StateLeft || p.HostID == local.HostID || p.Addr == nil {
				continue
			}
			r := nodeRow(s, p, sch)
			r["peer"] = encInet(p.Addr)
			r["peer_port"] = encInt(7000)
			r["preferred_ip"] = encInet(p.Addr)
			r["preferred_port"] = encInt(7000)
			r["native_address"] = encInet(p.Addr)
			r["native_port"] = encInt(p.CQLPort)
			rows = append(rows, r)
		}
		return rows
	}
	defineVirtual("system", "peers", []vcol{
		{"peer", "inet"}, {"data_center", "text"}, {"host_id", "uuid"}, {"preferred_ip", "inet"}, {"rack", "text"},
		{"release_version", "text"}, {"rpc_address", "inet"}, {"schema_version", "uuid"}, {"supported_features", "text"},
		{"tokens", "set<text>"},
	}, peers)
	defineVirtual("system", "peers_v2", []vcol{
		{"peer", "inet"}, {"peer_port", "int"}, {"data_center", "text"}, {"host_id", "uuid"}, {"native_address", "inet"},
		{"native_port", "int"}, {"preferred_ip", "inet"}, {"preferred_port", "int"}, {"rack", "text"},
		{"release_version", "text"}, {"schema_version", "uuid"}, {"supported_features", "text"}, {"tokens", "set<text>"},
	}, peers)

	defineVirtual("system_schema", "keyspaces", []vcol{
		// replication_v2 (db/schema_tables.cc, from 2026.1) is set only
		// when the replication holds rack lists, which the emulator does
		// not take: always null here.
		{"keyspace_name", "text"}, {"durable_writes", "boolean"}, {"replication", "map<text, text>"}, {"replication_v2", "map<text, text>"},
	}, func(s *Server) []map[string][]byte {
		local := map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}
		rows := []map[string][]byte{
			{"keyspace_name": encText("system"), "durable_writes": encBool(true), "replication": encTextMap(local)},
			{"keyspace_name": encText("system_schema"), "durable_writes": encBool(true), "replication": encTextMap(local)},
		}
		sch := schemaOf(s)
		for _, name := range sortedKeyspaces(sch) {
			ks := sch.Keyspaces[name]
			rows = append(rows, map[string][]byte{
				"keyspace_name":  encText(ks.Name),
				"durable_writes": encBool(ks.DurableWrites),
				"replication":    encTextMap(ks.Replication),
			})
		}
		return rows
	})
	defineVirtual("system_schema", "scylla_keyspaces", []vcol{
		{"keyspace_name", "text"}, {"initial_tablets", "int"}, {"storage_options", "map<text, text>"}, {"storage_type", "text"},
	}, func(s *Server) []map[string][]byte {
		sch := schemaOf(s)
		var rows []map[string][]byte
		for _, name := range sortedKeyspaces(sch) {
			// db/schema_tables.cc make_create_keyspace_mutations: a
			// keyspace has a row only with initial_tablets (tablets) or
			// storage options (LOCAL has none).
			ks := sch.Keyspaces[name]
			if !ks.TabletsEnabled {
				continue
			}
			rows = append(rows, map[string][]byte{"keyspace_name": encText(ks.Name), "initial_tablets": encInt(ks.Tablets)})
		}
		return rows
	})

	// ScyllaDB's own table of node-local facts (db/system_keyspace.cc
	// scylla_local); test suites and tools tell ScyllaDB from Cassandra
	// by a system table named scylla_* in system_schema.tables.
	defineVirtual("system", "scylla_local", []vcol{{"key", "text"}, {"value", "text"}}, func(s *Server) []map[string][]byte {
		return []map[string][]byte{
			{"key": encText("enabled_features"), "value": encText(supportedFeatures(s.b.Local().ScyllaVersion))},
		}
	})
	defineVirtual("system_schema", "tables", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"bloom_filter_fp_chance", "double"},
		{"caching", "map<text, text>"}, {"cdc", "map<text, text>"}, {"comment", "text"}, {"compaction", "map<text, text>"},
		{"compression", "map<text, text>"}, {"crc_check_chance", "double"}, {"dclocal_read_repair_chance", "double"},
		{"default_time_to_live", "int"}, {"extensions", "map<text, blob>"}, {"flags", "set<text>"},
		{"gc_grace_seconds", "int"}, {"id", "uuid"}, {"max_index_interval", "int"},
		{"memtable_flush_period_in_ms", "int"}, {"min_index_interval", "int"}, {"read_repair_chance", "double"},
		{"speculative_retry", "text"},
	}, func(s *Server) []map[string][]byte {
		var rows []map[string][]byte
		for _, t := range schemaTables(s) {
			if t.View != nil {
				continue // in system_schema.views
			}
			rows = append(rows, tableOptionRow(t))
		}
		return rows
	})
	defineVirtual("system_schema", "scylla_tables", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"cdc", "map<text, text>"}, {"in_memory", "boolean"},
		{"partitioner", "text"}, {"version", "uuid"},
	}, func(s *Server) []map[string][]byte {
		var rows []map[string][]byte
		for _, t := range sortedTables(schemaOf(s)) {
			rows = append(rows, map[string][]byte{
				"keyspace_name": encText(t.Keyspace),
				"table_name":    encText(t.Name),
				"in_memory":     encBool(false),
				"version":       encUUID(t.ID),
			})
		}
		return rows
	})
	defineVirtual("system_schema", "columns", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"column_name", "text"}, {"clustering_order", "text"},
		{"column_name_bytes", "blob"}, {"kind", "text"}, {"position", "int"}, {"type", "text"},
	}, func(s *Server) []map[string][]byte {
		var rows []map[string][]byte
		for _, t := range schemaTables(s) {
			for _, c := range t.Columns {
				order := "none"
				if c.Kind == engine.Clustering {
					order = "asc"
					if c.Desc {
						order = "desc"
					}
				}
				pos := c.Position
				if !c.Kind.InPrimaryKey() {
					pos = -1
				}
				rows = append(rows, map[string][]byte{
					"keyspace_name":     encText(t.Keyspace),
					"table_name":        encText(t.Name),
					"column_name":       encText(c.Name),
					"clustering_order":  encText(order),
					"column_name_bytes": []byte(c.Name),
					"kind":              encText(string(c.Kind)),
					"position":          encInt(pos),
					"type":              encText(c.Type),
				})
			}
		}
		return rows
	})

	none := func(*Server) []map[string][]byte { return nil }
	defineVirtual("system_schema", "views", []vcol{
		{"keyspace_name", "text"}, {"view_name", "text"}, {"base_table_id", "uuid"}, {"base_table_name", "text"},
		{"bloom_filter_fp_chance", "double"}, {"caching", "map<text, text>"}, {"comment", "text"},
		{"compaction", "map<text, text>"}, {"compression", "map<text, text>"}, {"crc_check_chance", "double"},
		{"dclocal_read_repair_chance", "double"}, {"default_time_to_live", "int"}, {"extensions", "map<text, blob>"},
		{"gc_grace_seconds", "int"}, {"id", "uuid"}, {"include_all_columns", "boolean"}, {"max_index_interval", "int"},
		{"memtable_flush_period_in_ms", "int"}, {"min_index_interval", "int"}, {"read_repair_chance", "double"},
		{"speculative_retry", "text"}, {"where_clause", "text"},
	}, viewRows)
	defineVirtual("system_schema", "types", []vcol{
		{"keyspace_name", "text"}, {"type_name", "text"}, {"field_names", "frozen<list<text>>"}, {"field_types", "frozen<list<text>>"},
	}, func(s *Server) []map[string][]byte {
		// db/schema_tables.cc types: one row per user-defined type.
		sch := schemaOf(s)
		var rows []map[string][]byte
		for _, ks := range sortedKeyspaces(sch) {
			var names []string
			for n := range sch.Types[ks] {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				ut := sch.Types[ks][n]
				rows = append(rows, map[string][]byte{
					"keyspace_name": encText(ks),
					"type_name":     encText(n),
					"field_names":   encTextList(ut.FieldNames),
					"field_types":   encTextList(ut.FieldTypes),
				})
			}
		}
		return rows
	})
	defineVirtual("system_schema", "functions", []vcol{
		{"keyspace_name", "text"}, {"function_name", "text"}, {"argument_types", "list<text>"},
		{"argument_names", "list<text>"}, {"body", "text"}, {"called_on_null_input", "boolean"}, {"language", "text"},
		{"return_type", "text"},
	}, functionRows)
	defineVirtual("system_schema", "aggregates", []vcol{
		{"keyspace_name", "text"}, {"aggregate_name", "text"}, {"argument_types", "list<text>"}, {"final_func", "text"},
		{"initcond", "text"}, {"return_type", "text"}, {"state_func", "text"}, {"state_type", "text"},
	}, aggregateRows)
	defineVirtual("system_schema", "scylla_aggregates", []vcol{
		{"keyspace_name", "text"}, {"aggregate_name", "text"}, {"argument_types", "list<text>"}, {"reduce_func", "text"},
		{"state_type", "text"},
	}, scyllaAggregateRows)
	defineVirtual("system_schema", "indexes", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"index_name", "text"}, {"kind", "text"},
		{"options", "map<text, text>"},
	}, indexRows)
	defineVirtual("system_schema", "triggers", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"trigger_name", "text"}, {"options", "map<text, text>"},
	}, none)
	defineVirtual("system_schema", "dropped_columns", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"column_name", "text"}, {"dropped_time", "timestamp"},
		{"type", "text"},
	}, droppedColumnRows)
}

// droppedColumnRows are system_schema.dropped_columns (db/schema_tables.cc
// make_dropped_column_mutations: dropped_time is the drop's timestamp in
// milliseconds).
func droppedColumnRows(s *Server) []map[string][]byte {
	var rows []map[string][]byte
	for _, t := range sortedTables(schemaOf(s)) {
		for _, d := range t.Dropped {
			rows = append(rows, map[string][]byte{
				"keyspace_name": encText(t.Keyspace),
				"table_name":    encText(t.Name),
				"column_name":   encText(d.Name),
				"dropped_time":  binary.BigEndian.AppendUint64(nil, uint64(d.Timestamp/1000)),
				"type":          encText(d.Type),
			})
		}
	}
	return rows
}

// tableOptionRow is a table's row of system_schema.tables (views use its
// options for system_schema.views).
func tableOptionRow(t *engine.Table) map[string][]byte {
	flags := []string{"compound"}
	if t.Options["compact_storage"] == "true" {
		flags = []string{"dense"}
	}
	return map[string][]byte{
		"keyspace_name":               encText(t.Keyspace),
		"table_name":                  encText(t.Name),
		"bloom_filter_fp_chance":      optDouble(t, "bloom_filter_fp_chance", 0.01),
		"caching":                     optMap(t, "caching", map[string]string{"keys": "ALL", "rows_per_partition": "ALL"}),
		"comment":                     optText(t, "comment", ""),
		"compaction":                  optMap(t, "compaction", map[string]string{"class": "SizeTieredCompactionStrategy"}),
		"compression":                 optMap(t, "compression", map[string]string{"sstable_compression": "org.apache.cassandra.io.compress.LZ4Compressor"}),
		"crc_check_chance":            optDouble(t, "crc_check_chance", 1),
		"dclocal_read_repair_chance":  encDouble(0),
		"default_time_to_live":        optInt(t, "default_time_to_live", 0),
		"extensions":                  encTextMap(nil),
		"flags":                       encTextSet(flags),
		"gc_grace_seconds":            optInt(t, "gc_grace_seconds", 864000),
		"id":                          encUUID(t.ID),
		"max_index_interval":          optInt(t, "max_index_interval", 2048),
		"memtable_flush_period_in_ms": optInt(t, "memtable_flush_period_in_ms", 0),
		"min_index_interval":          optInt(t, "min_index_interval", 128),
		"read_repair_chance":          encDouble(0),
		"speculative_retry":           optText(t, "speculative_retry", "99.0PERCENTILE"),
	}
}
