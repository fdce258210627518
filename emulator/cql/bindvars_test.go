package cql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// Bind variables as ScyllaDB's dialect has them: a :name used twice is one
// variable, so pk_indexes point at it (cql_duplicate_bind_variable_names_
// refer_to_same_variable, default true; false makes every marker its own, as
// Cassandra), and an IN restriction's variable is named "IN(c)"
// (cql3/expr/prepare_expr.cc get_rhs_receiver; "in(c)" with
// cql_in_bind_variable_name_uses_uppercase_operator off).
func TestBindVariableDialect(t *testing.T) {
	hp := enginetest.StartServer(t, "127.0.1.130:0", enginetest.NewMemory("binds"))
	rc := dialRaw(t, hp)
	run := func(q string) message.Message {
		t.Helper()
		rc.send(1, &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		return rc.recv().Body.Message
	}
	for _, q := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.t (p1 int, p2 int, c int, v int, PRIMARY KEY ((p1, p2), c))",
	} {
		if _, ok := run(q).(*message.SchemaChangeResult); !ok {
			t.Fatalf("%s failed", q)
		}
	}
	prepare := func(q string) (pk []uint16, names []string) {
		t.Helper()
		rc.send(2, &message.Prepare{Query: q})
		p, ok := rc.recv().Body.Message.(*message.PreparedResult)
		if !ok {
			t.Fatalf("preparing %s failed", q)
		}
		for _, c := range p.VariablesMetadata.Columns {
			names = append(names, c.Name)
		}
		return p.VariablesMetadata.PkIndices, names
	}
	check := func(q, wantPK, wantNames string) {
		t.Helper()
		pk, names := prepare(q)
		if fmt.Sprint(pk) != wantPK || strings.Join(names, ",") != wantNames {
			t.Errorf("%s: pk_indexes %v names %v, want %s %s", q, pk, names, wantPK, wantNames)
		}
	}
	check("SELECT * FROM ks.t WHERE p1 = :x AND p2 = :x", "[0 0]", "x")
	check("SELECT * FROM ks.t WHERE c = :b AND p1 = :a AND p2 = :b", "[1 0]", "b,a")
	check("SELECT * FROM ks.t WHERE p1 = ? AND p2 = ? AND c IN ?", "[0 1]", "p1,p2,IN(c)")
	check("SELECT * FROM ks.t WHERE p1 = ? AND p2 = ? AND c NOT IN ?", "[0 1]", "p1,p2,NOT IN(c)")
	run("UPDATE system.config SET value = 'false' WHERE name = 'cql_duplicate_bind_variable_names_refer_to_same_variable'")
	run("UPDATE system.config SET value = 'false' WHERE name = 'cql_in_bind_variable_name_uses_uppercase_operator'")
	check("SELECT * FROM ks.t WHERE c = :x AND p1 = :x AND p2 = :y", "[1 2]", "x,x,y")
	check("SELECT * FROM ks.t WHERE p1 = ? AND p2 = ? AND c IN ?", "[0 1]", "p1,p2,in(c)")
	check("SELECT * FROM ks.t WHERE p1 = ? AND p2 = ? AND c NOT IN ?", "[0 1]", "p1,p2,not in(c)")
}
