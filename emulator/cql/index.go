package cql

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// nameLength is schema::NAME_LENGTH (schema/schema.hh): the longest table,
// view or index name.
const nameLength = 192

// baseTable is validation::validate_column_family: the keyspace and table
// a statement names, or ScyllaDB's errors for either missing.
func baseTable(sch *engine.Schema, ks, name string) (*engine.Table, error) {
	if sch.Keyspaces[ks] == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s does not exist", ks)
	}
	t := sch.Tables[ks][name]
	if t == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", name)
	}
	return t, nil
}

// createIndex validates CREATE INDEX and adds the index to its table's
// definition, as cql3/statements/create_index_statement.cc does (the change
// is an update of the base table, so is its event). The emulator keeps no
// index view: a query by an indexed column scans the table (select.go).
func (ec *execCtx) createIndex(sch *engine.Schema, x *cqlparse.CreateIndex) (*engine.SchemaChange, error) {
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	if len(x.Targets) == 0 && !x.Custom {
		return nil, engine.Errorf(engine.CodeInvalid, "Only CUSTOM indexes can be created without specifying a target column")
	}
	if len(x.Ordering) > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Indexes do not allow for specifying the clustering order")
	}
	old, err := baseTable(sch, ks, x.Table)
	if err != nil {
		return nil, err
	}
	switch {
	case isCounterTable(old):
		return nil, engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on counter tables")
	case old.View != nil:
		return nil, engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on materialized views")
	case old.Options["compact_storage"] == "true" && hasClustering(old):
		return nil, engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on COMPACT STORAGE tables that have clustering columns")
	case len(x.Index) > nameLength:
		return nil, engine.Errorf(engine.CodeInvalid, "index names shouldn't be more than %d characters long (got \"%s\")", nameLength, x.Index)
	}
	if x.Custom {
		// secondary_index_manager's custom classes (vector_index) are not
		// emulated.
		return nil, engine.Errorf(engine.CodeInvalid, "Non-supported custom class '%s' provided", x.Class)
	}
	ti, err := infoFor(old, keyspaceTypes(sch, ks))
	if err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "%v", err)
	}
	target, root, err := indexTarget(ti, x.Targets)
	if err != nil {
		return nil, err
	}
	names := indexNames(sch, ks)
	if x.Index != "" && names[x.Index] != "" && !x.IfNotExists {
		return nil, engine.Errorf(engine.CodeInvalid, "Index already exists")
	}
	name := x.Index
	if name == "" {
		name = availableIndexName(sch, ks, x.Table, root, names)
	}
	for _, idx := range old.Indexes {
		if idx.Options["target"] == target {
			if x.IfNotExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Index %s is a duplicate of existing index %s", name, idx.Name)
		}
	}
	if sch.Tables[ks][name+"_index"] != nil || names[name] != "" {
		// The index's view (name_index) exists: an index of that name on
		// another column, under IF NOT EXISTS too.
		return nil, engine.Errorf(engine.CodeInvalid, "Index %s cannot be created, because table %s_index already exists", name, name)
	}
	kind := "COMPOSITES"
	if old.Options["compact_storage"] == "true" {
		kind = "KEYS"
	}
	t := cloneTable(old)
	props, err := indexProperties(x.Properties)
	if err != nil {
		return nil, err
	}
	t.Indexes = append(t.Indexes, engine.Index{Name: name, Kind: kind, Options: map[string]string{"target": target}, Properties: props})
	return &engine.SchemaChange{Kind: engine.AlterTable, Table: &t, KeyspaceName: ks, TableName: t.Name}, nil
}

func hasClustering(t *engine.Table) bool {
	for _, c := range t.Columns {
		if c.Kind == engine.Clustering {
			return true
		}
	}
	return false
}

// indexNames maps the index names of a keyspace to their tables.
func indexNames(sch *engine.Schema, ks string) map[string]string {
	out := map[string]string{}
	for _, t := range sch.Tables[ks] {
		for _, idx := range t.Indexes {
			out[idx.Name] = t.Name
		}
	}
	return out
}

