package cql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// keyspaceSession is a session on a memory node posing as version.
func keyspaceSession(t *testing.T, addr, version string) *gocql.Session {
	t.Helper()
	mem := enginetest.NewMemory("ks")
	n := mem.Local()
	n.ScyllaVersion = version
	mem.SetLocal(n)
	return newSession(t, enginetest.StartServer(t, addr, mem), "")
}

// wantErr runs q and checks that it fails with a message containing msg
// and the error type the Python driver maps the code to.
func wantErr(t *testing.T, s *gocql.Session, q string, code int, msg string) {
	t.Helper()
	err := s.Query(q).Exec()
	var re interface{ GetCode() int } // the driver's error frame
	if !errors.As(err, &re) || re.GetCode() != code || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: want code %#x %q, got %T %v", q, code, msg, err, err)
	}
}

// Keyspace options and their errors as cql3/statements/ks_prop_defs.cc,
// create_keyspace_statement.cc and data_dictionary.cc storage_options have
// them, in 2025.1.
func TestKeyspaceOptionErrors(t *testing.T) {
	s := keyspaceSession(t, "127.0.1.124:0", "2025.1.0")
	const nts = "WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}"
	for _, c := range []struct {
		q    string
		code int
		msg  string
	}{
		{`CREATE KEYSPACE "xyz!123" ` + nts, 0x2200, `"xyz!123" is not a valid keyspace name`},
		{`CREATE KEYSPACE ` + strings.Repeat("k", 49) + ` ` + nts, 0x2200, "shouldn't be more than 48 characters"},
		{"CREATE KEYSPACE WITH WITH DURABLE_WRITES = true", 0x2000, "keyspace name"},
		{"ALTER KEYSPACE WITH WITH DURABLE_WRITES = true", 0x2000, "keyspace name"},
		{"CREATE KEYSPACE k1 WITH replication = {'class': 'NetworkTopologyStrategy', 'nonexistentdc': 1}", 0x2300,
			"Unrecognized strategy option {nonexistentdc} passed to org.apache.cassandra.locator.NetworkTopologyStrategy for keyspace k1"},
		{"CREATE KEYSPACE k1 WITH replication = {'class': 'NetworkTopologyStrategy', 'Replication_factor': 1}", 0x2300, "Unrecognized strategy option {Replication_factor}"},
		{"CREATE KEYSPACE k1 WITH replication = {'replication_factor': 1}", 0x2300, "Missing mandatory replication strategy class"},
		{"CREATE KEYSPACE k1 " + nts + " AND storage = {'type': 'S4'}", 0x2200, "Unknown storage type: S4"},
		{"CREATE KEYSPACE k1 " + nts + " AND storage = {'type': 'LOCAL', 'superfluous': 'info'}", 0x2200, "Local storage does not accept any custom options"},
		{"CREATE KEYSPACE k1 " + nts + " AND storage = {'type': 'S3', 'bucket': '42'}", 0x2200, "Missing S3 option: endpoint"},
		{"CREATE KEYSPACE k1 " + nts + " AND storage = {'type': 'S3', 'bucket': '42', 'endpoint': 'e', 'x': 'y'}", 0x2200, "Extraneous options for S3"},
		{"CREATE KEYSPACE k1 " + nts + " AND storage = {'type': 'S3', 'bucket': '42', 'endpoint': 'e'}", 0x2200, "Keyspace storage options not supported in the cluster"},
	} {
		wantErr(t, s, c.q, c.code, c.msg)
	}
	for _, q := range []string{
		`CREATE KEYSPACE "_xyz" ` + nts,
		`CREATE KEYSPACE "123" ` + nts,
		"CREATE KEYSPACE loc " + nts + " AND storage = {'type': 'LOCAL'}",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// From 2025.4 the replication may be left out: NetworkTopologyStrategy with
// one replica per rack in each DC (ks_prop_defs.cc
// set_default_replication_strategy_class_option, prepare_options), and an
// unknown DC is refused by network_topology_strategy.cc validate_options.
func TestKeyspaceDefaultReplication(t *testing.T) {
	s := keyspaceSession(t, "127.0.1.125:0", "2025.4.0")
	for i, with := range []string{"", " WITH replication = {}", " WITH replication = {'replication_factor': 1}", " WITH replication = {'class': 'NetworkTopologyStrategy'}"} {
		name := "d" + string(rune('0'+i))
		if err := s.Query("CREATE KEYSPACE " + name + with).Exec(); err != nil {
			t.Fatalf("CREATE KEYSPACE %s%s: %v", name, with, err)
		}
		var repl, v2 map[string]string
		if err := s.Query("SELECT replication, replication_v2 FROM system_schema.keyspaces WHERE keyspace_name = ?", name).Scan(&repl, &v2); err != nil {
			t.Fatal(err)
		}
		if v2 != nil {
			t.Errorf("replication_v2 without rack lists: %v, want null", v2)
		}
		if repl["class"] != "org.apache.cassandra.locator.NetworkTopologyStrategy" || repl["datacenter1"] != "1" || len(repl) != 2 {
			t.Errorf("CREATE KEYSPACE %s%s: replication %v", name, with, repl)
		}
	}
	wantErr(t, s, "CREATE KEYSPACE k1 WITH replication = {'class': 'NetworkTopologyStrategy', 'nonexistentdc': 1}", 0x2300,
		"Unrecognized strategy option {nonexistentdc} passed to NetworkTopologyStrategy")
}

// Counters in a tablets keyspace: refused until COUNTERS_WITH_TABLETS
// (gms/feature_service.hh, from 2026.1); LWT on tablets from 2025.4
// (LWT_WITH_TABLETS, service/storage_proxy.cc cas).
func TestCountersAndLWTWithTablets(t *testing.T) {
	for i, c := range []struct {
		version       string
		counters, lwt bool
	}{{"2025.1.0", false, false}, {"2025.4.0", false, true}, {"2026.1.0", true, true}} {
		s := keyspaceSession(t, "127.0.1.12"+string(rune('6'+i))+":0", c.version)
		for _, q := range []string{
			"CREATE KEYSPACE tk WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND tablets = {'enabled': true}",
			"CREATE TABLE tk.kv (k int PRIMARY KEY, v int)",
		} {
			if err := s.Query(q).Exec(); err != nil {
				t.Fatal(q, err)
			}
		}
		err := s.Query("CREATE TABLE tk.c (k int PRIMARY KEY, n counter)").Exec()
		if (err == nil) != c.counters || (err != nil && !strings.Contains(err.Error(), "Counters are not yet supported with tablets")) {
			t.Errorf("%s: counter table in a tablets keyspace: %v", c.version, err)
		}
		err = s.Query("INSERT INTO tk.kv (k, v) VALUES (1, 1) IF NOT EXISTS").Exec()
		if (err == nil) != c.lwt {
			t.Errorf("%s: LWT on a tablets table: %v", c.version, err)
		}
	}
}

// system_schema.scylla_keyspaces has a row for a keyspace with tablets only
// (db/schema_tables.cc); ALTER KEYSPACE's tablets option replaces
// initial_tablets, its absence keeps it (ks_prop_defs.cc
// get_initial_tablets); a table's tablets option needs a tablets keyspace
// (cf_prop_defs.cc).
func TestKeyspaceTabletsOptions(t *testing.T) {
	s := keyspaceSession(t, "127.0.1.129:0", "2025.4.0")
	exec := func(q string) {
		t.Helper()
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	initial := func(ks string) (int, bool) {
		t.Helper()
		var n int
		iter := s.Query("SELECT initial_tablets FROM system_schema.scylla_keyspaces WHERE keyspace_name = ?", ks).Iter()
		found := iter.Scan(&n)
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return n, found
	}
	exec("CREATE KEYSPACE vn WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND tablets = {'enabled': false}")
	if _, found := initial("vn"); found {
		t.Error("a vnodes keyspace has a scylla_keyspaces row")
	}
	wantErr(t, s, "CREATE TABLE vn.t (k int PRIMARY KEY) WITH tablets = {'min_tablet_count': '100'}", 0x2300, "tablet options cannot be used when tablets are disabled for the keyspace")
	exec("CREATE KEYSPACE tb WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'initial': 1}")
	for _, c := range []struct {
		alter string
		want  int
	}{
		{" AND tablets = {'initial': 2}", 2},
		{"", 2},
		{" AND tablets = {'initial': 0}", 0},
		{" AND tablets = {'initial': 2}", 2},
		{" AND tablets = {'enabled': true}", 0},
	} {
		exec("ALTER KEYSPACE tb WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}" + c.alter)
		if n, found := initial("tb"); !found || n != c.want {
			t.Errorf("after ALTER ...%s: initial_tablets %d (row %v), want %d", c.alter, n, found, c.want)
		}
	}
}

// SUPPORTED names the node's host id as SCYLLA_HOST_ID from 2026.3
// (transport/server.cc; docs/dev/protocol-extensions.md), not before.
func TestSupportedHostID(t *testing.T) {
	for i, version := range []string{"2026.1.0", "2026.3.0"} {
		mem := enginetest.NewMemory("hostid")
		n := mem.Local()
		n.ScyllaVersion = version
		mem.SetLocal(n)
		rc := dialRaw(t, enginetest.StartServer(t, "127.0.1.13"+string(rune('3'+i))+":0", mem))
		rc.send(1, &message.Options{})
		got, ok := rc.recv().Body.Message.(*message.Supported).Options["SCYLLA_HOST_ID"]
		want := gocql.UUID(n.HostID).String()
		if ok != (version == "2026.3.0") || (ok && (len(got) != 1 || got[0] != want)) {
			t.Errorf("%s: SCYLLA_HOST_ID %v (listed %v), host id %s", version, got, ok, want)
		}
	}
}
