package cql_test

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// IN on clustering columns (rows in clustering order, duplicates once:
// select_statement.cc make_partition_slice sorts the bounds), PER
// PARTITION LIMIT (select_statement.cc get_limit), writetime() and ttl()
// (cql3/expr/prepare_expr.cc prepare_column_mutation_attribute,
// expression.cc: ttl is the remaining time, null without one) with USING
// TIMESTAMP and TTL.
func TestRestrictionsAndCellAttributes(t *testing.T) {
	_, s, exec := memorySession(t, "restrict", "127.0.1.47:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v text, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)`)
	for p := 1; p <= 3; p++ {
		for c := 1; c <= 4; c++ {
			exec(`INSERT INTO ks.t (p, c, v) VALUES (?, ?, 'x')`, p, c)
		}
	}
	cs := func(q string, args ...any) []int {
		t.Helper()
		var out []int
		iter := s.Query(q, args...).Iter()
		var c int
		for iter.Scan(&c) {
			out = append(out, c)
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	if got := cs(`SELECT c FROM ks.t WHERE p = 1 AND c IN (1, 3, 3, 9)`); !reflect.DeepEqual(got, []int{3, 1}) {
		t.Errorf("c IN (1, 3, 3, 9) with DESC clustering: %v, want [3 1]", got)
	}
	if got := cs(`SELECT c FROM ks.t WHERE p = 1 AND c IN ?`, []int{2, 4}); !reflect.DeepEqual(got, []int{4, 2}) {
		t.Errorf("c IN ? bound to a list: %v, want [4 2]", got)
	}
	if got := cs(`SELECT c FROM ks.t WHERE p IN (1, 2) AND c IN (1, 2)`); !reflect.DeepEqual(got, []int{2, 1, 2, 1}) {
		t.Errorf("p IN (1, 2) AND c IN (1, 2): %v", got)
	}
	if got := cs(`SELECT c FROM ks.t WHERE p = 1 PER PARTITION LIMIT 2`); !reflect.DeepEqual(got, []int{4, 3}) {
		t.Errorf("PER PARTITION LIMIT 2 on one partition: %v", got)
	}
	if got := cs(`SELECT c FROM ks.t PER PARTITION LIMIT 1`); len(got) != 3 {
		t.Errorf("PER PARTITION LIMIT 1 on a scan of 3 partitions: %v", got)
	}
	// Paging keeps counting a partition's rows across pages.
	if got := cs(`SELECT c FROM ks.t PER PARTITION LIMIT 3`); len(got) != 9 {
		t.Errorf("PER PARTITION LIMIT 3 on a scan: %d rows, want 9", len(got))
	}
	iter := s.Query(`SELECT c FROM ks.t PER PARTITION LIMIT 3`).PageSize(2).Iter()
	n := 0
	var c int
	for iter.Scan(&c) {
		n++
	}
	if err := iter.Close(); err != nil || n != 9 {
		t.Errorf("paged PER PARTITION LIMIT 3 scan: %d rows, %v; want 9", n, err)
	}
	if err := s.Query(`SELECT c FROM ks.t PER PARTITION LIMIT 0`).Exec(); err == nil || !strings.Contains(err.Error(), "PER PARTITION LIMIT must be strictly positive") {
		t.Errorf("PER PARTITION LIMIT 0: %v", err)
	}

	exec(`INSERT INTO ks.t (p, c, v) VALUES (5, 1, 'y') USING TIMESTAMP 1234 AND TTL 1000`)
	var wt int64
	var ttl int
	var ttlNull *int
	if err := s.Query(`SELECT writetime(v), ttl(v) FROM ks.t WHERE p = 5 AND c = 1`).Scan(&wt, &ttl); err != nil {
		t.Fatal(err)
	}
	if wt != 1234 || ttl <= 990 || ttl > 1000 {
		t.Errorf("writetime %d, ttl %d: want 1234 and about 1000", wt, ttl)
	}
	exec(`INSERT INTO ks.t (p, c, v) VALUES (5, 2, 'z')`)
	before := time.Now().UnixMicro()
	if err := s.Query(`SELECT writetime(v), ttl(v) FROM ks.t WHERE p = 5 AND c = 2`).Scan(&wt, &ttlNull); err != nil {
		t.Fatal(err)
	}
	if ttlNull != nil || wt <= 0 || wt > before {
		t.Errorf("without USING: writetime %d (read at %d), ttl %v (want null)", wt, before, ttlNull)
	}
	iter = s.Query(`SELECT writetime(v) FROM ks.t WHERE p = 5`).Iter()
	if cols := iter.Columns(); len(cols) != 1 || cols[0].Name != "writetime(v)" || cols[0].TypeInfo.Type().String() != "bigint" {
		t.Errorf("writetime column: %+v", cols)
	}
	iter.Close()
	if err := s.Query(`SELECT writetime(c) FROM ks.t WHERE p = 5`).Exec(); err == nil || !strings.Contains(err.Error(), "writetime is not legal on partition key component c") {
		t.Errorf("writetime of a key column: %v", err)
	}
}
