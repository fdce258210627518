package cql_test

import (
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"

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
	if err := s.Query(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`).Exec(); err != nil {
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
	// The emulator prepares an LWT as ScyllaDB does, marked, and refuses to
	// run it.
	cond := s.Query(`INSERT INTO ks.kv (key, value) VALUES (?, ?) IF NOT EXISTS`, int64(2), []byte("v"))
	if err := cond.Exec(); err == nil || !strings.Contains(err.Error(), "lightweight transactions") {
		t.Fatalf("INSERT ... IF NOT EXISTS: %v", err)
	}
	if !cond.IsLWT() {
		t.Error("the driver does not see INSERT ... IF NOT EXISTS as an LWT")
	}
}
