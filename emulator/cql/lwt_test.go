package cql_test

import (
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// ScyllaDB offers SCYLLA_LWT_ADD_METADATA_MARK on every connection
// (transport/cql_protocol_extension.cc), and a PREPARED result marks only
// conditional statements (cql3/result_set.cc prepared_metadata). The
// ScyllaDB Go driver routes a statement it takes for an LWT to its first
// replica only, without shuffling; without the extension it takes every
// prepared statement for one.
func TestLWTMetadataMark(t *testing.T) {
	mem := enginetest.NewMemory("lwt")
	hp := enginetest.StartServer(t, "127.0.1.12:0", mem)

	rc := dialRaw(t, hp)
	rc.send(1, &message.Options{})
	sup := rc.recv().Body.Message.(*message.Supported).Options
	if got := sup["SCYLLA_LWT_ADD_METADATA_MARK"]; len(got) != 1 || got[0] != "LWT_OPTIMIZATION_META_BIT_MASK=2147483648" {
		t.Fatalf("SCYLLA_LWT_ADD_METADATA_MARK in SUPPORTED: %q", got)
	}

	s := newSession(t, hp, "")
	if err := s.Query(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`CREATE TABLE ks.kv (key bigint PRIMARY KEY, value blob)`).Exec(); err != nil {
		t.Fatal(err)
	}
	plain := s.Query(`INSERT INTO ks.kv (key, value) VALUES (?, ?)`, int64(1), []byte("v"))
	if err := plain.Exec(); err != nil {
		t.Fatal(err)
	}
	if plain.IsLWT() {
		t.Error("the driver takes a plain INSERT for an LWT")
	}
	read := s.Query(`SELECT value FROM ks.kv WHERE key = ?`, int64(1))
	var v []byte
	if err := read.Scan(&v); err != nil || string(v) != "v" {
		t.Fatalf("read back: %q %v", v, err)
	}
	if read.IsLWT() {
		t.Error("the driver takes a SELECT for an LWT")
	}
	// The emulator prepares an LWT as ScyllaDB does, marked.
	cond := s.Query(`INSERT INTO ks.kv (key, value) VALUES (?, ?) IF NOT EXISTS`, int64(2), []byte("v"))
	if applied, err := cond.MapScanCAS(map[string]any{}); err != nil || !applied {
		t.Fatalf("INSERT ... IF NOT EXISTS: applied %v, %v", applied, err)
	}
	if !cond.IsLWT() {
		t.Error("the driver does not see INSERT ... IF NOT EXISTS as an LWT")
	}
}

// Conditional statements as ScyllaDB runs them: the result is always
// [applied] and the condition's columns (every column for IF [NOT]
// EXISTS) with the old row's values, null when there is none
// (cql3/statements/modification_statement.cc build_cas_result_set_metadata,
// cql3/statements/cas_request.cc build_cas_result_set); conditions on a
// missing row see nulls; a conditional batch is one partition of one table
// (cql3/statements/batch_statement.cc); USING TIMESTAMP is refused.
func TestLWTConditions(t *testing.T) {
	mem := enginetest.NewMemory("lwt")
	hp := enginetest.StartServer(t, "127.0.1.44:0", mem)
	s := newSession(t, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`,
		`CREATE KEYSPACE tks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`,
		`CREATE TABLE tks.kv (k int PRIMARY KEY, v int)`,
		`CREATE TABLE ks.t (p int, c int, s int STATIC, v text, PRIMARY KEY (p, c))`,
		`CREATE TABLE ks.kv (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	casRow := func(q string, args ...any) (bool, map[string]any) {
		t.Helper()
		row := map[string]any{}
		applied, err := s.Query(q, args...).MapScanCAS(row)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return applied, row
	}

	if ok, row := casRow(`INSERT INTO ks.kv (k, v) VALUES (1, 10) IF NOT EXISTS`); !ok || row["k"] != 0 || row["v"] != 0 {
		t.Errorf("first INSERT IF NOT EXISTS: applied %v, old row %v (want applied, nulls)", ok, row)
	}
	if ok, row := casRow(`INSERT INTO ks.kv (k, v) VALUES (1, 20) IF NOT EXISTS`); ok || row["k"] != 1 || row["v"] != 10 {
		t.Errorf("second INSERT IF NOT EXISTS: applied %v, old row %v (want not applied, k=1 v=10)", ok, row)
	}
	if ok, row := casRow(`UPDATE ks.kv SET v = 11 WHERE k = 1 IF v = 10`); !ok || row["v"] != 10 || len(row) != 1 {
		t.Errorf("UPDATE IF v = 10: applied %v, row %v (want applied, only v = 10)", ok, row)
	}
	if ok, row := casRow(`UPDATE ks.kv SET v = 12 WHERE k = 1 IF v > 20`); ok || row["v"] != 11 {
		t.Errorf("UPDATE IF v > 20: applied %v, row %v", ok, row)
	}
	if ok, _ := casRow(`UPDATE ks.kv SET v = 12 WHERE k = 1 IF v IN (1, 11)`); !ok {
		t.Error("UPDATE IF v IN (1, 11) did not apply")
	}
	if ok, _ := casRow(`UPDATE ks.kv SET v = 1 WHERE k = 2 IF EXISTS`); ok {
		t.Error("UPDATE IF EXISTS applied to a missing row")
	}
	if ok, _ := casRow(`UPDATE ks.kv SET v = 1 WHERE k = 2 IF v = null`); !ok {
		t.Error("UPDATE IF v = null did not apply to a missing row")
	}
	if ok, _ := casRow(`DELETE FROM ks.kv WHERE k = 1 IF EXISTS`); !ok {
		t.Error("DELETE IF EXISTS did not apply")
	}
	var n int
	if err := s.Query(`SELECT count(*) FROM ks.kv WHERE k = 1`).Consistency(gocql.Serial).Scan(&n); err != nil || n != 0 {
		t.Errorf("SERIAL read after DELETE IF EXISTS: %d rows, %v", n, err)
	}
	if err := s.Query(`SELECT * FROM ks.kv`).Consistency(gocql.Serial).Exec(); err == nil ||
		!strings.Contains(err.Error(), "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time") {
		t.Errorf("SERIAL scan: %v", err)
	}

	// Static conditions: the static row decides, whatever the clustering key.
	if ok, _ := casRow(`INSERT INTO ks.t (p, s) VALUES (1, 1) IF NOT EXISTS`); !ok {
		t.Error("static INSERT IF NOT EXISTS did not apply")
	}
	if ok, _ := casRow(`UPDATE ks.t SET v = 'x' WHERE p = 1 AND c = 1 IF s = 1`); !ok {
		t.Error("UPDATE of a new row IF s = 1 did not apply (cas_request.cc find_old_row falls back to the static row)")
	}
	var v string
	if err := s.Query(`SELECT v FROM ks.t WHERE p = 1 AND c = 1`).Scan(&v); err != nil || v != "x" {
		t.Errorf("row written by the conditional update: %q %v", v, err)
	}

	// A conditional batch: all or nothing, one row per statement.
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE ks.t SET s = 2 WHERE p = 1 IF s = 1`)
	b.Query(`INSERT INTO ks.t (p, c, v) VALUES (1, 2, 'y') IF NOT EXISTS`)
	row := map[string]any{}
	applied, iter, err := s.MapExecuteBatchCAS(b, row)
	if err != nil || !applied {
		t.Fatalf("conditional batch: applied %v, %v", applied, err)
	}
	iter.Close()
	b = s.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE ks.t SET s = 3 WHERE p = 1 IF s = 1`)
	b.Query(`INSERT INTO ks.t (p, c, v) VALUES (1, 3, 'z')`)
	if applied, _, err := s.MapExecuteBatchCAS(b, map[string]any{}); err != nil || applied {
		t.Fatalf("conditional batch with a failing condition: applied %v, %v", applied, err)
	}
	if got := selectAll(t, s, `SELECT c, s FROM ks.t WHERE p = 1`); len(got) != 2 || got[0]["s"] != 2 {
		t.Errorf("after the batches: %v (want rows 1 and 2, s = 2)", got)
	}
	b = s.NewBatch(gocql.LoggedBatch)
	b.Query(`UPDATE ks.t SET s = 3 WHERE p = 1 IF s = 2`)
	b.Query(`UPDATE ks.t SET s = 3 WHERE p = 2 IF s = 2`)
	if _, _, err := s.ExecuteBatchCAS(b); err == nil || !strings.Contains(err.Error(), "BATCH with conditions cannot span multiple partitions") {
		t.Errorf("conditional batch over two partitions: %v", err)
	}
	// 2025.1 runs no LWT on a table with tablets (service/storage_proxy.cc
	// cas; 2025.4 does once the cluster has LWT_WITH_TABLETS).
	if err := s.Query(`INSERT INTO tks.kv (k, v) VALUES (1, 1) IF NOT EXISTS`).Exec(); err == nil ||
		!strings.Contains(err.Error(), "Cannot use LightWeight Transactions for table tks.kv: LWT is not yet supported with tablets") {
		t.Errorf("LWT on a tablets table in 2025.1: %v", err)
	}
	if err := s.Query(`UPDATE ks.kv USING TIMESTAMP 5 SET v = 1 WHERE k = 3 IF EXISTS`).Exec(); err == nil ||
		!strings.Contains(err.Error(), "Cannot provide custom timestamp for conditional updates") {
		t.Errorf("conditional update with USING TIMESTAMP: %v", err)
	}
}

// A bound IN list of an LWT condition may hold nulls, and a null element
// matches a null column (cql3/expr/expression.cc is_one_of,
// null_handling_style::lwt_nulls); cqlpy test_lwt_prepared.py
// test_lwt_update_prepared binds (None,) to "IF v IN :v".
func TestLWTInBoundListNull(t *testing.T) {
	mem := enginetest.NewMemory("lwtnull")
	hp := enginetest.StartServer(t, "127.0.1.45:0", mem)
	s := newSession(t, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`,
		`CREATE TABLE ks.kv (k int PRIMARY KEY, v int, w text)`,
		`INSERT INTO ks.kv (k, w) VALUES (1, 'a')`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	null := []*int{nil}
	row := map[string]any{}
	applied, err := s.Query(`UPDATE ks.kv SET v = 5 WHERE k = 1 IF v IN ?`, null).MapScanCAS(row)
	if err != nil || !applied {
		t.Fatalf("IF v IN [null] on a null v: applied %v, %v (want applied)", applied, err)
	}
	row = map[string]any{}
	applied, err = s.Query(`UPDATE ks.kv SET v = 6 WHERE k = 1 IF v IN ?`, null).MapScanCAS(row)
	if err != nil || applied || row["v"] != 5 {
		t.Errorf("IF v IN [null] on v = 5: applied %v, row %v, %v (want not applied, v = 5)", applied, row, err)
	}
	two := 5
	row = map[string]any{}
	applied, err = s.Query(`UPDATE ks.kv SET v = 7 WHERE k = 1 IF v IN ?`, []*int{nil, &two}).MapScanCAS(row)
	if err != nil || !applied {
		t.Errorf("IF v IN [null, 5] on v = 5: applied %v, %v (want applied)", applied, err)
	}
}
