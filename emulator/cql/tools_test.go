package cql_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// serverMessage is the text of the error frame the server answered with.
func serverMessage(err error) string {
	var m interface{ GetMessage() string }
	if errors.As(err, &m) {
		return m.GetMessage()
	}
	if err == nil {
		return "<nil>"
	}
	return "not a server error: " + err.Error()
}

// The token(...) and counter CQL that tools send, against the in-memory
// backend: validation messages from cql3/expr/restrictions.cc,
// cql3/restrictions/statement_restrictions.cc, cql3/operation.cc,
// cql3/statements/batch_statement.cc and modification_statement.cc, and
// token bounds as partition_ranges_from_token reads them.
func TestDriverTokenAndCounterCQL(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.9:0", mem)
	s := newSession(t, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE k.t (a int, b int, c int, v int, PRIMARY KEY ((a, b), c))`,
		`CREATE TABLE k.cnt (k int PRIMARY KEY, n counter)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := 0; i < 20; i++ {
		if err := s.Query(`INSERT INTO k.t (a, b, c, v) VALUES (?, ?, ?, ?)`, i, i, 1, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	count := func(q string, args ...any) int {
		t.Helper()
		it := s.Query(q, args...).PageSize(3).Iter()
		n := 0
		for it.Scan(nil, nil, nil, nil) {
			n++
		}
		if err := it.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count(`SELECT * FROM k.t WHERE token(a, b) >= ?`, int64(math.MinInt64)); n != 20 {
		t.Errorf("token >= MIN: %d rows", n)
	}
	// `< MIN` is read as `< MAX` (statement_restrictions.cc, "undocumented feature").
	if n := count(`SELECT * FROM k.t WHERE token(a, b) < ?`, int64(math.MinInt64)); n != 20 {
		t.Errorf("token < MIN: %d rows", n)
	}
	if n := count(`SELECT * FROM k.t WHERE token(a, b) > ?`, int64(math.MaxInt64)); n != 0 {
		t.Errorf("token > MAX: %d rows", n)
	}
	if n := count(`SELECT * FROM k.t WHERE token(a, b) > 10 AND token(a, b) <= 10`); n != 0 {
		t.Errorf("empty intersection: %d rows", n)
	}
	if n := count(`SELECT * FROM k.t LIMIT 7`); n != 7 {
		t.Errorf("scan with LIMIT 7 over pages of 3: %d rows", n)
	}
	if n := count(`SELECT * FROM k.t WHERE v > 15 ALLOW FILTERING`); n != 4 {
		t.Errorf("filtered scan: %d rows", n)
	}

	for q, want := range map[string]string{
		`SELECT * FROM k.t WHERE token(a) > 0`:                      "The token() function must be applied to all partition key components or none of them",
		`SELECT * FROM k.t WHERE token(b, a) > 0`:                   "The token function arguments must be in the partition key order: a, b",
		`SELECT * FROM k.t WHERE token(a, a) > 0`:                   "The token() function contains duplicate partition key components",
		`SELECT * FROM k.t WHERE token(a, b) > 0 AND a = 1`:         `Columns "a" cannot be restricted by both a normal relation and a token relation`,
		`SELECT * FROM k.t WHERE token(a, b) > 0 AND v = 1`:         "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING",
		`UPDATE k.t SET v = v + 1 WHERE a = 1 AND b = 1 AND c = 1`:  "Invalid operation (v = v + 1) for non counter column v",
		`UPDATE k.cnt SET n = 1 WHERE k = 1`:                        "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)",
		`UPDATE k.cnt USING TIMESTAMP 5 SET n = n + 1 WHERE k = 1`:  "Cannot provide custom timestamp for counter updates",
		`UPDATE k.cnt SET n = n - -9223372036854775808 WHERE k = 1`: "The negation of -9223372036854775808 overflows supported counter precision (signed 8 bytes integer)",
		`BEGIN UNLOGGED BATCH UPDATE k.cnt SET n = n + 1 WHERE k = 1; INSERT INTO k.t (a, b, c, v) VALUES (1, 1, 1, 1); APPLY BATCH`: "Counter and non-counter mutations cannot exist in the same batch",
		`BEGIN COUNTER BATCH INSERT INTO k.t (a, b, c, v) VALUES (1, 1, 1, 1); APPLY BATCH`:                                          "Cannot include non-counter statement in a counter batch",
		`CREATE TABLE k.c2 (k int PRIMARY KEY, n counter) WITH default_time_to_live = 5`:                                             "Cannot set default_time_to_live on a table with counters",
		`CREATE TABLE k.c3 (k int PRIMARY KEY, n list<counter>)`:                                                                     "column n: Counters are not allowed inside collections: list<counter>",
	} {
		if got := serverMessage(s.Query(q).Exec()); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
	if got := serverMessage(s.Query(`UPDATE k.cnt SET n = n + 1 WHERE k = 1`).Consistency(gocql.Any).Exec()); got != "Consistency level ANY is not yet supported for counter table cnt" {
		t.Errorf("counter write at ANY: %s", got)
	}

	// Counters through the prepared path and a counter batch.
	for _, d := range []int64{5, -2} {
		if err := s.Query(`UPDATE k.cnt SET n = n + ? WHERE k = ?`, d, 1).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	b := s.NewBatch(gocql.CounterBatch)
	b.Query(`UPDATE k.cnt SET n = n - 1 WHERE k = 1`)
	b.Query(`UPDATE k.cnt SET n = n + 10 WHERE k = 2`)
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	var n1, n2 int64
	if err := s.Query(`SELECT n FROM k.cnt WHERE k = 1`).Scan(&n1); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`SELECT n FROM k.cnt WHERE k = 2`).Scan(&n2); err != nil {
		t.Fatal(err)
	}
	if n1 != 2 || n2 != 10 {
		t.Errorf("counters %d %d, want 2 10", n1, n2)
	}
}

// cassandra-stress's default schema and predefined statements
// (scylladb/cassandra-stress SettingsSchema.java, CqlInserter.java,
// CqlReader.java, CqlCounterAdder.java, CqlCounterGetter.java), verbatim:
// note the ",\n," after counter1's key, which CQL's grammar allows.
func TestDriverCassandraStressCQL(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.10:0", mem)
	s := newSession(t, hp, "")
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS \"keyspace1\" WITH replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'replication_factor' : '1'} AND tablets = {'enabled': false} AND durable_writes = true;\n",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
	}
	// cassandra-stress then says USE "keyspace1" (gocql refuses USE; a
	// session on the keyspace is the same).
	ks := newSession(t, hp, "keyspace1")
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS standard1 (key blob PRIMARY KEY \n, \"C0\" blob\n, \"C1\" blob) WITH compression = {};\n",
		"CREATE TABLE IF NOT EXISTS counter1 (key blob PRIMARY KEY,\n, \"C0\" counter\n, \"C1\" counter) WITH compression = {};\n",
	} {
		if err := ks.Query(q).Exec(); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
	}
	key := []byte("0x4b")
	if err := ks.Query(`UPDATE "standard1" SET "C0" = ?,"C1" = ? WHERE KEY=?`, []byte("a"), []byte("b"), key).Exec(); err != nil {
		t.Fatal(err)
	}
	var c0, c1 []byte
	if err := ks.Query(`SELECT "C0","C1" FROM "standard1" WHERE KEY=?`, key).Scan(&c0, &c1); err != nil || string(c0) != "a" || string(c1) != "b" {
		t.Fatalf("standard1 read: %q %q %v", c0, c1, err)
	}
	for i := 0; i < 3; i++ {
		if err := ks.Query(`UPDATE counter1 SET "C0"="C0"+?,"C1"="C1"+? WHERE KEY=?`, int64(1), int64(10), key).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var k []byte
	var n0, n1 int64
	if err := ks.Query(`SELECT * FROM "counter1" WHERE KEY=?`, key).Scan(&k, &n0, &n1); err != nil || n0 != 3 || n1 != 30 {
		t.Fatalf("counter1 read: %d %d %v", n0, n1, err)
	}
}

// scylla-bench's default schema and its write, read, counter_update and
// counter_read statements (scylladb/scylla-bench main.go, modes.go), with
// the trailing clauses its flags leave empty.
func TestDriverScyllaBenchCQL(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.11:0", mem)
	s := newSession(t, hp, "")
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS scylla_bench WITH REPLICATION = { 'class' : 'NetworkTopologyStrategy', 'replication_factor' : 1 } AND tablets = {'enabled': false}",
		"CREATE TABLE IF NOT EXISTS scylla_bench.test (pk bigint, ck bigint, v blob, PRIMARY KEY(pk, ck)) WITH compression = { }",
		"CREATE TABLE IF NOT EXISTS scylla_bench.test_counters (pk bigint, ck bigint, c1 counter, c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY(pk, ck)) WITH compression = { }",
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for ck := int64(0); ck < 3; ck++ {
		if err := s.Query("INSERT INTO scylla_bench.test (pk, ck, v) VALUES (?, ?, ?) ", int64(1), ck, []byte{byte(ck)}).Exec(); err != nil {
			t.Fatal(err)
		}
		if err := s.Query("UPDATE scylla_bench.test_counters  SET c1 = c1 + ?, c2 = c2 + ?, c3 = c3 + ?, c4 = c4 + ?, c5 = c5 + ? WHERE pk = ? AND ck = ?", ck, ck+1, ck+2, ck+3, ck+4, int64(1), ck).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var pk, ck int64
	var v []byte
	if err := s.Query("SELECT pk, ck, v FROM scylla_bench.test WHERE pk = ? AND ck >= ?  LIMIT 1  ", int64(1), int64(1)).Scan(&pk, &ck, &v); err != nil || ck != 1 || len(v) != 1 || v[0] != 1 {
		t.Fatalf("read: %d %d %v %v", pk, ck, v, err)
	}
	var c [5]int64
	if err := s.Query("SELECT pk, ck, c1, c2, c3, c4, c5 FROM scylla_bench.test_counters WHERE pk = ? AND ck >= ?  LIMIT 1  ", int64(1), int64(2)).Scan(&pk, &ck, &c[0], &c[1], &c[2], &c[3], &c[4]); err != nil || c != [5]int64{2, 3, 4, 5, 6} {
		t.Fatalf("counter read: %v %v", c, err)
	}
	// A reversed clustering order, read in both directions.
	if err := s.Query("CREATE TABLE scylla_bench.d (pk int, c1 int, c2 int, PRIMARY KEY (pk, c1, c2)) WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC)").Exec(); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{1, 1}, {1, 2}, {2, 1}} {
		if err := s.Query("INSERT INTO scylla_bench.d (pk, c1, c2) VALUES (1, ?, ?)", r[0], r[1]).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for order, want := range map[string]string{"": "[[2 1] [1 1] [1 2]]", "ORDER BY c1 ASC, c2 DESC": "[[1 2] [1 1] [2 1]]", "ORDER BY c1 DESC": "[[2 1] [1 1] [1 2]]"} {
		it := s.Query("SELECT c1, c2 FROM scylla_bench.d WHERE pk = 1 " + order).PageSize(2).Iter()
		var got [][2]int
		var c1, c2 int
		for it.Scan(&c1, &c2) {
			got = append(got, [2]int{c1, c2})
		}
		if err := it.Close(); err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%q: rows %v, want %s", order, got, want)
		}
	}

	// -select-order-by asc,desc (main.go): ORDER BY ck ASC / DESC, paged.
	for order, want := range map[string]string{"ORDER BY ck ASC": "[0 1]", "ORDER BY ck DESC": "[2 1]", "": "[0 1]"} {
		it := s.Query("SELECT pk, ck, v FROM scylla_bench.test WHERE pk = ? "+order+" LIMIT 2  ", int64(1)).PageSize(1).Iter()
		var got []int64
		for it.Scan(&pk, &ck, &v) {
			got = append(got, ck)
		}
		if err := it.Close(); err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%q: clustering keys %v, want %s", order, got, want)
		}
	}
	for q, want := range map[string]string{
		"SELECT * FROM scylla_bench.test ORDER BY ck DESC":                  "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.",
		"SELECT * FROM scylla_bench.test WHERE pk = 1 ORDER BY v DESC":      "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got v",
		"SELECT * FROM scylla_bench.test WHERE pk = 1 ORDER BY nope":        "Order by on unknown column nope",
		"SELECT ck AS x FROM scylla_bench.test WHERE pk = 1 ORDER BY x":     "Aliases are not allowed in order by clause ('x')",
		"SELECT * FROM scylla_bench.d WHERE pk = 1 ORDER BY c1 ASC, c2 ASC": "Unsupported order by relation - only reversing all columns is supported, but column c2 has opposite ordering",
		"SELECT * FROM scylla_bench.d WHERE pk = 1 ORDER BY c2 ASC":         "Unsupported order by relation - column c1 doesn't have an ordering or EQ relation.",
		"SELECT * FROM scylla_bench.d WHERE pk = 1 ORDER BY c2, c1":         "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY",
	} {
		if got := serverMessage(s.Query(q).Exec()); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}

	it := s.Query("SELECT * FROM scylla_bench.test WHERE token(pk) >= ? AND token(pk) <= ? ", int64(math.MinInt64), int64(math.MaxInt64)).Iter()
	n := 0
	for it.Scan(nil, nil, nil) {
		n++
	}
	if err := it.Close(); err != nil || n != 3 {
		t.Fatalf("scan: %d rows, %v", n, err)
	}
}
