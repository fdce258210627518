package cql_test

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

func rawQuery(t *testing.T, rc *rawConn, q string, values ...[]byte) message.Message {
	t.Helper()
	opts := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}
	for _, v := range values {
		opts.PositionalValues = append(opts.PositionalValues, primitive.NewValue(v))
	}
	rc.send(1, &message.Query{Query: q, Options: opts})
	return rc.recv().Body.Message
}

func TestSystemTables(t *testing.T) {
	mem := enginetest.NewMemory("sys")
	peer := func(last byte, state engine.NodeState) engine.NodeInfo {
		return engine.NodeInfo{HostID: [16]byte{last}, Addr: net.IPv4(127, 0, 1, last), CQLPort: 9042, DC: "datacenter1", Rack: "rack2",
			Tokens: []string{"-5", "7"}, State: state, Up: true}
	}
	mem.SetPeers([]engine.NodeInfo{peer(201, engine.StateNormal), peer(202, engine.StateLeft), peer(203, engine.StateJoining)})
	hp := enginetest.StartServer(t, "127.0.1.14:0", mem)
	rc := dialRaw(t, hp)

	types := func(m message.Message) map[string]string {
		t.Helper()
		rows, ok := m.(*message.RowsResult)
		if !ok {
			t.Fatalf("want rows, got %T %v", m, m)
		}
		out := map[string]string{}
		for _, c := range rows.Metadata.Columns {
			out[c.Name] = c.Type.AsCql()
		}
		return out
	}
	// What drivers select, with the types they expect.
	local := types(rawQuery(t, rc, "SELECT * FROM system.local WHERE key='local'"))
	for col, typ := range map[string]string{"broadcast_address": "inet", "cluster_name": "varchar", "data_center": "varchar", "host_id": "uuid",
		"listen_address": "inet", "partitioner": "varchar", "rack": "varchar", "release_version": "varchar", "rpc_address": "inet",
		"schema_version": "uuid", "tokens": "set<varchar>"} {
		if local[col] != typ {
			t.Errorf("system.local %s: %q, want %q", col, local[col], typ)
		}
	}
	m := rawQuery(t, rc, "SELECT peer, data_center, host_id, rack, release_version, rpc_address, schema_version, tokens FROM system.peers")
	rows := m.(*message.RowsResult)
	if len(rows.Data) != 2 { // LEFT nodes are not peers
		t.Fatalf("peers: %d rows", len(rows.Data))
	}
	if ip := net.IP(rows.Data[0][0]); !ip.Equal(net.IPv4(127, 0, 1, 201)) {
		t.Fatalf("peer %v", ip)
	}
	if types(m)["tokens"] != "set<varchar>" {
		t.Fatal("tokens type")
	}
	v2 := types(rawQuery(t, rc, "SELECT peer, data_center, host_id, native_address, native_port, preferred_ip, rack, release_version, schema_version, tokens FROM system.peers_v2"))
	if v2["native_port"] != "int" || v2["native_address"] != "inet" {
		t.Fatalf("peers_v2: %v", v2)
	}
	ks := types(rawQuery(t, rc, "SELECT * FROM system_schema.keyspaces"))
	if ks["replication"] != "map<varchar,varchar>" && ks["replication"] != "map<varchar, varchar>" {
		t.Fatalf("replication type %q", ks["replication"])
	}
	m = rawQuery(t, rc, "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", []byte("system"))
	if len(m.(*message.RowsResult).Data) != 1 {
		t.Fatal("keyspace filter")
	}
	for _, q := range []string{"SELECT * FROM system_schema.tables WHERE keyspace_name = 'x'", "SELECT * FROM system_schema.views WHERE keyspace_name = 'x' AND base_table_name = 'y' ALLOW FILTERING",
		"SELECT * FROM system_schema.types", "SELECT * FROM system_schema.functions", "SELECT * FROM system_schema.aggregates",
		"SELECT * FROM system_schema.indexes", "SELECT * FROM system_schema.scylla_tables", "SELECT * FROM system.local"} {
		if _, ok := rawQuery(t, rc, q).(*message.RowsResult); !ok {
			t.Errorf("%s: no rows result", q)
		}
	}
	if _, ok := rawQuery(t, rc, "SELECT * FROM system.schema_keyspaces").(*message.Invalid); !ok {
		t.Error("legacy schema_keyspaces must be Invalid")
	}
	if _, ok := rawQuery(t, rc, "INSERT INTO system.local (key) VALUES ('x')").(*message.Unauthorized); !ok {
		t.Error("writes to system tables must be refused")
	}
}

