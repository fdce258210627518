package cql_test

import (
	"sort"
	"strings"
	"testing"
)

// SELECT DISTINCT returns one row per partition with its key and static
// columns, and refuses what cql3/statements/select_statement.cc
// validate_distinct_selection and prepare_group_by refuse.
func TestSelectDistinct(t *testing.T) {
	_, s, exec := memorySession(t, "distinct", "127.0.1.82:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, v int, s int STATIC, PRIMARY KEY (p, c))`)
	for p := 1; p <= 5; p++ {
		for c := 1; c <= 3; c++ {
			exec(`INSERT INTO ks.t (p, c, v, s) VALUES (?, ?, ?, ?)`, p, c, c, p*10)
		}
	}
	var ps []int
	iter := s.Query(`SELECT DISTINCT p, s FROM ks.t`).PageSize(2).Iter()
	var p, st int
	for iter.Scan(&p, &st) {
		if st != p*10 {
			t.Errorf("partition %d: static %d", p, st)
		}
		ps = append(ps, p)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	sort.Ints(ps)
	if len(ps) != 5 || ps[0] != 1 || ps[4] != 5 {
		t.Errorf("DISTINCT p over pages of 2: %v", ps)
	}
	if got := selectAll(t, s, `SELECT DISTINCT p FROM ks.t WHERE p = 3 GROUP BY p`); len(got) != 1 || got[0]["p"] != 3 {
		t.Errorf("DISTINCT in a partition: %v", got)
	}
	if got := selectAll(t, s, `SELECT DISTINCT p FROM ks.t LIMIT 2`); len(got) != 2 {
		t.Errorf("DISTINCT LIMIT 2: %v", got)
	}
	for q, msg := range map[string]string{
		`SELECT DISTINCT p FROM ks.t PER PARTITION LIMIT 1`:     "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
		`SELECT DISTINCT p, c FROM ks.t`:                        "SELECT DISTINCT queries must only request partition key columns and/or static columns (not c)",
		`SELECT DISTINCT s FROM ks.t`:                           "SELECT DISTINCT queries must request all the partition key columns (missing p)",
		`SELECT DISTINCT p FROM ks.t WHERE p = 1 AND c = 1`:     "SELECT DISTINCT with WHERE clause only supports restriction by partition key.",
		`SELECT DISTINCT p FROM ks.t WHERE p = 1 GROUP BY p, c`: "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
		`SELECT DISTINCT p FROM ks.t GROUP BY v`:                "Group by non-primary-key column v",
		`SELECT p FROM ks.t GROUP BY p`:                         "GROUP BY without SELECT DISTINCT is not supported by the emulator",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
}
