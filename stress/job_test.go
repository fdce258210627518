package stress

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseMixAndRate(t *testing.T) {
	w, r, err := ParseMix("write=3, read=1")
	if err != nil || w != 3 || r != 1 {
		t.Fatalf("%v %v %v", w, r, err)
	}
	if w, r, err = ParseMix("write=1"); err != nil || w != 1 || r != 0 {
		t.Fatalf("%v %v %v", w, r, err)
	}
	if _, _, err := ParseMix("write=1,write=2"); err == nil {
		t.Fatal("duplicate accepted")
	}
	for in, want := range map[string]float64{"5000/s": 5000, "5k/s": 5000, "2500": 2500, "0": 0, "1.5k": 1500, "100 ops/s": 100} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Fatalf("%q: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "-1/s", "x/s", "NaN"} {
		if _, err := ParseRate(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// A job survives its encoding: what the runner builds is what a loader runs.
func TestJobRoundTrip(t *testing.T) {
	jobs := []Job{
		DefaultJob(),
		{Hosts: []string{"10.0.0.1", "10.0.0.2:9043"}, Port: 9042, DC: "dc1", Keyspace: "ks", Table: "t", ValueMin: 512, ValueMax: 4096,
			WriteCL: "LOCAL_QUORUM", ReadCL: "ONE", WriteRatio: 3, ReadRatio: 1, Rate: 1234.567, Duration: 0, Concurrency: 38,
			Distribution: "gaussian(0.1)", Keys: 98765, Source: "loader-2", Interval: 500 * time.Millisecond,
			Timeout: 3 * time.Second, MaxLag: time.Second, CalibrateStep: time.Second, KeyStride: 1},
		{Hosts: []string{"h"}, Port: 19042, Keyspace: "ks", Table: "t", ValueMin: 100, ValueMax: 100, WriteCL: "QUORUM", ReadCL: "QUORUM",
			WriteRatio: 1, Distribution: "uniform", Fill: true, StartKey: 1001, KeyStride: 3, Rate: 0, Source: "fill-loader-2",
			Interval: time.Second, Timeout: time.Second, MaxLag: time.Second, CalibrateStep: time.Second},
		{Hosts: []string{"h"}, Port: 9042, Keyspace: "ks", Table: "t", ValueMin: 1024, ValueMax: 1024, WriteCL: "QUORUM", ReadCL: "QUORUM",
			WriteRatio: 0.5, ReadRatio: 0.5, Distribution: "uniform", Keys: 1, KeyStride: 1, CalibrateCeiling: 37 * time.Millisecond,
			CalibrateStep: 2500 * time.Millisecond, CalibrateBudget: 10 * time.Second, CalibrateMaxConcurrency: 512, CalibrateStartConcurrency: 8, CalibrateOnly: true,
			Concurrency: 75, Interval: time.Second, Timeout: time.Second, MaxLag: time.Second},
	}
	for i, j := range jobs {
		if i > 0 {
			if err := j.Validate(); err != nil {
				t.Fatalf("job %d invalid: %v", i, err)
			}
		}
		args := j.Args()
		got, err := ParseJob(args)
		if i == 0 {
			// The default job has no hosts: it decodes, then fails validation.
			if err == nil || !strings.Contains(err.Error(), "--hosts is required") {
				t.Fatalf("default job: %v", err)
			}
			got.Hosts, j.Hosts = nil, nil
		} else if err != nil {
			t.Fatalf("job %d: %v\n%q", i, err, args)
		}
		if !reflect.DeepEqual(got, j) {
			t.Errorf("job %d does not round-trip:\n sent %+v\n  got %+v\n args %q", i, j, got, args)
		}
	}
}

// Splitting a job between loaders divides the rate and concurrency and
// interleaves a fill's keys so that together they write each key once.
func TestJobShare(t *testing.T) {
	j := DefaultJob()
	j.Hosts, j.Rate, j.Concurrency = []string{"h"}, 1000, 150
	a, b := j.Share(0, 3), j.Share(2, 3)
	if a.Rate*3 != 1000 || a.Concurrency != 50 || b.Concurrency != 50 || a.StartKey != 0 || a.KeyStride != 1 {
		t.Fatalf("workload shares %+v %+v", a, b)
	}
	j.Fill, j.StartKey, j.Concurrency = true, 100, 1
	seen := map[int64]int{}
	for i := 0; i < 3; i++ {
		s := j.Share(i, 3)
		if s.Concurrency != 1 {
			t.Fatalf("share %d concurrency %d", i, s.Concurrency)
		}
		for k := 0; k < 4; k++ {
			seen[s.StartKey+int64(k)*s.KeyStride]++
		}
	}
	for k := int64(100); k < 112; k++ {
		if seen[k] != 1 {
			t.Fatalf("key %d written %d times by the shares", k, seen[k])
		}
	}
	if j.Share(0, 1).StartKey != 100 {
		t.Fatal("a job of one loader is the job itself")
	}
}
