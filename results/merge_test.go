package results

import (
	"testing"
	"time"
)

// loaderRecord is latRec (compute_test.go) as a loader writes it: with the
// service histogram and an error class too.
func loaderRecord(t *testing.T, start time.Time, op string, values ...int64) LatencyRecord {
	r := latRec(t, op, start, values...)
	r.ServiceHDR, r.Service = r.ResponseHDR, r.Response
	r.Errors = map[string]int64{"timeout": 1}
	return r
}

func TestMergeLoadersReproducesCombinedPercentiles(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Loader A is fast, loader B slow; they tick 300 ms apart.
	var fast, slow []int64
	for i := 0; i < 900; i++ {
		fast = append(fast, 1000) // 1 ms
	}
	for i := 0; i < 100; i++ {
		slow = append(slow, 50000) // 50 ms
	}
	a := []LatencyRecord{loaderRecord(t, t0, OpWrite, fast...)}
	b := []LatencyRecord{loaderRecord(t, t0.Add(300*time.Millisecond), OpWrite, slow...), loaderRecord(t, t0.Add(1300*time.Millisecond), OpRead, 2000)}
	merged, err := MergeLoaders([][]LatencyRecord{a, b}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) != 2 {
		t.Fatalf("want 2 merged records (write @0s, read @1s), got %d", len(merged))
	}
	w := merged[0]
	if w.Op != OpWrite || w.Count != 1000 || w.Errors["timeout"] != 2 || !w.Start.Equal(t0) {
		t.Fatalf("merged write: %+v", w)
	}
	// 10% of all operations took 50 ms: the merged P90 is ~1 ms and P99 is ~50 ms,
	// which neither loader's own summary shows.
	if w.Response.P90 > 1.1 || w.Response.P99 < 49 || w.Response.P99 > 51 {
		t.Fatalf("merged percentiles: %+v", w.Response)
	}
	if merged[1].Op != OpRead || !merged[1].Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("second record: %+v", merged[1])
	}
}

// Loaders lag independently: a merged interval keeps the worst loader's
// lag (the operations it was due to send were late by it), not a sum.
func TestMergeLoadersKeepsTheWorstLoaderLag(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := latRec(t, OpWrite, t0, 100), latRec(t, OpWrite, t0.Add(10*time.Millisecond), 100)
	a.LoaderLagMS, b.LoaderLagMS = 4, 12
	out, err := MergeLoaders([][]LatencyRecord{{a}, {b}}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].LoaderLagMS != 12 || out[0].Count != a.Count+b.Count {
		t.Errorf("merged %+v, want one record with loader lag 12 ms", out)
	}
}
