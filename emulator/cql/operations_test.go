package cql_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// Collection operations in UPDATE, as cql3/operation.cc prepares them and
// cql3/lists.cc, cql3/sets.cc and cql3/maps.cc apply them: append,
// prepend, discard, set add/remove, map put and key removal; an UNSET
// operand does nothing (operation_skip_if_unset); an emptied collection
// reads as null.
func TestCollectionOperations(t *testing.T) {
	_, s, exec := memorySession(t, "ops", "127.0.1.206:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, li list<int>, s set<text>, m map<int, text>, fl frozen<list<int>>, r int)`)
	exec(`UPDATE ks.t SET li = li + [1, 2] WHERE p = 1`) // on a missing row
	exec(`UPDATE ks.t SET li = [0] + li WHERE p = 1`)
	exec(`UPDATE ks.t SET li = li + ? WHERE p = 1`, []int{2, 3})
	exec(`UPDATE ks.t SET li = li - [2] WHERE p = 1`) // every occurrence
	exec(`UPDATE ks.t SET s = s + {'b', 'a'}, m = m + {1: 'x', 2: 'y'} WHERE p = 1`)
	exec(`UPDATE ks.t SET s = s - {'b'}, m = m + {1: 'z'} WHERE p = 1`)
	exec(`UPDATE ks.t SET m = m - ? WHERE p = 1`, []int{2})
	// UNSET operand: nothing changes.
	if err := s.Query(`UPDATE ks.t SET li = li + ? WHERE p = 1`, gocql.UnsetValue).Exec(); err != nil {
		t.Fatal(err)
	}
	var li []int
	var st []string
	var m map[int]string
	if err := s.Query(`SELECT li, s, m FROM ks.t WHERE p = 1`).Scan(&li, &st, &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(li, []int{0, 1, 3}) || !reflect.DeepEqual(st, []string{"a"}) || !reflect.DeepEqual(m, map[int]string{1: "z"}) {
		t.Fatalf("li %v s %v m %v", li, st, m)
	}
	exec(`UPDATE ks.t SET s = s - {'a'} WHERE p = 1`)
	var null []string
	if err := s.Query(`SELECT s FROM ks.t WHERE p = 1`).Scan(&null); err != nil || null != nil {
		t.Fatalf("emptied set: %v %v", null, err)
	}
	for q, want := range map[string]string{
		`UPDATE ks.t SET fl = fl + [1] WHERE p = 1`:       "for frozen collection column fl",
		`UPDATE ks.t SET s = {'a'} + s WHERE p = 1`:       "for non list column s",
		`UPDATE ks.t SET r = r + 1 WHERE p = 1 IF EXISTS`: "Invalid operation (r = r + 1) for non counter column r", // before 2026.3
		`UPDATE ks.t SET r = p + 1 WHERE p = 1`:           "Only expressions of the form X = X +<value> are supported.",
		`UPDATE ks.t SET li = [1] + s WHERE p = 1`:        "Only expressions of the form X = <value> + X are supported.",
		`UPDATE ks.t SET p = p + 1 WHERE p = 1 IF EXISTS`: "PRIMARY KEY part p found in SET part",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
}

// `r = r + v` on a numeric non-counter column in an LWT update (issue
// #10568, from 2026.3; cql3/operation.cc addition::prepare,
// constants::setter over the prefetched row): computed on the old row under the Paxos round; null
// stays null; fixed-width overflow is an error, not a wrap.
func TestLWTArithmetic(t *testing.T) {
	mem := enginetest.NewMemory("ops")
	n := mem.Local()
	n.ScyllaVersion = "2026.3.0"
	mem.SetLocal(n)
	s := newSession(t, enginetest.StartServer(t, "127.0.1.207:0", mem), "")
	exec := func(q string) {
		t.Helper()
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE ks.t (p int, c int, r int, b tinyint, d double, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.t (p, c, r, b, d) VALUES (1, 1, 0, 127, 1.5)`)
	cas := func(q string, args ...any) bool {
		t.Helper()
		applied, err := s.Query(q, args...).MapScanCAS(map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return applied
	}
	if !cas(`UPDATE ks.t SET r = r + 3, d = d - 0.5 WHERE p = 1 AND c = 1 IF EXISTS`) || !cas(`UPDATE ks.t SET r = r - ? WHERE p = 1 AND c = 1 IF r = 3`, 1) {
		t.Fatal("not applied")
	}
	if cas(`UPDATE ks.t SET r = r - 5 WHERE p = 1 AND c = 1 IF r >= 5`) {
		t.Fatal("applied although r < 5")
	}
	var r int
	var d float64
	if err := s.Query(`SELECT r, d FROM ks.t WHERE p = 1 AND c = 1`).Scan(&r, &d); err != nil || r != 2 || d != 1 {
		t.Fatalf("r %d d %v %v", r, d, err)
	}
	err := s.Query(`UPDATE ks.t SET b = b + 1 WHERE p = 1 AND c = 1 IF EXISTS`).Exec()
	if err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Fatalf("tinyint 127 + 1: %v", err)
	}
	err = s.Query(`UPDATE ks.t SET r = r + 1 WHERE p = 1 AND c = 1`).Exec()
	if err == nil || !strings.Contains(err.Error(), "SET with a column expression (e.g. col = col + 1) requires an LWT condition") {
		t.Fatalf("without a condition: %v", err)
	}
	exec(`INSERT INTO ks.t (p, c) VALUES (1, 2)`)
	if !cas(`UPDATE ks.t SET r = r + 1 WHERE p = 1 AND c = 2 IF EXISTS`) {
		t.Fatal("not applied")
	}
	var rp *int
	if err := s.Query(`SELECT r FROM ks.t WHERE p = 1 AND c = 2`).Scan(&rp); err != nil || rp != nil {
		t.Fatalf("null + 1: %v %v", rp, err)
	}
}

// UNSET where the statement has no use for it, in a WHERE restriction (key
// or filter) or an IF condition, is refused as cql3/query_options.hh
// refuses it, naming the bind variable.
func TestUnsetInRestrictions(t *testing.T) {
	_, s, exec := memorySession(t, "ops", "127.0.1.208:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE ks.t (p int, c int, r int, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.t (p, c, r) VALUES (0, 1, 1)`)
	for q, args := range map[string][]any{
		`SELECT * FROM ks.t WHERE p = 0 AND c = ?`:                 {gocql.UnsetValue},
		`SELECT * FROM ks.t WHERE p = 0 AND r = ? ALLOW FILTERING`: {gocql.UnsetValue},
		`UPDATE ks.t SET r = 42 WHERE p = 0 AND c = ?`:             {gocql.UnsetValue},
		`UPDATE ks.t SET r = 42 WHERE p = 0 AND c = 1 IF r = ?`:    {gocql.UnsetValue},
		`UPDATE ks.t SET r = 42 WHERE p = 0 AND c = ? IF r = ?`:    {gocql.UnsetValue, 2},
	} {
		const want = "Unexpected unset value for bind variable 0" // the UNSET is always the first marker here
		if err := s.Query(q, args...).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
}

// NOT IN (cql3/Cql.g relationType K_NOT K_IN): as a restriction it keeps
// the rows whose value is none of the list's, its bind variable named
// "not in(c)" as cql3/expr/prepare_expr.cc get_rhs_receiver names it; as
// an LWT condition a null matches a null element.
func TestNotIn(t *testing.T) {
	_, s, exec := memorySession(t, "ops", "127.0.1.209:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE ks.t (p int, c int, r int, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.t (p, c, r) VALUES (1, 1, 1)`)
	exec(`INSERT INTO ks.t (p, c, r) VALUES (1, 2, 2)`)
	var got []int
	it := s.Query(`SELECT c FROM ks.t WHERE p = ? AND c NOT IN ?`, 1, []int{2}).Iter()
	for c := 0; it.Scan(&c); {
		got = append(got, c)
	}
	if err := it.Close(); err != nil || !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("NOT IN: %v %v", got, err)
	}
	cas := func(q string) bool {
		t.Helper()
		applied, err := s.Query(q).MapScanCAS(map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return applied
	}
	if cas(`UPDATE ks.t SET r = 3 WHERE p = 1 AND c = 1 IF r NOT IN (2, 1)`) || !cas(`UPDATE ks.t SET r = null WHERE p = 1 AND c = 1 IF r NOT IN (null, 7)`) || cas(`UPDATE ks.t SET r = 3 WHERE p = 1 AND c = 1 IF r NOT IN (null, 7)`) {
		t.Fatal("NOT IN conditions")
	}
}

// Filtering with null (cql3/expr/expression.cc evaluate: a comparison with
// null is null, which no row passes) and IN on a regular column with ALLOW
// FILTERING (a null list passes no row either).
func TestFilteringNullAndIn(t *testing.T) {
	_, s, exec := memorySession(t, "ops", "127.0.1.210:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE ks.t (p int, c int, v int, s set<int>, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.t (p, c, v, s) VALUES (1, 1, 1, {1})`)
	exec(`INSERT INTO ks.t (p, c, v) VALUES (1, 2, 2)`)
	exec(`INSERT INTO ks.t (p, c) VALUES (1, 3)`)
	rows := func(q string, args ...any) []int {
		t.Helper()
		var out []int
		it := s.Query(q, args...).Iter()
		for c := 0; it.Scan(&c); {
			out = append(out, c)
		}
		if err := it.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	for _, q := range []string{
		`SELECT c FROM ks.t WHERE p = 1 AND v = NULL ALLOW FILTERING`,
		`SELECT c FROM ks.t WHERE p = 1 AND v > NULL ALLOW FILTERING`,
		`SELECT c FROM ks.t WHERE p = 1 AND s CONTAINS NULL ALLOW FILTERING`,
	} {
		if got := rows(q); got != nil {
			t.Errorf("%s: %v", q, got)
		}
	}
	if got := rows(`SELECT c FROM ks.t WHERE v IN ? ALLOW FILTERING`, nil); got != nil {
		t.Errorf("IN null: %v", got)
	}
	if got := rows(`SELECT c FROM ks.t WHERE v IN (2, 3) ALLOW FILTERING`); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("IN (2, 3): %v", got)
	}
	if got := rows(`SELECT c FROM ks.t WHERE p = 1 AND v NOT IN ? ALLOW FILTERING`, []int{2}); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("NOT IN [2]: %v", got)
	}
}
