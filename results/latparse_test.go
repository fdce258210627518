package results

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The fast path must agree with encoding/json on every line it accepts.
func TestParseLatencyLineMatchesJSON(t *testing.T) {
	lines := []string{
		`{"start":"2026-03-02T23:42:23Z","end":"2026-03-02T23:42:33.5+01:00","op":"write","count":10000,"errors":{"timeout":3,"other":1},"dropped":2,"late":5,"response":{"p50_ms":1.1,"p90_ms":2.5,"p99_ms":7.25,"p999_ms":9,"max_ms":12,"mean_ms":1.3},"service":{"p50_ms":1},"response_hdr":"HISTFAAAA","service_hdr":"HISTFBBB","source":"loader-1"}`,
		`{"op":"read","count":0,"dropped":0,"response":{},"errors":{},"response_hdr":""}`,
		`{"op":"read","count":3,"source":"workload","loader_lag_ms":12.75}`,
		`{"loader_lag_ms":"1"}`, // wrong type
		` { "op" : "read" , "extra" : [1, {"a": [true, false, null]}, "x"] } `,
		`{}`,
		`{"Start":"2026-03-02T23:42:23Z"}`, // case-insensitive key: json's job
		`{"op":"w\"x"}`,                    // escape: json's job
		`{"count":1.5}`,                    // not an int
		`{"count":null}`,                   // null
		`{"op":"write"} trailing`,          // garbage after the object
		`{"response":{"p90_ms":"1"}}`,      // wrong type
		`{"errors":{"a":1,}}`,              // bad JSON
		`{"start":"yesterday"}`,            // bad time
	}
	if f, err := os.Open(filepath.Join("..", "reporting", "testdata", "run1", FileLatency)); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for i := 0; sc.Scan() && i < 50; i++ {
			lines = append(lines, sc.Text())
		}
		f.Close()
	}
	fast := 0
	for _, l := range lines {
		var a, b latencyLine
		if !parseLatencyLine([]byte(l), &a) {
			continue
		}
		fast++
		if a.hdr != nil {
			a.ResponseHDR, a.hdr = string(a.hdr), nil
		}
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			t.Errorf("fast path accepted %s, json: %v", l, err)
			continue
		}
		if !a.Start.Equal(b.Start) || !a.End.Equal(b.End) {
			t.Errorf("%s: times %v %v, json %v %v", l, a.Start, a.End, b.Start, b.End)
		}
		a.Start, a.End = b.Start, b.End
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\nfast %+v\njson %+v", l, a, b)
		}
	}
	if fast < 4 {
		t.Errorf("fast path took only %d lines", fast)
	}
}

// FuzzParseLatencyLine: never a panic, and whatever the fast path accepts
// encoding/json accepts too.
func FuzzParseLatencyLine(f *testing.F) {
	for _, s := range []string{
		`{"start":"2026-03-02T23:42:23Z","op":"write","count":1,"errors":{"t":1},"response":{"p90_ms":1.5e0},"response_hdr":"x"}`,
		`{"a":[1,{"b":null}],"count":-0}`, `{"count":01}`, `{"response":{"p99_ms":-1.}}`, `{`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d latencyLine
		if parseLatencyLine([]byte(s), &d) {
			var j latencyLine
			if err := json.Unmarshal([]byte(s), &j); err != nil {
				t.Errorf("fast path accepted %q; json: %v", s, err)
			}
		}
	})
}
