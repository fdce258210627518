package stress

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// Fill writes new keys StartKey, StartKey+Stride, StartKey+2·Stride, ... as
// fast as allowed. Several loaders fill one key range together by taking
// StartKey = base+i and Stride = their number.
type Fill struct {
	// Model writes the rows (Model.Fill); nil: the built-in key/value
	// model of Keyspace, Table, ValueSize, ValueMax and CL.
	Model           Model
	Seed            uint64
	Keyspace, Table string
	ValueSize       int // bytes; default 1 KiB
	ValueMax        int // > ValueSize: sizes uniformly in [ValueSize, ValueMax]
	Concurrency     int // writes in flight; default 64
	// RateCap > 0 writes at that fixed rate (open model, never dropping);
	// 0 writes closed-loop as fast as Concurrency allows.
	RateCap  float64
	StartKey int64
	Stride   int64             // distance between keys; default 1
	CL       gocql.Consistency // default QUORUM
	Interval time.Duration     // measurement interval; default 1 s
	Source   string
	// CheckEvery is how often done and progress are called; default 500 ms.
	CheckEvery time.Duration
	// GiveUpAfter stops the fill with an error when this long passes with
	// errors and not one successful write (e.g. every node's disk is full);
	// default 30 s.
	GiveUpAfter time.Duration
	Warn        func(string)
	// Failed, when set, is told every key whose write failed: such a key
	// may or may not be stored, so data validation does not count it lost.
	Failed func(key int64)
}

// ErrFillStalled is returned when the fill gives up (see Fill.GiveUpAfter).
var ErrFillStalled = errors.New("fill made no progress")

// RunFill writes keys until done returns true (checked every CheckEvery) or
// ctx ends, reporting the successful writes so far to progress. Records go to
// sink with op "fill". It returns n such that keys StartKey+k·Stride for
// k < n were written (failed writes, counted by class in the records, leave
// holes), so the next fill may start at StartKey+n·Stride. ctx ending is not
// an error.
func RunFill(ctx context.Context, s *gocql.Session, f Fill, done func() bool, sink Sink, progress func(written int64)) (int64, error) {
	if s == nil {
		return 0, errors.New("fill: nil session")
	}
	m := f.model()
	op, err := m.Fill(ctx, s, Binding{StartKey: f.StartKey, Stride: max(f.Stride, 1), Failed: f.Failed, Seed: f.Seed})
	if errors.Is(err, ErrNoFill) {
		return 0, fmt.Errorf("fill: the %s workload has no fill (%w)", m.Describe().Kind, err)
	}
	if err != nil {
		return 0, fmt.Errorf("fill: %w", err)
	}
	return runFill(ctx, f, op, done, sink, progress)
}

// runFill is RunFill around any write operation.
func runFill(ctx context.Context, f Fill, op sched.Op, done func() bool, sink Sink, progress func(int64)) (int64, error) {
	if done == nil {
		done = func() bool { return false }
	}
	every := f.CheckEvery
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	giveUp := f.GiveUpAfter
	if giveUp <= 0 {
		giveUp = 30 * time.Second
	}
	// Track how long writes have failed without a single success.
	var mu sync.Mutex
	var failingSince time.Time
	var stalled atomic.Bool
	wrapped := func(r results.LatencyRecord) {
		if sink != nil {
			sink(r)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Count > 0:
			failingSince = time.Time{}
		case len(r.Errors) > 0 && failingSince.IsZero():
			failingSince = r.Start
		case len(r.Errors) > 0 && r.End.Sub(failingSince) >= giveUp:
			stalled.Store(true)
		}
	}
	sch, err := sched.New(sched.Config{
		Ops: []string{results.OpFill}, Rate: f.RateCap, Concurrency: f.Concurrency,
		MaxLag: -1, Interval: f.Interval, Source: f.Source, Classify: ClassifyError,
		Sink: wrapped, Warn: f.Warn,
	}, op)
	if err != nil {
		return 0, fmt.Errorf("fill: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	pollerDone := make(chan struct{})
	go func() {
		defer close(pollerDone)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				if progress != nil {
					progress(sch.Succeeded())
				}
				if stalled.Load() || done() {
					stop()
					return
				}
			}
		}
	}()
	sum, err := sch.Run(runCtx)
	stop()
	<-pollerDone // progress and done are never called concurrently
	if progress != nil {
		progress(sum.Succeeded)
	}
	n := sch.Started()
	if err != nil {
		return n, fmt.Errorf("fill: %w", err)
	}
	if stalled.Load() {
		return n, fmt.Errorf("fill: %w for %v: %d writes failed (%v)", ErrFillStalled, giveUp, sum.Errors, sum.Ops[0].Errors)
	}
	return n, nil
}

// model is f.Model, or the built-in model of f's fields.
func (f Fill) model() Model {
	if f.Model != nil {
		return f.Model
	}
	size := f.ValueSize
	if size == 0 {
		size = 1024
	}
	return KV{Keyspace: f.Keyspace, Table: f.Table, ValueMin: size, ValueMax: max(size, f.ValueMax), WriteCL: f.CL, WriteRatio: 1}
}
