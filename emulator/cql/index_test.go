package cql_test

import (
	"strings"
	"testing"
)

// CREATE INDEX and DROP INDEX as cql3/statements/create_index_statement.cc
// and drop_index_statement.cc: default names (schema/schema.cc
// get_default_index_name), targets as index/secondary_index.cc
// serialize_targets writes them into system_schema.indexes, IF [NOT]
// EXISTS and ScyllaDB's refusals.
func TestCreateDropIndex(t *testing.T) {
	_, s, exec := memorySession(t, "index", "127.0.1.80:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v int, "Odd" int, m map<int, int>, l list<int>, st set<int>, PRIMARY KEY (p, c))`)
	exec(`CREATE INDEX ON ks.t (v)`)
	exec(`CREATE INDEX IF NOT EXISTS ON ks.t (v)`)
	exec(`CREATE INDEX named ON ks.t (c)`)
	exec(`CREATE INDEX ON ks.t ("Odd")`)
	exec(`CREATE INDEX ON ks.t (keys(m))`)
	exec(`CREATE INDEX ON ks.t (m)`)
	exec(`CREATE INDEX ON ks.t (entries(m))`)
	exec(`CREATE INDEX ON ks.t (l)`)
	exec(`CREATE INDEX ON ks.t (st)`)
	exec(`CREATE INDEX loc ON ks.t ((p), v)`)
	want := map[string]string{
		"t_v_idx": "v", "named": "c", "t_Odd_idx": `"Odd"`, "t_m_idx": "keys(m)", "t_m_idx_1": "values(m)",
		"t_m_idx_2": "entries(m)", "t_l_idx": "values(l)", "t_st_idx": "keys(st)", "loc": `{"pk":["p"],"ck":["v"]}`,
	}
	iter := s.Query(`SELECT index_name, kind, options FROM system_schema.indexes WHERE keyspace_name = 'ks' AND table_name = 't'`).Iter()
	var name, kind string
	var opts map[string]string
	got := map[string]string{}
	for iter.Scan(&name, &kind, &opts) {
		if kind != "COMPOSITES" {
			t.Errorf("index %s kind %q", name, kind)
		}
		got[name] = opts["target"]
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for n, target := range want {
		if got[n] != target {
			t.Errorf("index %s: target %q, want %q (all: %v)", n, got[n], target, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
	var idxName, status string
	if err := s.Query(`SELECT index_name FROM system."IndexInfo" WHERE table_name = 'ks' AND index_name = 'named'`).Scan(&idxName); err != nil || idxName != "named" {
		t.Errorf("system.IndexInfo: %q %v", idxName, err)
	}
	if err := s.Query(`SELECT status FROM system_distributed.view_build_status WHERE keyspace_name = 'ks' AND view_name = 'named_index'`).Scan(&status); err != nil || status != "SUCCESS" {
		t.Errorf("view_build_status: %q %v", status, err)
	}
	exec(`DROP INDEX ks.t_m_idx_2`)
	exec(`DROP INDEX IF EXISTS ks.t_m_idx_2`)
	exec(`CREATE KEYSPACE vk WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE vk.c (p int PRIMARY KEY, n counter)`)
	for q, msg := range map[string]string{
		`CREATE INDEX ON ks.t (v)`:                                  "Index t_v_idx_1 is a duplicate of existing index t_v_idx",
		`CREATE INDEX named ON ks.t (l)`:                            "Index already exists",
		`CREATE INDEX ON ks.t (p)`:                                  "Cannot create secondary index on partition key column p",
		`CREATE INDEX ON ks.t (keys(l))`:                            "Cannot create secondary index on keys of column l with non-map type",
		`CREATE INDEX ON ks.t (full(m))`:                            "full() indexes can only be created on frozen collections",
		`CREATE INDEX ON ks.t (keys(v))`:                            "Cannot create index on keys of column v; only non-frozen collections support keys indexes",
		`CREATE INDEX ON ks.t (nope)`:                               "No column definition found for column nope",
		`CREATE INDEX ON vk.c (n)`:                                  "Secondary indexes are not supported on counter tables",
		`CREATE INDEX ON ks.t ((c), v)`:                             "Local index definition must contain full partition key only. Redundant column: c",
		`CREATE INDEX ON ks.t ((p))`:                                "Local index definition must provide an indexed column, not just partition key",
		`CREATE INDEX ON ks.t ((p), m)`:                             "Local secondary index on collection column m is not implemented yet.",
		`CREATE INDEX ON ks.missing (v)`:                            "unconfigured table missing",
		`DROP INDEX ks.nope`:                                        "Index 'nope' could not be found in any of the tables of keyspace 'ks'",
		`CREATE INDEX ` + strings.Repeat("x", 193) + ` ON ks.t (v)`: "index names shouldn't be more than 192 characters long",
		`CREATE FUNCTION ks.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS 'return a'`: "User defined functions are disabled",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}

// A query restricted by an indexed column needs no ALLOW FILTERING
// (cql3/restrictions/statement_restrictions.cc uses the index); another
// non-key restriction still does; a local index serves a query that
// restricts the whole partition key. Paging goes through all matches.
func TestIndexedQuery(t *testing.T) {
	_, s, exec := memorySession(t, "indexq", "127.0.1.83:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v int, w int, PRIMARY KEY (p, c))`)
	for p := 0; p < 10; p++ {
		for c := 0; c < 3; c++ {
			exec(`INSERT INTO ks.t (p, c, v, w) VALUES (?, ?, ?, ?)`, p, c, c, p)
		}
	}
	q := `SELECT p, c FROM ks.t WHERE v = 1`
	if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), "ALLOW FILTERING") {
		t.Fatalf("without an index: %v", err)
	}
	exec(`CREATE INDEX ON ks.t (v)`)
	exec(`CREATE INDEX wl ON ks.t ((p), w)`)
	iter := s.Query(q).PageSize(4).Iter()
	var p, c, n int
	for iter.Scan(&p, &c) {
		if c != 1 {
			t.Errorf("row %d,%d for v = 1", p, c)
		}
		n++
	}
	if err := iter.Close(); err != nil || n != 10 {
		t.Errorf("v = 1 over pages of 4: %d rows, %v", n, err)
	}
	if got := selectAll(t, s, `SELECT c FROM ks.t WHERE p = 3 AND w = 3`); len(got) != 3 {
		t.Errorf("local index p = 3 AND w = 3: %v", got)
	}
	if got := selectAll(t, s, `SELECT c FROM ks.t WHERE v = null`); len(got) != 0 {
		t.Errorf("indexed v = null: %v", got)
	}
	for q, msg := range map[string]string{
		`ALTER TABLE ks.t DROP v`:                   "Cannot drop column v from base table ks.t: materialized view t_v_idx_index needs this column",
		`CREATE INDEX IF NOT EXISTS wl ON ks.t (c)`: "Index wl cannot be created, because table wl_index already exists",
		`SELECT * FROM ks.t WHERE v = 1 AND w = 2`:  "ALLOW FILTERING",
		`SELECT * FROM ks.t WHERE w = 2`:            "ALLOW FILTERING",
		`SELECT * FROM ks.t WHERE v > 1`:            "ALLOW FILTERING",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}

// CONTAINS and CONTAINS KEY restrict collections (cql3/expr/prepare_expr.cc
// types their values); they filter with ALLOW FILTERING, and an index on
// the collection's values, a set's elements or a map's keys answers them
// without.
func TestContains(t *testing.T) {
	_, s, exec := memorySession(t, "contains", "127.0.1.85:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, l list<int>, st set<text>, m map<text, int>, v int)`)
	exec(`INSERT INTO ks.t (p, l, st, m, v) VALUES (1, [1, 2], {'a'}, {'x': 10}, 0)`)
	exec(`INSERT INTO ks.t (p, l, st, m, v) VALUES (2, [2, 3], {'b'}, {'y': 20}, 0)`)
	count := func(q string) int {
		t.Helper()
		return len(selectAll(t, s, q))
	}
	if n := count(`SELECT * FROM ks.t WHERE l CONTAINS 2 ALLOW FILTERING`); n != 2 {
		t.Errorf("l CONTAINS 2: %d rows", n)
	}
	if n := count(`SELECT * FROM ks.t WHERE m CONTAINS KEY 'y' ALLOW FILTERING`); n != 1 {
		t.Errorf("m CONTAINS KEY 'y': %d rows", n)
	}
	if n := count(`SELECT * FROM ks.t WHERE m CONTAINS 10 ALLOW FILTERING`); n != 1 {
		t.Errorf("m CONTAINS 10: %d rows", n)
	}
	if err := s.Query(`SELECT * FROM ks.t WHERE l CONTAINS 3`).Exec(); err == nil || !strings.Contains(err.Error(), "ALLOW FILTERING") {
		t.Errorf("CONTAINS without an index or ALLOW FILTERING: %v", err)
	}
	exec(`CREATE INDEX ON ks.t (l)`)
	exec(`CREATE INDEX ON ks.t (st)`)
	exec(`CREATE INDEX ON ks.t (keys(m))`)
	if n := count(`SELECT * FROM ks.t WHERE l CONTAINS 3`); n != 1 {
		t.Errorf("indexed l CONTAINS 3: %d rows", n)
	}
	if n := count(`SELECT * FROM ks.t WHERE st CONTAINS 'a'`); n != 1 {
		t.Errorf("indexed st CONTAINS 'a': %d rows", n)
	}
	if n := count(`SELECT * FROM ks.t WHERE m CONTAINS KEY 'x'`); n != 1 {
		t.Errorf("indexed m CONTAINS KEY 'x': %d rows", n)
	}
	for q, msg := range map[string]string{
		`SELECT * FROM ks.t WHERE m CONTAINS 10`:                    "ALLOW FILTERING",
		`SELECT * FROM ks.t WHERE v CONTAINS 1 ALLOW FILTERING`:     `Cannot use CONTAINS on non-collection column "v"`,
		`SELECT * FROM ks.t WHERE l CONTAINS KEY 1 ALLOW FILTERING`: "Cannot use CONTAINS KEY on non-map column l",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}
