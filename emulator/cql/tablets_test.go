package cql_test

import (
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/gocql/gocql/tablets"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// tabletMemory is the in-memory backend with one tablet per table covering
// the whole ring, held by this node on shard 2: TabletRoute answers as
// check_locality would (nothing on shard 2, the routing elsewhere) and
// records the shards it was asked on.
type tabletMemory struct {
	*enginetest.Memory
	mu     sync.Mutex
	shards []int
}

const tabletShard = 2

func (m *tabletMemory) TabletRoute(keyspace, table string, pk []byte, shard int) *engine.TabletRoute {
	m.mu.Lock()
	m.shards = append(m.shards, shard)
	m.mu.Unlock()
	if shard == tabletShard {
		return nil
	}
	return m.theTablet()
}

func (m *tabletMemory) theTablet() *engine.TabletRoute {
	return &engine.TabletRoute{FirstToken: math.MinInt64, LastToken: math.MaxInt64,
		Replicas: []engine.TabletReplica{{HostID: m.Local().HostID, Shard: tabletShard}}}
}

func (m *tabletMemory) asked() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.shards...)
}

// TestTabletsRoutingPayload: the server lists TABLETS_ROUTING_V1 in
// SUPPORTED when its backend has tablets, and after a client names it in
// STARTUP answers a single-partition statement whose partition key is bound
// by markers, on a node or shard that is not the replica, with the
// "tablets-routing-v1" custom payload that the ScyllaDB driver's own parser
// reads (cql3/statements/modification_statement.cc, select_statement.cc,
// transport/messages/result_message.cc).
func TestTabletsRoutingPayload(t *testing.T) {
	mem := &tabletMemory{Memory: enginetest.NewMemory("tablets")}
	_, hp := enginetest.StartServerOpts(t, "127.0.1.40:0", mem, cql.Options{Shards: 4})

	supported := func(rc *rawConn) map[string][]string {
		rc.send(1, &message.Options{})
		return rc.recv().Body.Message.(*message.Supported).Options
	}
	if _, ok := supported(dialRaw(t, hp))["TABLETS_ROUTING_V1"]; !ok {
		t.Fatal("SUPPORTED does not list TABLETS_ROUTING_V1 for a backend with tablets")
	}
	_, plainHP := enginetest.StartServerOpts(t, "127.0.1.41:0", enginetest.NewMemory("plain"), cql.Options{})
	if _, ok := supported(dialRaw(t, plainHP))["TABLETS_ROUTING_V1"]; ok {
		t.Fatal("SUPPORTED lists TABLETS_ROUTING_V1 for a backend without tablets")
	}

	// connect opens a connection on a shard (the server deals shards
	// round-robin; SUPPORTED says which) and asks for the extension or not.
	connect := func(shard int, ext bool) *rawConn {
		for range 8 {
			rc := dialRaw(t, hp)
			if got := supported(rc)["SCYLLA_SHARD"]; len(got) != 1 || got[0] != strconv.Itoa(shard) {
				rc.c.Close()
				continue
			}
			opts := map[string]string{"CQL_VERSION": "3.0.0"}
			if ext {
				opts["TABLETS_ROUTING_V1"] = ""
			}
			rc.send(1, &message.Startup{Options: opts})
			if _, ok := rc.recv().Body.Message.(*message.Ready); !ok {
				t.Fatal("STARTUP not answered with READY")
			}
			return rc
		}
		t.Fatalf("no connection landed on shard %d", shard)
		return nil
	}
	rc := connect(0, true)
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'initial': 4}`,
		`CREATE TABLE ks.t (k int PRIMARY KEY, v text)`,
	} {
		rc.send(2, &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		if f := rc.recv(); f.Header.OpCode != primitive.OpCodeResult {
			t.Fatalf("%s: %v", q, f.Body.Message)
		}
	}
	prepare := func(rc *rawConn, q string) []byte {
		rc.send(3, &message.Prepare{Query: q})
		p, ok := rc.recv().Body.Message.(*message.PreparedResult)
		if !ok {
			t.Fatalf("preparing %s failed", q)
		}
		return p.PreparedQueryId
	}
	key := func(k int32) *primitive.Value {
		b := []byte{byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}
		return primitive.NewValue(b)
	}
	exec := func(rc *rawConn, id []byte, vals ...*primitive.Value) map[string][]byte {
		rc.send(4, &message.Execute{QueryId: id, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, PositionalValues: vals}})
		f := rc.recv()
		if f.Header.OpCode != primitive.OpCodeResult {
			t.Fatalf("execute: %v", f.Body.Message)
		}
		if f.Header.Flags.Contains(primitive.HeaderFlagCustomPayload) != (f.Body.CustomPayload != nil) {
			t.Fatalf("custom payload flag %v with payload %v", f.Header.Flags, f.Body.CustomPayload)
		}
		return f.Body.CustomPayload
	}
	ins := prepare(rc, `INSERT INTO ks.t (k, v) VALUES (?, ?)`)
	sel := prepare(rc, `SELECT v FROM ks.t WHERE k = ?`)
	literal := prepare(rc, `INSERT INTO ks.t (k, v) VALUES (7, ?)`)

	check := func(what string, payload map[string][]byte) {
		t.Helper()
		hint, ok := payload["tablets-routing-v1"]
		if !ok || len(payload) != 1 {
			t.Fatalf("%s on shard 0: custom payload %v, want only tablets-routing-v1", what, payload)
		}
		ti, err := tablets.ParseHint(hint, "ks", "t")
		if err != nil {
			t.Fatalf("%s: the driver cannot parse the hint %x: %v", what, hint, err)
		}
		reps := ti.Replicas()
		if ti.FirstToken() != math.MinInt64 || ti.LastToken() != math.MaxInt64 || len(reps) != 1 ||
			reps[0].HostUUIDValue() != mem.Local().HostID || reps[0].ShardID() != tabletShard {
			t.Fatalf("%s: hint parsed as (%d, %d] %v", what, ti.FirstToken(), ti.LastToken(), reps)
		}
	}
	check("a prepared INSERT", exec(rc, ins, key(1), primitive.NewValue([]byte("one"))))
	check("a prepared single-partition SELECT", exec(rc, sel, key(1)))
	if p := exec(rc, literal, primitive.NewValue([]byte("seven"))); p != nil {
		t.Errorf("an INSERT whose key is a literal (no token-aware routing) got payload %v", p)
	}
	rc.send(5, &message.Query{Query: `INSERT INTO ks.t (k, v) VALUES (?, 'q')`, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, PositionalValues: []*primitive.Value{key(2)}}})
	if f := rc.recv(); f.Body.CustomPayload["tablets-routing-v1"] == nil {
		t.Errorf("a QUERY with its key bound by a marker got payload %v (ScyllaDB prepares it too)", f.Body.CustomPayload)
	}
	rc.send(6, &message.Query{Query: `SELECT v FROM ks.t`, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if f := rc.recv(); f.Body.CustomPayload != nil {
		t.Errorf("a range scan got payload %v", f.Body.CustomPayload)
	}

	// Without the extension in STARTUP: never.
	plain := connect(0, false)
	if p := exec(plain, prepare(plain, `INSERT INTO ks.t (k, v) VALUES (?, ?)`), key(3), primitive.NewValue([]byte("three"))); p != nil {
		t.Errorf("a client that did not ask for TABLETS_ROUTING_V1 got payload %v", p)
	}
	// On the replica's shard: never.
	onReplica := connect(tabletShard, true)
	if p := exec(onReplica, prepare(onReplica, `INSERT INTO ks.t (k, v) VALUES (?, ?)`), key(4), primitive.NewValue([]byte("four"))); p != nil {
		t.Errorf("a request on the replica's shard got payload %v", p)
	}
	// Protocol v3: ScyllaDB's make_result sets the payload flag in any
	// version (transport/server.cc).
	v3 := connect(0, true)
	send3 := func(stream int16, msg message.Message) *frame.Frame {
		if err := v3.codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion3, stream, msg), v3.c); err != nil {
			t.Fatal(err)
		}
		f := v3.recv()
		if f.Header.Version != primitive.ProtocolVersion3 {
			t.Fatalf("a v3 request answered in %v", f.Header.Version)
		}
		return f
	}
	p3, ok := send3(7, &message.Prepare{Query: `INSERT INTO ks.t (k, v) VALUES (?, ?)`}).Body.Message.(*message.PreparedResult)
	if !ok {
		t.Fatal("v3 PREPARE failed")
	}
	f := send3(8, &message.Execute{QueryId: p3.PreparedQueryId, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne,
		PositionalValues: []*primitive.Value{key(5), primitive.NewValue([]byte("five"))}}})
	if !f.Header.Flags.Contains(primitive.HeaderFlagCustomPayload) {
		t.Errorf("a v3 INSERT on shard 0 got flags %v, want the custom payload", f.Header.Flags)
	}
}

// TestDriverLearnsTabletsFromThePayload: the ScyllaDB gocql fork, told by
// the payload that a table's tablet lives on shard 2, sends the table's next
// requests to its shard-2 connection, so the routing is asked for on shard
// 2 from then on.
func TestDriverLearnsTabletsFromThePayload(t *testing.T) {
	mem := &tabletMemory{Memory: enginetest.NewMemory("tablets")}
	srv, hp := enginetest.StartServerOpts(t, "127.0.1.42:0", mem, cql.Options{Shards: 4})
	s := newSession(t, hp, "")
	deadline := time.Now().Add(5 * time.Second)
	for srv.NumConns() < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'initial': 4}`,
		`CREATE TABLE ks.t (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ins := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`)
	const n = 60
	for i := range n {
		if err := ins.Bind(i, "v").Exec(); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	asked := mem.asked()
	if len(asked) != n {
		t.Fatalf("routing asked %d times for %d inserts", len(asked), n)
	}
	// The driver routes the first insert by the sharding algorithm; once a
	// payload arrived, every later one goes to shard 2.
	misrouted := 0
	for _, sh := range asked {
		if sh != tabletShard {
			misrouted++
		}
	}
	for i, sh := range asked[n/2:] {
		if sh != tabletShard {
			t.Fatalf("insert %d went to shard %d after the driver was told the tablet is on shard %d (shards asked: %v)", n/2+i, sh, tabletShard, asked)
		}
	}
	if misrouted == 0 {
		t.Fatalf("every insert was on shard %d from the start (%v): the test proves nothing", tabletShard, asked)
	}
	t.Logf("%d of %d inserts reached a shard that is not the replica's", misrouted, n)
}

