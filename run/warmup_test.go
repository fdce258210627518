package run

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// rampLoad is a workload whose first interval is long and short of its
// operations (those still in flight at its end), as a real load
// generator's first second is; later intervals are the fake world's.
type rampLoad struct {
	loadAdapter
	firstEnd chan time.Time
}

func (l rampLoad) Run(ctx context.Context, rate float64, sink func(results.LatencyRecord)) error {
	start := time.Now()
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(200 * time.Millisecond):
	}
	end := time.Now()
	sink(results.LatencyRecord{Start: start, End: end, Op: results.OpWrite, Count: 1, Response: results.Summary{P99: 1}})
	l.firstEnd <- end
	return l.w.Run(ctx, rate, sink)
}

// Cycle #0 starts once the workload's first interval has been recorded:
// that interval counts only the operations that completed in it, so
// measuring it reported a rate short of the target that no operation missed.
func TestSteadyStateMeasuresAfterTheFirstInterval(t *testing.T) {
	w := &fakeWorld{}
	var status string
	deps := fakeDeps(w, &status)
	load := rampLoad{loadAdapter: loadAdapter{w}, firstEnd: make(chan time.Time, 1)}
	deps.NewLoad = func(ctx context.Context, env *Env, c Cluster) (Load, error) { return load, nil }
	p := testPlan()
	p.Steps = nil
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Execute(context.Background(), p, Options{Out: dir, Stdout: io.Discard, Deps: deps}); err != nil {
		t.Fatal(err)
	}
	var firstEnd time.Time
	select {
	case firstEnd = <-load.firstEnd:
	default:
		t.Fatal("the workload never ended its first interval")
	}
	for _, e := range readEvents(t, dir) {
		if e.Type == results.EventCycleStart && e.Cycle == results.SteadyStateCycle {
			if e.Time.Before(firstEnd) {
				t.Fatalf("%s started at %s, before the workload's first interval ended (%s)", e.Cycle, e.Time.Format(time.RFC3339Nano), firstEnd.Format(time.RFC3339Nano))
			}
			return
		}
	}
	t.Fatalf("no %s", results.SteadyStateCycle)
}
