// Package sched is the open-model scheduler of the load generator, in the
// manner of k6's constant-arrival-rate executor and cassandra-stress fixed=.
//
// One schedule serves the whole generator: operation i is intended to start
// at start + i/rate, whatever happened to the operations before it. A fixed
// pool of Concurrency workers bounds the operations in flight. Every
// operation's response time is measured from its intended start (so a stall
// of the database shows in full, no coordinated omission) and its service
// time from the moment a worker actually started it.
//
// Catch-up policy, when no worker is free at an operation's intended start:
//
//   - the operation waits for the next free worker and starts late (counted
//     in Late when more than 1 ms behind); operations behind it in the
//     schedule wait in order;
//   - an operation still unstarted MaxLag (default 1 s) after its intended
//     start is dropped and counted in Dropped; it is never silently skipped;
//   - so after a stall the generator runs above the rate only to start the
//     backlog of the last MaxLag (at most rate x MaxLag operations, and never
//     more than Concurrency at once), then returns to the schedule.
//
// Every intended operation ends in exactly one of succeeded, failed (by error
// class) or dropped, so intended = succeeded + errors + dropped once Run returns.
//
// Timer resolution: the dispatcher sleeps until the next intended start, and
// Go's timers on an idle Linux process wake with about 1 ms granularity, so
// operations start on average ~0.5 ms behind their intended start (due
// operations are then started together). That lateness is real and stays in
// the response time; with a no-op operation at 50,000 ops/s it is a p50 of
// ~0.5 ms and a p99 of ~1-2 ms (BenchmarkFixedRate50k).
//
// With Rate 0 the scheduler runs closed-loop instead: each worker starts the
// next operation as soon as its previous one returns (used by fill and by
// calibration); response time then equals service time.
package sched

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/internal/schedlag"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/measure"
)

// Op performs one operation of type op (an index into Config.Ops); seq is the
// operation's number in the schedule (0, 1, 2 ...). It must honour ctx.
type Op func(ctx context.Context, op int, seq uint64) error

// Config configures a Scheduler. Zero values take the documented defaults.
type Config struct {
	Ops     []string  // operation type names, e.g. {"write", "read"}; required
	Weights []float64 // relative weight of each operation type; nil = equal
	// Rate is the target of intended operations per second for the whole
	// generator; 0 runs closed-loop (as fast as Concurrency workers allow).
	Rate        float64
	Concurrency int           // maximum operations in flight; default 64
	MaxLag      time.Duration // drop an operation this far behind its intended start; default 1 s; < 0 never drops
	Interval    time.Duration // measurement interval; default 1 s
	Source      string        // results.LatencyRecord.Source
	// Classify names the error class of a failed operation (timeout,
	// unavailable, overloaded, ...); default "other".
	Classify func(error) string
	// Sink receives one record per operation type per interval, from one goroutine.
	Sink func(results.LatencyRecord)
	// Warn receives loud warnings, e.g. that Concurrency cannot reach Rate.
	Warn func(string)
	// DrainTimeout bounds the wait for in-flight operations once ctx ends,
	// after which their context is cancelled; default 10 s.
	DrainTimeout time.Duration
	Seed         uint64 // seed of the operation mix; 0 = fixed default
}

// OpSummary is the outcome of one operation type.
type OpSummary struct {
	measure.OpTotals
	Intended int64 `json:"intended"`
}

// Summary is the outcome of a whole run.
type Summary struct {
	Start time.Time `json:"start"`
	// Stopped is when the schedule stopped starting operations; End is
	// after those in flight were drained and the last interval cut.
	Stopped    time.Time `json:"stopped"`
	End        time.Time `json:"end"`
	TargetRate float64   `json:"target_rate"` // last rate set (0 = closed loop)
	// AchievedRate is started operations (successes + errors) per second of
	// the schedule (the drain of those in flight after it stopped is not
	// part of it). At a fixed rate the schedule's span runs from Start to the
	// intended start of the first operation it did not reach, so n
	// operations started on time at r per second give exactly r: dividing
	// by the time to Stopped would count the operation due at the very end
	// as one extra (+0.1% for 10 s at 100 op/s). Closed loop: Start to Stopped.
	AchievedRate float64     `json:"achieved_rate"`
	Intended     int64       `json:"intended"`
	Succeeded    int64       `json:"succeeded"`
	Errors       int64       `json:"errors"`
	Dropped      int64       `json:"dropped"`
	Late         int64       `json:"late"`
	Ops          []OpSummary `json:"ops"`
	Warnings     []string    `json:"warnings,omitempty"`
	// LoaderLagMS is this process's scheduling lag over the run, in ms
	// (the sum of its records' LoaderLagMS): operations due while it did
	// not run were sent late.
	LoaderLagMS float64 `json:"loader_lag_ms"`
}

