package stress

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/elasticity-dev/elasticity/results"
)

// A fill read back in full finds every key with its value; deleted keys
// are missing, overwritten ones mismatched, each counted once, by range
// and by replica, and a failed (unacknowledged) write is not a loss.
func TestValidateFindsLostAndWrongRows(t *testing.T) {
	s := session(t, enginetest.NewMemory("test"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const keys = 3000
	var written int64
	n, err := RunFill(ctx, s, Fill{Keyspace: "ks", Table: "kv", ValueSize: 100, ValueMax: 150, Concurrency: 16, CheckEvery: 10 * time.Millisecond},
		func() bool { return written >= keys }, nil, func(w int64) { written = w })
	if err != nil {
		t.Fatal(err)
	}
	// The workload overwrites keys with their own values: still valid.
	wctx, wcancel := context.WithTimeout(ctx, time.Second)
	if _, err := Run(wctx, s, Workload{Keyspace: "ks", Table: "kv", WriteRatio: 1, Rate: 500, KeyCount: n, ValueMin: 100, ValueMax: 150}, nil); err != nil {
		t.Fatal(err)
	}
	wcancel()
	var lookedUp []string // the partition keys the lost keys' replicas were asked for
	check := Check{Keyspace: "ks", Table: "kv", Keys: n, ValueMin: 100, ValueMax: 150, Sample: -1, Ranges: -1, CL: gocql.One, After: "final",
		Replicas: func(_ context.Context, pk string) ([]string, error) {
			lookedUp = append(lookedUp, pk)
			return []string{"node-1"}, nil
		}}
	v, err := Validate(ctx, s, check)
	if err != nil {
		t.Fatal(err)
	}
	if v.Lost() != 0 || v.ReadErrors != 0 || v.SampleKeys != n || v.ScannedRanges != results.RingParts || v.ScanExpected != n || v.ScannedRows != n {
		t.Fatalf("clean fill: %+v", v)
	}

	for _, k := range []int64{5, 17, 1234} {
		if err := s.Query("DELETE FROM ks.kv WHERE key = ?", k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Query("INSERT INTO ks.kv (key, value) VALUES (?, ?)", int64(99), []byte("not the value")).Exec(); err != nil {
		t.Fatal(err)
	}
	check.Unacked = func(k int64) bool { return k == 17 }
	check.Sample, check.Ranges = 500, 4 // a sample and part of the ring
	v, err = Validate(ctx, s, check)
	if err != nil {
		t.Fatal(err)
	}
	if v.Unacked != 1 || v.SampleKeys != 500 || v.ScannedRanges != 4 {
		t.Fatalf("sample and ranges: %+v", v)
	}
	// Whatever the sample and the four ranges cover of 5, 1234 (missing)
	// and 99 (wrong) is found; a full read finds exactly those (and looks
	// up their replicas itself: what the sample found is forgotten).
	check.Sample, check.Ranges = -1, 0
	lookedUp = nil
	v, err = Validate(ctx, s, check)
	if err != nil {
		t.Fatal(err)
	}
	if v.Missing != 2 || v.Mismatched != 1 || len(v.Examples) != 3 || v.ReplicasLookedUp != 3 {
		t.Fatalf("after deleting 5, 17 (unacknowledged), 1234 and overwriting 99: %+v", v)
	}
	if len(v.Nodes) != 1 || v.Nodes[0].Node != "node-1" || v.Nodes[0].Missing != 2 || v.Nodes[0].Mismatched != 1 {
		t.Fatalf("by node: %+v", v.Nodes)
	}
	if got := strings.Join(lookedUp, ","); got != "5,99,1234" {
		t.Errorf("replicas looked up for partition keys %s, want 5,99,1234 (the bigint keys in decimal)", got)
	}
	var missing, wrong int64
	for _, r := range v.Ranges {
		missing, wrong = missing+r.Missing, wrong+r.Mismatched
		if r.Scanned {
			t.Errorf("range %d scanned with ranges 0", r.Index)
		}
	}
	if missing != 2 || wrong != 1 {
		t.Fatalf("by range: %+v", v.Ranges)
	}
	for _, k := range []int64{5, 99, 1234} {
		if p := results.RingPartOf(KeyToken(k)); !hasRange(v.Ranges, p) {
			t.Errorf("key %d's range %d not reported", k, p)
		}
	}
	// Scans alone find the same keys.
	check.Sample, check.Ranges = 0, -1
	if v, err = Validate(ctx, s, check); err != nil || v.Missing != 2 || v.Mismatched != 1 || v.ScanExpected != n-1 || v.ScannedRows != n-3 {
		t.Fatalf("scans alone: %+v, %v", v, err)
	}
}

func hasRange(rs []results.RangeCheck, i int) bool {
	for _, r := range rs {
		if r.Index == i {
			return true
		}
	}
	return false
}
