package cql_test

import (
	"net"
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
