package node

import (
	"math/rand/v2"
)

// Heat-weighted load balancing (HWLB) of reads, as ScyllaDB's
// db/heat_load_balance.cc: a read at a level that needs k of a tablet's n
// replicas goes to k chosen at random so that every replica serves the
// same cache misses per second. A replica whose cache holds more of its
// data (a larger node after a scale-out) gets more reads, a cold one
// fewer; the coordinator, when a replica, is kept among them as far as
// that allows. The functions below are that file's, in float32 as there.

// randFloat is rand_float: uniform in [0, 1).
func randFloat() float32 {
	for {
		if f := rand.Float32(); f < 1 {
			return f
		}
	}
}

// randone picks index i with probability p[i], for rnd in [0, 1).
func randone(p []float32, rnd float32) int {
	last := len(p) - 1
	for i := 0; i < last; i++ {
		rnd -= p[i]
		if rnd < 0 {
			return i
		}
	}
	return last
}

// ssample is systematic sampling: k different indices (p[i] ≤ 1/k each,
// summing to 1), index i among them with probability k·p[i].
func ssample(k int, p []float32, rnd float32) []int {
	interval := 1 / float32(k)
	rnd *= interval
	ret := make([]int, 0, k)
	var offset float32
	for i := 0; i < k; i++ {
		ret = append(ret, randone(p, rnd+offset))
		offset += interval
	}
	return ret
}

// missEqualizingProbabilities: the share of reads per replica that gives
// each the same misses, 1/(1-h) normalized.
func missEqualizingProbabilities(hitRates []float32) []float32 {
	ret := make([]float32, len(hitRates))
	var sum float32
	for i, h := range hitRates {
		ret[i] = 1 / (1 - h)
		sum += ret[i]
	}
	for i := range ret {
		ret[i] /= sum
	}
	return ret
}

// clipProbabilities caps each share at limit (a replica cannot be chosen
// twice for one read) and spreads the excess over the others.
func clipProbabilities(p []float32, limit float32) {
	ratio := float32(1)
	for {
		var clipped, sumUnclipped float32
		for i := range p {
			if p[i] >= limit {
				clipped += p[i] - limit
				p[i] = limit
			} else {
				p[i] *= ratio
				sumUnclipped += p[i]
			}
		}
		if clipped == 0 {
			return
		}
		ratio = (sumUnclipped + clipped) / sumUnclipped
	}
}

// redistribute turns the replicas' overall shares p into the shares this
// coordinator (index me, itself chosen uniformly by the clients) uses, so
// that it sends as much as it can to itself and the sum over coordinators
// stays p: heat_load_balance.cc redistribute(), case for case.
func redistribute(p []float32, me, k int) []float32 {
	rf := len(p)
	frf, fk := float32(rf), float32(k)
	pp := make([]float32, rf)
	pp[me] = min(frf*p[me], 1/fk)
	deficit := make([]float32, rf)
	mixedCount := 0
	for j := 0; j < rf; j++ {
		if d := frf*p[j] - 1/fk; d >= 0 {
			mixedCount++
			deficit[j] = d
		}
	}
	mixedSurplus := 1 - 1/fk
	var mySurplus float32
	switch {
	case deficit[me] == 0:
		mySurplus = 1 - frf*p[me]
	case deficit[me] <= mixedSurplus:
		mySurplus = mixedSurplus - deficit[me]
	}
	if deficit[me] != 0 {
		redistributeMixed(pp, deficit, me, mixedCount, mixedSurplus)
	}
	if mySurplus != 0 {
		var newTotal float32
		for i := range deficit {
			if deficit[i] > 0 {
				if deficit[i] > mixedSurplus {
					deficit[i] -= mixedSurplus
					newTotal += deficit[i]
				} else {
					deficit[i] = 0
				}
			}
		}
		for j := range deficit {
			if deficit[j] > 0 {
				pp[j] += deficit[j] / newTotal * mySurplus
			}
		}
	}
	return pp
}

// redistributeMixed is redistribute's part for a coordinator that is a
// "mixed" node (its share above 1/k: it sends to others as well).
func redistributeMixed(pp, deficit []float32, me, mixedCount int, mixedSurplus float32) {
	rf := len(pp)
	type idef struct {
		i int
		d float32
	}
	// sorted_deficits: insertion keeps equal deficits in index order.
	var sorted []idef
	for i := 0; i < rf; i++ {
		if deficit[i] != 0 && deficit[i] <= deficit[me] && deficit[i] < mixedSurplus {
			at := 0
			for at < len(sorted) && sorted[at].d < deficit[i] {
				at++
			}
			sorted = append(sorted[:at], append([]idef{{i, deficit[i]}}, sorted[at:]...)...)
		}
	}
	var s float32
	count := mixedCount
	for _, d := range sorted {
		diff := d.d - s
		s = d.d
		count--
		if count == 0 {
			break
		}
		for i := 0; i < rf; i++ {
			if i != me && deficit[i] >= d.d {
				pp[i] += diff / float32(count)
			}
		}
		if d.i == me {
			break
		}
	}
	if deficit[me] > mixedSurplus {
		// The C++ reads sorted_deficits.back() here; it is never empty
		// when reached with rf ≥ 2, and 0 stands in if it were.
		var last float32
		if len(sorted) > 0 {
			last = sorted[len(sorted)-1].d
		}
		diff := mixedSurplus - last
		if count > 1 {
			for i := 0; i < rf; i++ {
				if i != me && deficit[i] > last {
					pp[i] += diff / float32(count-1)
				}
			}
		} else {
			for i := 0; i < rf; i++ {
				if i != me {
					pp[i] += diff / float32(mixedCount-1)
				}
			}
		}
		return
	}
	converted, mixI := 0, 0
	var last float32
	for i := 0; i < rf; i++ {
		if deficit[i] > mixedSurplus {
			converted++
			mixI = i
		} else {
			last = max(last, deficit[i])
		}
	}
	if converted == 1 {
		diff := mixedSurplus - last
		pp[mixI] += diff / float32(mixedCount-1)
		for i := 0; i < rf; i++ {
			if deficit[i] > 0 && i != mixI && i != me {
				pp[i] -= diff / float32(mixedCount-1) / float32(mixedCount-2)
			}
		}
	}
}

// missEqualizingCombination chooses bf of the replicas whose hit rates are
// given (me: this node's index, or ≥ len when it is not a replica), and
// with extra one more, chosen uniformly among the rest, for a speculative
// retry: heat_load_balance.hh miss_equalizing_combination.
func missEqualizingCombination(hitRates []float32, me, bf int, extra bool) []int {
	p := missEqualizingProbabilities(hitRates)
	clipProbabilities(p, 1/float32(bf))
	if me < len(hitRates) {
		p = redistribute(p, me, bf)
	}
	chosen := ssample(bf, p, randFloat())
	if extra {
		used := make([]bool, len(p))
		for _, i := range chosen {
			used[i] = true
		}
		m := int(randFloat() * float32(len(p)-bf))
		for i := range p {
			if !used[i] {
				if m == 0 {
					chosen = append(chosen, i)
					break
				}
				m--
			}
		}
	}
	return chosen
}
