package monitor

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/elasticity-dev/elasticity/results"
)

// Recovery watches the workload's latency records and answers "when did
// latency recover?" (the nemesis's latency_recovered wait) with the rule
// the offline reduction applies to the recorded run, from results: the
// start of the first run of N consecutive intervals that all meet the
// target with under 1% failed or dropped operations
// (results.SustainedRecovery), the target being the steady state's P99
// threshold, else 1.5 × the steady state's P99 (results.RecoveryTargets).
type Recovery struct {
	mu         sync.Mutex
	thresholds []results.Threshold
	n          int // consecutive intervals (thresholds.recovery.intervals)
	collecting bool
	baseline   map[string]*hdrhistogram.Histogram
	steady     *results.Cycle  // the steady state's P99s, once it ended
	ops        map[string]bool // ops seen in the steady state
	series     results.RecoverySeries
	latest     time.Time // start of the latest interval seen
	changed    chan struct{}
}

// keep bounds the memory of intervals: recovery is judged on recent ones.
const keep = 30 * time.Minute

// NewRecovery returns a watcher judging with the run's thresholds and n
// consecutive intervals (0: results.DefaultRecoveryIntervals).
func NewRecovery(thresholds []results.Threshold, n int) *Recovery {
	if n <= 0 {
		n = results.DefaultRecoveryIntervals
	}
	return &Recovery{
		thresholds: thresholds,
		n:          n,
		baseline:   map[string]*hdrhistogram.Histogram{},
		ops:        map[string]bool{},
		changed:    make(chan struct{}),
	}
}

// StartBaseline starts collecting the steady state's records.
func (r *Recovery) StartBaseline() {
	r.mu.Lock()
	r.collecting = true
	r.mu.Unlock()
}

// EndBaseline stops collecting and fixes the steady-state P99 per op.
func (r *Recovery) EndBaseline() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collecting = false
	r.steady = &results.Cycle{Name: results.SteadyStateCycle}
	for op, h := range r.baseline {
		if h.TotalCount() == 0 {
			continue
		}
		p := float64(h.ValueAtQuantile(99)) / 1000
		switch op {
		case results.OpWrite:
			r.steady.WriteP99MS = p
		case results.OpRead:
			r.steady.ReadP99MS = p
		}
	}
}

// Targets returns the P99 target per op (ms) of the ops the steady state ran.
func (r *Recovery) Targets() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.targetsLocked()
}

func (r *Recovery) targetsLocked() map[string]float64 {
	out := results.RecoveryTargets(r.thresholds, r.steady)
	for op := range out {
		if !r.ops[op] {
			delete(out, op)
		}
	}
	return out
}

// Observe takes one latency record (call it from the workload's sink).
func (r *Recovery) Observe(rec results.LatencyRecord) {
	if rec.Op == results.OpFill {
		return
	}
	// A workload model's operations count in their class (write, read).
	op := rec.OpClass()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.collecting {
		r.ops[op] = true
		if rec.ResponseHDR != "" {
			if h, err := hdrhistogram.Decode([]byte(rec.ResponseHDR)); err == nil {
				if b := r.baseline[op]; b != nil {
					b.Merge(h)
				} else {
					r.baseline[op] = h
				}
			}
		}
	}
	var errs int64
	for _, n := range rec.Errors {
		errs += n
	}
	r.series.Add(op, rec.Start, rec.End, rec.Count, errs+rec.Dropped, rec.Response.P99)
	if rec.Start.After(r.latest) {
		r.latest = rec.Start
	}
	r.series.Prune(rec.End.Add(-keep))
	close(r.changed)
	r.changed = make(chan struct{})
}

// complete reports whether an interval has all its records: every steady
// state op is present, or a later interval has begun.
func (r *Recovery) complete(iv *results.RecoveryInterval) bool {
	if r.latest.After(iv.Start) {
		return true
	}
	for op := range r.ops {
		if _, ok := iv.Ops[op]; !ok {
			return false
		}
	}
	return true
}

// Check returns the start of the first run of N consecutive complete
// intervals, starting at or after since, that meet the targets.
func (r *Recovery) Check(since time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ivs := r.series.Sorted()
	for len(ivs) > 0 && !r.complete(ivs[len(ivs)-1]) {
		ivs = ivs[:len(ivs)-1]
	}
	return results.SustainedRecovery(ivs, r.targetsLocked(), r.n, since, time.Time{})
}

// Wait blocks until latency has recovered (Check) after since, and returns
// the start of the recovered run.
func (r *Recovery) Wait(ctx context.Context, since time.Time) (time.Time, error) {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if at, ok := r.Check(since); ok {
			return at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("waiting for %d consecutive intervals with P99 within %s: %w", r.n, r.describeTargets(), context.Cause(ctx))
		case <-ch:
		}
	}
}

func (r *Recovery) describeTargets() string {
	t := r.Targets()
	if len(t) == 0 {
		return "target (no steady-state figures)"
	}
	ops := make([]string, 0, len(t))
	for op := range t {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	s := ""
	for i, op := range ops {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s ≤ %.2f ms", op, t[op])
	}
	return s
}
