package reporting

import (
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// A parallel step's per-node table shows the queue: requested together,
// joined one after another. A node started with 2025.1–2025.3's hard-coded
// threshold is said to report no stalls.
func TestNodeOpsTableAndStallThresholdNote(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	at := func(s float64) *time.Time { v := t0.Add(time.Duration(s * float64(time.Second))); return &v }
	res := &results.Result{
		Cycles: []results.Cycle{{Name: "Cycle #1", Step: "Add 3", Start: t0, End: t0.Add(time.Minute)}},
		Steps: []results.StepTiming{{Step: "Add 3", Cycle: "Cycle #1", Kind: results.KindGrow, Mode: results.ModeParallel, RequestedAt: t0,
			NodeOps: []results.NodeOp{{Node: "node-4", RequestedAt: t0, JoinedAt: at(10)}, {Node: "node-5", RequestedAt: t0, JoinedAt: at(20)}, {Node: "node-6", RequestedAt: t0, JoinedAt: at(30.5)}}}},
		Stalls: results.Stalls{ThresholdMS: map[string]float64{"node-1": 999999999, "node-2": 999999999, "node-4": 25}},
	}
	var nodes, stalls *Table
	tables := buildTables(res)
	for i := range tables {
		switch tables[i].ID {
		case "step-1-nodes":
			nodes = &tables[i]
		case "stalls":
			stalls = &tables[i]
		}
	}
	if nodes == nil || nodes.Name != "Add 3 - nodes" || len(nodes.Rows) != 3 {
		t.Fatalf("per-node table: %+v", nodes)
	}
	if got := nodes.Rows[2]; got[1].Value != "node-6" || got[2].Value != "03:00:00.0" || got[3].Value != "03:00:30.5" || got[5].Value != "30.5" {
		t.Errorf("node-6 row %+v", got)
	}
	if stalls == nil || !strings.Contains(stalls.Note, "999999999 ms on node-1, node-2; 25 ms on node-4") ||
		!strings.Contains(stalls.Note, "node-1, node-2 report no stalls at all") {
		t.Errorf("stall note: %q", stalls.Note)
	}
	if l := strings.Join(Limitations(res), "\n"); !strings.Contains(l, "No reactor stalls can be counted on node-1, node-2") {
		t.Errorf("limitations:\n%s", l)
	}
}

// Seastar's suppressed reports (seastar src/core/reactor.cc,
// report_suppressions) are a column of their own beside the stall total,
// never added to it, and the note says what they count.
func TestStallTableSuppressedReports(t *testing.T) {
	cycles := []results.Cycle{
		{Name: "Cycle #0", Stalls: results.Stalls{Total: 5, Buckets: []results.StallBucket{{Label: "50ms", BelowMS: 50, Count: 5}}, SuppressedReports: 6}},
		{Name: "Cycle #1", Stalls: results.Stalls{Total: 1, Buckets: []results.StallBucket{{Label: "100ms", BelowMS: 100, Count: 1}}}},
	}
	tb := stallTable("x", "x", cycles)
	if want := []string{"cycle", "total [count]", "50ms [count]", "100ms [count]", "suppressed reports [count]"}; strings.Join(tb.Columns, "|") != strings.Join(want, "|") {
		t.Fatalf("columns %q", tb.Columns)
	}
	if r := tb.Rows[0]; r[1].Value != "5" || r[4].Value != "6" {
		t.Errorf("row %+v", r)
	}
	if r := tb.Rows[1]; r[4].Value != "0" {
		t.Errorf("row %+v", r)
	}
	if !strings.Contains(tb.Note, "re-reports of a stall counted here") {
		t.Errorf("note %q", tb.Note)
	}
	if tb := stallTable("x", "x", cycles[1:]); len(tb.Columns) != 3 || strings.Contains(tb.Note, "Suppressed") {
		t.Errorf("no suppressed reports, yet %q %q", tb.Columns, tb.Note)
	}
}

// A parallel removal's per-node table says how the database version ran
// it: queued before 2026.1, drained in parallel from 2026.1, both when the
// version is not recorded; a join's table says joins are one at a time.
func TestNodeOpsNoteByVersion(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	at := func(s float64) *time.Time { v := t0.Add(time.Duration(s * float64(time.Second))); return &v }
	for _, tc := range []struct {
		version string
		kind    results.StepKind
		want    string
	}{
		{"2025.4.0", results.KindShrink, "Before ScyllaDB 2026.1"},
		{"2026.1.0", results.KindDrain, "From ScyllaDB 2026.1 nodes requested to leave together are drained in parallel"},
		{"", results.KindShrink, "not recorded"},
		{"2026.1.0", results.KindGrow, "one join at a time"},
	} {
		res := &results.Result{Setup: results.Setup{DatabaseVersion: tc.version},
			Steps: []results.StepTiming{{Step: "Remove 2", Cycle: "Cycle #1", Kind: tc.kind, Mode: results.ModeParallel, RequestedAt: t0,
				NodeOps: []results.NodeOp{{Node: "node-4", RequestedAt: t0, LeftAt: at(10)}, {Node: "node-5", RequestedAt: t0, LeftAt: at(11)}}}}}
		tb, ok := nodeOpTable("x", "Remove 2", res)
		if !ok || !strings.Contains(tb.Note, tc.want) {
			t.Errorf("%s %s: note %q, want %q", tc.version, tc.kind, tb.Note, tc.want)
		}
	}
}
