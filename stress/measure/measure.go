// Package measure records per-operation-type latency of a load generator:
// HDR histograms of response time (from the intended start) and service time
// (from the actual send), counts of successes, errors by class, dropped and
// late operations. Snapshot cuts an interval and returns one
// results.LatencyRecord per operation type; cumulative totals are kept for
// the final summary.
package measure

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/elasticity-dev/elasticity/results"
)

// LateThreshold is how far behind its intended start an operation must start
// to be counted as late (see results.LatencyRecord.Late).
const LateThreshold = time.Millisecond

// Recorder is safe for concurrent use. Recording a value takes one mutex and
// allocates nothing (an error class seen for the first time allocates a map entry).
type Recorder struct {
	snapMu sync.Mutex // one snapshot at a time: they swap the spare histograms
	ops    []*opRec
}

type counts struct {
	ok, dropped, late int64
	errors            map[string]int64
}

func (c *counts) addErrors(m map[string]int64) {
	for k, v := range m {
		c.errors[k] += v
	}
}

type opRec struct {
	mu        sync.Mutex
	name      string
	resp, svc *hdrhistogram.Histogram // current interval
	// Spares swapped in at a snapshot, so that steady state allocates no histograms.
	spareResp, spareSvc *hdrhistogram.Histogram
	cur                 counts
	// Cumulative since the start, merged in at every snapshot.
	totResp, totSvc *hdrhistogram.Histogram
	tot             counts
}

// New returns a recorder for the named operation types; later calls identify
// an operation type by its index in ops.
func New(ops []string) *Recorder {
	r := &Recorder{}
	for _, name := range ops {
		r.ops = append(r.ops, &opRec{
			name: name,
			resp: results.NewHDR(), svc: results.NewHDR(),
			spareResp: results.NewHDR(), spareSvc: results.NewHDR(),
			totResp: results.NewHDR(), totSvc: results.NewHDR(),
			cur: counts{errors: map[string]int64{}},
			tot: counts{errors: map[string]int64{}},
		})
	}
	return r
}

// Ops returns the operation names.
func (r *Recorder) Ops() []string {
	names := make([]string, len(r.ops))
	for i, o := range r.ops {
		names[i] = o.name
	}
	return names
}

func micros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	// Clamp rather than lose a value: a 2-minute stall still counts as >= 60 s.
	if us < results.HDRLowestMicros {
		return results.HDRLowestMicros
	}
	if us > results.HDRHighestMicros {
		return results.HDRHighestMicros
	}
	return us
}

// Success records a successful operation.
func (r *Recorder) Success(op int, response, service time.Duration, late bool) {
	o := r.ops[op]
	rv, sv := micros(response), micros(service)
	o.mu.Lock()
	_ = o.resp.RecordValue(rv) // in range by construction
	_ = o.svc.RecordValue(sv)
	o.cur.ok++
	if late {
		o.cur.late++
	}
	o.mu.Unlock()
}

// Error records a failed operation of the given error class. Failed
// operations do not enter the latency histograms: those describe successes.
func (r *Recorder) Error(op int, class string, late bool) {
	o := r.ops[op]
	o.mu.Lock()
	o.cur.errors[class]++
	if late {
		o.cur.late++
	}
	o.mu.Unlock()
}

// Drop records n operations the schedule intended but never started.
func (r *Recorder) Drop(op int, n int64) {
	o := r.ops[op]
	o.mu.Lock()
	o.cur.dropped += n
	o.mu.Unlock()
}

// Snapshot ends the current interval [start, end) and returns one record per
// operation type (also for types without operations, so that readers see a
// continuous series).
func (r *Recorder) Snapshot(start, end time.Time, source string) ([]results.LatencyRecord, error) {
	r.snapMu.Lock()
	defer r.snapMu.Unlock()
	out := make([]results.LatencyRecord, 0, len(r.ops))
	var firstErr error
	for _, o := range r.ops {
		o.mu.Lock()
		resp, svc, c := o.resp, o.svc, o.cur
		o.resp, o.svc = o.spareResp, o.spareSvc
		o.cur = counts{errors: map[string]int64{}}
		o.mu.Unlock()

		rec := results.LatencyRecord{
			Start: start, End: end, Op: o.name, Source: source,
			Count: c.ok, Dropped: c.dropped, Late: c.late,
			Response: results.SummarizeHDR(resp), Service: results.SummarizeHDR(svc),
		}
		if len(c.errors) > 0 {
			rec.Errors = c.errors
		}
		var e1, e2 error
		rec.ResponseHDR, e1 = results.EncodeHDR(resp)
		rec.ServiceHDR, e2 = results.EncodeHDR(svc)
		if err := errors.Join(e1, e2); err != nil && firstErr == nil {
			// Keep going: the spares below must be put back whatever happens.
			firstErr = fmt.Errorf("snapshot of %s: %w", o.name, err)
		}
		out = append(out, rec)

		// Totals are only read by Totals, so merging outside the hot lock is fine.
		o.mu.Lock()
		o.totResp.Merge(resp)
		o.totSvc.Merge(svc)
		o.tot.ok += c.ok
		o.tot.dropped += c.dropped
		o.tot.late += c.late
		o.tot.addErrors(c.errors)
		resp.Reset()
		svc.Reset()
		o.spareResp, o.spareSvc = resp, svc
		o.mu.Unlock()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// OpTotals are the cumulative numbers of one operation type over every
// snapshot taken so far.
type OpTotals struct {
	Op        string           `json:"op"`
	Succeeded int64            `json:"succeeded"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	Dropped   int64            `json:"dropped"`
	Late      int64            `json:"late"`
	Response  results.Summary  `json:"response"`
	Service   results.Summary  `json:"service"`
}

// ErrorCount is the total of Errors.
func (t OpTotals) ErrorCount() int64 {
	var n int64
	for _, v := range t.Errors {
		n += v
	}
	return n
}

// Totals returns cumulative numbers over every snapshot taken so far (take a
// final Snapshot first to include the last partial interval).
func (r *Recorder) Totals() []OpTotals {
	out := make([]OpTotals, 0, len(r.ops))
	for _, o := range r.ops {
		o.mu.Lock()
		t := OpTotals{
			Op: o.name, Succeeded: o.tot.ok, Dropped: o.tot.dropped, Late: o.tot.late,
			Response: results.SummarizeHDR(o.totResp), Service: results.SummarizeHDR(o.totSvc),
		}
		if len(o.tot.errors) > 0 {
			t.Errors = make(map[string]int64, len(o.tot.errors))
			for k, v := range o.tot.errors {
				t.Errors[k] = v
			}
		}
		o.mu.Unlock()
		out = append(out, t)
	}
	return out
}
