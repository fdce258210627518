package cql_test

import (
	"errors"
	"testing"

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
