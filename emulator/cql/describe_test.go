package cql_test

import (
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// descRows runs a DESCRIBE and returns its rows as maps.
func descRows(t *testing.T, s *gocql.Session, q string) []map[string]any {
	t.Helper()
	rows, err := s.Query(q).Iter().SliceMap()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

// DESCRIBE TABLE prints schema::get_create_statement (schema/schema.cc):
// columns in schema order with STATIC, the key, the clustering order and
// schema_properties in ScyllaDB's order and format; DESC TYPE prints
// user_type_impl::describe (types/types.cc); the rows are those of
// cql3/description.cc with names maybe-quoted.
func TestDescribeTableAndType(t *testing.T) {
	_, s, exec := memorySession(t, "describe", "127.0.1.90:0")
	exec(`CREATE KEYSPACE "Quoted_KS" WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE TYPE "Quoted_KS".addr (street text, "Zip" int)`)
	exec(`CREATE TABLE "Quoted_KS"."Tbl" (p int, c text, s int STATIC, v int, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC) AND comment = 'it''s' AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}`)
	rows := descRows(t, s, `DESC TABLE "Quoted_KS"."Tbl"`)
	want := "CREATE TABLE \"Quoted_KS\".\"Tbl\" (\n    p int,\n    c text,\n    s int STATIC,\n    v int,\n    PRIMARY KEY (p, c)\n) WITH CLUSTERING ORDER BY (c DESC)\n" +
		"    AND bloom_filter_fp_chance = 0.01\n    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}\n    AND comment = 'it''s'\n" +
		"    AND compaction = {'class': 'SizeTieredCompactionStrategy'}\n    AND compression = {'sstable_compression': 'org.apache.cassandra.io.compress.LZ4Compressor'}\n" +
		"    AND crc_check_chance = 1\n    AND default_time_to_live = 0\n    AND gc_grace_seconds = 864000\n    AND max_index_interval = 2048\n" +
		"    AND memtable_flush_period_in_ms = 0\n    AND min_index_interval = 128\n    AND speculative_retry = '99.0PERCENTILE'\n" +
		"    AND tombstone_gc = {'mode': 'repair', 'propagation_delay_in_seconds': '3600'};\n"
	if len(rows) != 1 || rows[0]["keyspace_name"] != `"Quoted_KS"` || rows[0]["type"] != "table" || rows[0]["name"] != `"Tbl"` || rows[0]["create_statement"] != want {
		t.Errorf("DESC TABLE: %q\nwant create_statement %q", rows, want)
	}
	rows = descRows(t, s, `DESC TYPE "Quoted_KS".addr`)
	if wantType := "CREATE TYPE \"Quoted_KS\".addr (\n    street text,\n    \"Zip\" int\n);"; len(rows) != 1 || rows[0]["create_statement"] != wantType {
		t.Errorf("DESC TYPE: %q\nwant %q", rows, wantType)
	}
	if err := s.Query(`DESC TABLE "Quoted_KS".nope`).Exec(); err == nil || !strings.Contains(err.Error(), "Table 'nope' not found in keyspace 'Quoted_KS'") {
		t.Errorf("DESC TABLE of a missing table: %v", err)
	}
	if err := s.Query(`DESC TYPE nope`).Exec(); err == nil || !strings.Contains(err.Error(), "No keyspace specified and no current keyspace") {
		t.Errorf("DESC TYPE without a keyspace: %v", err)
	}
}

// Listings (DESC KEYSPACES/TABLES/TYPES) have three columns and no create
// statement; DESC KEYSPACE lists the keyspace, its types and tables, ONLY
// KEYSPACE the keyspace alone, DESC SCHEMA the user keyspaces and FULL
// SCHEMA the system ones too; DESC name is the generic describe
// (cql3/statements/describe_statement.cc).
func TestDescribeListingsAndSchema(t *testing.T) {
	_, s, exec := memorySession(t, "describe", "127.0.1.91:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE TYPE ks.inner_t (a int)`)
	exec(`CREATE TYPE ks.a_outer (i frozen<inner_t>)`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v frozen<a_outer>)`)
	var got []string
	for _, r := range descRows(t, s, `DESC KEYSPACE ks`) {
		got = append(got, r["type"].(string)+":"+r["name"].(string))
	}
	if want := "keyspace:ks type:inner_t type:a_outer table:t"; strings.Join(got, " ") != want {
		t.Errorf("DESC KEYSPACE ks: %v, want %s (types a type uses first)", got, want)
	}
	if rows := descRows(t, s, `DESC ONLY KEYSPACE ks`); len(rows) != 1 || rows[0]["type"] != "keyspace" {
		t.Errorf("DESC ONLY KEYSPACE: %v", rows)
	}
	if rows := descRows(t, s, `DESC ks`); len(rows) != 4 {
		t.Errorf("DESC ks (generic): %v", rows)
	}
	tables := descRows(t, s, `DESC TABLES`)
	found := map[string]bool{}
	for _, r := range tables {
		if _, has := r["create_statement"]; has {
			t.Fatalf("DESC TABLES has a create_statement column: %v", r)
		}
		found[r["keyspace_name"].(string)+"."+r["name"].(string)] = true
	}
	if !found["ks.t"] || !found["system.local"] {
		t.Errorf("DESC TABLES lacks ks.t or system.local: %v", tables)
	}
	schema := descRows(t, s, `DESC SCHEMA`)
	full := descRows(t, s, `DESC FULL SCHEMA`)
	if len(schema) != 4 || len(full) <= len(schema) {
		t.Errorf("DESC SCHEMA has %d rows (want 4), FULL SCHEMA %d", len(schema), len(full))
	}
	if err := s.Query(`DESC TABLE ks.t WITH INTERNALS AND PASSWORDS`).Exec(); err == nil || !strings.Contains(err.Error(), "Option WITH PASSWORDS is only allowed with DESC SCHEMA") {
		t.Errorf("WITH PASSWORDS on DESC TABLE: %v", err)
	}
}

// DESC TABLE lists the table, its indexes and its views (describe_statement.cc
// table()); DESC INDEX prints describe_index_columns' target forms
// (schema/schema.cc); views print as CREATE MATERIALIZED VIEW ... AS SELECT.
func TestDescribeIndexesAndViews(t *testing.T) {
	_, s, exec := memorySession(t, "describe", "127.0.1.94:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE TABLE ks.t (a int PRIMARY KEY, b int, c int, f set<int>)`)
	exec(`CREATE INDEX ON ks.t(b)`)
	exec(`CREATE INDEX named ON ks.t(c)`)
	exec(`CREATE INDEX fi ON ks.t(f)`)
	exec(`CREATE INDEX loc ON ks.t((a), b)`)
	exec(`CREATE MATERIALIZED VIEW ks.mv AS SELECT * FROM ks.t WHERE b IS NOT NULL AND a IS NOT NULL PRIMARY KEY (b, a)`)
	var got []string
	for _, r := range descRows(t, s, `DESC TABLE ks.t`) {
		stmt := r["create_statement"].(string)
		got = append(got, r["type"].(string)+":"+stmt[:strings.Index(stmt, " WITH")])
	}
	want := []string{"table:CREATE TABLE ks.t (\n    a int,\n    b int,\n    c int,\n    f set<int>,\n    PRIMARY KEY (a)\n)",
		"index:CREATE INDEX fi ON ks.t(values(f))", "index:CREATE INDEX loc ON ks.t((a), b)",
		"index:CREATE INDEX named ON ks.t(c)", "index:CREATE INDEX t_b_idx ON ks.t(b)",
		"view:CREATE MATERIALIZED VIEW ks.mv AS\n    SELECT *\n    FROM ks.t\n    WHERE b IS NOT null AND a IS NOT null\n    PRIMARY KEY (b, a)\n   "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("DESC TABLE ks.t:\n%q\nwant\n%q", got, want)
	}
	if rows := descRows(t, s, `DESC INDEX ks.named`); len(rows) != 1 || rows[0]["name"] != "named" || rows[0]["type"] != "index" {
		t.Errorf("DESC INDEX ks.named: %v", rows)
	}
	if err := s.Query(`DESC INDEX ks.t`).Exec(); err == nil || !strings.Contains(err.Error(), "Table for existing index 't' not found in 'ks'") {
		t.Errorf("DESC INDEX of a table: %v", err)
	}
	if err := s.Query(`DESC TABLE ks.mv`).Exec(); err == nil || !strings.Contains(err.Error(), "Cannot use DESC TABLE on materialized View") {
		t.Errorf("DESC TABLE of a view: %v", err)
	}
	if rows := descRows(t, s, `DESC ks.mv`); len(rows) != 1 || rows[0]["type"] != "view" {
		t.Errorf("DESC ks.mv (generic): %v", rows)
	}
	for _, r := range descRows(t, s, `DESC TABLES`) {
		if r["name"] == "mv" {
			t.Errorf("DESC TABLES lists the view: %v", r)
		}
	}
}

// A user type may be named with its keyspace (Cql.g userTypeName), as the
// statements DESCRIBE prints do; a type of another keyspace is refused.
func TestQualifiedUserTypeNames(t *testing.T) {
	_, s, exec := memorySession(t, "describe", "127.0.1.95:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE KEYSPACE other WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE TYPE ks.a (x int)`)
	exec(`CREATE TYPE other.a (x int)`)
	exec(`CREATE TYPE ks.b (y frozen<ks.a>)`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v frozen<ks.b>)`)
	if err := s.Query(`CREATE TABLE ks.u (p int PRIMARY KEY, v frozen<other.a>)`).Exec(); err == nil {
		t.Error("a user type of another keyspace was accepted")
	}
	rows := descRows(t, s, `DESC TYPE ks.b`)
	if want := "CREATE TYPE ks.b (\n    y frozen<a>\n);"; len(rows) != 1 || rows[0]["create_statement"] != want {
		t.Errorf("DESC TYPE ks.b: %v, want %q", rows, want)
	}
}

// CREATE INDEX ... WITH properties are the backing view's and come back in
// DESC INDEX (create_index_statement.cc, schema.cc schema_properties), with
// WITH ID's id under WITH INTERNALS only.
func TestDescribeIndexProperties(t *testing.T) {
	_, s, exec := memorySession(t, "describe", "127.0.1.96:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v int)`)
	exec(`CREATE INDEX i ON ks.t(v) WITH ID = 018ad550-b25d-09d0-7e90-ea5438411dc7 AND gc_grace_seconds = 13 AND caching = {'keys': 'NONE', 'rows_per_partition': 'NONE'} AND synchronous_updates = true`)
	want := "CREATE INDEX i ON ks.t(v) WITH ID = 018ad550-b25d-09d0-7e90-ea5438411dc7\n    AND bloom_filter_fp_chance = 0.01\n" +
		"    AND caching = {'keys': 'NONE', 'rows_per_partition': 'NONE'}\n    AND comment = ''\n    AND compaction = {'class': 'SizeTieredCompactionStrategy'}\n" +
		"    AND compression = {'sstable_compression': 'org.apache.cassandra.io.compress.LZ4Compressor'}\n    AND crc_check_chance = 1\n" +
		"    AND default_time_to_live = 0\n    AND gc_grace_seconds = 13\n    AND max_index_interval = 2048\n    AND memtable_flush_period_in_ms = 0\n" +
		"    AND min_index_interval = 128\n    AND speculative_retry = '99.0PERCENTILE'\n" +
		"    AND tombstone_gc = {'mode': 'repair', 'propagation_delay_in_seconds': '3600'}\n    AND synchronous_updates = true;\n"
	if rows := descRows(t, s, `DESC INDEX ks.i WITH INTERNALS`); len(rows) != 1 || rows[0]["create_statement"] != want {
		t.Errorf("DESC INDEX WITH INTERNALS: %q\nwant %q", rows, want)
	}
	if rows := descRows(t, s, `DESC INDEX ks.i`); len(rows) != 1 || strings.Contains(rows[0]["create_statement"].(string), "ID =") {
		t.Errorf("DESC INDEX without internals shows the id: %q", rows)
	}
}

// DESC CLUSTER: cluster, partitioner and snitch, and with a vnode keyspace
// in use the range ownership, the replicas of each range by its end token
// (describe_statement.cc cluster_describe_statement).
func TestDescribeCluster(t *testing.T) {
	hp, s, exec := memorySession(t, "describe-cluster", "127.0.1.97:0")
	exec(`CREATE KEYSPACE v WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND tablets = {'enabled': false}`)
	row := map[string]any{}
	if err := s.Query(`DESC CLUSTER`).MapScan(row); err != nil {
		t.Fatal(err)
	}
	if row["cluster"] != "describe-cluster" || row["partitioner"] != "org.apache.cassandra.dht.Murmur3Partitioner" || len(row) != 3 {
		t.Errorf("DESC CLUSTER without a keyspace: %v", row)
	}
	vs := newSession(t, hp, "v")
	row = map[string]any{}
	if err := vs.Query(`DESC CLUSTER`).MapScan(row); err != nil {
		t.Fatal(err)
	}
	own, _ := row["range_ownership"].(map[string][]string)
	host, _, _ := strings.Cut(hp, ":")
	if len(own) == 0 {
		t.Fatalf("DESC CLUSTER in a vnode keyspace: no range_ownership: %v", row)
	}
	for end, eps := range own {
		if len(eps) != 1 || eps[0] != host {
			t.Errorf("range ending %s owned by %v, want [%s]", end, eps, host)
		}
	}
}

// Names that are reserved keywords, or not [a-z][a-z0-9_]*, are quoted in
// what DESCRIBE prints (cql3/cql3_type.cc maybe_quote), so that the
// statement runs again.
func TestDescribeQuotesKeywords(t *testing.T) {
	_, s, exec := memorySession(t, "describe", "127.0.1.98:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`)
	exec(`CREATE TABLE ks."table" ("select" int PRIMARY KEY, "x""y" int, "_u" int, desc int)`)
	rows := descRows(t, s, `DESC TABLE ks."table"`)
	stmt, _ := rows[0]["create_statement"].(string)
	for _, want := range []string{`CREATE TABLE ks."table" (`, `"select" int,`, `"x""y" int,`, `"_u" int,`, "desc int,", `PRIMARY KEY ("select")`} {
		if !strings.Contains(stmt, want) {
			t.Errorf("DESC TABLE lacks %s:\n%s", want, stmt)
		}
	}
	exec(strings.Replace(stmt, `ks."table"`, `ks.again`, 1))
}
