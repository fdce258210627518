package cql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/gocql/gocql"
)

// CREATE/DROP FUNCTION and AGGREGATE on a node started with
// enable_user_defined_functions and experimental_features udf
// (cql3/statements/function_statement.cc, create_function_statement.cc,
// create_aggregate_statement.cc, drop_function_statement.cc, lang/lua.cc
// compile).
func TestUDFDefinitions(t *testing.T) {
	s, exec := udfSession(t, "127.0.1.201:0", "udf")
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

// Calls of Lua functions in SELECT selectors (cql3/functions/user_function.cc
// execute, lang/lua.cc to_lua_visitor/from_lua_visitor): arguments
// converted to Lua values, the result to the return type, a null argument
// skipping a RETURNS NULL ON NULL INPUT function, Lua errors and invalid
// results refused with lang/lua.cc's messages.
func TestUDFInSelect(t *testing.T) {
	s, exec := udfSession(t, "127.0.1.203:0", "udfsel")
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, a int, d double, s text, l list<int>)`)
	exec(`INSERT INTO ks.t (p, a, d, s, l) VALUES (1, 40, 1.5, 'héllo', [1, 2, 3])`)
	exec(`INSERT INTO ks.t (p) VALUES (2)`)
	exec(`CREATE FUNCTION ks.plus(x int, y int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return x + y'`)
	exec(`CREATE FUNCTION ks.isnull(x int) CALLED ON NULL INPUT RETURNS boolean LANGUAGE lua AS 'return x == nil'`)
	exec(`CREATE FUNCTION ks.half(x double) RETURNS NULL ON NULL INPUT RETURNS double LANGUAGE lua AS 'return x / 2'`)
	exec(`CREATE FUNCTION ks.len(x list<int>) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return #x'`)
	exec(`CREATE FUNCTION ks.asc(x text) RETURNS NULL ON NULL INPUT RETURNS ascii LANGUAGE lua AS 'return x'`)
	exec(`CREATE FUNCTION ks.frac(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return x / 3'`)
	exec(`CREATE FUNCTION ks.boom(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'error("boom")'`)

	exec(`CREATE FUNCTION ks.acc(st int, x int) CALLED ON NULL INPUT RETURNS int LANGUAGE lua AS 'if x == nil then return st end return st + x'`)
	exec(`CREATE FUNCTION ks.show(st int) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE lua AS 'return "total " .. st'`)
	exec(`CREATE AGGREGATE ks.total(int) SFUNC acc STYPE int FINALFUNC show INITCOND 100`)
	var total string
	if err := s.Query(`SELECT ks.total(p) FROM ks.t`).Scan(&total); err != nil || total != "total 103" {
		t.Fatalf("user-defined aggregate: got %q, %v; want total 103", total, err)
	}
	exec(`CREATE FUNCTION ks.twice(x list<int>) RETURNS NULL ON NULL INPUT RETURNS list<int> LANGUAGE lua AS 'local r = {} for i, v in ipairs(x) do r[i] = 2 * v end return r'`)
	exec(`CREATE FUNCTION ks.keys(x list<int>) RETURNS NULL ON NULL INPUT RETURNS set<int> LANGUAGE lua AS 'local r = {} for i, v in ipairs(x) do r[4 - v] = true end return r'`)
	var twice, keys []int
	if err := s.Query(`SELECT ks.twice(l), ks.keys(l) FROM ks.t WHERE p = 1`).Scan(&twice, &keys); err != nil || fmt.Sprint(twice, keys) != "[2 4 6] [1 2 3]" {
		t.Fatalf("collections from Lua: got %v %v, %v", twice, keys, err)
	}
	var sum, n int
	var isNull bool
	var half float64
	if err := s.Query(`SELECT ks.plus(p, a), isnull(a), ks.half(d), ks.len(l) FROM ks.t WHERE p = 1`).Scan(&sum, &isNull, &half, &n); err != nil || sum != 41 || isNull || half != 0.75 || n != 3 {
		t.Fatalf("got %d %v %v %d, %v; want 41 false 0.75 3", sum, isNull, half, n, err)
	}
	var sumP *int
	if err := s.Query(`SELECT ks.plus(p, a), ks.isnull(a) FROM ks.t WHERE p = 2`).Scan(&sumP, &isNull); err != nil || sumP != nil || !isNull {
		t.Fatalf("null argument: got %v %v, %v; want null true", sumP, isNull, err)
	}
	iter := s.Query(`SELECT ks.plus(p, a) AS total FROM ks.t WHERE p = 1`).Iter()
	if cols := iter.Columns(); len(cols) != 1 || cols[0].Name != "total" {
		t.Fatalf("columns %+v", cols)
	}
	iter.Close()
	if cols := s.Query(`SELECT ks.plus(p, a) FROM ks.t WHERE p = 1`).Iter().Columns(); len(cols) != 1 || cols[0].Name != "ks.plus(p, a)" {
		t.Fatalf("columns %+v, want ks.plus(p, a)", cols)
	}
	for q, want := range map[string]string{
		`SELECT ks.asc(s) FROM ks.t WHERE p = 1`:    "value is not valid ascii",
		`SELECT ks.frac(a) FROM ks.t WHERE p = 1`:   "value is not an integer",
		`SELECT ks.boom(a) FROM ks.t WHERE p = 1`:   "lua execution failed: ",
		`SELECT ks.plus(p, s) FROM ks.t`:            "none of its type signatures match",
		`SELECT ks.nosuch(p) FROM ks.t WHERE p = 1`: "Unknown function ks.nosuch",
		`CREATE FUNCTION ks.o(x other.u) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return 1'`: "Statement on keyspace ks cannot refer to a user type in keyspace other",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
}

// DESC FUNCTION / AGGREGATE print user_function.cc describe and
// aggregate_fcts.cc user_aggregate::describe; DESC KEYSPACE lists them
// after the types (describe_statement.cc); system_schema.functions and
// aggregates list them (db/schema_tables.cc).
func TestUDFDescribe(t *testing.T) {
	_, hp := enginetest.StartServerOpts(t, "127.0.1.204:0", enginetest.NewMemory("udfdesc"), cql.Options{UserDefinedFunctions: true})
	s := newSession(t, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`,
		`CREATE FUNCTION ks.plus(x int, y int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return x + y'`,
		`CREATE FUNCTION ks.fin(x int) CALLED ON NULL INPUT RETURNS text LANGUAGE lua AS 'return tostring(x)'`,
		`CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int FINALFUNC fin INITCOND 0`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var ks, typ, name, stmt string
	if err := s.Query(`DESC FUNCTION ks.plus`).Scan(&ks, &typ, &name, &stmt); err != nil || typ != "function" ||
		stmt != "CREATE FUNCTION ks.plus(x int, y int)\nRETURNS NULL ON NULL INPUT\nRETURNS int\nLANGUAGE lua\nAS $$return x + y$$;" {
		t.Fatalf("DESC FUNCTION: %v %q %q", err, typ, stmt)
	}
	if err := s.Query(`DESC AGGREGATE ks.total`).Scan(&ks, &typ, &name, &stmt); err != nil || typ != "aggregate" ||
		stmt != "CREATE AGGREGATE ks.total(int)\nSFUNC plus\nSTYPE int\nFINALFUNC fin\nINITCOND 0;" {
		t.Fatalf("DESC AGGREGATE: %v %q %q", err, typ, stmt)
	}
	var body, final, initcond string
	var called bool
	if err := s.Query(`SELECT body, called_on_null_input FROM system_schema.functions WHERE keyspace_name = 'ks' AND function_name = 'fin' ALLOW FILTERING`).Scan(&body, &called); err != nil || body != "return tostring(x)" || !called {
		t.Fatalf("system_schema.functions: %v %q %v", err, body, called)
	}
	if err := s.Query(`SELECT final_func, initcond FROM system_schema.aggregates WHERE keyspace_name = 'ks'`).Scan(&final, &initcond); err != nil || final != "fin" || initcond != "0" {
		t.Fatalf("system_schema.aggregates: %v %q %q", err, final, initcond)
	}
	var types []string
	iter := s.Query(`DESC KEYSPACE ks`).Iter()
	for iter.Scan(&ks, &typ, &name, &stmt) {
		types = append(types, typ+" "+name)
	}
	if err := iter.Close(); err != nil || strings.Join(types, ",") != "keyspace ks,function fin,function plus,aggregate total" {
		t.Fatalf("DESC KEYSPACE: %v %v", err, types)
	}
}

// udfSession starts a server with user-defined functions enabled on addr
// and creates keyspace ks; exec fails the test on an error.
func udfSession(t *testing.T, addr, name string) (*gocql.Session, func(string)) {
	t.Helper()
	_, hp := enginetest.StartServerOpts(t, addr, enginetest.NewMemory(name), cql.Options{UserDefinedFunctions: true})
	s := newSession(t, hp, "")
	exec := func(q string) {
		t.Helper()
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	return s, exec
}
