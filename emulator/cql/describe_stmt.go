package cql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// describeKeyspace answers DESCRIBE KEYSPACE name with the keyspace's row
// as ScyllaDB's server-side describe returns it (cql3/statements/
// describe_statement.cc; columns of cql3/description.cc; the statement of
// data_dictionary/data_dictionary.cc keyspace_metadata::describe). The
// keyspace's tables, types and functions, which ScyllaDB lists after it,
// are not described.
func (ec *execCtx) describeKeyspace(x *cqlparse.DescribeKeyspace) (message.Message, error) {
	sch := schemaOf(ec.s)
	ks := sch.Keyspaces[x.Keyspace]
	if ks == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "'%s' not found in keyspaces", x.Keyspace)
	}
	md := &message.RowsMetadata{ColumnCount: 4}
	for i, name := range []string{"keyspace_name", "type", "name", "create_statement"} {
		md.Columns = append(md.Columns, &message.ColumnMetadata{Keyspace: x.Keyspace, Table: x.Keyspace, Name: name, Type: datatype.Varchar, Index: int32(i)})
	}
	row := message.Row{[]byte(ks.Name), []byte("keyspace"), []byte(ks.Name), []byte(keyspaceCreateStatement(ks, hasFeature(ec.s.b.Local().ScyllaVersion, "TABLETS")))}
	return &message.RowsResult{Metadata: md, Data: message.RowSet{row}}, nil
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

// maybeQuote is cql3/util.cc maybe_quote for the common case: a lower-case
// identifier stays bare, anything else is double-quoted.
func maybeQuote(s string) string {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || (i > 0 && r >= '0' && r <= '9')) {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
