package cql_test

import (
	"reflect"
	"strings"
	"testing"
)

// Range deletions (cql3/statements/delete_statement.cc): a slice or a
// prefix of the clustering key deletes every row in it; an impossible
// range deletes nothing; a range deletion of specific columns is refused,
// and a restriction that skips a clustering column is no range.
func TestRangeDelete(t *testing.T) {
	_, s, exec := memorySession(t, "ops", "127.0.1.211:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE ks.t (p int, a int, b int, v int, PRIMARY KEY (p, a, b)) WITH CLUSTERING ORDER BY (a DESC, b ASC)`)
	for a := 1; a <= 3; a++ {
		for b := 1; b <= 2; b++ {
			exec(`INSERT INTO ks.t (p, a, b, v) VALUES (1, ?, ?, 0)`, a, b)
		}
	}
	left := func() (out [][2]int) {
		t.Helper()
		it := s.Query(`SELECT a, b FROM ks.t WHERE p = 1`).Iter()
		for a, b := 0, 0; it.Scan(&a, &b); {
			out = append(out, [2]int{a, b})
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	exec(`DELETE FROM ks.t WHERE p = 1 AND a > 1 AND a < 1`) // impossible
	exec(`DELETE FROM ks.t WHERE p = ? AND a = 3 AND b >= ?`, 1, 2)
	exec(`DELETE FROM ks.t WHERE p = 1 AND a = 2`) // a prefix
	if got, want := left(), [][2]int{{3, 1}, {1, 1}, {1, 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after deletes: %v, want %v", got, want)
	}
	exec(`DELETE FROM ks.t WHERE p = 1 AND a <= 1`)
	if got, want := left(), [][2]int{{3, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a <= 1: %v, want %v", got, want)
	}
	for q, want := range map[string]string{
		`DELETE v FROM ks.t WHERE p = 1 AND a > 1`: "Range deletions are not supported for specific columns",
		// Not a range: statement_restrictions.cc refuses the gap first.
		`DELETE v FROM ks.t WHERE p = 1 AND b = 1`: `PRIMARY KEY column "b" cannot be restricted as preceding column "a" is not restricted`,
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
}