// LoaderLagPerSecond is LoaderLagMS per second of the run.
func (s Summary) LoaderLagPerSecond() float64 {
	if d := s.End.Sub(s.Start).Seconds(); d > 0 {
		return s.LoaderLagMS / d
	}
	return 0
}

// Op returns the summary of the named operation type.
func (s Summary) Op(name string) (OpSummary, bool) {
	for _, o := range s.Ops {
		if o.Op == name {
			return o, true
		}
	}
	return OpSummary{}, false
}

type ticket struct {
	seq      uint64
	intended int64 // ns on the scheduler's monotonic clock; ignored when closed
	op       int
	closed   bool
}

// Scheduler runs one schedule of operations. Create it with New, then call
// Run once; SetRate and the progress methods may be called concurrently.
type Scheduler struct {
	cfg     Config
	fn      Op
	rec     *measure.Recorder
	cum     []float64 // cumulative weights
	epoch   time.Time
	rateBit atomic.Uint64
	rateCh  chan struct{}

	intended []atomic.Int64 // per op: sent to a worker or dropped
	started  atomic.Int64   // operations handed to workers
	finished atomic.Int64   // operations returned (success or error)
	okTotal  atomic.Int64

	// schedEnd is the intended start (ns on the monotonic clock) of the
	// first operation the schedule did not reach; 0 when closed loop.
	schedEnd int64

	warnMu   sync.Mutex
	warnings []string
	lastWarn time.Time
	ran      atomic.Bool

	// lag is this process's scheduling lag (results.LatencyRecord.LoaderLagMS);
	// lagSeen is its total at the last interval cut (flush runs one at a time).
	lag     *schedlag.Meter
	lagSeen time.Duration
}

// New validates cfg and returns a scheduler for fn.
func New(cfg Config, fn Op) (*Scheduler, error) {
	if len(cfg.Ops) == 0 {
		return nil, errors.New("scheduler: no operation types")
	}
	if fn == nil {
		return nil, errors.New("scheduler: nil operation")
	}
	if cfg.Weights == nil {
		cfg.Weights = make([]float64, len(cfg.Ops))
		for i := range cfg.Weights {
			cfg.Weights[i] = 1
		}
	}
	if len(cfg.Weights) != len(cfg.Ops) {
		return nil, fmt.Errorf("scheduler: %d weights for %d operation types", len(cfg.Weights), len(cfg.Ops))
	}
	var total float64
	cum := make([]float64, len(cfg.Weights))
	for i, w := range cfg.Weights {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("scheduler: invalid weight %v for %s", w, cfg.Ops[i])
		}
		total += w
		cum[i] = total
	}
	if total <= 0 {
		return nil, errors.New("scheduler: operation weights sum to zero")
	}
	for i := range cum {
		cum[i] /= total
	}
	if err := checkRate(cfg.Rate); err != nil {
		return nil, err
	}
	if cfg.Concurrency < 0 {
		return nil, fmt.Errorf("scheduler: negative concurrency %d", cfg.Concurrency)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 64
	}
	if cfg.MaxLag == 0 {
		cfg.MaxLag = time.Second
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 10 * time.Second
	}
	if cfg.Classify == nil {
		cfg.Classify = func(error) string { return "other" }
	}
	if cfg.Seed == 0 {
		cfg.Seed = 0x5eed
	}
	s := &Scheduler{
		cfg: cfg, fn: fn, rec: measure.New(cfg.Ops), cum: cum,
		rateCh: make(chan struct{}, 1), intended: make([]atomic.Int64, len(cfg.Ops)),
	}
	s.rateBit.Store(math.Float64bits(cfg.Rate))
	return s, nil
}

func checkRate(r float64) error {
	if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("scheduler: invalid rate %v ops/s", r)
	}
	return nil
}

