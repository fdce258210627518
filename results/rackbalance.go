package results

import (
	"sort"
	"strconv"
	"time"
)

// RackBalanceSpec is how the rack balance table is taken (a row every
// EverySeconds, scaled) and judged (a rack whose nodes' disk usage differs
// by more than MaxSpreadPct points warns, or fails the run when Fail).
type RackBalanceSpec struct {
	EverySeconds float64 `json:"every_seconds"`
	MaxSpreadPct float64 `json:"max_spread_pct"`
	Fail         bool    `json:"fail,omitempty"`
}

// RackBalanceRow is one row of the "DISK USAGE - rack balance" table as
// SCT's PeriodicDiskUsageToArgus (sdcm/argus_results.py) takes it: the time,
// every current node's disk usage (%) and, per rack, the spread between its
// fullest and emptiest node (percentage points).
type RackBalanceRow struct {
	Row    string             `json:"row"` // "#1", "#2" ...
	Time   time.Time          `json:"time"`
	Usage  map[string]float64 `json:"usage_pct"`         // node -> disk usage %
	Racks  map[string]string  `json:"racks"`             // node -> rack
	Spread map[string]float64 `json:"spread_pct_points"` // rack -> max - min
}

type usagePoint struct {
	t    time.Time
	pct  float64
	rack string
}

// rackBalance takes a row at the first sample and every `every` after it,
// and one at the last sample: each node's latest usage at or before the
// row's time, if the node was sampled within `every` before it (a node
// that left is no longer in the table).
func rackBalance(usage map[string][]usagePoint, every time.Duration) []RackBalanceRow {
	if every <= 0 || len(usage) == 0 {
		return nil
	}
	var first, last time.Time
	for _, pts := range usage {
		if a := pts[0].t; first.IsZero() || a.Before(first) {
			first = a
		}
		if b := pts[len(pts)-1].t; b.After(last) {
			last = b
		}
	}
	var times []time.Time
	for t := first; !t.After(last); t = t.Add(every) {
		times = append(times, t)
	}
	if len(times) == 0 || last.Sub(times[len(times)-1]) > every/10 {
		times = append(times, last)
	}
	var out []RackBalanceRow
	for _, t := range times {
		row := RackBalanceRow{Time: t, Usage: map[string]float64{}, Racks: map[string]string{}, Spread: map[string]float64{}}
		lo, hi := map[string]float64{}, map[string]float64{}
		for node, pts := range usage {
			i := sort.Search(len(pts), func(i int) bool { return pts[i].t.After(t) }) - 1
			if i < 0 || t.Sub(pts[i].t) > every {
				continue
			}
			p := pts[i]
			row.Usage[node], row.Racks[node] = p.pct, p.rack
			if v, ok := lo[p.rack]; !ok || p.pct < v {
				lo[p.rack] = p.pct
			}
			if v, ok := hi[p.rack]; !ok || p.pct > v {
				hi[p.rack] = p.pct
			}
		}
		if len(row.Usage) == 0 {
			continue
		}
		for r := range lo {
			row.Spread[r] = hi[r] - lo[r]
		}
		row.Row = "#" + strconv.Itoa(len(out)+1)
		out = append(out, row)
	}
	return out
}
