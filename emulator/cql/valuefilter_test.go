package cql_test

import (
	"fmt"
	"sort"
	"testing"
)

// Filtering with = compares values by their type (1230 and 1.23E+3 are
// one decimal), a query through a secondary index matches the indexed
// bytes (test/cqlpy test_decimal_si_and_mv_representation).
func TestFilterEqualityByValue(t *testing.T) {
	_, s, exec := memorySession(t, "valuefilter", "127.0.1.247:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v decimal, w decimal)`)
	exec(`INSERT INTO ks.t (p, v, w) VALUES (1, 1230, 1230)`)
	exec(`INSERT INTO ks.t (p, v, w) VALUES (2, 1.23E+3, 1.23E+3)`)
	exec(`INSERT INTO ks.t (p, v, w) VALUES (3, 456, 456)`)
	exec(`CREATE INDEX ON ks.t (w)`)
	ps := func(q string) string {
		t.Helper()
		var out []int
		for _, r := range selectAll(t, s, q) {
			out = append(out, r["p"].(int))
		}
		sort.Ints(out)
		return fmt.Sprint(out)
	}
	for q, want := range map[string]string{
		`SELECT p FROM ks.t WHERE v = 1230 ALLOW FILTERING`:    "[1 2]",
		`SELECT p FROM ks.t WHERE v = 1.23E+3 ALLOW FILTERING`: "[1 2]",
		`SELECT p FROM ks.t WHERE v = 123E+1 ALLOW FILTERING`:  "[1 2]",
		`SELECT p FROM ks.t WHERE v = 456 ALLOW FILTERING`:     "[3]",
		`SELECT p FROM ks.t WHERE w = 1230`:                    "[1]",
		`SELECT p FROM ks.t WHERE w = 1.23E+3`:                 "[2]",
	} {
		if got := ps(q); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}
