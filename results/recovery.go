package results

import (
	"sort"
	"time"
)

// Sustained latency recovery (issue 19): latency has recovered after a
// topology step at the start of the first run of N consecutive intervals
// that all meet the target with under 1% failed or dropped operations. One
// lucky interval inside a bad stretch is not recovery.

// DefaultRecoveryIntervals is N when the scenario does not set thresholds.recovery.intervals.
const DefaultRecoveryIntervals = 10

// RecoveryFactor and MinRecoveryTargetMS derive a P99 target from the
// steady state when no steady-state P99 threshold applies (as the live
// watcher does): 1.5 × Cycle #0's P99, never below 1 ms.
const (
	RecoveryFactor      = 1.5
	MinRecoveryTargetMS = 1.0
	// MaxBadShare is the largest share of failed or dropped operations of a recovered interval.
	MaxBadShare = 0.01
)

// RecoveryTargets is the P99 target per operation (ms): the steady state's
// P99 threshold when one applies, else RecoveryFactor × its measured P99.
func RecoveryTargets(ths []Threshold, steady *Cycle) map[string]float64 {
	out := map[string]float64{}
	for _, t := range ths {
		if t.Floor || t.RatioToSteady || t.IsDuration() || (steady != nil && !t.Selects(steady)) || (steady == nil && t.Cycle != SelectAll && t.Cycle != SelectSteady) {
			continue
		}
		op := map[string]string{MetricWriteP99: OpWrite, MetricReadP99: OpRead}[t.Metric]
		if op == "" {
			continue
		}
		if cur, ok := out[op]; !ok || t.Limit < cur {
			out[op] = t.Limit
		}
	}
	if steady != nil {
		for op, p := range map[string]float64{OpWrite: steady.WriteP99MS, OpRead: steady.ReadP99MS} {
			if _, ok := out[op]; !ok && p > 0 {
				out[op] = max(RecoveryFactor*p, MinRecoveryTargetMS)
			}
		}
	}
	return out
}

// RecoveryInterval is one workload interval's figures per operation
// (several loaders' records merged: counts added, the worse P99 kept).
type RecoveryInterval struct {
	Start, End time.Time
	Ops        map[string]RecoveryOp
}

// RecoveryOp is one operation's figures in an interval.
type RecoveryOp struct {
	Count, Bad int64 // successful; failed + dropped
	P99MS      float64
}

// Meets reports whether the interval meets the targets.
func (iv *RecoveryInterval) Meets(targets map[string]float64) bool {
	for op, f := range iv.Ops {
		if f.Bad > 0 && float64(f.Bad) >= MaxBadShare*float64(f.Count+f.Bad) {
			return false
		}
		if t, ok := targets[op]; ok && f.Count > 0 && f.P99MS > t {
			return false
		}
	}
	return true
}

// SustainedRecovery returns the start of the first run of n consecutive
// intervals starting in [from, to) that all meet the targets (the run may
// end after to: it only has to begin before the next step); false when
// there is none.
func SustainedRecovery(ivs []*RecoveryInterval, targets map[string]float64, n int, from, to time.Time) (time.Time, bool) {
	if n <= 0 {
		n = DefaultRecoveryIntervals
	}
	run := 0
	var start time.Time
	for _, iv := range ivs {
		if iv.Start.Before(from) {
			continue
		}
		if run == 0 && !to.IsZero() && !iv.Start.Before(to) {
			break
		}
		if !iv.Meets(targets) {
			run = 0
			continue
		}
		if run == 0 {
			start = iv.Start
		}
		if run++; run >= n {
			return start, true
		}
	}
	return time.Time{}, false
}

// RecoverySeries collects a workload's intervals for the sustained rule:
// one per interval start, several loaders' records of it merged. The
// offline reduction and the live watcher (monitor.Recovery) both judge
// recovery on it, with SustainedRecovery.
type RecoverySeries struct {
	by map[int64]*RecoveryInterval
}

// Add folds one operation's record of an interval: count successful, bad
// failed or dropped, p99 its response-time P99 (the worse loader's stands
// for the interval). Fill records are not the workload and are ignored.
func (r *RecoverySeries) Add(op string, start, end time.Time, count, bad int64, p99 float64) {
	if op != OpWrite && op != OpRead {
		return
	}
	if r.by == nil {
		r.by = map[int64]*RecoveryInterval{}
	}
	k := start.Truncate(time.Millisecond).UnixMilli()
	ri := r.by[k]
	if ri == nil {
		ri = &RecoveryInterval{Start: start, End: end, Ops: map[string]RecoveryOp{}}
		r.by[k] = ri
	}
	f := ri.Ops[op]
	f.Count += count
	f.Bad += bad
	f.P99MS = max(f.P99MS, p99)
	ri.Ops[op] = f
}

// Prune forgets the intervals that ended before t (the live watcher keeps
// a bounded window).
func (r *RecoverySeries) Prune(t time.Time) {
	for k, iv := range r.by {
		if iv.End.Before(t) {
			delete(r.by, k)
		}
	}
}

// Sorted returns the intervals in time order.
func (r *RecoverySeries) Sorted() []*RecoveryInterval {
	out := make([]*RecoveryInterval, 0, len(r.by))
	for _, iv := range r.by {
		out = append(out, iv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// recovery re-judges every topology step's latency recovery on the recorded
// intervals: sustained recovery before the next step, else "not recovered".
func (r *reducer) recovery() {
	ivs := r.recov.Sorted()
	if len(ivs) == 0 {
		return // no latency records: keep what the run recorded
	}
	var steady *Cycle
	for i := range r.res.Cycles {
		if r.res.Cycles[i].Name == SteadyStateCycle {
			steady = &r.res.Cycles[i]
		}
	}
	targets := RecoveryTargets(r.res.Setup.Thresholds, steady)
	n := r.res.Setup.RecoveryIntervals
	var topo []*StepTiming
	for _, s := range r.steps {
		if s.Kind.IsTopology() {
			topo = append(topo, s)
		}
	}
	sort.SliceStable(topo, func(i, j int) bool { return topo[i].RequestedAt.Before(topo[j].RequestedAt) })
	for i, s := range topo {
		var next time.Time
		if i+1 < len(topo) {
			next = topo[i+1].RequestedAt
		}
		if at, ok := SustainedRecovery(ivs, targets, n, s.RequestedAt, next); ok {
			s.RecoveredAt, s.NotRecovered = timePtr(at), false
		} else {
			s.RecoveredAt, s.NotRecovered = nil, true
		}
	}
}