// SetRate changes the target rate of a running (or not yet started)
// schedule. The new schedule continues from the next unstarted operation, so
// a backlog is neither forgiven nor doubled. 0 switches to closed loop.
func (s *Scheduler) SetRate(opsPerSec float64) error {
	if err := checkRate(opsPerSec); err != nil {
		return err
	}
	s.rateBit.Store(math.Float64bits(opsPerSec))
	select {
	case s.rateCh <- struct{}{}:
	default:
	}
	return nil
}

// Rate is the current target rate.
func (s *Scheduler) Rate() float64 { return math.Float64frombits(s.rateBit.Load()) }

// Succeeded is the number of successful operations so far.
func (s *Scheduler) Succeeded() int64 { return s.okTotal.Load() }

// Started is the number of operations handed to workers so far.
func (s *Scheduler) Started() int64 { return s.started.Load() }

func (s *Scheduler) mono() int64 { return int64(time.Since(s.epoch)) }

func (s *Scheduler) warn(msg string) {
	s.warnMu.Lock()
	if len(s.warnings) < 50 {
		s.warnings = append(s.warnings, msg)
	}
	s.warnMu.Unlock()
	if s.cfg.Warn != nil {
		s.cfg.Warn(msg)
	}
}

// Run executes the schedule until ctx ends, then waits for the operations in
// flight (up to DrainTimeout, then cancels them), flushes the last partial
// interval and returns the summary. The returned error reports failures of
// the generator itself (operations that never returned); failed operations
// are counted, not returned.
func (s *Scheduler) Run(ctx context.Context) (Summary, error) {
	if !s.ran.CompareAndSwap(false, true) {
		return Summary{}, errors.New("scheduler: Run called twice")
	}
	s.lag = schedlag.Start(0)
	defer s.lag.Stop()
	s.epoch = time.Now()
	start := s.epoch
	opCtx, cancelOps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelOps()

	// Workers start on demand, up to Concurrency: a worker is added only
	// when an operation is due and none is free, so a run needs as many
	// goroutines (and their stacks, which gocql grows) as operations were
	// ever in flight at once, not as many as it may have.
	work := make(chan ticket)
	var wg sync.WaitGroup
	workers := 0
	spawn := func(first ticket) bool {
		if workers >= s.cfg.Concurrency {
			return false
		}
		workers++
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.worker(opCtx, first, work)
		}()
		return true
	}

	stopReport := make(chan struct{})
	reportDone := make(chan time.Time, 1)
	var sinkErr atomic.Pointer[error]
	go func() { reportDone <- s.report(start, stopReport, &sinkErr) }()

	s.dispatch(ctx, work, spawn)
	close(work)
	stopped := time.Now()

	var runErr error
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	drainTimer := time.NewTimer(s.cfg.DrainTimeout)
	select {
	case <-drained:
	case <-drainTimer.C:
		cancelOps()
		select {
		case <-drained:
		case <-time.After(5 * time.Second):
			runErr = fmt.Errorf("scheduler: %d operations did not return within %v of cancellation",
				s.started.Load()-s.finished.Load(), s.cfg.DrainTimeout+5*time.Second)
		}
	}
	drainTimer.Stop()

	close(stopReport)
	prev := <-reportDone
	end := time.Now()
	if err := s.flush(prev, end); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if p := sinkErr.Load(); p != nil {
		runErr = errors.Join(runErr, *p)
	}
	return s.summary(start, stopped, end), runErr
}

func (s *Scheduler) summary(start, stopped, end time.Time) Summary {
	sum := Summary{Start: start, Stopped: stopped, End: end, TargetRate: s.Rate()}
	for i, t := range s.rec.Totals() {
		o := OpSummary{OpTotals: t, Intended: s.intended[i].Load()}
		sum.Ops = append(sum.Ops, o)
		sum.Intended += o.Intended
		sum.Succeeded += t.Succeeded
		sum.Errors += t.ErrorCount()
		sum.Dropped += t.Dropped
		sum.Late += t.Late
	}
	span := stopped.Sub(start)
	if s.schedEnd > 0 {
		span = time.Duration(s.schedEnd)
	}
	if d := span.Seconds(); d > 0 {
		sum.AchievedRate = float64(sum.Succeeded+sum.Errors) / d
	}
	s.warnMu.Lock()
	sum.Warnings = append([]string(nil), s.warnings...)
	s.warnMu.Unlock()
	sum.LoaderLagMS = float64(s.lagSeen) / float64(time.Millisecond)
	return sum
}

