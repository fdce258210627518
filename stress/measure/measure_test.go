package measure

import (
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

func TestSnapshotAndTotals(t *testing.T) {
	r := New([]string{"write", "read"})
	r.Success(0, 2*time.Millisecond, time.Millisecond, false)
	r.Success(0, 3*time.Minute, time.Nanosecond, true) // clamped to 60 s and 1 µs, not lost
	r.Error(1, "timeout", true)
	r.Drop(1, 5)
	t0 := time.Now()
	recs, err := r.Snapshot(t0, t0.Add(time.Second), "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Op != "write" || recs[1].Op != "read" || recs[0].Source != "test" {
		t.Fatalf("%+v", recs)
	}
	w, rd := recs[0], recs[1]
	if w.Count != 2 || w.Late != 1 || w.Response.Max < 59000 || w.Service.P50 != 0.001 {
		t.Fatalf("write %+v", w)
	}
	if rd.Count != 0 || rd.Errors["timeout"] != 1 || rd.Dropped != 5 || rd.Late != 1 {
		t.Fatalf("read %+v", rd)
	}
	h, err := results.DecodeHDR(w.ResponseHDR)
	if err != nil || h.TotalCount() != 2 {
		t.Fatalf("decoded %v %v", h, err)
	}
	// The next interval starts empty; totals keep everything.
	r.Success(1, time.Millisecond, time.Millisecond, false)
	recs, _ = r.Snapshot(t0.Add(time.Second), t0.Add(2*time.Second), "")
	if recs[0].Count != 0 || recs[1].Count != 1 || recs[1].Dropped != 0 || len(recs[1].Errors) != 0 {
		t.Fatalf("second interval %+v", recs)
	}
	tot := r.Totals()
	if tot[0].Succeeded != 2 || tot[1].Succeeded != 1 || tot[1].Dropped != 5 || tot[1].ErrorCount() != 1 || tot[0].Response.Max < 59000 {
		t.Fatalf("totals %+v", tot)
	}
	if a := testing.AllocsPerRun(1000, func() { r.Success(0, time.Millisecond, time.Millisecond, false) }); a != 0 {
		t.Fatalf("%v allocations per recorded success", a)
	}
}
