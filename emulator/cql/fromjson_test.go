package cql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// fromJson(text) in a value parses the text as JSON into the receiver's
// type (cql3/functions/functions.cc make_from_json_function); a text that
// is no JSON or does not fit the type fails with FunctionFailure; JSON null
// and a null argument write null; a prepared fromJson(?) takes text.
func TestFromJSON(t *testing.T) {
	_, s, exec := memorySession(t, "fromjson", "127.0.1.245:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v int, l list<text>, m map<text, int>)`)
	exec(`INSERT INTO ks.t (p, v, l, m) VALUES (1, fromJson('17'), fromJson('["a", "b"]'), fromJson('{"x": 1}'))`)
	exec(`INSERT INTO ks.t (p, v) VALUES (?, fromJson(?))`, 2, "1000")
	exec(`UPDATE ks.t SET v = fromJson(?) WHERE p = ?`, "null", 1)
	exec(`INSERT INTO ks.t (p, v) VALUES (3, fromJson(null))`)
	rows := map[int]map[string]any{}
	for _, r := range selectAll(t, s, `SELECT p, v, l, m FROM ks.t`) {
		rows[r["p"].(int)] = r
	}
	if r := rows[1]; r["v"] != 0 || len(r["l"].([]string)) != 2 || r["m"].(map[string]int)["x"] != 1 {
		t.Errorf("row 1: %v", r)
	}
	if r := rows[2]; r["v"] != 1000 {
		t.Errorf("row 2: %v", r)
	}
	if _, ok := rows[3]; !ok {
		t.Errorf("row 3 missing: %v", rows)
	}
	for _, q := range []struct {
		stmt string
		args []any
	}{
		{`INSERT INTO ks.t (p, v) VALUES (4, fromJson('dog'))`, nil},
		{`INSERT INTO ks.t (p, v) VALUES (4, fromJson(?))`, []any{"dog"}},
		{`INSERT INTO ks.t (p, v) VALUES (4, fromJson('"dog"'))`, nil},
		{`INSERT INTO ks.t (p, v) VALUES (4, fromJson(?))`, []any{"1.2"}},
	} {
		err := s.Query(q.stmt, q.args...).Exec()
		var ff *gocql.RequestErrFunctionFailure
		if !errors.As(err, &ff) || ff.Function != "fromjson" {
			t.Errorf("%s %v: %v (%T), want a FunctionFailure", q.stmt, q.args, err, err)
		}
	}
}

// A map's JSON keys are strings a native key type reads as strings; only
// collection, tuple and user-type keys are JSON inside the string
// (types/json_utils.cc from_json_object_aux(map_type_impl)).
func TestJSONMapKeys(t *testing.T) {
	_, s, exec := memorySession(t, "jsonkeys", "127.0.1.246:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, d map<date, int>, ts map<timestamp, int>, b map<blob, int>, i map<int, int>)`)
	exec(`INSERT INTO ks.t (p, d, ts, b, i) VALUES (1, fromJson('{"2011-02-03": 3}'), fromJson('{"2014-01-01 12:15:45+0000": 4}'),
		fromJson('{"0x01ff": 5}'), fromJson('{"17": 6}'))`)
	var d map[time.Time]int
	var ts map[time.Time]int
	var b map[string]int
	var i map[int]int
	if err := s.Query(`SELECT d, ts, b, i FROM ks.t WHERE p = 1`).Scan(&d, &ts, &b, &i); err != nil {
		t.Fatal(err)
	}
	if d[time.Date(2011, 2, 3, 0, 0, 0, 0, time.UTC)] != 3 || len(d) != 1 {
		t.Errorf("date key: %v", d)
	}
	if ts[time.Date(2014, 1, 1, 12, 15, 45, 0, time.UTC)] != 4 || len(ts) != 1 {
		t.Errorf("timestamp key: %v", ts)
	}
	if b["\x01\xff"] != 5 || i[17] != 6 {
		t.Errorf("blob key %v, int key %v", b, i)
	}
}

// An integer column takes a JSON number in scientific notation or with a
// zero fraction, not one with a fractional part (types/json_utils.cc
// to_int; test/cqlpy test_fromjson_int_scientific_notation_*).
func TestJSONIntegerInScientificNotation(t *testing.T) {
	_, s, exec := memorySession(t, "jsonint", "127.0.1.248:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v int, b bigint)`)
	exec(`INSERT INTO ks.t (p, v, b) VALUES (1, fromJson('1e6'), fromJson('1.23456789E+9'))`)
	exec(`INSERT INTO ks.t JSON '{"p": 2, "v": 12.0, "b": 3e2}'`)
	var v, v2 int
	var b, b2 int64
	if err := s.Query(`SELECT v, b FROM ks.t WHERE p = 1`).Scan(&v, &b); err != nil || v != 1000000 || b != 1234567890 {
		t.Errorf("fromJson: %d %d %v", v, b, err)
	}
	if err := s.Query(`SELECT v, b FROM ks.t WHERE p = 2`).Scan(&v2, &b2); err != nil || v2 != 12 || b2 != 300 {
		t.Errorf("INSERT JSON: %d %d %v", v2, b2, err)
	}
	if err := s.Query(`INSERT INTO ks.t (p, v) VALUES (3, fromJson('12.34'))`).Exec(); err == nil {
		t.Error("12.34 into an int column: no error")
	}
}
