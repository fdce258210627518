package monitor

import (
	"context"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/elasticity-dev/elasticity/results"
)

func rec(op string, start time.Time, p99 float64, count int64) results.LatencyRecord {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := int64(0); i < count; i++ {
		_ = h.RecordValue(int64(p99 * 1000))
	}
	enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return results.LatencyRecord{Start: start, End: start.Add(time.Second), Op: op, Count: count, Response: results.Summary{P99: p99}, ResponseHDR: string(enc)}
}

// The live watcher applies the offline rule: a single good interval is
// not recovery; the start of the first run of N good complete intervals is.
func TestRecoveryDetection(t *testing.T) {
	r := NewRecovery(nil, 2)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.StartBaseline()
	for i := 0; i < 5; i++ {
		r.Observe(rec(results.OpWrite, t0.Add(time.Duration(i)*time.Second), 2, 100))
		r.Observe(rec(results.OpRead, t0.Add(time.Duration(i)*time.Second), 4, 100))
	}
	r.EndBaseline()
	tg := r.Targets()
	if tg[results.OpWrite] < 2.9 || tg[results.OpWrite] > 3.1 || tg[results.OpRead] < 5.9 || tg[results.OpRead] > 6.1 {
		t.Fatalf("targets %v, want 1.5x baseline", tg)
	}
	since := t0.Add(10 * time.Second)
	at := func(i int) time.Time { return since.Add(time.Duration(i) * time.Second) }
	// bad, good, bad (only writes recovered), good, good.
	r.Observe(rec(results.OpWrite, at(0), 50, 100))
	r.Observe(rec(results.OpRead, at(0), 80, 100))
	r.Observe(rec(results.OpWrite, at(1), 2.5, 100))
	r.Observe(rec(results.OpRead, at(1), 5, 100))
	r.Observe(rec(results.OpWrite, at(2), 2.5, 100))
	r.Observe(rec(results.OpRead, at(2), 20, 100))
	r.Observe(rec(results.OpWrite, at(3), 2.5, 100))
	r.Observe(rec(results.OpRead, at(3), 5, 100))
	if _, ok := r.Check(since); ok {
		t.Fatal("one good interval inside a bad stretch is not recovery")
	}
	r.Observe(rec(results.OpWrite, at(4), 2.5, 100))
	if _, ok := r.Check(since); ok {
		t.Fatal("an interval missing its read record is not complete")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go r.Observe(rec(results.OpRead, at(4), 5, 100))
	got, err := r.Wait(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(at(3)) {
		t.Fatalf("recovered at %s, want the start of the good run, %s", got, at(3))
	}
	// The same series judged offline gives the same moment.
	var ivs []*results.RecoveryInterval
	var s results.RecoverySeries
	for i, w := range []float64{50, 2.5, 2.5, 2.5, 2.5} {
		rd := []float64{80, 5, 20, 5, 5}[i]
		s.Add(results.OpWrite, at(i), at(i+1), 100, 0, w)
		s.Add(results.OpRead, at(i), at(i+1), 100, 0, rd)
	}
	ivs = s.Sorted()
	if off, ok := results.SustainedRecovery(ivs, r.Targets(), 2, since, time.Time{}); !ok || !off.Equal(got) {
		t.Fatalf("offline %v %v, live %v", off, ok, got)
	}
}

func TestRecoveryThresholdAndErrors(t *testing.T) {
	r := NewRecovery([]results.Threshold{
		{Cycle: "steady_state", Metric: "write_p99_ms", Limit: 10},
		{Cycle: "Cycle #3", Metric: "write_p99_ms", Limit: 1},
		{Cycle: "*", Metric: "write_p99_ms", Limit: 3, RatioToSteady: true},
	}, 1)
	t0 := time.Now()
	r.StartBaseline()
	r.Observe(rec(results.OpWrite, t0, 1, 10))
	r.EndBaseline()
	if got := r.Targets()[results.OpWrite]; got != 10 {
		t.Fatalf("target %v, want the threshold 10 (a ratio is not a limit in ms)", got)
	}
	bad := rec(results.OpWrite, t0.Add(time.Second), 5, 10)
	bad.Errors = map[string]int64{"timeout": 5}
	r.Observe(bad)
	r.Observe(rec(results.OpWrite, t0.Add(2*time.Second), 1, 10)) // completes the bad interval
	at, ok := r.Check(t0.Add(time.Second))
	if !ok || !at.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("errors must keep an interval unrecovered: %v %v", at, ok)
	}
}
