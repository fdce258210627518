package node

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMissEqualizingCombination is ScyllaDB's test/boost/hwlb_test.cc
// test_hit_rates on its cases: coordinators chosen uniformly each pick cl
// of the replicas (seeing themselves first), and the replicas' misses
// (reads × (1 - hit rate)) come out equal, but for a replica that already
// gets the most a read can give it (1/cl of the reads); and every
// coordinator keeps as much as it can for itself, min(rf·p, 1/cl).
func TestMissEqualizingCombination(t *testing.T) {
	cases := []struct {
		hr []float32
		cl int
	}{
		{[]float32{0.8, 0.65, 0.55}, 1}, {[]float32{0.8, 0.8, 0.8}, 1}, {[]float32{0.9, 0.25, 0.15}, 1},
		{[]float32{0.94, 0.93, 0.4}, 1}, {[]float32{0.98, 0.98, 0.4}, 1},
		{[]float32{0.8, 0.8, 0.8}, 2}, {[]float32{0.8, 0.8, 0.2}, 2}, {[]float32{0.8, 0.57, 0.8}, 2},
		{[]float32{0.81, 0.79, 0.57}, 2}, {[]float32{0.81, 0.79, 0.27}, 2}, {[]float32{0.87, 0.83, 0.75}, 2},
		{[]float32{0.95, 0.95, 0.15}, 2}, {[]float32{0.8, 0.65, 0.55}, 2}, {[]float32{0.94, 0.93, 0.4}, 2},
		{[]float32{0.98, 0.98, 0.4}, 2}, {[]float32{0.999, 0.999, 0.4}, 2},
		{[]float32{0.90, 0.89, 0.89, 0.40}, 3}, {[]float32{0.79, 0.78, 0.77, 0.80, 0.32}, 2},
		{[]float32{0.79, 0.78, 0.77, 0.80, 0.32}, 3}, {[]float32{0.95, 0.95, 0.95, 0.95, 0.95, 0.4}, 2},
		{[]float32{0.79, 0.78, 0.77, 0.80, 0.33, 0.33, 0.3}, 4},
		{[]float32{0.95, 0.85, 0.75}, 2}, {[]float32{0.90, 0.89, 0.91, 0.40}, 3}, // clipped
	}
	for _, c := range cases {
		// With the extra replica a speculative retry takes, as reads here
		// always ask for it; the cl chosen are the same draw without it.
		checkHitRates(t, c.hr, c.cl, true, 200_000)
	}
}

func checkHitRates(t *testing.T, hr []float32, cl int, extra bool, iterations int) {
	t.Helper()
	rf := len(hr)
	count := make([]float64, rf)
	count2 := make([][]float64, rf) // [coordinator][replica]
	for i := range count2 {
		count2[i] = make([]float64, rf)
	}
	rotated := make([]float32, rf)
	invalid := 0
	for range rf * iterations {
		coord := rand.IntN(rf)
		// me_first: the coordinator sees itself first, the others in turn.
		for i := range rf {
			rotated[i] = hr[(coord+i)%rf]
		}
		c := missEqualizingCombination(rotated, 0, cl, extra)
		if extra {
			x := c[len(c)-1]
			c = c[:len(c)-1]
			if x < 0 || x >= rf || slices.Contains(c, x) {
				invalid++
			}
		}
		slices.Sort(c)
		if len(c) != cl || len(slices.Compact(slices.Clone(c))) != cl {
			invalid++
			continue
		}
		for _, i := range c {
			node := (coord + i) % rf
			count[node]++
			count2[coord][node]++
		}
	}
	var sum float64
	for _, n := range count {
		sum += n
	}
	minMiss, maxMiss := math.Inf(1), 0.0
	for i := range rf {
		if math.Abs(count[i]/sum-1/float64(cl)) < 1e-3 {
			continue // wanted more than a read can give it
		}
		misses := (1 - float64(hr[i])) * count[i]
		minMiss, maxMiss = min(minMiss, misses), max(maxMiss, misses)
	}
	if maxMiss/minMiss >= 1.06 {
		t.Errorf("hit rates %v, cl %d, extra %v: misses per replica differ by %.3f× (reads %v)", hr, cl, extra, maxMiss/minMiss, count)
	}
	for i := range rf {
		var total float64
		for _, n := range count2[i] {
			total += n
		}
		want := math.Min(float64(rf)*count[i]/sum, 1/float64(cl))
		if got := count2[i][i] / total; math.Abs(got-want) >= 1e-2 {
			t.Errorf("hit rates %v, cl %d: coordinator %d kept %.3f of its reads, want %.3f", hr, cl, i, got, want)
		}
	}
	if invalid > rf*iterations/100_000 {
		t.Errorf("hit rates %v, cl %d, extra %v: %d invalid combinations", hr, cl, extra, invalid)
	}
}
