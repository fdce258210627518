package cql

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// schemaDescriber prints a schema snapshot's elements as ScyllaDB's
// describe functions do (data_dictionary/data_dictionary.cc,
// schema/schema.cc, types/types.cc).
type schemaDescriber struct {
	sch     *engine.Schema
	tablets bool
	// keyspaces in name order: the system keyspaces the node serves
	// (LocalStrategy) and the users'.
	keyspaces []*engine.Keyspace
	tables    map[string][]*engine.Table // keyspace -> tables (not views) in name order
	views     map[string][]*engine.Table // keyspace -> materialized views in name order
}

func newDescriber(s *Server) *schemaDescriber {
	d := &schemaDescriber{sch: schemaOf(s), tablets: hasFeature(s.b.Local().ScyllaVersion, "TABLETS"), tables: map[string][]*engine.Table{}, views: map[string][]*engine.Table{}}
	byName := map[string]*engine.Keyspace{}
	for _, t := range schemaTables(s) {
		if t.View != nil {
			d.views[t.Keyspace] = append(d.views[t.Keyspace], t)
			continue
		}
		d.tables[t.Keyspace] = append(d.tables[t.Keyspace], t)
		if d.sch.Keyspaces[t.Keyspace] == nil && byName[t.Keyspace] == nil {
			byName[t.Keyspace] = &engine.Keyspace{Name: t.Keyspace, DurableWrites: true,
				Replication: map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}}
		}
	}
	for name, ks := range d.sch.Keyspaces {
		byName[name] = ks
	}
	for _, ks := range byName {
		d.keyspaces = append(d.keyspaces, ks)
	}
	sort.Slice(d.keyspaces, func(i, j int) bool { return d.keyspaces[i].Name < d.keyspaces[j].Name })
	return d
}

// keyspace is get_keyspace_metadata: the keyspace or ScyllaDB's error.
func (d *schemaDescriber) keyspace(name string) (*engine.Keyspace, error) {
	for _, ks := range d.keyspaces {
		if ks.Name == name {
			return ks, nil
		}
	}
	return nil, engine.Errorf(engine.CodeInvalid, "'%s' not found in keyspaces", name)
}

func (d *schemaDescriber) keyspaceDesc(ks *engine.Keyspace) description {
	tablets := d.tablets && d.sch.Keyspaces[ks.Name] != nil
	return ksDesc(ks.Name, "keyspace", ks.Name, keyspaceCreateStatement(ks, tablets))
}

// allKeyspaceElements is describe_all_keyspace_elements: the keyspace,
// its types (dependencies first), then its tables.
func (d *schemaDescriber) allKeyspaceElements(name string, internals bool) ([]description, error) {
	ks, err := d.keyspace(name)
	if err != nil {
		return nil, err
	}
	out := []description{d.keyspaceDesc(ks)}
	for _, ut := range d.sortedTypes(name) {
		out = append(out, typeDesc(ut))
	}
	// describe_statement.cc: functions, then aggregates, before the tables.
	out = append(out, functionDescs(keyspaceFunctions(d.sch, name, false, ""), true)...)
	out = append(out, functionDescs(keyspaceFunctions(d.sch, name, true, ""), true)...)
	for _, t := range d.tables[name] {
		out = append(out, d.tableWithDependents(t, internals)...)
	}
	return out, nil
}

// table is DESC TABLE: the table, then its indexes and its views, each
// by name (describe_statement.cc table()).
func (d *schemaDescriber) table(ks, name string, internals bool) ([]description, error) {
	for _, t := range d.tables[ks] {
		if t.Name == name {
			return d.tableWithDependents(t, internals), nil
		}
	}
	if d.view(ks, name) != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot use DESC TABLE on materialized View. (Did you mean DESC MATERIALIZED VIEW)?")
	}
	return nil, engine.Errorf(engine.CodeInvalid, "Table '%s' not found in keyspace '%s'", name, ks)
}

func (d *schemaDescriber) tableWithDependents(t *engine.Table, internals bool) []description {
	out := []description{ksDesc(t.Keyspace, "table", t.Name, d.tableCreateStatement(t, internals))}
	idx := append([]engine.Index(nil), t.Indexes...)
	sort.Slice(idx, func(i, j int) bool { return idx[i].Name < idx[j].Name })
	for _, ix := range idx {
		out = append(out, d.indexDesc(t, ix, internals))
	}
	for _, v := range d.views[t.Keyspace] {
		if v.View.BaseID == t.ID {
			out = append(out, ksDesc(v.Keyspace, "view", v.Name, d.viewCreateStatement(v, internals)))
		}
	}
	return out
}

