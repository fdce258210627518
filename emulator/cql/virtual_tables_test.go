package cql_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// system.config as db/virtual_tables.cc db_config_table has it: options by
// name with type, source and JSON value; UPDATE changes a live-updatable
// option on the node and fails as a write failure with apply's causes.
func TestSystemConfig(t *testing.T) {
	_, s, exec := memorySession(t, "cfg", "127.0.1.120:0")
	read := func(name string) (typ, source, value string) {
		t.Helper()
		if err := s.Query("SELECT type, source, value FROM system.config WHERE name = ?", name).Scan(&typ, &source, &value); err != nil {
			t.Fatalf("reading %s: %v", name, err)
		}
		return typ, source, value
	}
	if typ, src, v := read("compaction_enforce_min_threshold"); typ != "bool" || src != "default" || v != "false" {
		t.Fatalf("compaction_enforce_min_threshold: %q %q %q", typ, src, v)
	}
	if _, _, v := read("restrict_dtcs"); v != `"true"` {
		t.Fatalf("restrict_dtcs (a restriction mode, JSON string): %q", v)
	}
	if _, _, v := read("num_tokens"); v != "16" {
		t.Fatalf("num_tokens is the node's token count: %q", v)
	}
	exec("UPDATE system.config SET value = '1' WHERE name = 'compaction_enforce_min_threshold'")
	if _, src, v := read("compaction_enforce_min_threshold"); src != "cql" || v != "true" {
		t.Fatalf("after UPDATE: %q %q", src, v)
	}
	for q, cause := range map[string]string{
		"UPDATE system.config SET value = '8' WHERE name = 'num_tokens'":                       "option is not live-updateable",
		"UPDATE system.config SET value = '8' WHERE name = 'no_such_thing'":                    "no such option",
		"UPDATE system.config SET value = 'x' WHERE name = 'compaction_enforce_min_threshold'": "cannot parse option value",
		"UPDATE system.config SET type = 'x' WHERE name = 'auto_snapshot'":                     "option value is required",
		"INSERT INTO system.one_row (\"system$dummy\") VALUES ('Y')":                           "this virtual table doesn't allow updates",
	} {
		err := s.Query(q).Exec()
		var wf *gocql.RequestErrWriteFailure
		if !errors.As(err, &wf) || !strings.Contains(err.Error(), cause) {
			t.Errorf("%s: want a write failure %q, got %T %v", q, cause, err, err)
		}
	}
}

// cql3/util.cc validate_timestamp: USING TIMESTAMP more than three days
// ahead is refused while restrict_future_timestamp is on.
func TestRestrictFutureTimestamp(t *testing.T) {
	_, s, exec := memorySession(t, "ts", "127.0.1.121:0")
	exec("CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
	exec("CREATE TABLE ks.t (k int PRIMARY KEY, v int)")
	future := time.Now().Add(5 * 24 * time.Hour).UnixMicro()
	err := s.Query("INSERT INTO ks.t (k, v) VALUES (1, 1) USING TIMESTAMP ?", future).Exec()
	if err == nil || !strings.Contains(err.Error(), "more than 3 days into the future") {
		t.Fatalf("future timestamp: %v", err)
	}
	exec("UPDATE system.config SET value = 'false' WHERE name = 'restrict_future_timestamp'")
	exec("INSERT INTO ks.t (k, v) VALUES (1, 1) USING TIMESTAMP ?", future)
}

// The informational virtual tables: versions, one_row, protocol_servers,
// clients (this connection among them) and token_ring of a vnode keyspace.
func TestInformationalVirtualTables(t *testing.T) {
	hp, s, exec := memorySession(t, "info", "127.0.1.122:0")
	var version, dummy string
	if err := s.Query("SELECT version FROM system.versions").Scan(&version); err != nil || !strings.HasPrefix(version, "2025.1") {
		t.Fatalf("versions: %q %v", version, err)
	}
	var n int
	if err := s.Query("SELECT count(*) FROM system.one_row").Scan(&n); err != nil || n != 1 {
		t.Fatalf("one_row count: %d %v", n, err)
	}
	if err := s.Query(`SELECT "system$dummy" FROM system.one_row`).Scan(&dummy); err != nil || dummy != "" {
		t.Fatalf("one_row: %q %v", dummy, err)
	}
	var addrs []string
	var proto string
	if err := s.Query("SELECT protocol, listen_addresses FROM system.protocol_servers").Scan(&proto, &addrs); err != nil || proto != "cql" || len(addrs) != 1 || addrs[0] != hp {
		t.Fatalf("protocol_servers: %q %v %v (listening on %s)", proto, addrs, err, hp)
	}
	var stage, clientType string
	var opts map[string]string
	var version4 int
	iter := s.Query("SELECT client_type, connection_stage, protocol_version, client_options FROM system.clients").Iter()
	rows := 0
	for iter.Scan(&clientType, &stage, &version4, &opts) {
		rows++
		if clientType != "cql" || stage != "READY" || version4 != 4 || opts["CQL_VERSION"] == "" {
			t.Errorf("clients row: %q %q %d %v", clientType, stage, version4, opts)
		}
	}
	if err := iter.Close(); err != nil || rows == 0 {
		t.Fatalf("clients: %d rows, %v", rows, err)
	}
	exec("CREATE KEYSPACE vn WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
	if err := s.Query("SELECT count(*) FROM system.token_ring WHERE keyspace_name = 'vn' AND table_name = '<ALL>'").Scan(&n); err != nil || n != 16 {
		t.Fatalf("token_ring of a 16-token node: %d rows, %v", n, err)
	}
}
