package cqlparse

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var validStatements = []string{
	`CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND durable_writes = true AND tablets = {'enabled': true, 'initial': 8}`,
	`create keyspace "MyKs" with REPLICATION = {'class' : 'SimpleStrategy', 'replication_factor' : 1};`,
	`DROP KEYSPACE IF EXISTS ks`,
	`CREATE TABLE IF NOT EXISTS ks.t (a text, b int, c bigint, d blob, e map<text, frozen<list<int>>>, PRIMARY KEY ((a, b), c)) WITH CLUSTERING ORDER BY (c DESC) AND compaction = {'class': 'LeveledCompactionStrategy'} AND comment = 'x' AND gc_grace_seconds = 10`,
	`CREATE TABLE t (k int PRIMARY KEY, v text) WITH COMPACT STORAGE`,
	`DROP TABLE ks.t`,
	`USE "Quoted""Ks"`,
	`INSERT INTO ks.t (a, b, c, d) VALUES (?, ?, ?, ?) USING TTL 10 AND TIMESTAMP 123`,
	`INSERT INTO t (k, u, f, b, n) VALUES (-1, 123e4567-e89b-12d3-a456-426614174000, -1.5e10, 0xCAFE, null) IF NOT EXISTS`,
	`SELECT * FROM ks.t WHERE a = ? AND b = ? AND c >= 5 LIMIT 10 ALLOW FILTERING USING TIMEOUT 5s`,
	`SELECT COUNT(*) FROM t WHERE k IN (1, 2, 3)`,
	`SELECT a AS x, "B" FROM t WHERE k IN ? BYPASS CACHE`,
	`UPDATE t USING TTL ? SET v = ?, w = 'x' WHERE k = ? IF EXISTS`,
	`DELETE v, w FROM t USING TIMESTAMP 5 WHERE k = :key`,
	`TRUNCATE TABLE ks.t`,
	`BEGIN UNLOGGED BATCH INSERT INTO t (k) VALUES (1); UPDATE t SET v = 2 WHERE k = 1; DELETE FROM t WHERE k = 3; APPLY BATCH`,
	"SELECT * -- comment\n FROM /* block */ t // end\n WHERE k = $$dollar ' string$$",
}

// The CQL of scylla-bench (modes.go) and of token-range scanners.
func TestParseTokenAndCounters(t *testing.T) {
	st, n, err := Parse(`SELECT * FROM ks.t WHERE token(pk) >= ? AND token(pk) <= ? BYPASS CACHE`)
	if err != nil || n != 2 {
		t.Fatal(err, n)
	}
	sel := st.(*Select)
	if len(sel.Where) != 2 || strings.Join(sel.Where[0].Token, ",") != "pk" || sel.Where[0].Op != ">=" || sel.Where[1].Op != "<=" || sel.Where[1].Value.Bind != 1 {
		t.Fatalf("%+v", sel.Where)
	}
	st, _, err = Parse(`SELECT token("A", b) AS t, v FROM t WHERE TOKEN("A", b) > -9223372036854775808`)
	if err != nil {
		t.Fatal(err)
	}
	sel = st.(*Select)
	if strings.Join(sel.Columns[0].Token, ",") != "A,b" || sel.Columns[0].Alias != "t" || sel.Where[0].Value.Text != "-9223372036854775808" {
		t.Fatalf("%+v", sel)
	}
	st, n, err = Parse(`UPDATE ks.test_counters USING TIMEOUT 5s SET c1 = c1 + ?, c2 = c2 - 3, c3 += ?, c4 -= 1 WHERE pk = ? AND ck = ?`)
	if err != nil || n != 4 {
		t.Fatal(err, n)
	}
	up := st.(*Update)
	ops := ""
	for _, a := range up.Set {
		ops += a.Column + a.Op + termString(a.Value) + " "
	}
	if ops != "c1+? c2-3 c3+? c4-1 " {
		t.Fatalf("assignments %q", ops)
	}
	st, _, err = Parse(`BEGIN COUNTER BATCH UPDATE t SET c = c + 1 WHERE k = 1; APPLY BATCH`)
	if err != nil || !st.(*Batch).Counter {
		t.Fatal(err, st)
	}
}