// availableIndexName is index/secondary_index_manager.cc
// get_available_index_name with schema.cc get_default_index_name: table_
// column_idx, without the column name's non-word characters, then _1, _2 …
func availableIndexName(sch *engine.Schema, ks, table, root string, names map[string]string) string {
	base := table + "_idx"
	if root != "" {
		word := strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
				return r
			}
			return -1
		}, root)
		base = table + "_" + word + "_idx"
	}
	name := base
	for i := 1; names[name] != "" || sch.Tables[ks][name+"_index"] != nil; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

// indexTarget validates the targets of CREATE INDEX and returns the target
// option as index/secondary_index.cc serialize_targets writes it, and the
// column the default name is made from.
func indexTarget(ti *tableInfo, targets []cqlparse.IndexTarget) (target, root string, err error) {
	local := len(targets) > 0 && targets[0].Columns != nil
	if local {
		if err := checkLocalIndex(ti, targets); err != nil {
			return "", "", err
		}
	} else if len(targets) > 1 {
		return "", "", engine.Errorf(engine.CodeInvalid, "Only CUSTOM indexes support multiple columns")
	}
	last := targets[len(targets)-1]
	c, ok := ti.cols[last.Column]
	if !ok {
		return "", "", engine.Errorf(engine.CodeInvalid, "No column definition found for column %s", last.Column)
	}
	typ, err := checkIndexedColumn(ti, c, last.Type, local)
	if err != nil {
		return "", "", err
	}
	if local {
		b, _ := json.Marshal(struct {
			PK []string `json:"pk"`
			CK []string `json:"ck"`
		}{targets[0].Columns, []string{c.Name}})
		return string(b), c.Name, nil
	}
	if typ == "" || typ == "full" {
		return maybeQuote(c.Name), c.Name, nil
	}
	return typ + "(" + maybeQuote(c.Name) + ")", c.Name, nil
}

// checkLocalIndex is create_index_statement.cc validate_for_local_index:
// ((p1, p2), c) names the whole partition key in order, then one column.
func checkLocalIndex(ti *tableInfo, targets []cqlparse.IndexTarget) error {
	next := 0
	for _, name := range targets[0].Columns {
		c, ok := ti.cols[name]
		if !ok || c.Kind != engine.PartitionKey {
			return engine.Errorf(engine.CodeInvalid, "Local index definition must contain full partition key only. Redundant column: %s", name)
		}
		if next == len(ti.pk) {
			return engine.Errorf(engine.CodeInvalid, "Duplicate column definition in local index: %s", name)
		}
		if ti.pk[next] != c {
			break
		}
		next++
	}
	if next != len(ti.pk) {
		return engine.Errorf(engine.CodeInvalid, "Local index definition must contain full partition key only. Missing column: %s", ti.pk[next].Name)
	}
	if len(targets) == 1 {
		return engine.Errorf(engine.CodeInvalid, "Local index definition must provide an indexed column, not just partition key")
	}
	for _, t := range targets[1:] {
		if t.Columns != nil {
			return engine.Errorf(engine.CodeInvalid, "Multi-column index targets are currently only supported for partition key")
		}
		if c, ok := ti.cols[t.Column]; ok && c.Kind == engine.Static {
			return engine.Errorf(engine.CodeInvalid, "Local indexes containing static columns are not supported.")
		}
	}
	if len(targets) > 2 {
		return engine.Errorf(engine.CodeInvalid, "Only CUSTOM indexes support multiple columns")
	}
	return nil
}

