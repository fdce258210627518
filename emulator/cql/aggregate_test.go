package cql_test

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"gopkg.in/inf.v0"
)

// Native aggregates (cql3/functions/aggregate_fcts.cc): count, min and max
// of a column, sum and avg of every numeric type in the argument's type
// (integers accumulated without bound and narrowed, with narrow()'s
// overflow error; decimal avg rounded half to even), nulls skipped, the
// empty result's values, and ScyllaDB's column names.
func TestAggregates(t *testing.T) {
	_, s, exec := memorySession(t, "aggs", "127.0.1.240:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, ti tinyint, i int, b bigint, f float, d double, dec decimal, vi varint, s text, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.t (p, c, ti, i, b, f, d, dec, vi, s) VALUES (1, 1, 101, 2147483647, 1, 1.5, 0.25, 1.5, 100000000000000000000, 'b')`)
	exec(`INSERT INTO ks.t (p, c, ti, i, b, f, d, dec, vi, s) VALUES (1, 2, 27, 1, 2, 2.0, 0.5, 2, 1, 'a')`)
	exec(`INSERT INTO ks.t (p, c) VALUES (1, 3)`)
	var cnt, sumB, avgB int64
	var minS, maxS string
	var sumF, avgF float32
	var sumD float64
	var sumDec, avgDec inf.Dec
	var sumVi big.Int
	err := s.Query(`SELECT count(i), sum(b), avg(b), min(s), max(s), sum(f), avg(f), sum(d), sum(dec), avg(dec), sum(vi) FROM ks.t WHERE p = 1`).
		Scan(&cnt, &sumB, &avgB, &minS, &maxS, &sumF, &avgF, &sumD, &sumDec, &avgDec, &sumVi)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintln(cnt, sumB, avgB, minS, maxS, sumF, avgF, sumD, sumDec.String(), avgDec.String(), sumVi.String())
	if want := "2 3 1 a b 3.5 1.75 0.75 3.5 1.8 100000000000000000001\n"; got != want {
		t.Errorf("aggregates: %s, want %s", got, want)
	}
	cols := s.Query(`SELECT sum(b), count(i) FROM ks.t`).Iter().Columns()
	if len(cols) != 2 || cols[0].Name != "system.sum(b)" || cols[1].Name != "system.count(i)" {
		t.Errorf("column names: %+v", cols)
	}
	for q, msg := range map[string]string{
		`SELECT sum(ti) FROM ks.t WHERE p = 1`:            "Sum overflow. Values should be casted to a wider type.",
		`SELECT sum(i) FROM ks.t WHERE p = 1`:             "Sum overflow",
		`SELECT avg(s) FROM ks.t`:                         "Invalid call to function avg",
		`SELECT max(i) FROM ks.t PER PARTITION LIMIT 1`:   "PER PARTITION LIMIT is not allowed with aggregate queries.",
		`SELECT count(*) FROM ks.t PER PARTITION LIMIT 1`: "PER PARTITION LIMIT is not allowed with aggregate queries.",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
	var avgI int32
	if err := s.Query(`SELECT avg(i) FROM ks.t WHERE p = 1`).Scan(&avgI); err != nil || avgI != 1073741824 {
		t.Errorf("avg(int) beyond int's range while summing: %d %v", avgI, err)
	}
	var empty int64
	var none *string
	if err := s.Query(`SELECT sum(b), min(s) FROM ks.t WHERE p = 2`).Scan(&empty, &none); err != nil || empty != 0 || none != nil {
		t.Errorf("no rows: sum %d, min %v, %v", empty, none, err)
	}
	exec(`CREATE TABLE ks.big (p int PRIMARY KEY, v decimal)`)
	exec(`INSERT INTO ks.big (p, v) VALUES (1, 1e500000000)`)
	exec(`INSERT INTO ks.big (p, v) VALUES (2, 1)`)
	if err := s.Query(`SELECT sum(v) FROM ks.big`).Exec(); err == nil || !strings.Contains(err.Error(), "SCYLLADB-1576") {
		t.Errorf("sum of decimals far apart in scale: %v", err)
	}
}
