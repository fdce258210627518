package cql_test

import (
	"strings"
	"testing"
)

// CREATE, ALTER and DROP MATERIALIZED VIEW as
// cql3/statements/create_view_statement.cc, alter_view_statement.cc and
// service/migration_manager.cc check them; system_schema.views shows the
// view with its base and WHERE clause.
func TestMaterializedViewDDL(t *testing.T) {
	_, s, exec := memorySession(t, "views", "127.0.1.81:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v int, w text, PRIMARY KEY (p, c))`)
	exec(`CREATE MATERIALIZED VIEW ks.mv AS SELECT * FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, p, c) WITH CLUSTERING ORDER BY (p DESC) AND comment = 'x'`)
	exec(`CREATE MATERIALIZED VIEW IF NOT EXISTS ks.mv AS SELECT * FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, p, c)`)
	var base, where, comment string
	var all bool
	if err := s.Query(`SELECT base_table_name, where_clause, include_all_columns, comment FROM system_schema.views WHERE keyspace_name = 'ks' AND view_name = 'mv'`).Scan(&base, &where, &all, &comment); err != nil {
		t.Fatal(err)
	}
	if base != "t" || where != "v IS NOT null AND c IS NOT null" || !all || comment != "x" {
		t.Errorf("system_schema.views: %q %q %v %q", base, where, all, comment)
	}
	var n int
	if err := s.Query(`SELECT count(*) FROM system_schema.tables WHERE keyspace_name = 'ks' AND table_name = 'mv'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the view in system_schema.tables: %d %v", n, err)
	}
	var kind string
	if err := s.Query(`SELECT kind FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 'mv' AND column_name = 'v'`).Scan(&kind); err != nil || kind != "partition_key" {
		t.Errorf("the view's column v: %q %v", kind, err)
	}
	exec(`ALTER MATERIALIZED VIEW ks.mv WITH comment = 'y'`)
	exec(`ALTER TABLE ks.t ADD x int`)
	if err := s.Query(`SELECT kind FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 'mv' AND column_name = 'x'`).Scan(&kind); err != nil || kind != "regular" {
		t.Errorf("a column added to the base of a SELECT * view: %q %v", kind, err)
	}
	for q, msg := range map[string]string{
		`DROP TABLE ks.t`:             "Cannot drop table when materialized views still depend on it (ks.{mv})",
		`DROP TABLE ks.mv`:            "Cannot use DROP TABLE on Materialized View",
		`DROP MATERIALIZED VIEW ks.t`: "Cannot use DROP MATERIALIZED VIEW on Table",
		`CREATE MATERIALIZED VIEW ks.mv2 AS SELECT * FROM ks.t WHERE v IS NOT NULL PRIMARY KEY (v, p, c)`:                                          "Primary key column 'c' is required to be filtered by 'IS NOT NULL'",
		`CREATE MATERIALIZED VIEW ks.mv2 AS SELECT * FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, c)`:                           "Cannot create Materialized View mv2 without primary key columns from base t (p)",
		`CREATE MATERIALIZED VIEW ks.mv2 AS SELECT * FROM ks.t WHERE v IS NOT NULL AND w IS NOT NULL AND c IS NOT NULL PRIMARY KEY ((v, w), p, c)`: "Cannot include more than one non-primary key column 'w' in materialized view primary key",
		`CREATE MATERIALIZED VIEW ks.mv2 AS SELECT v AS x FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, p, c)`:                   "Cannot use alias when defining a materialized view",
		`CREATE MATERIALIZED VIEW ks.mv2 AS SELECT * FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL AND w = 'a' PRIMARY KEY (v, p, c)`:            "Non-primary key columns cannot be restricted in the SELECT statement used for materialized view mv2 creation (got restrictions on: w)",
		`CREATE MATERIALIZED VIEW ks.mv AS SELECT * FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, p, c)`:                         `Cannot add already existing table "mv" to keyspace "ks"`,
		`CREATE INDEX ON ks.mv (w)`:                       "Secondary indexes are not supported on materialized views",
		`ALTER MATERIALIZED VIEW ks.t WITH comment = 'z'`: "Cannot use ALTER MATERIALIZED VIEW on Table",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
	exec(`DROP MATERIALIZED VIEW ks.mv`)
	exec(`DROP MATERIALIZED VIEW IF EXISTS ks.mv`)
	exec(`DROP TABLE ks.t`)
}

// A view's rows follow its base table's writes, updates and deletes (the
// emulator derives them from the base at read time; db/view/view.cc
// keeps them in step on every write), in the view's key order; a view
// cannot be written directly (modification_statement.cc).
func TestMaterializedViewReads(t *testing.T) {
	_, s, exec := memorySession(t, "viewread", "127.0.1.84:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v int, w text, PRIMARY KEY (p, c))`)
	exec(`CREATE MATERIALIZED VIEW ks.mv AS SELECT p, c, v FROM ks.t WHERE v IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, p, c) WITH CLUSTERING ORDER BY (p DESC)`)
	for p := 1; p <= 3; p++ {
		exec(`INSERT INTO ks.t (p, c, v, w) VALUES (?, 0, 7, 'x')`, p)
	}
	exec(`INSERT INTO ks.t (p, c, w) VALUES (9, 0, 'no v')`)
	got := selectAll(t, s, `SELECT p FROM ks.mv WHERE v = 7`)
	if len(got) != 3 || got[0]["p"] != 3 || got[2]["p"] != 1 {
		t.Errorf("view partition v = 7 (p DESC): %v", got)
	}
	exec(`UPDATE ks.t SET v = 8 WHERE p = 2 AND c = 0`)
	exec(`DELETE FROM ks.t WHERE p = 3 AND c = 0`)
	if got := selectAll(t, s, `SELECT p FROM ks.mv WHERE v = 7`); len(got) != 1 || got[0]["p"] != 1 {
		t.Errorf("after the update and delete, v = 7: %v", got)
	}
	if got := selectAll(t, s, `SELECT * FROM ks.mv`); len(got) != 2 || len(got[0]) != 3 {
		t.Errorf("whole view: %v", got)
	}
	// A view keyed by the base key alone keeps the unselected columns as
	// virtual columns (create_view_statement.cc): w cannot be dropped.
	exec(`CREATE MATERIALIZED VIEW ks.mv2 AS SELECT p, c FROM ks.t WHERE c IS NOT NULL PRIMARY KEY (p, c)`)
	for q, msg := range map[string]string{
		`ALTER TABLE ks.t DROP w`:                      "Cannot drop column w from base table ks.t: materialized view mv2 needs this column",
		`INSERT INTO ks.mv (v, p, c) VALUES (1, 1, 1)`: "Cannot directly modify a materialized view",
		`TRUNCATE ks.mv`:                               "Cannot TRUNCATE materialized view directly; must truncate base table instead",
		`ALTER TABLE ks.mv WITH comment = 'x'`:         "Cannot use ALTER TABLE on Materialized View",
		`ALTER TABLE ks.t DROP v`:                      "Cannot drop column v from base table ks.t: materialized view mv needs this column",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}