func (d *schemaDescriber) view(ks, name string) *engine.Table {
	for _, v := range d.views[ks] {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// index finds an index of keyspace ks by name, with its base table.
func (d *schemaDescriber) index(ks, name string) (*engine.Table, engine.Index, bool) {
	for _, t := range d.tables[ks] {
		for _, ix := range t.Indexes {
			if ix.Name == name {
				return t, ix, true
			}
		}
	}
	return nil, engine.Index{}, false
}

// generic is DESC [ks.]name (generic_describe_statement): a keyspace, else
// a table, index or type of the named or the session's keyspace.
func (d *schemaDescriber) generic(named, session, name string, internals bool) ([]description, error) {
	if named == "" {
		if _, err := d.keyspace(name); err == nil {
			return d.allKeyspaceElements(name, internals)
		}
		if session == "" {
			return nil, engine.Errorf(engine.CodeInvalid, "'%s' not found in keyspaces", name)
		}
	}
	ks := orDefault(named, session)
	if _, err := d.keyspace(ks); err != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "'%s' not found in keyspaces", name)
	}
	if descs, err := d.table(ks, name, internals); err == nil {
		return descs, nil
	}
	if v := d.view(ks, name); v != nil {
		return []description{ksDesc(ks, "view", name, d.viewCreateStatement(v, internals))}, nil
	}
	if t, ix, ok := d.index(ks, name); ok {
		return []description{d.indexDesc(t, ix, internals)}, nil
	}
	if ut := d.sch.Types[ks][name]; ut != nil {
		return []description{typeDesc(ut)}, nil
	}
	return nil, engine.Errorf(engine.CodeInvalid, "'%s' not found in keyspace '%s'", name, ks)
}

// sortedTypes orders a keyspace's types topologically, the types a type
// uses first, else by name (describe_statement.cc get_sorted_types).
func (d *schemaDescriber) sortedTypes(ks string) []*engine.UserType {
	names := make([]string, 0, len(d.sch.Types[ks]))
	for n := range d.sch.Types[ks] {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*engine.UserType
	done := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		ut := d.sch.Types[ks][n]
		if done[n] || ut == nil {
			return
		}
		done[n] = true
		for _, ft := range ut.FieldTypes {
			for _, ref := range typeNames(ft) {
				visit(ref)
			}
		}
		out = append(out, ut)
	}
	for _, n := range names {
		visit(n)
	}
	return out
}

var identRe = regexp.MustCompile(`"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*`)

// typeNames lists the identifiers of a CQL type string (a user type's
// name among them), unquoted.
func typeNames(typ string) []string {
	var out []string
	for _, m := range identRe.FindAllString(typ, -1) {
		if strings.HasPrefix(m, `"`) {
			m = strings.ReplaceAll(m[1:len(m)-1], `""`, `"`)
		}
		out = append(out, m)
	}
	return out
}

