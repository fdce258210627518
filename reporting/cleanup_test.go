package reporting

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// The Durations table has a row for a grow's Cleanup with its duration, and
// for a skipped cleanup a "skipped" row and a note saying why.
func TestDurationsShowCleanupAndItsSkip(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &results.Result{
		Durations: []results.Duration{{Name: results.DurCleanup, Step: "Add", Cycle: "Cycle #1", Start: t0, End: t0.Add(83 * time.Second), Seconds: 83}},
		Steps: []results.StepTiming{
			{Step: "Add", Cycle: "Cycle #1", Kind: results.KindGrow, RequestedAt: t0},
			{Step: "Add", Cycle: "Cycle #2", Kind: results.KindGrow, RequestedAt: t0, CleanupSkipped: "tablets keyspace: no-op"},
		},
	}
	tb := durationTable(res)
	var rows []string
	for _, r := range tb.Rows {
		rows = append(rows, r[0].Value+"="+r[1].Value)
	}
	joined := strings.Join(rows, "; ")
	if !strings.Contains(joined, "Cleanup (Cycle #1)=00:01:23") || !strings.Contains(joined, "Cleanup (Cycle #2)=skipped") {
		t.Fatalf("rows: %s", joined)
	}
	if !strings.Contains(tb.Note, "Cleanup skipped: tablets keyspace: no-op.") || !strings.Contains(tb.Note, cleanupNote) {
		t.Fatalf("note: %s", tb.Note)
	}
	var b bytes.Buffer
	if err := Markdown(&b, res, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); !strings.Contains(md, "Cleanup skipped: tablets keyspace") {
		t.Fatalf("the markdown report does not say the cleanup was skipped:\n%s", md)
	}
}
