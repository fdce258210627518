package cql_test

import (
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// CREATE/DROP FUNCTION and AGGREGATE on a node started with
// enable_user_defined_functions and experimental_features udf
// (cql3/statements/function_statement.cc, create_function_statement.cc,
// create_aggregate_statement.cc, drop_function_statement.cc, lang/lua.cc
// compile).
func TestUDFDefinitions(t *testing.T) {
	_, hp := enginetest.StartServerOpts(t, "127.0.1.201:0", enginetest.NewMemory("udf"), cql.Options{UserDefinedFunctions: true})
	s := newSession(t, hp, "")
	exec := func(q string) {
		t.Helper()
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a + b'`)
	exec(`CREATE FUNCTION ks.plus(a bigint, b bigint) CALLED ON NULL INPUT RETURNS bigint LANGUAGE lua AS $$return a + b$$`)
	exec(`CREATE FUNCTION IF NOT EXISTS ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return 0'`)
	exec(`CREATE OR REPLACE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return b + a'`)
	exec(`CREATE FUNCTION ks.fin(s int) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE lua AS 'return tostring(s)'`)
	exec(`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int FINALFUNC fin INITCOND 0`)
	for q, want := range map[string]string{
		`CREATE FUNCTION ks.plus(a int, b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return 1'`: "The function 'ks.plus(int,int)' already exists",
		`CREATE FUNCTION ks.j(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'`:         "Language 'java' is not supported",
		`CREATE FUNCTION ks.bad(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return +'`:         "could not compile: ",
		`CREATE FUNCTION nosuch.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a'`:       "Keyspace 'nosuch' doesn't exist",
		`CREATE AGGREGATE ks.agg(text) SFUNC plus STYPE int`:                                                      "State function ks.plus(int, text) not found",
		`CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int FINALFUNC nope`:                                        "Final function ks.nope(int) not found",
		`CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int REDUCEFUNC nope`:                                       "Scalar reduce function nope for state type int not found.",
		`DROP FUNCTION ks.plus`:       "There are multiple functions named ks.plus",
		`DROP FUNCTION ks.nope`:       "No function named ks.nope found",
		`DROP FUNCTION ks.plus(text)`: "User function ks.plus(text) doesn't exist",
		`DROP FUNCTION ks.fin`:        "Cannot delete function ks.fin, as it is used by user-defined aggregate ks.total",
		`DROP AGGREGATE ks.fin`:       "'ks.fin(int)' is not a user defined aggregate",
		`CREATE OR REPLACE AGGREGATE ks.fin(int) SFUNC plus STYPE int`: "Cannot replace 'ks.fin(int)' which is not a user defined aggregate",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
	exec(`DROP FUNCTION IF EXISTS ks.nope`)
	exec(`DROP AGGREGATE ks.total`)
	exec(`DROP FUNCTION ks.fin`)
	exec(`DROP FUNCTION ks.plus(bigint, bigint)`)
	exec(`DROP FUNCTION ks.plus`)
}

// Without the node flags, CREATE FUNCTION is refused as ScyllaDB refuses it
// by default (function_statement.cc create_arg_types).
func TestUDFDisabledByDefault(t *testing.T) {
	_, hp := enginetest.StartServerOpts(t, "127.0.1.202:0", enginetest.NewMemory("udfoff"), cql.Options{})
	s := newSession(t, hp, "")
	if err := s.Query(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	err := s.Query(`CREATE FUNCTION ks.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a'`).Exec()
	if err == nil || !strings.Contains(err.Error(), "User defined functions are disabled. Set enable_user_defined_functions and experimental_features:udf to enable them") {
		t.Fatalf("got %v", err)
	}
}