// checkIndexedColumn is create_index_statement.cc's per-target checks; it
// returns the target type after rewrite_target_for_collection (a
// non-frozen list or map indexes its values, a set its keys).
func checkIndexedColumn(ti *tableInfo, c *colInfo, typ string, local bool) (string, error) {
	frozen := strings.HasPrefix(c.Type, "frozen<")
	if strings.Contains(c.Type, "duration") {
		switch c.dt.(type) {
		case *datatype.List, *datatype.Set, *datatype.Map:
			return "", engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on collections containing durations")
		case *datatype.UserDefined:
			return "", engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on UDTs containing durations")
		case *datatype.Tuple:
			return "", engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on tuples containing durations")
		}
		return "", engine.Errorf(engine.CodeInvalid, "Secondary indexes are not supported on duration columns")
	}
	if c.Kind == engine.PartitionKey && len(ti.pk) == 1 {
		return "", engine.Errorf(engine.CodeInvalid, "Cannot create secondary index on partition key column %s", c.Name)
	}
	kindName := map[string]string{"": "value", "keys": "keys", "values": "values", "entries": "entries", "full": "full"}[typ]
	_, isMap := c.dt.(*datatype.Map)
	collection := false
	switch c.dt.(type) {
	case *datatype.List, *datatype.Set, *datatype.Map:
		collection = true
	}
	switch {
	case collection && !frozen:
		if local {
			return "", engine.Errorf(engine.CodeInvalid, "Local secondary index on collection column %s is not implemented yet.", c.Name)
		}
		if typ == "full" {
			return "", engine.Errorf(engine.CodeInvalid, "full() indexes can only be created on frozen collections")
		}
		if (typ == "keys" || typ == "entries") && !isMap {
			return "", engine.Errorf(engine.CodeInvalid, "Cannot create secondary index on %s of column %s with non-map type", kindName, c.Name)
		}
		if typ == "" || typ == "values" {
			if _, set := c.dt.(*datatype.Set); set {
				return "keys", nil
			}
			return "values", nil
		}
		return typ, nil
	case isUDT(c.dt) && !frozen:
		return "", engine.Errorf(engine.CodeInvalid, "Cannot create secondary index on UDT column %s", c.Name)
	case collection:
		if typ != "full" {
			return "", engine.Errorf(engine.CodeInvalid, "Cannot create index on %s of frozen collection column %s", kindName, c.Name)
		}
		return typ, nil
	}
	if typ == "full" {
		return "", engine.Errorf(engine.CodeInvalid, "full() indexes can only be created on frozen collections")
	}
	if typ != "" {
		return "", engine.Errorf(engine.CodeInvalid, "Cannot create index on %s of column %s; only non-frozen collections support %s indexes", kindName, c.Name, kindName)
	}
	return "", nil
}

func isUDT(dt datatype.DataType) bool {
	_, ok := dt.(*datatype.UserDefined)
	return ok
}