// typeDesc is user_type_impl::describe (types/types.cc).
func typeDesc(ut *engine.UserType) description {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TYPE %s.%s (\n", maybeQuote(ut.Keyspace), maybeQuote(ut.Name))
	for i, f := range ut.FieldNames {
		fmt.Fprintf(&b, "    %s %s", maybeQuote(f), ut.FieldTypes[i])
		if i < len(ut.FieldNames)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(");")
	return ksDesc(ut.Keyspace, "type", ut.Name, b.String())
}

// tableCreateStatement is schema::get_create_statement for a table.
func (d *schemaDescriber) tableCreateStatement(t *engine.Table, internals bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.%s (", maybeQuote(t.Keyspace), maybeQuote(t.Name))
	var pk, ck []engine.Column
	for _, c := range t.Columns {
		if _, dropped := t.DroppedAt(c.Name); !internals || !dropped {
			// schema.cc: WITH INTERNALS lists a re-added column as the
			// dropped one, then DROPs and ADDs it below.
			fmt.Fprintf(&b, "\n    %s,", columnDefinition(t, c))
		}
		switch c.Kind {
		case engine.PartitionKey:
			pk = append(pk, c)
		case engine.Clustering:
			ck = append(ck, c)
		}
	}
	dropped := sortedDrops(t)
	if internals {
		for _, dc := range dropped {
			fmt.Fprintf(&b, "\n    %s %s,", maybeQuote(dc.Name), dc.Type)
		}
	}
	b.WriteString(primaryKeyClause(pk, ck))
	b.WriteString("\n) WITH ")
	b.WriteString(d.withClause(t, ck, internals))
	if internals {
		name := maybeQuote(t.Keyspace) + "." + maybeQuote(t.Name)
		for _, dc := range dropped {
			fmt.Fprintf(&b, "\nALTER TABLE %s DROP %s USING TIMESTAMP %d;", name, maybeQuote(dc.Name), dc.Timestamp)
			for _, c := range t.Columns {
				if c.Name == dc.Name {
					fmt.Fprintf(&b, "\nALTER TABLE %s ADD %s;", name, columnDefinition(t, c))
				}
			}
		}
	}
	return b.String()
}

// columnDefinition is schema.cc column_definition_as_cql_key with the
// per-row TTL mark get_create_statement adds.
func columnDefinition(t *engine.Table, c engine.Column) string {
	s := maybeQuote(c.Name) + " " + c.Type
	if c.Kind == engine.Static {
		s += " STATIC"
	}
	if c.Name == ttlColumn(t) {
		s += " TTL" // schema.cc: the per-row TTL column
	}
	return s
}

// sortedDrops are a table's dropped columns by name.
func sortedDrops(t *engine.Table) []engine.DroppedColumn {
	out := append([]engine.DroppedColumn(nil), t.Dropped...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func primaryKeyClause(pk, ck []engine.Column) string {
	var b strings.Builder
	b.WriteString("\n    PRIMARY KEY (")
	b.WriteString(keyColumns(pk, len(pk) > 1))
	for _, c := range ck {
		b.WriteString(", " + maybeQuote(c.Name))
	}
	b.WriteString(")")
	return b.String()
}

// withClause is what follows WITH in a table's or view's statement.
func (d *schemaDescriber) withClause(t *engine.Table, ck []engine.Column, internals bool) string {
	var b strings.Builder
	if internals {
		fmt.Fprintf(&b, "ID = %s\nAND ", uuidString(t.ID))
	}
	if len(ck) > 0 {
		order := make([]string, len(ck))
		for i, c := range ck {
			order[i] = maybeQuote(c.Name) + map[bool]string{false: " ASC", true: " DESC"}[c.Desc]
		}
		fmt.Fprintf(&b, "CLUSTERING ORDER BY (%s)\n    AND ", strings.Join(order, ", "))
	}
	if t.Options["compact_storage"] == "true" {
		b.WriteString("COMPACT STORAGE\n    AND ")
	}
	b.WriteString(d.tableProperties(t))
	b.WriteString(";\n")
	return b.String()
}

func keyColumns(cols []engine.Column, paren bool) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = maybeQuote(c.Name)
	}
	if paren {
		return "(" + strings.Join(names, ", ") + ")"
	}
	return strings.Join(names, ", ")
}

func uuidString(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// tableProperties is schema::schema_properties: the options in ScyllaDB's
// order with its defaults, then the extensions (cdc, tombstone_gc).
func (d *schemaDescriber) tableProperties(t *engine.Table) string {
	num := func(name, def string) string {
		v := orDefault(t.Options[name], def)
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return v
	}
	compaction := optionMap(t, "compaction", map[string]string{"class": "SizeTieredCompactionStrategy"})
	class := strings.TrimPrefix(compaction["class"], "org.apache.cassandra.db.compaction.")
	delete(compaction, "class")
	compactionText := "{'class': '" + class + "'" + cqlParams(compaction, false) + "}"
	props := []string{
		"bloom_filter_fp_chance = " + num("bloom_filter_fp_chance", "0.01"),
		"caching = {" + cqlParams(optionMap(t, "caching", map[string]string{"keys": "ALL", "rows_per_partition": "ALL"}), true) + "}",
		"comment = " + singleQuote(t.Options["comment"]),
		"compaction = " + compactionText,
		"compression = {" + cqlParams(optionMap(t, "compression", map[string]string{"sstable_compression": "org.apache.cassandra.io.compress.LZ4Compressor"}), true) + "}",
		"crc_check_chance = " + num("crc_check_chance", "1"),
		"default_time_to_live = " + num("default_time_to_live", "0"),
		"gc_grace_seconds = " + num("gc_grace_seconds", "864000"),
		"max_index_interval = " + num("max_index_interval", "2048"),
		"memtable_flush_period_in_ms = " + num("memtable_flush_period_in_ms", "0"),
		"min_index_interval = " + num("min_index_interval", "128"),
		"speculative_retry = " + singleQuote(orDefault(t.Options["speculative_retry"], "99.0PERCENTILE")),
	}
	if _, ok := t.Options["tablets"]; ok {
		props = append(props, "tablets = {"+cqlParams(optionMap(t, "tablets", nil), true)+"}")
	}
	if _, ok := t.Options["cdc"]; ok {
		// cdc/cdc_options.cc to_map: every option, defaults filled in.
		cdc := map[string]string{"delta": "full", "enabled": "false", "postimage": "false", "preimage": "false", "ttl": "86400"}
		for k, v := range optionMap(t, "cdc", nil) {
			cdc[k] = v
		}
		props = append(props, "cdc = {"+cqlParams(cdc, true)+"}")
	}
	if t.Keyspace != "system" && t.Keyspace != "system_schema" {
		// tombstone_gc.cc: a table gets mode repair unless told otherwise
		// (timeout for local replication); the delay defaults to 3600 s.
		gc := map[string]string{"mode": "repair", "propagation_delay_in_seconds": "3600"}
		for k, v := range optionMap(t, "tombstone_gc", nil) {
			gc[k] = v
		}
		props = append(props, "tombstone_gc = {"+cqlParams(gc, true)+"}")
	}
	return strings.Join(props, "\n    AND ")
}

// optionMap reads a map option (stored as JSON), else def.
func optionMap(t *engine.Table, name string, def map[string]string) map[string]string {
	out := map[string]string{}
	if v, ok := t.Options[name]; ok {
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) == nil {
			for k, x := range m {
				out[k] = fmt.Sprint(x)
			}
			return out
		}
	}
	for k, v := range def {
		out[k] = v
	}
	return out
}

// cqlParams is schema.cc map_as_cql_param: 'k': 'v' pairs in key order.
func cqlParams(m map[string]string, first bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "'%s': '%s'", k, m[k])
	}
	return b.String()
}