// worker performs first, then whatever the dispatcher hands it.
func (s *Scheduler) worker(ctx context.Context, first ticket, work <-chan ticket) {
	s.perform(ctx, first)
	for t := range work {
		s.perform(ctx, t)
	}
}

// perform runs one operation and records its outcome.
func (s *Scheduler) perform(ctx context.Context, t ticket) {
	start := s.mono()
	intended := t.intended
	if t.closed {
		intended = start
	}
	late := start-intended > int64(measure.LateThreshold)
	err := s.call(ctx, t)
	end := s.mono()
	if err != nil {
		s.rec.Error(t.op, s.cfg.Classify(err), late)
	} else {
		s.rec.Success(t.op, time.Duration(end-intended), time.Duration(end-start), late)
		s.okTotal.Add(1)
	}
	s.finished.Add(1)
}

// call runs one operation; a panic in it becomes a failed operation rather
// than the end of the process.
func (s *Scheduler) call(ctx context.Context, t ticket) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("operation %d panicked: %v", t.seq, r)
		}
	}()
	return s.fn(ctx, t.op, t.seq)
}

// dispatch walks the schedule until ctx ends. It owns the mix generator and
// the schedule state; workers only receive tickets. spawn starts a worker
// with a ticket, unless Concurrency of them run.
func (s *Scheduler) dispatch(ctx context.Context, work chan<- ticket, spawn func(ticket) bool) {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, s.cfg.Seed^0x9e3779b97f4a7c15))
	choose := func() int {
		if len(s.cum) == 1 {
			return 0
		}
		x := rng.Float64()
		for i, c := range s.cum {
			if x < c {
				return i
			}
		}
		return len(s.cum) - 1
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wait := func(d time.Duration) { timer.Reset(d) }

	maxLag := int64(s.cfg.MaxLag)
	rate := s.Rate()
	var base int64 // schedule origin on the monotonic clock
	var baseSeq, next uint64
	at := func(seq uint64) int64 { return base + int64(float64(seq-baseSeq)*1e9/rate) }

	var cur ticket
	have := false
	hand := func() { // the current ticket's fate is decided: it went to a worker
		s.intended[cur.op].Add(1)
		s.started.Add(1)
		have = false
	}
	drop := func() {
		s.intended[cur.op].Add(1)
		s.rec.Drop(cur.op, 1)
		have = false
	}
	// send gives the current ticket to a free worker or a new one.
	send := func() bool {
		select {
		case work <- cur:
			return true
		default:
			return spawn(cur)
		}
	}
	for {
		if ctx.Err() != nil {
			break
		}
		if r := s.Rate(); r != rate {
			now := s.mono()
			if have && !cur.closed && cur.intended <= now {
				// Keep the backlog: the due ticket stays, the next one follows it at the new rate.
				base, baseSeq = cur.intended, cur.seq
			} else {
				if have {
					have = false // not intended yet: re-plan it under the new rate
					next--
				}
				base, baseSeq = now, next
			}
			rate = r
		}
		if !have {
			cur = ticket{seq: next, op: choose(), closed: rate <= 0}
			if !cur.closed {
				cur.intended = at(next)
			}
			next++
			have = true
		}
		if cur.closed {
			if send() {
				hand()
				continue
			}
			select {
			case work <- cur:
				hand()
			case <-ctx.Done():
			case <-s.rateCh:
			}
			continue
		}
		now := s.mono()
		if cur.intended > now {
			wait(time.Duration(cur.intended - now))
			select {
			case <-timer.C:
			case <-ctx.Done():
			case <-s.rateCh:
			}
			continue
		}
		if maxLag >= 0 && now-cur.intended > maxLag {
			drop()
			continue
		}
		if send() {
			hand()
			continue
		}
		// The pool is full: wait for a worker until the ticket's deadline.
		if maxLag >= 0 {
			wait(time.Duration(cur.intended + maxLag - now + 1))
		} else {
			wait(time.Hour)
		}
		select {
		case work <- cur:
			hand()
		case <-timer.C: // dropped at the top of the loop
		case <-ctx.Done():
		case <-s.rateCh:
		}
	}
	// Operations already due when the run ended were intended, even if the
	// dispatcher had not reached them (it lags behind while the pool is
	// full): the current one starts if a worker is free, the rest of the
	// backlog is dropped, in bulk and shared by the mix weights.
	if have && !cur.closed && cur.intended <= s.mono() {
		if send() {
			hand()
		} else {
			drop()
		}
	}
	reached := next // operations below it were started or dropped
	if have {
		reached = cur.seq
	}
	if !have && rate > 0 {
		due := baseSeq + uint64(float64(s.mono()-base)*rate/1e9) + 1 // seqs below are due
		// Free workers take what they can (the timer wakes the dispatcher a
		// little late, so the last millisecond is usually still pending).
		for range s.cfg.Concurrency {
			if next >= due {
				break
			}
			cur = ticket{seq: next, op: choose(), intended: at(next)}
			if !send() {
				break
			}
			hand()
			next++
		}
		if due > next {
			s.dropBulk(int64(due - next))
		}
		reached = max(next, due)
	}
	if rate > 0 && !(have && cur.closed) {
		s.schedEnd = max(at(reached), 1)
	}
}

