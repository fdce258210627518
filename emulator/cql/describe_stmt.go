package cql

import (
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// description is one row of a DESCRIBE result (cql3/description.hh): the
// keyspace (nil for roles and service levels), the element's type and
// name, and its create statement (nil in listings).
type description struct {
	keyspace *string
	typ      string
	name     string
	stmt     string
}

func ksDesc(ks, typ, name, stmt string) description {
	return description{keyspace: &ks, typ: typ, name: name, stmt: stmt}
}

// describe answers server-side DESCRIBE as cql3/statements/
// describe_statement.cc does.
func (ec *execCtx) describe(x *cqlparse.Describe) (message.Message, error) {
	if x.Passwords && x.Kind != cqlparse.DescSchema {
		return nil, engine.Errorf(engine.CodeInvalid, "Option WITH PASSWORDS is only allowed with DESC SCHEMA")
	}
	switch x.Kind {
	case cqlparse.DescCluster:
		return ec.describeCluster()
	case cqlparse.DescKeyspaces, cqlparse.DescTables, cqlparse.DescTypes, cqlparse.DescFunctions, cqlparse.DescAggregates:
		return describeRows(ec.listing(x.Kind), false), nil
	}
	descs, err := ec.describeElements(x)
	if err != nil {
		return nil, err
	}
	return describeRows(descs, true), nil
}

// describeElements is the element, keyspace, schema and generic describe.
func (ec *execCtx) describeElements(x *cqlparse.Describe) ([]description, error) {
	d := newDescriber(ec.s)
	switch x.Kind {
	case cqlparse.DescSchema:
		return ec.describeSchema(d, x)
	case cqlparse.DescKeyspace:
		ks := orDefault(x.Keyspace, ec.keyspace)
		if x.Only {
			k, err := d.keyspace(ks)
			if err != nil {
				return nil, err
			}
			return []description{d.keyspaceDesc(k)}, nil
		}
		return d.allKeyspaceElements(ks, x.Internals)
	case cqlparse.DescGeneric:
		return d.generic(x.Keyspace, ec.keyspace, x.Target, x.Internals)
	}
	ks := orDefault(x.Keyspace, ec.keyspace)
	if ks == "" {
		return nil, engine.Errorf(engine.CodeInvalid, "No keyspace specified and no current keyspace")
	}
	if _, err := d.keyspace(ks); err != nil {
		return nil, err
	}
	switch x.Kind {
	case cqlparse.DescTable:
		return d.table(ks, x.Target, x.Internals)
	case cqlparse.DescType:
		ut := d.sch.Types[ks][x.Target]
		if ut == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Type '%s' not found in keyspace '%s'", x.Target, ks)
		}
		return []description{typeDesc(ut)}, nil
	case cqlparse.DescIndex:
		t, ix, ok := d.index(ks, x.Target)
		if !ok {
			return nil, engine.Errorf(engine.CodeInvalid, "Table for existing index '%s' not found in '%s'", x.Target, ks)
		}
		return []description{d.indexDesc(t, ix, x.Internals)}, nil
	case cqlparse.DescView:
		v := d.view(ks, x.Target)
		if v == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Materialized view '%s' not found in keyspace '%s'", x.Target, ks)
		}
		return []description{ksDesc(ks, "view", v.Name, d.viewCreateStatement(v, x.Internals))}, nil
	case cqlparse.DescFunction:
		if fns := keyspaceFunctions(d.sch, ks, false, x.Target); len(fns) > 0 {
			return functionDescs(fns, true), nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Function '%s' not found in keyspace '%s'", x.Target, ks)
	case cqlparse.DescAggregate:
		if fns := keyspaceFunctions(d.sch, ks, true, x.Target); len(fns) > 0 {
			return functionDescs(fns, true), nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Aggregate '%s' not found in keyspace '%s'", x.Target, ks)
	}
	return nil, engine.Errorf(engine.CodeSyntaxError, "unsupported DESCRIBE %s", x.Kind)
}

// describeSchema is DESC [FULL] SCHEMA [WITH INTERNALS [AND PASSWORDS]]:
// every user keyspace (FULL: every keyspace) with its elements; with
// internals the roles and service levels follow (schema_describe_statement).
func (ec *execCtx) describeSchema(d *schemaDescriber, x *cqlparse.Describe) ([]description, error) {
	if x.Passwords && (ec.user() == "" || !ec.s.auth.isSuperuser(ec.user())) {
		return nil, engine.Errorf(engine.CodeUnauthorized, "DESCRIBE SCHEMA WITH INTERNALS AND PASSWORDS can only be issued by a superuser")
	}
	var out []description
	for _, ks := range d.keyspaces {
		if !x.FullSchema && isSystemKeyspace(ks.Name) {
			continue
		}
		descs, err := d.allKeyspaceElements(ks.Name, x.Internals)
		if err != nil {
			return nil, err
		}
		out = append(out, descs...)
	}
	if x.Internals {
		out = append(out, ec.s.auth.describe(x.Passwords)...)
	}
	return out, nil
}

// listing is DESC KEYSPACES/TABLES/TYPES/FUNCTIONS/AGGREGATES: the session's
// keyspace only when one is in use (except for KEYSPACES), else all.
func (ec *execCtx) listing(kind cqlparse.DescribeKind) []description {
	d := newDescriber(ec.s)
	var out []description
	for _, ks := range d.keyspaces {
		if kind != cqlparse.DescKeyspaces && ec.keyspace != "" && ks.Name != ec.keyspace {
			continue
		}
		switch kind {
		case cqlparse.DescKeyspaces:
			out = append(out, ksDesc(ks.Name, "keyspace", ks.Name, ""))
		case cqlparse.DescTables:
			for _, t := range d.tables[ks.Name] {
				out = append(out, ksDesc(ks.Name, "table", t.Name, ""))
			}
		case cqlparse.DescTypes:
			for _, ut := range d.sortedTypes(ks.Name) {
				out = append(out, ksDesc(ks.Name, "type", ut.Name, ""))
			}
		case cqlparse.DescFunctions, cqlparse.DescAggregates:
			out = append(out, functionDescs(keyspaceFunctions(d.sch, ks.Name, kind == cqlparse.DescAggregates, ""), false)...)
		}
	}
	return out
}

// describeCluster is DESC CLUSTER: cluster, partitioner and snitch
// (storage_service::describe_cluster), and with a vnode keyspace in use its
// range ownership: each range's end token and replicas, as describe_ring
// (and system.token_ring) gives them.
func (ec *execCtx) describeCluster() (message.Message, error) {
	sch := schemaOf(ec.s)
	row := message.Row{[]byte(ec.s.b.ClusterName()), []byte(partitioner), []byte(snitch)}
	ks := sch.Keyspaces[ec.keyspace]
	if ks == nil || ks.TabletsEnabled || isSystemKeyspace(ks.Name) {
		return &message.RowsResult{Metadata: describeMetadata("cluster", "partitioner", "snitch"), Data: message.RowSet{row}}, nil
	}
	md := describeMetadata("cluster", "partitioner", "snitch", "range_ownership")
	md.Columns[3].Type = datatype.NewMap(datatype.Varchar, datatype.NewList(datatype.Varchar))
	owners := map[string][]string{}
	var ends []string
	for _, r := range tokenRingRows(ec.s) {
		if string(r["keyspace_name"]) != ks.Name {
			continue
		}
		end := string(r["end_token"])
		if owners[end] == nil {
			ends = append(ends, end)
		}
		owners[end] = append(owners[end], net.IP(r["endpoint"]).String())
	}
	m := binary.BigEndian.AppendUint32(nil, uint32(len(ends)))
	for _, end := range ends {
		m = appendBytes(m, []byte(end))
		m = appendBytes(m, encTextList(owners[end]))
	}
	return &message.RowsResult{Metadata: md, Data: message.RowSet{append(row, m)}}, nil
}

func appendBytes(dst, b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(b))), b...)
}

