package cql_test

import (
	"fmt"
	"testing"
)

// Tuples and user types order field by field, each field by its own
// type's order, a null field first (types/types.cc compare_aux for
// tuple_type_impl): in ALLOW FILTERING comparisons and as clustering
// keys. test/cqlpy test_filter_UDT_restriction_* is the reproducer: with
// the serialized bytes compared, x < {a: -1} matched every row.
func TestTupleAndUserTypeOrder(t *testing.T) {
	_, s, exec := memorySession(t, "tupleorder", "127.0.1.243:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TYPE ks.ty (a int, b text)`)
	exec(`CREATE TABLE ks.f (pk int, ck int, x frozen<ty>, y frozen<tuple<int, bigint>>, PRIMARY KEY (pk, ck))`)
	for i := 0; i < 5; i++ {
		exec(fmt.Sprintf(`INSERT INTO ks.f (pk, ck, x, y) VALUES (1, %d, {a: %d, b: 'v'}, (%d, -1))`, i, i*2-4, i-2))
	}
	cks := func(q string) string {
		t.Helper()
		var out []int
		for _, r := range selectAll(t, s, q) {
			out = append(out, r["ck"].(int))
		}
		return fmt.Sprint(out)
	}
	for q, want := range map[string]string{
		`SELECT ck FROM ks.f WHERE x < {a: -1} ALLOW FILTERING`:         "[0 1]", // a = -4, -2
		`SELECT ck FROM ks.f WHERE x < {a: -10} ALLOW FILTERING`:        "[]",
		`SELECT ck FROM ks.f WHERE x >= {a: 0, b: 'v'} ALLOW FILTERING`: "[2 3 4]",
		`SELECT ck FROM ks.f WHERE x = {a: 0, b: 'v'} ALLOW FILTERING`:  "[2]",
		`SELECT ck FROM ks.f WHERE y > (-1, 0) ALLOW FILTERING`:         "[2 3 4]", // (-1, -1) < (-1, 0)
		`SELECT ck FROM ks.f WHERE y <= (-2, -1) ALLOW FILTERING`:       "[0]",
	} {
		if got := cks(q); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	// As clustering keys: ascending and descending, a null field first.
	exec(`CREATE TABLE ks.c (pk int, t frozen<tuple<int, text>>, v int, PRIMARY KEY (pk, t))`)
	exec(`CREATE TABLE ks.d (pk int, t frozen<tuple<int, text>>, v int, PRIMARY KEY (pk, t)) WITH CLUSTERING ORDER BY (t DESC)`)
	for _, tb := range []string{"ks.c", "ks.d"} {
		for i, tv := range []string{`(3, 'a')`, `(-3, 'b')`, `(0, 'a')`, `(-3, 'a')`, `(0, null)`, `(-300, 'z')`} {
			exec(fmt.Sprintf(`INSERT INTO %s (pk, t, v) VALUES (1, %s, %d)`, tb, tv, i))
		}
	}
	order := func(tb string) string {
		t.Helper()
		var out []int
		for _, r := range selectAll(t, s, `SELECT v FROM `+tb+` WHERE pk = 1`) {
			out = append(out, r["v"].(int))
		}
		return fmt.Sprint(out)
	}
	// (-300,'z') (-3,'a') (-3,'b') (0,null) (0,'a') (3,'a')
	if got := order("ks.c"); got != "[5 3 1 4 2 0]" {
		t.Errorf("ascending tuple clustering order: %s", got)
	}
	if got := order("ks.d"); got != "[0 2 4 1 3 5]" {
		t.Errorf("descending tuple clustering order: %s", got)
	}
	if got := selectAll(t, s, `SELECT t FROM ks.c WHERE pk = 1 AND t = (0, null)`); len(got) != 1 {
		t.Errorf("t = (0, null): %v", got)
	}
}
