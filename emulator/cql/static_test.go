package cql_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// STATIC columns hold one value per partition. The semantics checked here
// are ScyllaDB's: system_schema.columns kind "static" (schema/schema.cc),
// SELECT * order pk, clustering, static, regular
// (schema::compute_all_columns_in_select_order), a partition with static
// cells but no rows shows one row with null clustering and regular columns
// unless the clustering key is restricted (cql3/selection/selection.hh
// accept_partition_end), statements that modify only static columns need
// no clustering key and refuse one (cql3/restrictions/
// statement_restrictions.cc), and CREATE TABLE's checks
// (cql3/statements/create_table_statement.cc).
func TestStaticColumns(t *testing.T) {
	_, s, exec := memorySession(t, "static", "127.0.1.43:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, s text STATIC, v text, PRIMARY KEY (p, c))`)

	var kind string
	var pos int
	if err := s.Query(`SELECT kind, position FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 't' AND column_name = 's'`).Scan(&kind, &pos); err != nil {
		t.Fatal(err)
	}
	if kind != "static" || pos != -1 {
		t.Errorf("system_schema.columns for s: kind %q position %d, want static -1", kind, pos)
	}

	exec(`INSERT INTO ks.t (p, c, s, v) VALUES (1, 1, 'first', 'a')`)
	exec(`INSERT INTO ks.t (p, c, s, v) VALUES (1, 2, 'second', 'b')`)
	rows := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 1`)
	want := []map[string]any{
		{"p": 1, "c": 1, "s": "second", "v": "a"},
		{"p": 1, "c": 2, "s": "second", "v": "b"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows after two inserts: %v, want one static value %v", rows, want)
	}
	iter := s.Query(`SELECT * FROM ks.t WHERE p = 1`).Iter()
	var names []string
	for _, c := range iter.Columns() {
		names = append(names, c.Name)
	}
	iter.Close()
	if strings.Join(names, ",") != "p,c,s,v" {
		t.Errorf("SELECT * columns %v, want p,c,s,v", names)
	}

	// Only the static column: no clustering key needed, and none allowed.
	exec(`UPDATE ks.t SET s = 'third' WHERE p = 1`)
	if err := s.Query(`UPDATE ks.t SET s = 'x' WHERE p = 1 AND c = 1`).Exec(); err == nil ||
		!strings.Contains(err.Error(), "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns") {
		t.Errorf("UPDATE of a static column with a clustering key: %v", err)
	}
	if got := selectAll(t, s, `SELECT s FROM ks.t WHERE p = 1 AND c = 2`); !reflect.DeepEqual(got, []map[string]any{{"s": "third"}}) {
		t.Errorf("static value through one row: %v", got)
	}

	// A partition with only static cells shows one row, except when the
	// clustering key is restricted.
	exec(`INSERT INTO ks.t (p, s) VALUES (2, 'alone')`)
	if got := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 2`); !reflect.DeepEqual(got, []map[string]any{{"p": 2, "c": 0, "s": "alone", "v": ""}}) {
		t.Errorf("static-only partition: %v", got)
	}
	if got := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 2 AND c = 1`); len(got) != 0 {
		t.Errorf("static-only partition with a clustering restriction: %v, want none", got)
	}
	var c *int
	if err := s.Query(`SELECT c FROM ks.t WHERE p = 2`).Scan(&c); err != nil || c != nil {
		t.Errorf("clustering column of a static-only row: %v %v, want null", c, err)
	}
	// A scan shows both partitions, each with its static value.
	scan := selectAll(t, s, `SELECT p, c, s FROM ks.t`)
	if len(scan) != 3 {
		t.Fatalf("scan: %v, want 3 rows", scan)
	}
	for _, r := range scan {
		if (r["p"] == 1 && r["s"] != "third") || (r["p"] == 2 && r["s"] != "alone") {
			t.Errorf("scan row %v has another partition's static value", r)
		}
	}
	// Paging through one partition keeps the static value on every page.
	it := s.Query(`SELECT c, s FROM ks.t WHERE p = 1`).PageSize(1).Iter()
	var ci int
	var sv string
	n := 0
	for it.Scan(&ci, &sv) {
		n++
		if sv != "third" {
			t.Errorf("page %d: static %q", n, sv)
		}
	}
	if err := it.Close(); err != nil || n != 2 {
		t.Errorf("paged read: %d rows, %v", n, err)
	}

	// Deleting a row keeps the static value; deleting the static column
	// keeps the rows; deleting the partition removes both.
	exec(`DELETE FROM ks.t WHERE p = 1 AND c = 1`)
	if got := selectAll(t, s, `SELECT c, s FROM ks.t WHERE p = 1`); !reflect.DeepEqual(got, []map[string]any{{"c": 2, "s": "third"}}) {
		t.Errorf("after deleting a row: %v", got)
	}
	exec(`DELETE s FROM ks.t WHERE p = 1`)
	if got := selectAll(t, s, `SELECT c, s FROM ks.t WHERE p = 1`); !reflect.DeepEqual(got, []map[string]any{{"c": 2, "s": ""}}) {
		t.Errorf("after deleting the static column: %v", got)
	}
	exec(`DELETE s FROM ks.t WHERE p = 2`)
	if got := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 2`); len(got) != 0 {
		t.Errorf("static-only partition after deleting its static value: %v", got)
	}
	exec(`DELETE FROM ks.t WHERE p = 1`)
	if got := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 1`); len(got) != 0 {
		t.Errorf("after deleting the partition: %v", got)
	}

	for q, msg := range map[string]string{
		`CREATE TABLE ks.bad1 (p int PRIMARY KEY, s int STATIC)`:                                     "Static columns are only useful (and thus allowed) if the table has at least one clustering column",
		`CREATE TABLE ks.bad2 (p int, c int STATIC, PRIMARY KEY (p, c))`:                             "Static column c cannot be part of the PRIMARY KEY",
		`CREATE TABLE ks.bad3 (p int, c int, s int STATIC, PRIMARY KEY (p, c)) WITH COMPACT STORAGE`: "Static columns are not supported in COMPACT STORAGE tables",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}

// selectAll returns a query's rows as maps (gocql's zero values for nulls).
func selectAll(t *testing.T, s *gocql.Session, q string) []map[string]any {
	t.Helper()
	rows, err := s.Query(q).Iter().SliceMap()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if rows == nil {
		rows = []map[string]any{}
	}
	return rows
}
