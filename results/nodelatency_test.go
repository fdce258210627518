package results

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestNodeP99: a cycle's node-side P99 is the P99 of what every node's
// coordinators counted during it (counts at its end less those at each
// node's last reading before it; all of them for a node that joined
// since), interpolated within the bucket as histogram_quantile does, with
// readings that stop at the first bucket holding every sample.
func TestNodeP99(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	h := func(count float64, bs ...float64) Histogram { // bounds 1000, 2000, 4000, 8000 µs
		out := Histogram{Count: count}
		for i, n := range bs {
			out.Buckets = append(out.Buckets, Bucket{LE: 1000 * math.Pow(2, float64(i)), N: n})
		}
		return out
	}
	lat := map[string][]latencySample{
		// node-1: 100 writes before the cycle (all ≤ 1 ms, the reading
		// stops there), then 100 more: 90 ≤ 1 ms, 8 in (1, 2], 2 in (4, 8].
		"node-1": {
			{t0, &CoordinatorLatency{Write: h(100, 100)}},
			{t0.Add(10 * time.Second), &CoordinatorLatency{Write: h(200, 190, 198, 198, 200)}},
		},
		// node-2 joined during the cycle: 100 writes, all in (1, 2].
		"node-2": {
			{t0.Add(5 * time.Second), &CoordinatorLatency{Write: h(100, 0, 100)}},
		},
		// node-3's only reading is after the cycle: it counts nothing.
		"node-3": {
			{t0.Add(20 * time.Second), &CoordinatorLatency{Write: h(1e6, 0, 0, 0, 1e6)}},
		},
	}
	w, r := nodeP99(lat, t0.Add(time.Second), t0.Add(11*time.Second))
	// 200 writes: 90 ≤ 1 ms, 198 ≤ 2 ms, 198 ≤ 4 ms, 200 ≤ 8 ms. The 198th
	// is the last in (1, 2]: P99 at rank 198 is 2 ms exactly.
	if math.Abs(w-2) > 1e-9 || r != 0 {
		t.Fatalf("node P99 write %v read %v, want 2 and 0", w, r)
	}
	// Rank 199 (P99.5) falls halfway into (4, 8]: 6 ms.
	all := addHistograms([]Histogram{h(200, 190, 198, 198, 200).sub(h(100, 100)), h(100, 0, 100)})
	if q := all.quantileMS(0.995); math.Abs(q-6) > 1e-9 {
		t.Fatalf("P99.5 = %v ms, want 6 (buckets %+v)", q, all.Buckets)
	}
	note := nodeLatencyNote([]Cycle{{Name: "Cycle #1", WriteP99MS: 9, ReadP99MS: 8, NodeWriteP99MS: w, NodeReadP99MS: 1.5}})
	if !strings.Contains(note, "Cycle #1 write 2.00 ms (client 9.00), read 1.50 ms (client 8.00)") {
		t.Fatalf("note: %s", note)
	}
	if nodeLatencyNote([]Cycle{{Name: "Cycle #0", WriteP99MS: 3}}) != "" {
		t.Fatal("a note without the nodes' figures")
	}
}