func termString(t Term) string {
	if t.Kind == TermBind {
		return "?"
	}
	return t.Text
}

func TestParseValid(t *testing.T) {
	for _, q := range validStatements {
		if _, _, err := Parse(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestParseDetails(t *testing.T) {
	st, n, err := Parse(`CREATE TABLE ks.t (a text, b int, c bigint, v blob, PRIMARY KEY ((a, b), c)) WITH CLUSTERING ORDER BY (c DESC)`)
	if err != nil || n != 0 {
		t.Fatal(err, n)
	}
	ct := st.(*CreateTable)
	if ct.Keyspace != "ks" || strings.Join(ct.PartitionKey, ",") != "a,b" || strings.Join(ct.Clustering, ",") != "c" || !ct.ClusteringOrder["c"] {
		t.Fatalf("%+v", ct)
	}
	st, n, err = Parse(`UPDATE t USING TTL ? SET v = ? WHERE k = ? AND c = 'x'`)
	if err != nil || n != 3 {
		t.Fatal(err, n)
	}
	up := st.(*Update)
	if up.Using.TTL.Bind != 0 || up.Set[0].Value.Bind != 1 || up.Where[0].Value.Bind != 2 || up.Where[1].Value.Text != "x" {
		t.Fatalf("%+v", up)
	}
	st, _, err = Parse(`SELECT * FROM T WHERE "Key" = 1 USING TIMEOUT 250ms`)
	if err != nil {
		t.Fatal(err)
	}
	sel := st.(*Select)
	if sel.Table != "t" || sel.Where[0].Column != "Key" || sel.Using.Timeout != 250*time.Millisecond {
		t.Fatalf("%+v", sel)
	}
	st, _, _ = Parse(`CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`)
	repl := st.(*CreateKeyspace).Options["replication"]
	if repl.Kind != TermMap || len(repl.Keys) != 2 || repl.Values[1].Kind != TermInt || repl.Values[1].Text != "3" {
		t.Fatalf("%+v", repl)
	}
}

func TestParseErrors(t *testing.T) {
	for _, q := range []string{
		"", ";", "SELECT", "SELECT * FROM", "SELECT * FROM t WHERE", "SELEKT * FROM t", "INSERT INTO t (a) VALUES (1, 2)",
		"CREATE TABLE t (a int)", "CREATE TABLE t (a int, PRIMARY KEY (a), PRIMARY KEY (a))", "CREATE TRIGGER i ON t USING 'x'",
		"SELECT 'unterminated", `SELECT "`, "SELECT * FROM t /* open", "SELECT * FROM t WHERE a = 0xZZ",
		"UPDATE t SET c = c * 1 WHERE k = 1", "SELECT * FROM t; SELECT", "BEGIN BATCH SELECT * FROM t APPLY BATCH",
		"SELECT * FROM t USING TIMEOUT 5", "SELECT * FROM t WHERE token(k) != 0", "SELECT * FROM t WHERE \"token\"(k) > 0", strings.Repeat("[", 100000),
		"INSERT INTO t (a) VALUES (" + strings.Repeat("{", 50) + ")",
	} {
		_, _, err := Parse(q)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: want SyntaxError, got %v", q, err)
		}
	}
	_, _, err := Parse("SELEKT * FROM t")
	if !strings.Contains(err.Error(), "SELEKT") {
		t.Errorf("message does not name the statement: %v", err)
	}
	_, _, err = Parse("INSERT INTO t (a) VALUES (1, 2)")
	if !strings.HasPrefix(err.Error(), "INSERT") {
		t.Errorf("message does not name the statement: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, q := range validStatements {
		f.Add(q)
	}
	f.Add("SELECT * FROM t WHERE k IN (1, [2, {3: 4}])")
	f.Fuzz(func(t *testing.T, q string) {
		st, n, err := Parse(q)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("non-syntax error %T: %v", err, err)
			}
			return
		}
		if st == nil || st.Name() == "" || n < 0 {
			t.Fatalf("bad result %v %d", st, n)
		}
	})
}
