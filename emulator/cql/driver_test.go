package cql_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// newSession connects the ScyllaDB gocql fork to hostport with
// token-aware routing and protocol negotiation.
func newSession(t testing.TB, hostport string, keyspace string) *gocql.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(hostport)
	p, _ := strconv.Atoi(port)
	cluster := gocql.NewCluster(host)
	cluster.Port = p
	cluster.Keyspace = keyspace
	cluster.Timeout = 5 * time.Second
	cluster.ConnectTimeout = 5 * time.Second
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cluster.Consistency = gocql.Quorum
	cluster.WriteCoalesceWaitTime = 0
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connecting gocql to %s: %v", hostport, err)
	}
	t.Cleanup(s.Close)
	return s
}

// memorySession starts a memory-engine server named name on its own
// loopback addr and connects to it; exec runs a statement and fails the
// test on an error, for the setup steps of a test.
func memorySession(t *testing.T, name, addr string) (hostport string, s *gocql.Session, exec func(q string, args ...any)) {
	t.Helper()
	hostport = enginetest.StartServer(t, addr, enginetest.NewMemory(name))
	s = newSession(t, hostport, "")
	exec = func(q string, args ...any) {
		t.Helper()
		if err := s.Query(q, args...).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return hostport, s, exec
}

func TestDriverHandshake(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.1:0", mem)
	s := newSession(t, hp, "")
	var cluster, partitioner string
	var hostID gocql.UUID
	var tokens []string
	if err := s.Query("SELECT cluster_name, partitioner, host_id, tokens FROM system.local WHERE key='local'").Scan(&cluster, &partitioner, &hostID, &tokens); err != nil {
		t.Fatal(err)
	}
	if cluster != "test-cluster" || partitioner != "org.apache.cassandra.dht.Murmur3Partitioner" || len(tokens) != 16 {
		t.Fatalf("system.local: %q %q %v", cluster, partitioner, tokens)
	}
	if hostID != gocql.UUID(mem.Local().HostID) {
		t.Fatalf("host_id %v", hostID)
	}
	_ = fmt.Sprint
	_ = engine.One
}

func TestDriverWorkload(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.2:0", mem)
	s := newSession(t, hp, "")

	if err := s.Query(`CREATE KEYSPACE IF NOT EXISTS ks1 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3} AND tablets = {'initial': 8}`).Exec(); err != nil {
		t.Fatalf("create keyspace: %v", err)
	}
	ks := mem.Schema().Keyspaces["ks1"]
	if ks == nil || !ks.TabletsEnabled || ks.Tablets != 8 || ks.Replication["class"] != "org.apache.cassandra.locator.NetworkTopologyStrategy" || ks.Replication["datacenter1"] != "3" {
		t.Fatalf("keyspace def: %+v", ks)
	}
	if err := s.Query(`CREATE TABLE ks1.kv (pk bigint, ck int, v blob, n text, PRIMARY KEY ((pk), ck)) WITH CLUSTERING ORDER BY (ck DESC) AND compaction = {'class': 'IncrementalCompactionStrategy'} AND comment = 'hello'`).Exec(); err != nil {
		t.Fatalf("create table: %v", err)
	}

	const n = 10000
	t0 := time.Now()
	defer func() { t.Logf("workload took %v", time.Since(t0)) }()
	ins := s.Query(`INSERT INTO ks1.kv (pk, ck, v, n) VALUES (?, ?, ?, ?)`).Consistency(gocql.Quorum)
	for i := 0; i < n; i++ {
		if err := ins.Bind(int64(i/4), i%4, []byte(fmt.Sprintf("value-%d", i)), strconv.Itoa(i)).Exec(); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	sel := s.Query(`SELECT pk, ck, v, n FROM ks1.kv WHERE pk = ?`).Consistency(gocql.Quorum)
	got := 0
	for p := int64(0); p < n/4; p++ {
		iter := sel.Bind(p).Iter()
		var pk int64
		var ck int
		var v []byte
		var name string
		prev := 99
		for iter.Scan(&pk, &ck, &v, &name) {
			i := int(pk)*4 + ck
			if pk != p || string(v) != fmt.Sprintf("value-%d", i) || name != strconv.Itoa(i) {
				t.Fatalf("row mismatch: pk=%d ck=%d v=%q n=%q", pk, ck, v, name)
			}
			if ck >= prev {
				t.Fatalf("clustering order not DESC: %d after %d", ck, prev)
			}
			prev = ck
			got++
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("select pk=%d: %v", p, err)
		}
	}
	if got != n {
		t.Fatalf("read back %d rows, want %d", got, n)
	}
	t.Logf("wrote and read %d rows in %v", n, time.Since(t0))

	// Clustering prefix, range and limit and count.
	var cnt int64
	if err := s.Query(`SELECT COUNT(*) FROM ks1.kv WHERE pk = ?`, int64(7)).Scan(&cnt); err != nil || cnt != 4 {
		t.Fatalf("count: %d %v", cnt, err)
	}
	var ck int
	if err := s.Query(`SELECT ck FROM ks1.kv WHERE pk = 7 AND ck = 2`).Scan(&ck); err != nil || ck != 2 {
		t.Fatalf("select ck=2: %d %v", ck, err)
	}
	iter := s.Query(`SELECT ck FROM ks1.kv WHERE pk = 7 AND ck >= 1 AND ck < 3 LIMIT 5`).Iter()
	var cks []int
	for iter.Scan(&ck) {
		cks = append(cks, ck)
	}
	if err := iter.Close(); err != nil || fmt.Sprint(cks) != "[2 1]" {
		t.Fatalf("range: %v %v", cks, err)
	}

	t.Logf("queries done at %v", time.Since(t0))
	// The driver loads table metadata lazily after a schema change event.
	tm, err := s.TableMetadata("ks1", "kv")
	if err != nil {
		t.Fatalf("table metadata: %v", err)
	}
	md, err := s.KeyspaceMetadata("ks1")
	t.Logf("metadata done at %v", time.Since(t0))
	if err != nil {
		t.Fatalf("keyspace metadata: %v", err)
	}
	if md.Tables["kv"] == nil {
		t.Fatalf("table kv missing from keyspace metadata: %+v", md.Tables)
	}
	if len(tm.PartitionKey) != 1 || tm.PartitionKey[0].Name != "pk" || len(tm.ClusteringColumns) != 1 || tm.ClusteringColumns[0].Name != "ck" || len(tm.Columns) != 4 {
		t.Fatalf("table metadata: pk=%v ck=%v cols=%v", tm.PartitionKey, tm.ClusteringColumns, tm.Columns)
	}
	if tm.Columns["v"].Type != "blob" || tm.ClusteringColumns[0].Order != gocql.DESC {
		t.Fatalf("column metadata: %+v %+v", tm.Columns["v"], tm.ClusteringColumns[0])
	}
	if md.StrategyClass != "org.apache.cassandra.locator.NetworkTopologyStrategy" || md.StrategyOptions["datacenter1"] != "3" {
		t.Fatalf("keyspace metadata: %+v", md)
	}
	// A session that connects after the DDL sees it all in KeyspaceMetadata.
	fresh, err := newSession(t, hp, "").KeyspaceMetadata("ks1")
	if err != nil || fresh.Tables["kv"] == nil || len(fresh.Tables["kv"].Columns) != 4 || fresh.Tables["kv"].Columns["n"].Type != "text" {
		t.Fatalf("fresh keyspace metadata: %+v %v", fresh, err)
	}

	// Unlogged batch, composite partition key, USE, TTL, UPDATE, DELETE, DROP.
	if err := s.Query(`CREATE TABLE ks1.comp (a text, b int, c uuid, d timestamp, x double, PRIMARY KEY ((a, b), c))`).Exec(); err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch(gocql.UnloggedBatch)
	u1, u2 := gocql.TimeUUID(), gocql.TimeUUID()
	now := time.Now().Truncate(time.Millisecond).UTC()
	b.Query(`INSERT INTO ks1.comp (a, b, c, d, x) VALUES (?, ?, ?, ?, ?)`, "k", 1, u1, now, 1.5)
	b.Query(`INSERT INTO ks1.comp (a, b, c, d, x) VALUES ('k', 1, ` + u2.String() + `, '2024-01-02T03:04:05Z', 2.5) USING TTL 3600`)
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatalf("batch: %v", err)
	}
	var rows []map[string]any
	if rows, err = s.Query(`SELECT * FROM ks1.comp WHERE a = ? AND b = ?`, "k", 1).Iter().SliceMap(); err != nil || len(rows) != 2 {
		t.Fatalf("composite select: %v %v", rows, err)
	}
	if err := s.Query(`USE ks1`).Exec(); err == nil {
		t.Log("USE through a pooled session executed")
	}
	s2 := newSession(t, hp, "ks1")
	if err := s2.Query(`UPDATE comp USING TTL 100 SET x = ? WHERE a = ? AND b = ? AND c = ?`, 9.5, "k", 1, u1).Exec(); err != nil {
		t.Fatalf("update: %v", err)
	}
	var x float64
	var d time.Time
	if err := s2.Query(`SELECT x, d FROM comp WHERE a = 'k' AND b = 1 AND c = ?`, u1).Scan(&x, &d); err != nil || x != 9.5 || !d.Equal(now) {
		t.Fatalf("after update: x=%v d=%v err=%v", x, d, err)
	}
	if err := s2.Query(`DELETE FROM comp WHERE a = 'k' AND b = 1 AND c = ?`, u1).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(`SELECT COUNT(*) FROM comp WHERE a = 'k' AND b = 1`).Scan(&cnt); err != nil || cnt != 1 {
		t.Fatalf("after delete: %d %v", cnt, err)
	}
	// Table default TTL and explicit TTL both expire rows.
	if err := s2.Query(`CREATE TABLE ttl (k int PRIMARY KEY, v int) WITH default_time_to_live = 1`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(`INSERT INTO ttl (k, v) VALUES (1, 1)`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(`INSERT INTO ttl (k, v) VALUES (2, 2) USING TTL 1000`).Exec(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := s2.Query(`SELECT COUNT(*) FROM ttl WHERE k IN (1, 2)`).Scan(&cnt); err != nil || cnt != 1 {
		t.Fatalf("after TTL expiry: %d rows, %v", cnt, err)
	}
	if err := s2.Query(`TRUNCATE comp`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(`DROP TABLE IF EXISTS comp`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`DROP KEYSPACE ks1`).Exec(); err != nil {
		t.Fatal(err)
	}
	if mem.Schema().Keyspaces["ks1"] != nil {
		t.Fatal("keyspace still present after DROP")
	}
}

// TestDriverShardAware checks the driver takes its ScyllaDB path: with 4
// advertised shards it opens one pooled connection per shard.
func TestDriverShardAware(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	srv, hp := enginetest.StartServerOpts(t, "127.0.1.4:0", mem, cql.Options{Shards: 4})
	s := newSession(t, hp, "")
	deadline := time.Now().Add(5 * time.Second)
	for srv.NumConns() < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := srv.NumConns(); n < 5 {
		t.Fatalf("driver opened %d connections, want >= 5 (control + one per shard)", n)
	}
	var shards int
	for _, h := range s.GetHosts() {
		shards = h.ScyllaShardCount()
	}
	if shards != 4 {
		t.Fatalf("driver sees %d shards, want 4", shards)
	}
}

func cqlOptions() cql.Options { return cql.Options{} }

// TestStressSchema runs the statements the stress package issues.
func TestStressSchema(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.9:0", mem)
	s := newSession(t, hp, "")
	var dc string
	if err := s.Query("SELECT data_center FROM system.local").Scan(&dc); err != nil || dc != "datacenter1" {
		t.Fatalf("data_center: %q %v", dc, err)
	}
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', '" + dc + "': 3}",
		"CREATE KEYSPACE IF NOT EXISTS ks2 WITH replication = {'class': 'NetworkTopologyStrategy', '" + dc + "': 3} AND tablets = {'enabled': false}",
		"CREATE KEYSPACE IF NOT EXISTS ks3 WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 2}",
		"CREATE TABLE IF NOT EXISTS ks.standard1 (key bigint PRIMARY KEY, value blob)",
		"CREATE TABLE IF NOT EXISTS ks.standard1 (key bigint PRIMARY KEY, value blob)",
	} {
		if err := s.Query(q).Consistency(gocql.All).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sch := mem.Schema()
	if !sch.Keyspaces["ks"].TabletsEnabled || sch.Keyspaces["ks2"].TabletsEnabled || sch.Keyspaces["ks3"].Replication["datacenter1"] != "2" {
		t.Fatalf("keyspaces: %+v %+v %+v", sch.Keyspaces["ks"], sch.Keyspaces["ks2"], sch.Keyspaces["ks3"])
	}
	ins := "INSERT INTO ks.standard1 (key, value) VALUES (?, ?)"
	for i := int64(0); i < 100; i++ {
		if err := s.Query(ins, i, []byte{byte(i)}).Consistency(gocql.Quorum).Idempotent(true).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var v []byte
	if err := s.Query("SELECT value FROM ks.standard1 WHERE key = ?", int64(42)).Consistency(gocql.Quorum).Scan(&v); err != nil || len(v) != 1 || v[0] != 42 {
		t.Fatalf("read: %v %v", v, err)
	}
	if err := s.Query("SELECT value FROM ks.standard1 WHERE key = ?", int64(4242)).Scan(&v); err != gocql.ErrNotFound {
		t.Fatalf("missing key: %v", err)
	}
}

func TestDriverPaging(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.10:0", mem)
	s := newSession(t, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE p WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE p.t (k int, c text, v int, PRIMARY KEY (k, c))`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < 3; k++ {
		for i := 0; i < 10; i++ {
			if err := s.Query(`INSERT INTO p.t (k, c, v) VALUES (?, ?, ?)`, k, fmt.Sprintf("c%02d", i), i).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	collect := func(q string, page int, args ...any) []string {
		t.Helper()
		iter := s.Query(q, args...).PageSize(page).Iter()
		var out []string
		var k int
		var c string
		for iter.Scan(&k, &c) {
			out = append(out, fmt.Sprintf("%d/%s", k, c))
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	got := collect(`SELECT k, c FROM p.t WHERE k = ?`, 3, 1)
	if len(got) != 10 || got[0] != "1/c00" || got[9] != "1/c09" {
		t.Fatalf("paged partition: %v", got)
	}
	got = collect(`SELECT k, c FROM p.t WHERE k IN (0, 1, 2)`, 4)
	if len(got) != 30 || got[10] != "1/c00" {
		t.Fatalf("paged IN: %v", got)
	}
	got = collect(`SELECT k, c FROM p.t WHERE k IN (0, 2) LIMIT 13`, 5)
	if len(got) != 13 || got[12] != "2/c02" {
		t.Fatalf("paged IN with LIMIT: %v", got)
	}
	got = collect(`SELECT k, c FROM p.t WHERE k = 2 AND c > 'c06'`, 2)
	if len(got) != 3 || got[0] != "2/c07" {
		t.Fatalf("paged range: %v", got)
	}
}

// TestRoutingKey checks Mutation.PartitionKey is exactly what the driver
// hashes for token-aware routing, for single and composite keys.
func TestRoutingKey(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	var last []byte
	f := &enginetest.Faulty{Backend: mem, WriteErr: func(ms []engine.Mutation, _ engine.Consistency) error {
		last = ms[0].PartitionKey
		return nil
	}}
	hp := enginetest.StartServer(t, "127.0.1.13:0", f)
	s := newSession(t, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE r WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`,
		`CREATE TABLE r.one (k bigint PRIMARY KEY, v int)`,
		`CREATE TABLE r.two (a text, b int, c uuid, v int, PRIMARY KEY ((a, b), c))`,
		`CREATE TABLE r.rev (v int, b int, a text, PRIMARY KEY ((b, a)))`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO r.one (k, v) VALUES (?, ?)`, []any{int64(77), 1}},
		{`INSERT INTO r.two (a, b, c, v) VALUES (?, ?, ?, ?)`, []any{"abc", 5, gocql.TimeUUID(), 1}},
		{`INSERT INTO r.rev (v, a, b) VALUES (?, ?, ?)`, []any{1, "zz", 9}},
		{`UPDATE r.two SET v = ? WHERE c = ? AND b = ? AND a = ?`, []any{1, gocql.TimeUUID(), 7, "q"}},
	} {
		q := s.Query(tc.q, tc.args...)
		want, err := q.GetRoutingKey()
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: driver computed no routing key (%v): prepared pk indexes missing?", tc.q, err)
		}
		if err := q.Exec(); err != nil {
			t.Fatal(err)
		}
		if string(last) != string(want) {
			t.Fatalf("%s: partition key %x, driver routing key %x", tc.q, last, want)
		}
	}
}

func TestDriverV3AndLargeValues(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.15:0", mem)
	host, port, _ := net.SplitHostPort(hp)
	p, _ := strconv.Atoi(port)
	cluster := gocql.NewCluster(host)
	cluster.Port = p
	cluster.ProtoVersion = 3
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("v3 session: %v", err)
	}
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE big WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE big.t (k int PRIMARY KEY, v blob)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	val := make([]byte, 3<<20)
	for i := range val {
		val[i] = byte(i * 7)
	}
	if err := s.Query(`INSERT INTO big.t (k, v) VALUES (?, ?)`, 1, val).Exec(); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := s.Query(`SELECT v FROM big.t WHERE k = ?`, 1).Scan(&got); err != nil || string(got) != string(val) {
		t.Fatalf("large value round trip: %d bytes, %v", len(got), err)
	}
}