// Tablets lists the one tablet of every table (engine.TabletLister).
func (m *tabletMemory) Tablets(keyspace, table string) []engine.TabletRoute {
	return []engine.TabletRoute{*m.theTablet()}
}

// TestSystemTablets: system.tablets lists a table's tablets with its
// keyspace, name and count (replica/tablets.cc make_tablets_schema), and
// system.token_ring one row per tablet replica under the table's name
// (db/virtual_tables.cc token_ring_table).
func TestSystemTablets(t *testing.T) {
	mem := &tabletMemory{Memory: enginetest.NewMemory("tablets")}
	_, hp := enginetest.StartServerOpts(t, "127.0.1.123:0", mem, cql.Options{Shards: 4})
	s := newSession(t, hp, "")
	for _, q := range []string{
		"CREATE KEYSPACE tk WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND tablets = {'enabled': true}",
		"CREATE TABLE tk.t (k int PRIMARY KEY)",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(q, err)
		}
	}
	var count int
	var last int64
	var replicas []struct {
		Host  gocql.UUID
		Shard int
	}
	q := "SELECT tablet_count, last_token, replicas FROM system.tablets WHERE keyspace_name = 'tk' AND table_name = 't' ALLOW FILTERING"
	if err := s.Query(q).Scan(&count, &last, &replicas); err != nil {
		t.Fatal(err)
	}
	if count != 1 || last != math.MaxInt64 || len(replicas) != 1 || replicas[0].Host != gocql.UUID(mem.Local().HostID) || replicas[0].Shard != tabletShard {
		t.Fatalf("system.tablets: count %d last %d replicas %v", count, last, replicas)
	}
	var start, end string
	if err := s.Query("SELECT start_token, end_token FROM system.token_ring WHERE keyspace_name = 'tk' AND table_name = 't'").Scan(&start, &end); err != nil {
		t.Fatal(err)
	}
	if start != strconv.FormatInt(math.MinInt64, 10) || end != strconv.FormatInt(math.MaxInt64, 10) {
		t.Fatalf("token_ring: (%s, %s]", start, end)
	}
}
