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

// Recovery watches the workload's latency records and answers "when was
// P99 back within target?" (the nemesis's latency_recovered wait). The target of an operation is its steady-state
// P99 threshold when the scenario sets one, else 1.5× the P99 measured in
// the steady state (never below MinTarget, so that a sub-millisecond
// baseline does not make recovery unreachable through noise).
type Recovery struct {
	mu         sync.Mutex
	thresholds map[string]float64 // op -> P99 limit in ms
	collecting bool
	baseline   map[string]*hdrhistogram.Histogram
	baseP99    map[string]float64
	ops        map[string]bool // ops seen in the steady state
	intervals  map[int64]*interval
	changed    chan struct{}
}

// MinTarget is the lowest derived target (ms).
const MinTarget = 1.0

// keep bounds the memory of intervals: recovery is judged on recent ones.
const keep = 30 * time.Minute

type interval struct {
	start, end time.Time
	ops        map[string]results.LatencyRecord
}

// NewRecovery returns a watcher; thresholds maps op (write, read) to the
// steady-state P99 limit in ms (empty: derive from the baseline).
func NewRecovery(thresholds map[string]float64) *Recovery {
	return &Recovery{
		thresholds: thresholds,
		baseline:   map[string]*hdrhistogram.Histogram{},
		ops:        map[string]bool{},
		intervals:  map[int64]*interval{},
		changed:    make(chan struct{}),
	}
}

// ThresholdsFrom picks the P99 limits that apply to the steady state.
func ThresholdsFrom(ts []results.Threshold) map[string]float64 {
	out := map[string]float64{}
	for _, t := range ts {
		if t.Floor || t.RatioToSteady {
			continue
		}
		switch t.Cycle {
		case "*", "steady_state", results.SteadyStateCycle:
		default:
			continue
		}
		op := ""
		switch t.Metric {
		case "write_p99_ms":
			op = results.OpWrite
		case "read_p99_ms":
			op = results.OpRead
		default:
			continue
		}
		if cur, ok := out[op]; !ok || t.Limit < cur {
			out[op] = t.Limit
		}
	}
	return out
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
	r.baseP99 = map[string]float64{}
	for op, h := range r.baseline {
		if h.TotalCount() > 0 {
			r.baseP99[op] = float64(h.ValueAtQuantile(99)) / 1000
		}
	}
}

// Targets returns the P99 target per op (ms).
func (r *Recovery) Targets() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.targetsLocked()
}

func (r *Recovery) targetsLocked() map[string]float64 {
	out := map[string]float64{}
	for op := range r.ops {
		if lim, ok := r.thresholds[op]; ok {
			out[op] = lim
			continue
		}
		if p, ok := r.baseP99[op]; ok {
			t := 1.5 * p
			if t < MinTarget {
				t = MinTarget
			}
			out[op] = t
		}
	}
	return out
}

// Observe takes one latency record (call it from the workload's sink).
func (r *Recovery) Observe(rec results.LatencyRecord) {
	if rec.Op == results.OpFill {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.collecting {
		r.ops[rec.Op] = true
		if rec.ResponseHDR != "" {
			if h, err := hdrhistogram.Decode([]byte(rec.ResponseHDR)); err == nil {
				if b := r.baseline[rec.Op]; b != nil {
					b.Merge(h)
				} else {
					r.baseline[rec.Op] = h
				}
			}
		}
	}
	key := rec.Start.Truncate(time.Millisecond).UnixMilli()
	iv := r.intervals[key]
	if iv == nil {
		iv = &interval{start: rec.Start, end: rec.End, ops: map[string]results.LatencyRecord{}}
		r.intervals[key] = iv
	}
	if prev, ok := iv.ops[rec.Op]; ok {
		rec = mergeSummary(prev, rec) // several loaders
	}
	iv.ops[rec.Op] = rec
	for k, v := range r.intervals {
		if rec.End.Sub(v.end) > keep {
			delete(r.intervals, k)
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// mergeSummary combines two loaders' records of one interval: the worse P99
// stands for the interval (conservative without merging histograms).
func mergeSummary(a, b results.LatencyRecord) results.LatencyRecord {
	out := a
	out.Count += b.Count
	out.Dropped += b.Dropped
	if b.Response.P99 > out.Response.P99 {
		out.Response.P99 = b.Response.P99
	}
	if len(b.Errors) > 0 {
		m := map[string]int64{}
		for k, v := range a.Errors {
			m[k] += v
		}
		for k, v := range b.Errors {
			m[k] += v
		}
		out.Errors = m
	}
	return out
}

// passes judges one interval against the targets.
func passes(iv *interval, targets map[string]float64) bool {
	for op, rec := range iv.ops {
		var errs int64
		for _, n := range rec.Errors {
			errs += n
		}
		// More than 1% failed or dropped operations is not a recovered service.
		if bad := errs + rec.Dropped; bad > 0 && float64(bad) > 0.01*float64(rec.Count+bad) {
			return false
		}
		if rec.Count == 0 {
			continue
		}
		if t, ok := targets[op]; ok && rec.Response.P99 > t {
			return false
		}
	}
	return true
}

// complete reports whether an interval has all its records: every steady
// state op is present, or a later interval has begun.
func (r *Recovery) complete(iv *interval, latest time.Time) bool {
	if latest.After(iv.start) {
		return true
	}
	for op := range r.ops {
		if _, ok := iv.ops[op]; !ok {
			return false
		}
	}
	return true
}

// Check returns the end of the first complete interval ending after since
// whose latencies are within target.
func (r *Recovery) Check(since time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	targets := r.targetsLocked()
	ivs := make([]*interval, 0, len(r.intervals))
	var latest time.Time
	for _, iv := range r.intervals {
		if iv.start.After(latest) {
			latest = iv.start
		}
		if iv.end.After(since) {
			ivs = append(ivs, iv)
		}
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].start.Before(ivs[j].start) })
	for _, iv := range ivs {
		if !r.complete(iv, latest) {
			continue
		}
		if passes(iv, targets) {
			return iv.end, true
		}
	}
	return time.Time{}, false
}

// Wait blocks until an interval ending after since is within target, and
// returns that interval's end.
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
			return time.Time{}, fmt.Errorf("waiting for P99 within %s: %w", r.describeTargets(), context.Cause(ctx))
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