// snitch is what the emulated nodes' endpoint_snitch reports.
const snitch = "org.apache.cassandra.locator.GossipingPropertyFileSnitch"

// describeMetadata is the result metadata of a describe: text columns of
// the pseudo-table system.describe (describe_statement.cc).
func describeMetadata(names ...string) *message.RowsMetadata {
	md := &message.RowsMetadata{ColumnCount: int32(len(names))}
	for i, name := range names {
		md.Columns = append(md.Columns, &message.ColumnMetadata{Keyspace: "system", Table: "describe", Name: name, Type: datatype.Varchar, Index: int32(i)})
	}
	return md
}

// describeRows serialises descriptions as cql3/description.cc does: names
// maybe-quoted, the create statement only for element describes.
func describeRows(descs []description, withStmt bool) *message.RowsResult {
	cols := []string{"keyspace_name", "type", "name"}
	if withStmt {
		cols = append(cols, "create_statement")
	}
	res := &message.RowsResult{Metadata: describeMetadata(cols...)}
	for _, d := range descs {
		var ks []byte
		if d.keyspace != nil {
			ks = []byte(maybeQuote(*d.keyspace))
		}
		row := message.Row{ks, []byte(d.typ), []byte(maybeQuote(d.name))}
		if withStmt {
			row = append(row, []byte(d.stmt))
		}
		res.Data = append(res.Data, row)
	}
	return res
}