// dropIndex is cql3/statements/drop_index_statement.cc: the index is looked
// up among the keyspace's tables, and its table is updated.
func (ec *execCtx) dropIndex(sch *engine.Schema, x *cqlparse.DropIndex) (*engine.SchemaChange, error) {
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	if sch.Keyspaces[ks] == nil {
		if x.IfExists {
			return nil, nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s does not exist", ks)
	}
	table := indexNames(sch, ks)[x.Index]
	if table == "" {
		if x.IfExists {
			return nil, nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Index '%s' could not be found in any of the tables of keyspace '%s'", x.Index, ks)
	}
	t := cloneTable(sch.Tables[ks][table])
	t.Indexes = slicesDeleteIndex(t.Indexes, x.Index)
	return &engine.SchemaChange{Kind: engine.AlterTable, Table: &t, KeyspaceName: ks, TableName: t.Name}, nil
}

func slicesDeleteIndex(idx []engine.Index, name string) []engine.Index {
	out := idx[:0]
	for _, i := range idx {
		if i.Name != name {
			out = append(out, i)
		}
	}
	return out
}

// indexTargetColumn is index/secondary_index.cc
// get_target_column_name_from_string with the target's kind: the column an
// index covers and whether the index is local.
func indexTargetColumn(idx engine.Index) (col, kind string, local bool) {
	target := idx.Options["target"]
	var lt struct{ CK []string }
	if strings.HasPrefix(target, "{") && json.Unmarshal([]byte(target), &lt) == nil && len(lt.CK) > 0 {
		return lt.CK[0], "", true
	}
	for _, k := range []string{"keys", "values", "entries"} {
		if strings.HasPrefix(target, k+"(") && strings.HasSuffix(target, ")") {
			return unquoteIdent(target[len(k)+1 : len(target)-1]), k, false
		}
	}
	return unquoteIdent(target), "", false
}

// unquoteIdent is index_target::unescape_target_column.
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}

// indexRows are system_schema.indexes (db/schema_tables.cc).
func indexRows(s *Server) []map[string][]byte {
	var rows []map[string][]byte
	for _, t := range sortedTables(schemaOf(s)) {
		idxs := append([]engine.Index(nil), t.Indexes...)
		sort.Slice(idxs, func(i, j int) bool { return idxs[i].Name < idxs[j].Name })
		for _, idx := range idxs {
			rows = append(rows, map[string][]byte{
				"keyspace_name": encText(t.Keyspace),
				"table_name":    encText(t.Name),
				"index_name":    encText(idx.Name),
				"kind":          encText(idx.Kind),
				"options":       encTextMap(idx.Options),
			})
		}
	}
	return rows
}

// indexedColumn reports the column whose restriction a secondary index
// answers, as cql3/restrictions/statement_restrictions.cc picks it: one
// the index serves (indexServes) with a global index, or with a local
// index when the whole partition key is restricted by equality. "" when
// none. Such a restriction needs no ALLOW FILTERING; the emulator answers
// it by a scan, in the order the index's view would give (by token).
func indexedColumn(ti *tableInfo, st *cqlparse.Select) string {
	if ti.def == nil || len(ti.def.Indexes) == 0 {
		return ""
	}
	pkEq := 0
	for _, c := range ti.pk {
		for _, r := range st.Where {
			if r.Token == nil && r.Column == c.Name && r.Op == "=" {
				pkEq++
				break
			}
		}
	}
	for _, r := range st.Where {
		c, ok := ti.cols[r.Column]
		if r.Token != nil || !ok {
			continue
		}
		for _, idx := range ti.def.Indexes {
			col, kind, local := indexTargetColumn(idx)
			if col == r.Column && indexServes(c, kind, r.Op) && (!local || pkEq == len(ti.pk)) {
				return col
			}
		}
	}
	return ""
}

// The tables that say an index or view is built (db/system_keyspace.cc
// built_indexes, "IndexInfo", whose table_name is the keyspace; and
// built_views; db/system_distributed_keyspace.cc view_build_status). The
// emulator has nothing to build: a view or index is built once created.
func init() {
	defineVirtual("system", "IndexInfo", []vcol{{"table_name", "text"}, {"index_name", "text"}}, func(s *Server) []map[string][]byte {
		var rows []map[string][]byte
		for _, t := range sortedTables(schemaOf(s)) {
			for _, idx := range t.Indexes {
				rows = append(rows, map[string][]byte{"table_name": encText(t.Keyspace), "index_name": encText(idx.Name)})
			}
		}
		return rows
	})
	defineVirtual("system", "built_views", []vcol{{"keyspace_name", "text"}, {"view_name", "text"}}, func(s *Server) []map[string][]byte {
		var rows []map[string][]byte
		for _, v := range builtViews(s) {
			rows = append(rows, map[string][]byte{"keyspace_name": encText(v[0]), "view_name": encText(v[1])})
		}
		return rows
	})
	defineVirtual("system_distributed", "view_build_status", []vcol{{"keyspace_name", "text"}, {"view_name", "text"}, {"host_id", "uuid"}, {"status", "text"}}, func(s *Server) []map[string][]byte {
		hosts := [][16]byte{s.b.Local().HostID}
		for _, p := range s.b.Peers() {
			if p.State != engine.StateLeft {
				hosts = append(hosts, p.HostID)
			}
		}
		var rows []map[string][]byte
		for _, v := range builtViews(s) {
			for _, h := range hosts {
				rows = append(rows, map[string][]byte{"keyspace_name": encText(v[0]), "view_name": encText(v[1]), "host_id": encUUID(h), "status": encText("SUCCESS")})
			}
		}
		return rows
	})
}

// builtViews are the keyspace and name of every view, the views of
// indexes (index/secondary_index_manager.cc index_table_name) among them.
func builtViews(s *Server) [][2]string {
	var out [][2]string
	for _, t := range sortedTables(schemaOf(s)) {
		if t.View != nil {
			out = append(out, [2]string{t.Keyspace, t.Name})
		}
		for _, idx := range t.Indexes {
			out = append(out, [2]string{t.Keyspace, idx.Name + "_index"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+"\x00"+out[i][1] < out[j][0]+"\x00"+out[j][1] })
	return out
}
