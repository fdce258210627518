package cql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// ALTER TABLE ADD, DROP and WITH with cql3/statements/
// alter_table_statement.cc's checks; a prepared SELECT of the table is
// prepared again after the change (UNPREPARED, as ScyllaDB drops a
// table's prepared statements with its old schema).
func TestAlterTable(t *testing.T) {
	_, s, exec := memorySession(t, "alter", "127.0.1.52:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v text, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.t (p, c, v) VALUES (1, 1, 'a')`)
	if got := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 1`); len(got) != 1 || len(got[0]) != 3 {
		t.Fatalf("before ALTER: %v", got)
	}
	exec(`ALTER TABLE ks.t ADD (w int, s text static)`)
	exec(`INSERT INTO ks.t (p, c, v, w, s) VALUES (1, 2, 'b', 7, 'st')`)
	got := selectAll(t, s, `SELECT * FROM ks.t WHERE p = 1`)
	if len(got) != 2 || len(got[0]) != 5 || got[1]["w"] != 7 || got[0]["s"] != "st" {
		t.Errorf("after ADD, the prepared SELECT *: %v", got)
	}
	exec(`ALTER TABLE ks.t DROP v`)
	got = selectAll(t, s, `SELECT * FROM ks.t WHERE p = 1`)
	if len(got) != 2 || len(got[0]) != 4 || got[0]["v"] != nil {
		t.Errorf("after DROP v: %v", got)
	}
	exec(`ALTER TABLE ks.t WITH comment = 'altered' AND gc_grace_seconds = 5`)
	var comment string
	var grace int
	if err := s.Query(`SELECT comment, gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = 'ks' AND table_name = 't'`).Scan(&comment, &grace); err != nil || comment != "altered" || grace != 5 {
		t.Errorf("options after ALTER WITH: %q %d %v", comment, grace, err)
	}
	for q, msg := range map[string]string{
		`ALTER TABLE ks.t ADD c int`:       "Invalid column name c because it conflicts with a PRIMARY KEY part",
		`ALTER TABLE ks.t ADD w text`:      "Invalid column name w because it conflicts with an existing column",
		`ALTER TABLE ks.t DROP p`:          "Cannot drop PRIMARY KEY part p",
		`ALTER TABLE ks.t DROP nope`:       "Column nope was not found in table t",
		`ALTER TABLE ks.t ADD n counter`:   "Cannot add a counter column (n) in a non counter column family",
		`ALTER TABLE ks.missing ADD x int`: "unconfigured table missing",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}

// ALTER KEYSPACE (alter_keyspace_statement.cc): vnode keyspaces change
// replication and durable_writes; a keyspace stays vnodes or tablets; the
// emulator refuses to change a tablets keyspace's replication.
func TestAlterKeyspace(t *testing.T) {
	_, s, exec := memorySession(t, "alterks", "127.0.1.53:0")
	exec(`CREATE KEYSPACE vk WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE KEYSPACE tk WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`ALTER KEYSPACE vk WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3} AND durable_writes = false`)
	var repl map[string]string
	var durable bool
	if err := s.Query(`SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = 'vk'`).Scan(&repl, &durable); err != nil || repl["datacenter1"] != "3" || durable {
		t.Errorf("vk after ALTER: %v durable %v, %v", repl, durable, err)
	}
	for q, msg := range map[string]string{
		`ALTER KEYSPACE vk WITH tablets = {'enabled': true}`:                                          "Cannot alter replication strategy vnode/tablets flavor",
		`ALTER KEYSPACE tk WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 2}`: "is not supported by the emulator",
		`ALTER KEYSPACE system WITH durable_writes = false`:                                           "Cannot alter system keyspace",
		`ALTER KEYSPACE nope WITH durable_writes = false`:                                             "Unknown keyspace nope",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}

// A dropped column may be added again (alter_table_statement.cc,
// schema.cc schema_builder::without_column): the drop records the column's
// type and timestamp (USING TIMESTAMP), the
// re-added column hides the cells written at or before the drop, and DESC
// ... WITH INTERNALS replays the DROP and ADD (schema.cc
// get_create_statement).
func TestAlterTableReAddDropped(t *testing.T) {
	_, s, exec := memorySession(t, "readd", "127.0.1.238:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (id int, c int, v int, d int, PRIMARY KEY (id, c))`)
	for i := 0; i < 5; i++ {
		exec(fmt.Sprintf(`INSERT INTO ks.t (id, c, v, d) VALUES (1, %d, %d, %d) USING TIMESTAMP %d`, i, i, i, 10000*i))
	}
	exec(`ALTER TABLE ks.t DROP d USING TIMESTAMP 20000`)
	var typ string
	var when time.Time
	if err := s.Query(`SELECT type, dropped_time FROM system_schema.dropped_columns WHERE keyspace_name = 'ks' AND table_name = 't' AND column_name = 'd'`).Scan(&typ, &when); err != nil || typ != "int" || when.UnixMilli() != 20 {
		t.Errorf("system_schema.dropped_columns: %q %v %v", typ, when.UnixMilli(), err)
	}
	exec(`ALTER TABLE ks.t ADD d int`)
	exec(`INSERT INTO ks.t (id, c, v, d) VALUES (1, 100, 100, 100) USING TIMESTAMP 30000`)
	want := map[int]any{0: nil, 1: nil, 2: nil, 3: 3, 4: 4, 100: 100}
	for _, q := range []string{`SELECT c, d FROM ks.t WHERE id = 1`, `SELECT c, d FROM ks.t`} {
		got := selectAll(t, s, q)
		if len(got) != len(want) {
			t.Fatalf("%s: %v", q, got)
		}
		for _, r := range got {
			if w := want[r["c"].(int)]; r["d"] != w && !(w == nil && r["d"] == 0) {
				t.Errorf("%s: row c=%v has d=%v, want %v", q, r["c"], r["d"], w)
			}
		}
	}
	var desc string
	if err := s.Query(`DESC TABLE ks.t WITH INTERNALS`).Scan(nil, nil, nil, &desc); err != nil {
		t.Fatalf("DESC WITH INTERNALS: %v", err)
	}
	for _, part := range []string{"\n    d int,\n    PRIMARY KEY", "\nALTER TABLE ks.t DROP d USING TIMESTAMP 20000;\nALTER TABLE ks.t ADD d int;"} {
		if !strings.Contains(desc, part) {
			t.Errorf("DESC WITH INTERNALS lacks %q:\n%s", part, desc)
		}
	}
	exec(`CREATE KEYSPACE vk WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE vk.n (p int PRIMARY KEY, n counter, m counter)`)
	exec(`ALTER TABLE vk.n DROP n`)
	if err := s.Query(`ALTER TABLE vk.n ADD n counter`).Exec(); err == nil || !strings.Contains(err.Error(), "Cannot re-add previously dropped counter column n") {
		t.Errorf("re-adding a counter: %v", err)
	}
}
