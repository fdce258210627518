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

func TestRecoveryDetection(t *testing.T) {
	r := NewRecovery(nil)
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
	// Disturbed intervals, then one where only writes recovered, then both.
	r.Observe(rec(results.OpWrite, since, 50, 100))
	r.Observe(rec(results.OpRead, since, 80, 100))
	r.Observe(rec(results.OpWrite, since.Add(time.Second), 2.5, 100))
	r.Observe(rec(results.OpRead, since.Add(time.Second), 20, 100))
	if _, ok := r.Check(since); ok {
		t.Fatal("recovered too early")
	}
	r.Observe(rec(results.OpWrite, since.Add(2*time.Second), 2.5, 100))
	if _, ok := r.Check(since); ok {
		t.Fatal("an interval missing its read record is not complete")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go r.Observe(rec(results.OpRead, since.Add(2*time.Second), 5, 100))
	at, err := r.Wait(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if !at.Equal(since.Add(3 * time.Second)) {
		t.Fatalf("recovered at %s, want end of third interval", at)
	}
}

func TestRecoveryThresholdAndErrors(t *testing.T) {
	r := NewRecovery(ThresholdsFrom([]results.Threshold{
		{Cycle: "steady_state", Metric: "write_p99_ms", Limit: 10},
		{Cycle: "Cycle #3", Metric: "write_p99_ms", Limit: 1},
	}))
	t0 := time.Now()
	r.StartBaseline()
	r.Observe(rec(results.OpWrite, t0, 1, 10))
	r.EndBaseline()
	if got := r.Targets()[results.OpWrite]; got != 10 {
		t.Fatalf("target %v, want the threshold 10", got)
	}
	bad := rec(results.OpWrite, t0.Add(time.Second), 5, 10)
	bad.Errors = map[string]int64{"timeout": 5}
	r.Observe(bad)
	r.Observe(rec(results.OpWrite, t0.Add(2*time.Second), 1, 10)) // completes the bad interval
	at, ok := r.Check(t0.Add(time.Second))
	if !ok || !at.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("errors must keep an interval unrecovered: %v %v", at, ok)
	}
}

// A ratio to the steady state is not a P99 limit in ms: recovery ignores it.
func TestThresholdsFromIgnoresRatios(t *testing.T) {
	got := ThresholdsFrom([]results.Threshold{{Cycle: "*", Metric: "read_p99_ms", Limit: 3, RatioToSteady: true}, {Cycle: "*", Metric: "write_p99_ms", Limit: 8}})
	if len(got) != 1 || got[results.OpWrite] != 8 {
		t.Errorf("got %v", got)
	}
}
