package fleet

import (
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

func rec(t *testing.T, start time.Time, op string, lat ...time.Duration) results.LatencyRecord {
	t.Helper()
	h := results.NewHDR()
	for _, d := range lat {
		if err := h.RecordValue(d.Microseconds()); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := results.EncodeHDR(h)
	if err != nil {
		t.Fatal(err)
	}
	return results.LatencyRecord{Start: start, End: start.Add(time.Second), Op: op, Count: int64(len(lat)),
		ResponseHDR: enc, ServiceHDR: enc, Source: "loader"}
}

type collect struct {
	mu   sync.Mutex
	recs []results.LatencyRecord
}

func (c *collect) sink(r results.LatencyRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
}

func (c *collect) get() []results.LatencyRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]results.LatencyRecord(nil), c.recs...)
}

// An interval goes out once every loader has moved past it, merged, in time order.
func TestMergerWaitsForEveryLoader(t *testing.T) {
	var c collect
	m := newMerger(2, time.Second, time.Hour, c.sink)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	// Loader 0 ticks at .3 s, loader 1 at .8 s: both map to the same second.
	must(t, m.add(0, rec(t, t0.Add(300*ms), "write", 1*ms, 2*ms)))
	must(t, m.add(0, rec(t, t0.Add(1300*ms), "write", 3*ms)))
	if got := c.get(); len(got) != 0 {
		t.Fatalf("emitted %d records before loader 1 reported second 0", len(got))
	}
	must(t, m.add(1, rec(t, t0.Add(800*ms), "write", 100*ms)))
	if got := c.get(); len(got) != 0 {
		t.Fatalf("emitted before loader 1 moved past second 0: %+v", got)
	}
	must(t, m.add(1, rec(t, t0.Add(1800*ms), "write", 4*ms)))
	got := c.get()
	if len(got) != 1 {
		t.Fatalf("want second 0 merged, got %d records", len(got))
	}
	r := got[0]
	if !r.Start.Equal(t0) || r.Count != 3 || r.Source != "merged" {
		t.Fatalf("merged record: start %v count %d source %q", r.Start, r.Count, r.Source)
	}
	h, err := results.DecodeHDR(r.ResponseHDR)
	must(t, err)
	if h.TotalCount() != 3 || h.Max() < 99_000 {
		t.Fatalf("merged histogram: %d values, max %d µs", h.TotalCount(), h.Max())
	}
	// The end flushes the rest.
	m.loaderDone(-1)
	got = c.get()
	if len(got) != 2 || got[1].Count != 2 || !got[1].Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("after the end: %+v", got)
	}
}

// A loader that stops reporting holds intervals back for MaxSkew only, and a
// finished loader is not waited for.
func TestMergerSkewAndFinishedLoader(t *testing.T) {
	var c collect
	m := newMerger(3, time.Second, 2*time.Second, c.sink)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	must(t, m.add(0, rec(t, t0, "read", time.Millisecond)))
	must(t, m.add(0, rec(t, t0.Add(time.Second), "read", time.Millisecond)))
	m.loaderDone(2) // loader 2 ended: only loader 1 is awaited
	if n := len(c.get()); n != 0 {
		t.Fatalf("emitted %d records while loader 1 is silent", n)
	}
	m.flushOlder(time.Now().Add(3 * time.Second)) // MaxSkew passed
	if got := c.get(); len(got) != 2 || !got[0].Start.Before(got[1].Start) {
		t.Fatalf("after MaxSkew: %+v", got)
	}
}

// A record without a histogram is an error the stream reports.
func TestMergerBadRecord(t *testing.T) {
	var c collect
	m := newMerger(1, time.Second, time.Hour, c.sink)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	bad := rec(t, t0, "write", time.Millisecond)
	bad.ResponseHDR = ""
	_ = m.add(0, bad)
	m.loaderDone(-1)
	if m.err() == nil {
		t.Fatal("a record with a count and no histogram was merged silently")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