// Suites and drivers recognise ScyllaDB by system tables and features:
// cqlpy's is_scylla looks for a system table named scylla_* in
// system_schema.tables (db/system_keyspace.cc scylla_local), and the Go
// driver reads TABLETS from system.local.supported_features
// (gms/feature_service.cc supported_feature_set; LWT_WITH_TABLETS only
// from 2025.4).
func TestScyllaDetection(t *testing.T) {
	mem := enginetest.NewMemory("detect")
	hp := enginetest.StartServer(t, "127.0.1.45:0", mem)
	s := newSession(t, hp, "")
	var names []string
	iter := s.Query(`SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'system'`).Iter()
	var name string
	for iter.Scan(&name) {
		names = append(names, name)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "scylla_local") || !slices.Contains(names, "local") || !slices.Contains(names, "peers") {
		t.Errorf("system tables in system_schema.tables: %v", names)
	}
	var kind string
	if err := s.Query(`SELECT kind FROM system_schema.columns WHERE keyspace_name = 'system' AND table_name = 'local' AND column_name = 'key'`).Scan(&kind); err != nil || kind != "partition_key" {
		t.Errorf("system.local key column: %q %v", kind, err)
	}
	var value string
	if err := s.Query(`SELECT value FROM system.scylla_local WHERE key = 'enabled_features'`).Scan(&value); err != nil || !strings.Contains(value, "TABLETS") {
		t.Errorf("scylla_local enabled_features: %q %v", value, err)
	}
	var features string
	if err := s.Query(`SELECT supported_features FROM system.local`).Scan(&features); err != nil {
		t.Fatal(err)
	}
	list := strings.Split(features, ",")
	for _, f := range []string{"TABLETS", "LWT", "CDC", "UDA", "COUNTERS"} {
		if !slices.Contains(list, f) {
			t.Errorf("supported_features lacks %s: %s", f, features)
		}
	}
	for _, f := range []string{"UDF", "TEST_ONLY_FEATURE", "LWT_WITH_TABLETS"} {
		if slices.Contains(list, f) {
			t.Errorf("2025.1 supported_features has %s", f)
		}
	}
	if !slices.IsSorted(list) {
		t.Errorf("supported_features not sorted: %s", features)
	}
}

// DESCRIBE KEYSPACE answers as ScyllaDB's server-side describe does
// (cql3/statements/describe_statement.cc, data_dictionary.cc
// keyspace_metadata::describe); the Go driver's suite reads its
// create_statement to learn whether keyspaces get tablets by default.
func TestDescribeKeyspace(t *testing.T) {
	mem := enginetest.NewMemory("describe")
	hp := enginetest.StartServer(t, "127.0.1.46:0", mem)
	s := newSession(t, hp, "")
	if err := s.Query(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	row := map[string]any{}
	if err := s.Query(`DESCRIBE KEYSPACE ks`).MapScan(row); err != nil {
		t.Fatal(err)
	}
	want := "CREATE KEYSPACE ks WITH replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'datacenter1': '1'} AND durable_writes = true AND tablets = {'enabled': true};"
	if row["keyspace_name"] != "ks" || row["type"] != "keyspace" || row["name"] != "ks" || row["create_statement"] != want {
		t.Errorf("DESCRIBE KEYSPACE ks: %v\nwant create_statement %s", row, want)
	}
	if err := s.Query(`DESC KEYSPACE nope`).Exec(); err == nil || !strings.Contains(err.Error(), "'nope' not found in keyspaces") {
		t.Errorf("DESCRIBE of a missing keyspace: %v", err)
	}
}