// keyspaceCreateStatement is keyspace_metadata::describe's statement.
func keyspaceCreateStatement(ks *engine.Keyspace, tabletsFeature bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE KEYSPACE %s WITH replication = {'class': %s", maybeQuote(ks.Name), singleQuote(ks.Replication["class"]))
	var opts []string
	for k := range ks.Replication {
		if k != "class" {
			opts = append(opts, k)
		}
	}
	sort.Strings(opts)
	for _, k := range opts {
		fmt.Fprintf(&b, ", %s: %s", singleQuote(k), singleQuote(ks.Replication[k]))
	}
	fmt.Fprintf(&b, "} AND durable_writes = %t", ks.DurableWrites)
	if tabletsFeature {
		switch {
		case !ks.TabletsEnabled:
			b.WriteString(" AND tablets = {'enabled': false}")
		case ks.Tablets > 0:
			fmt.Fprintf(&b, " AND tablets = {'enabled': true, 'initial': %d}", ks.Tablets)
		default:
			b.WriteString(" AND tablets = {'enabled': true}")
		}
	}
	b.WriteString(";")
	return b.String()
}

// singleQuote is cql3/util.cc single_quote.
func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// reservedKeywords are cql3/Cql.g's keywords that are not among its
// unreserved_keyword alternatives: an identifier spelled like one must be
// quoted.
var reservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`add allow alter and ann apply asc authorize batch begin by cast columnfamily
		concurrency create default delete drop entries from full grant if in index infinity insert into is keyspace
		limit materialized modify nan norecursive not null of on or order primary rename replace revoke schema
		scylla_clustering_bound scylla_counter_shard_list scylla_timeuuid_list_index select set table
		text_search_indexing to token truncate unlogged unset update use using vector_search_indexing view where with`) {
		m[w] = true
	}
	return m
}()

// maybeQuote is cql3/cql3_type.cc util::maybe_quote: [a-z][a-z0-9_]* that
// is not a reserved keyword stays bare, anything else is double-quoted
// with quotes doubled.
func maybeQuote(s string) string {
	if reservedKeywords[s] {
		return `"` + s + `"`
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || i > 0 && (r == '_' || r >= '0' && r <= '9')) {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
