package cql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// Tuples (cql3/tuples.cc; shown frozen in system_schema), durations
// (duration_type_impl: months, days, nanoseconds as vints; not in a
// primary key, create_table_statement.cc) and literals of date, time and
// decimal, read back through the Go driver's own decoding.
func TestTupleDurationAndLiterals(t *testing.T) {
	mem := enginetest.NewMemory("types")
	hp := enginetest.StartServer(t, "127.0.1.48:0", mem)
	s := newSession(t, hp, "")
	exec := func(q string, args ...any) {
		t.Helper()
		if err := s.Query(q, args...).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, tup frozen<tuple<int, text>>, d duration, day date, tm time, dec decimal)`)
	var typ string
	if err := s.Query(`SELECT type FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 't' AND column_name = 'tup'`).Scan(&typ); err != nil || typ != "frozen<tuple<int, text>>" {
		t.Errorf("tuple column type %q %v", typ, err)
	}
	exec(`INSERT INTO ks.t (k, tup, d, day, tm, dec) VALUES (1, (?, ?), 1y2mo3d4h5m6s789ms, '2024-02-29', '08:12:54.123', 12.345)`, 7, "seven")
	exec(`INSERT INTO ks.t (k, tup) VALUES (2, (3, null))`)
	var n int
	var str string
	var d gocql.Duration
	var day, tm time.Time
	var dur time.Duration
	if err := s.Query(`SELECT tup, d, day, tm FROM ks.t WHERE k = 1`).Scan(&n, &str, &d, &day, &dur); err != nil {
		t.Fatal(err)
	}
	_ = tm
	// decimal: scale 3, unscaled 12345 (0x3039).
	rows, ok := rawQuery(t, dialRaw(t, hp), `SELECT dec FROM ks.t WHERE k = 1`).(*message.RowsResult)
	if !ok || len(rows.Data) != 1 || string(rows.Data[0][0]) != "\x00\x00\x00\x03\x30\x39" {
		t.Errorf("decimal 12.345: %v", rows)
	}
	if n != 7 || str != "seven" {
		t.Errorf("tuple (%d, %q), want (7, seven)", n, str)
	}
	if d.Months != 14 || d.Days != 3 || d.Nanoseconds != int64(4*time.Hour+5*time.Minute+6*time.Second+789*time.Millisecond) {
		t.Errorf("duration %+v", d)
	}
	if day.Format("2006-01-02") != "2024-02-29" || dur != 8*time.Hour+12*time.Minute+54*time.Second+123*time.Millisecond {
		t.Errorf("date %v, time %v", day, dur)
	}
	var str2 *string
	if err := s.Query(`SELECT tup FROM ks.t WHERE k = 2`).Scan(&n, &str2); err != nil || n != 3 || str2 != nil {
		t.Errorf("tuple with a null element: %d %v %v", n, str2, err)
	}
	if err := s.Query(`CREATE TABLE ks.bad (k duration PRIMARY KEY)`).Exec(); err == nil || !strings.Contains(err.Error(), "duration type is not supported for PRIMARY KEY part k") {
		t.Errorf("duration key: %v", err)
	}
}
