package reporting

import (
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// The wait for compactions before the steady state is a shaded span of
// the charts, named as its duration.
func TestTimelineCompactionsSpan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newTimelineBuilder(100)
	b.Event(&results.Event{Time: t0, Type: results.EventPhaseStart, Phase: results.PhaseCompactions})
	b.Event(&results.Event{Time: t0.Add(12 * time.Second), Type: results.EventPhaseEnd, Phase: results.PhaseCompactions})
	if len(b.tl.Spans) != 1 {
		t.Fatalf("spans %+v", b.tl.Spans)
	}
	s := b.tl.Spans[0]
	if s.Kind != SpanCompactions || s.Name != results.DurCompactions || s.End.Sub(s.Start) != 12*time.Second {
		t.Fatalf("span %+v", s)
	}
}
