package results

import (
	"strings"
	"testing"
	"time"
)

func TestJudgeErrors(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ev := func(s int, typ, step, line string) ErrorEvent {
		return ErrorEvent{Time: t0.Add(time.Duration(s) * time.Second), Node: "node-1", Type: typ, Severity: DefaultSeverities[typ], Step: step, Line: line}
	}
	events := []ErrorEvent{
		ev(3, "NO_SPACE_ERROR", "Grow", "No space left on device"),
		ev(1, "NO_SPACE_ERROR", "Grow", "No space left on device"),
		ev(2, "NO_SPACE_ERROR", "", "No space left on device"), // outside the step
		ev(4, "DATABASE_ERROR", "", "ERROR ... compaction - Compaction failed: injected"),
		ev(5, "BAD_ALLOC", "", "std::bad_alloc"),
	}
	filters := []ErrorFilter{{Type: "NO_SPACE_ERROR", During: "Grow", MaxCount: 1}, {Regex: "Compaction failed"}}
	failing := JudgeErrors(events, map[string]string{"BAD_ALLOC": SeverityWarning}, filters)
	// In time order: 1s expected (first of max_count 1), 2s outside Grow, 3s over max_count.
	if len(failing) != 2 || !failing[0].Time.Equal(t0.Add(2*time.Second)) || !failing[1].Time.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("failing %+v", failing)
	}
	if !events[0].Expected || *events[0].Filter != 0 || events[1].Expected || !events[3].Expected || *events[3].Filter != 1 {
		t.Fatalf("expected flags %+v", events)
	}
	if events[4].Severity != SeverityWarning || events[4].Expected {
		t.Fatalf("severity override: %+v", events[4])
	}
	r := ErrorsReason(failing)
	if !strings.Contains(r, "2 unexpected") || !strings.Contains(r, "NO_SPACE_ERROR on node-1 at 12:00:02") || !strings.Contains(r, "(Grow)") {
		t.Fatalf("reason %q", r)
	}
	if f := JudgeErrors(events, nil, []ErrorFilter{{Type: "NO_SPACE_ERROR"}, {Regex: "Compaction"}}); len(f) != 1 || f[0].Type != "BAD_ALLOC" {
		t.Fatalf("without the override BAD_ALLOC (ERROR) alone fails: %+v", f)
	}
}
