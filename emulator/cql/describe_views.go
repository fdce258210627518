package cql

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// viewCreateStatement is schema::get_create_statement for a materialized
// view (schema/schema.cc).
func (d *schemaDescriber) viewCreateStatement(v *engine.Table, internals bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE MATERIALIZED VIEW %s.%s AS\n    SELECT ", maybeQuote(v.Keyspace), maybeQuote(v.Name))
	var pk, ck []engine.Column
	var names []string
	for _, c := range v.Columns {
		names = append(names, maybeQuote(c.Name))
		switch c.Kind {
		case engine.PartitionKey:
			pk = append(pk, c)
		case engine.Clustering:
			ck = append(ck, c)
		}
	}
	if v.View.IncludeAllColumns {
		b.WriteString("*")
	} else {
		b.WriteString(strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\n    FROM %s.%s\n    WHERE %s", maybeQuote(v.Keyspace), maybeQuote(v.View.BaseTable), v.View.WhereClause)
	b.WriteString(primaryKeyClause(pk, ck))
	b.WriteString("\n    WITH ")
	b.WriteString(d.withClause(v, ck, internals))
	return b.String()
}

// indexDesc is schema::describe of an index's backing view: CREATE
// [CUSTOM] INDEX name ON ks.table(target) [USING 'class'] WITH the view's
// properties (schema/schema.cc get_create_statement, describe_index_columns).
// The emulator's indexes have no backing view; the properties are those
// CREATE INDEX gave (indexProperties).
func (d *schemaDescriber) indexDesc(base *engine.Table, ix engine.Index, internals bool) description {
	var b strings.Builder
	b.WriteString("CREATE ")
	class := ix.Options["class_name"]
	if class != "" {
		b.WriteString("CUSTOM ")
	}
	fmt.Fprintf(&b, "INDEX %s ON %s.%s(%s)", maybeQuote(ix.Name), maybeQuote(base.Keyspace), maybeQuote(base.Name), indexColumns(base, ix))
	if class != "" {
		fmt.Fprintf(&b, " USING '%s'", class)
	}
	b.WriteString(" WITH ")
	if internals {
		fmt.Fprintf(&b, "ID = %s\n    AND ", indexID(base, ix))
	}
	b.WriteString(d.tableProperties(&engine.Table{Keyspace: base.Keyspace, Options: ix.Properties}))
	if v, ok := ix.Properties["synchronous_updates"]; ok {
		// schema_properties: a view's or index's synchronous_updates tag.
		b.WriteString("\n    AND synchronous_updates = " + v)
	}
	b.WriteString(";\n")
	return ksDesc(base.Keyspace, "index", ix.Name, b.String())
}

// indexColumns is describe_index_columns: a local index's partition key in
// parentheses first; full() for a frozen collection, values() for a set
// indexed through keys(), else the stored target.
func indexColumns(base *engine.Table, ix engine.Index) string {
	col, kind, local := indexTargetColumn(ix)
	prefix := ""
	if local {
		var lt struct{ PK []string }
		_ = json.Unmarshal([]byte(ix.Options["target"]), &lt)
		quoted := make([]string, len(lt.PK))
		for i, p := range lt.PK {
			quoted[i] = maybeQuote(p)
		}
		prefix = "(" + strings.Join(quoted, ", ") + "), "
	}
	typ := ""
	for _, c := range base.Columns {
		if c.Name == col {
			typ = c.Type
		}
	}
	switch {
	case strings.HasPrefix(typ, "frozen<list") || strings.HasPrefix(typ, "frozen<set") || strings.HasPrefix(typ, "frozen<map"):
		return prefix + "full(" + maybeQuote(col) + ")"
	case strings.HasPrefix(typ, "set<") && kind == "keys":
		return prefix + "values(" + maybeQuote(col) + ")"
	case local:
		return prefix + maybeQuote(col)
	}
	return prefix + ix.Options["target"]
}

// indexID is the backing view's id: WITH ID's, else one derived from the
// base table's id and the index name (the emulator creates no view).
func indexID(base *engine.Table, ix engine.Index) string {
	if id := ix.Properties["id"]; id != "" {
		return id
	}
	sum := md5.Sum(append(base.ID[:], ix.Name...))
	sum[6] = sum[6]&0x0f | 0x30
	sum[8] = sum[8]&0x3f | 0x80
	return uuidString(sum)
}

// indexProperties keeps CREATE INDEX's WITH properties as table options
// (cql3/statements/create_index_statement.cc hands them to the view).
func indexProperties(in map[string]cqlparse.Term) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for name, v := range in {
		s, err := optionString(v)
		if err != nil {
			return nil, engine.Errorf(engine.CodeSyntaxError, "option %s: %v", name, err)
		}
		out[name] = s
	}
	return out, nil
}