// dropBulk drops n operations shared among the types by their weights.
func (s *Scheduler) dropBulk(n int64) {
	prev := int64(0)
	for i, c := range s.cum {
		upto := int64(math.Round(float64(n) * c))
		if i == len(s.cum)-1 {
			upto = n
		}
		if k := upto - prev; k > 0 {
			s.intended[i].Add(k)
			s.rec.Drop(i, k)
		}
		prev = upto
	}
}

// report cuts an interval every Interval until stop closes and returns the
// start of the interval still open.
func (s *Scheduler) report(start time.Time, stop <-chan struct{}, sinkErr *atomic.Pointer[error]) time.Time {
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	prev := start
	for {
		select {
		case <-stop:
			return prev
		case now := <-tick.C:
			if err := s.flush(prev, now); err != nil {
				sinkErr.CompareAndSwap(nil, &err)
			}
			prev = now
		}
	}
}

// flush snapshots the interval [from, to), hands it to the sink and checks
// that the pool can sustain the rate (Little's law).
func (s *Scheduler) flush(from, to time.Time) error {
	recs, err := s.rec.Snapshot(from, to, s.cfg.Source)
	if err != nil {
		return err
	}
	lag := s.lag.Lag()
	for i := range recs {
		recs[i].LoaderLagMS = float64(lag-s.lagSeen) / float64(time.Millisecond)
	}
	s.lagSeen = lag
	var ok, dropped, late int64
	var svcSum float64 // ms
	for _, r := range recs {
		if s.cfg.Sink != nil {
			s.cfg.Sink(r)
		}
		ok += r.Count
		dropped += r.Dropped
		late += r.Late
		svcSum += r.Service.Mean * float64(r.Count)
	}
	rate := s.Rate()
	if rate <= 0 || ok == 0 && dropped == 0 {
		return nil
	}
	meanSvc := svcSum / float64(max(ok, 1)) / 1000 // seconds
	need := rate * meanSvc
	if dropped > 0 || need > 0.9*float64(s.cfg.Concurrency) {
		now := time.Now()
		s.warnMu.Lock()
		quiet := !s.lastWarn.IsZero() && now.Sub(s.lastWarn) < 10*time.Second
		if !quiet {
			s.lastWarn = now
		}
		s.warnMu.Unlock()
		switch {
		case quiet:
		case ok == 0:
			s.warn(fmt.Sprintf("WARNING: no operation completed in the interval ending %s and %d were dropped: all %d workers are waiting on the cluster (stalled or unreachable?); the target of %.0f ops/s is not being applied.",
				to.Format("15:04:05"), dropped, s.cfg.Concurrency, rate))
		default:
			s.warn(fmt.Sprintf("WARNING: concurrency %d cannot sustain %.0f ops/s: mean service time %.2f ms needs ~%.0f operations in flight (rate x latency); "+
				"in the interval ending %s %d operations were dropped and %d started late. Raise the concurrency or lower the rate.",
				s.cfg.Concurrency, rate, meanSvc*1000, math.Ceil(need), to.Format("15:04:05"), dropped, late))
		}
	}
	return nil
}
