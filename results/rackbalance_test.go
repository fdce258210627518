package results

import (
	"math"
	"testing"
	"time"
)

// Rows every period from the first sample and one at the last; a node
// joins (empty, so its rack's spread widens) and another leaves the table
// once it is no longer sampled.
func TestRackBalanceRows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	usage := map[string][]usagePoint{}
	add := func(node, rack string, from, to int, pct func(int) float64) {
		for s := from; s <= to; s++ {
			usage[node] = append(usage[node], usagePoint{t: at(s), pct: pct(s), rack: rack})
		}
	}
	add("node-1", "r1", 0, 25, func(int) float64 { return 80 })
	add("node-2", "r2", 0, 12, func(int) float64 { return 70 })           // leaves after 12 s
	add("node-3", "r1", 8, 25, func(s int) float64 { return float64(s) }) // joins at 8 s, fills
	rows := rackBalance(usage, 10*time.Second)
	if len(rows) != 4 { // 0, 10, 20 s and the last sample at 25 s
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	if rows[0].Row != "#1" || !rows[3].Time.Equal(at(25)) {
		t.Fatalf("rows %s at %v", rows[0].Row, rows[3].Time)
	}
	if _, ok := rows[0].Usage["node-3"]; ok || rows[0].Spread["r1"] != 0 {
		t.Errorf("row 1: node-3 before it joined: %+v", rows[0])
	}
	if sp := rows[1].Spread["r1"]; math.Abs(sp-70) > 1e-9 {
		t.Errorf("row 2: rack r1 spread %v, want 80 - 10 = 70", sp)
	}
	if _, ok := rows[3].Usage["node-2"]; ok {
		t.Errorf("row 4: node-2 left at 12 s but is still listed: %+v", rows[3])
	}
	if sp := rows[3].Spread["r1"]; math.Abs(sp-55) > 1e-9 {
		t.Errorf("row 4: rack r1 spread %v, want 80 - 25 = 55", sp)
	}
}
