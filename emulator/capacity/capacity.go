// Package capacity models the compute capacity of an emulated ScyllaDB node:
// one shard per vCPU, each a single server in virtual time. Requests and
// other non-preemptible batches queue FIFO on their shard; callers sleep
// until their virtual finish time, so latency grows with queueing as a
// shard nears saturation, and a queue that is too long rejects requests
// with Overloaded, as ScyllaDB does. Streaming is a scheduling group of its
// own that shares the shard with requests as Seastar's CPU scheduler shares
// it (see Stream).
//
// Stalls are reported from two real conditions, like Seastar's
// blocked-reactor notifications: a non-preemptible batch that occupies a
// shard longer than the threshold while requests wait behind it, and Go
// runtime pauses measured by a watchdog (lateness of a timer).
package capacity

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/internal/schedlag"
)

// Defaults for Config fields left zero.
const (
	DefaultOpsPerShard = 10000
	DefaultMaxBacklog  = 2 * time.Second
	// DefaultTaskQuota is Seastar's task quota as ScyllaDB sets it (main.cc:
	// reactor_opts.task_quota_ms default 0.5 in release builds): a
	// scheduling group runs its tasks until the quota is used, then the
	// reactor picks the group with the least virtual runtime.
	DefaultTaskQuota = 500 * time.Microsecond
	// StatementShares and StreamingShares are the shares of the statement
	// and streaming scheduling groups (main.cc: create_scheduling_group(
	// "statement", "stmt", 1000, user_ssg) and ("streaming", "strm", 200,
	// maintenance_supergroup), whose supergroups have 1000 and 200 shares):
	// when both have work, statements get 1000/1200 of the shard.
	StatementShares = 1000
	StreamingShares = 200
	// minSleep: waits shorter than this are not slept; virtual time still
	// accounts for them, so queueing behind them is slept by later requests.
	// It is the Go timer's granularity on Linux: a goroutine's timer due in
	// under 1 ms fires after the netpoller's epoll_wait of at least 1 ms
	// (runtime/netpoll_epoll.go rounds a delay below 1e6 ns up to 1 ms),
	// measured here at 1.1 ms for a 100 µs timer. Sleeping a one-unit
	// request (100 µs) turned it into 1.1 ms and cost a wake-up each.
	minSleep = time.Millisecond
	// utilWindow is the window of Utilization.
	utilWindow = time.Second
)

// Config configures a Model.
type Config struct {
	// Shards is the number of shards (= vCPUs); at least 1.
	Shards int
	// OpsPerShard is how many one-unit requests a shard serves per second.
	OpsPerShard float64
	// SlowFactor multiplies every service time (1 = nominal; 0 means 1).
	SlowFactor float64
	// StallThreshold is --blocked-reactor-notify-ms: batches and runtime
	// pauses longer than this are stalls. 0 disables stall detection.
	StallThreshold time.Duration
	// OnStall is called (from its own goroutine or the caller's, never under
	// a lock) once for each stall, with its whole length, once it is over
	// (for the scylla_reactor_stalls histogram). May be nil.
	OnStall func(shard int, d time.Duration)
	// Detector, when set, receives the stall reports Seastar's detector
	// would print while a stall lasts (StallOffsets), in real time for a
	// batch and at once for a runtime pause measured after the fact.
	Detector *StallDetector
	// MaxBacklog bounds the queue: a request that would wait longer than
	// this before starting gets Overloaded. Default 2 s.
	MaxBacklog time.Duration
	// TaskQuota is how long a scheduling group runs before the reactor
	// may switch to another (default DefaultTaskQuota). SlowFactor
	// stretches it: a slow node's streaming tasks hold the shard longer,
	// and past the stall threshold they stall requests waiting behind them.
	TaskQuota time.Duration
	// WatchdogPeriod is the watchdog tick; default min(threshold/2, 50 ms).
	WatchdogPeriod time.Duration
	// NoWatchdog disables the runtime-pause watchdog (batch stalls remain).
	NoWatchdog bool
}

// Model is the capacity model of one node. Safe for concurrent use.
type Model struct {
	cfg    Config
	unit   time.Duration // service time of one unit
	epoch  time.Time     // virtual time is nanoseconds since epoch (monotonic)
	shards []*shard
	stalls atomic.Uint64
	timers sync.Pool
	// meter is the watchdog: the lateness of its timer is the process's
	// scheduling lag, and past the stall threshold a stall; nil without one.
	meter *schedlag.Meter
}

type shard struct {
	mu        sync.Mutex
	busyUntil int64 // virtual ns: when the last queued work finishes
	// busy intervals (coalesced when back to back) for Utilization.
	ivs   []interval
	ivOff int
	// last is the most recently queued non-preemptible batch, so that
	// requests arriving behind it can mark it as having blocked someone.
	last   *batch
	stalls atomic.Uint64
	strm   streamGroup
}

// streamGroup is the streaming scheduling group of a shard. Its work runs
// in tasks of one quota: alone in the gaps between requests, and, while
// requests queue, one task after every StatementShares/StreamingShares
// quotas of request work (Seastar's fair pick by virtual runtime,
// src/core/reactor.cc run_tasks_impl). A request arriving while streaming
// runs alone waits for the task in progress; the statement group then runs
// first, having been activated at the streaming group's virtual runtime
// (task_queue_group::activate), so it gets the next five quotas.
type streamGroup struct {
	work    int64 // queued streaming work not yet run (ns of shard time)
	queued  int64 // all streaming work ever queued (positions of waiters)
	done    int64 // all streaming work run (ahead of real time for tasks between requests)
	at      int64 // virtual time up to which the idle gaps have been given to streaming
	runFrom int64 // start of the current run of streaming tasks alone (their quota phase)
	runEnd  int64 // end of the last run alone
	credit  int64 // request work queued since the last streaming task while both had work
}

type interval struct{ start, end int64 }

type batch struct {
	queued, start, end int64
	waited             bool // a request was queued behind it before it ended
}

// New returns a Model; Close it to stop its watchdog.
func New(cfg Config) *Model {
	if cfg.Shards < 1 {
		cfg.Shards = 1
	}
	if cfg.OpsPerShard <= 0 {
		cfg.OpsPerShard = DefaultOpsPerShard
	}
	if cfg.SlowFactor <= 0 {
		cfg.SlowFactor = 1
	}
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = DefaultMaxBacklog
	}
	if cfg.TaskQuota <= 0 {
		cfg.TaskQuota = DefaultTaskQuota
	}
	if cfg.WatchdogPeriod <= 0 {
		cfg.WatchdogPeriod = min(cfg.StallThreshold/2, 50*time.Millisecond)
		cfg.WatchdogPeriod = max(cfg.WatchdogPeriod, 5*time.Millisecond)
	}
	m := &Model{
		cfg:   cfg,
		unit:  time.Duration(float64(time.Second) / cfg.OpsPerShard * cfg.SlowFactor),
		epoch: time.Now(),
	}
	m.shards = make([]*shard, cfg.Shards)
	for i := range m.shards {
		m.shards[i] = &shard{}
	}
	if cfg.StallThreshold > 0 && !cfg.NoWatchdog {
		m.meter = schedlag.StartWith(cfg.WatchdogPeriod, m.late)
	}
	return m
}

// Shards is the number of shards.
func (m *Model) Shards() int { return len(m.shards) }

// ServiceTime is the service time of units of request work.
func (m *Model) ServiceTime(units float64) time.Duration {
	return time.Duration(units * float64(m.unit))
}

// Capacity is the modelled request capacity in one-unit requests per second.
func (m *Model) Capacity() float64 {
	return float64(len(m.shards)) * float64(time.Second) / float64(m.unit)
}

func (m *Model) now() int64 { return int64(time.Since(m.epoch)) }

func (m *Model) shard(i int) *shard {
	if i < 0 {
		i = -i
	}
	return m.shards[i%len(m.shards)]
}

// overloaded is the rejection of a request; its message is stable per
// shard so that clients can group errors by text.
func overloaded(shard int, limit time.Duration) error {
	return &engine.Error{
		Code:    engine.CodeOverloaded,
		Message: fmt.Sprintf("Overloaded: shard %d has more than %v of queued work", shard, limit),
	}
}

// Do queues units of request work on shard and returns when it has been
// served (in virtual time), with an Overloaded *engine.Error when the queue
// is already longer than MaxBacklog, or ctx's error if ctx ends first (the
// work stays accounted: the shard was going to do it anyway).
func (m *Model) Do(ctx context.Context, shard int, units float64) error {
	s := m.shard(shard)
	svc := int64(units * float64(m.unit))
	now := m.now()
	s.mu.Lock()
	m.advance(s, now)
	pl := m.plan(s, now, svc)
	if pl.start-now > int64(m.cfg.MaxBacklog) {
		s.mu.Unlock()
		return overloaded(shard, m.cfg.MaxBacklog)
	}
	if b := s.last; b != nil && now < b.end {
		b.waited = true
	}
	var task *batch
	if pl.task > 0 {
		task = m.runStreamTask(s, now, pl)
	}
	s.strm.credit = pl.credit
	end := pl.start + svc
	s.push(pl.start, end, now)
	s.mu.Unlock()
	if task != nil {
		m.streamTaskStalled(s, shard%len(m.shards), task)
	}
	return m.sleepUntil(ctx, end)
}

// placement is where a request of svc goes on a shard's timeline: behind
// task ns of streaming that starts at taskStart (a task of the current run
// alone, or one due by the groups' shares), from start on.
type placement struct {
	start, taskStart, task, credit int64
	// alone: the task is the rest of one already running alone since
	// taskStart; otherwise it is a new task.
	alone bool
}

// plan places a request of svc arriving at now (after advance). Called
// with s.mu held; changes nothing.
func (m *Model) plan(s *shard, now, svc int64) placement {
	st := &s.strm
	pl := placement{start: max(now, s.busyUntil)}
	if st.work == 0 {
		return pl
	}
	q := m.quota()
	if s.busyUntil <= now {
		// Streaming runs alone: the request waits for its task to end.
		phase := (now - st.runFrom) % q
		pl.taskStart, pl.task, pl.alone = now-phase, min(st.work, q-phase), true
		pl.start = now + pl.task
		pl.credit = svc
		return pl
	}
	// The streaming tasks the request work queued since the last one is
	// worth: more than one when a request is longer than five quotas.
	per := q * StatementShares / StreamingShares
	if owed := st.credit / per; owed > 0 {
		pl.taskStart, pl.task = pl.start, min(st.work, owed*q)
		pl.start += pl.task
		pl.credit = st.credit - owed*per + svc
		return pl
	}
	pl.credit = st.credit + svc
	return pl
}

// runStreamTask commits the streaming task a request was placed behind and
// returns it as a batch a request waited for. Called with s.mu held.
func (m *Model) runStreamTask(s *shard, now int64, pl placement) *batch {
	st := &s.strm
	st.work -= pl.task
	st.done += pl.task
	runStart := pl.taskStart
	if pl.alone {
		runStart = now
		st.runEnd = pl.start
	}
	s.push(runStart, pl.start, now)
	return &batch{queued: now, start: pl.taskStart, end: pl.start, waited: true}
}

// streamTaskStalled reports a streaming task that held the shard past the
// stall threshold while a request waited behind it (a slow node's).
func (m *Model) streamTaskStalled(s *shard, shard int, b *batch) {
	d := time.Duration(b.end - b.start)
	if m.cfg.StallThreshold <= 0 || d <= m.cfg.StallThreshold {
		return
	}
	m.scheduleReports(s, shard, "streaming", b, d)
	time.AfterFunc(time.Until(m.epoch.Add(time.Duration(b.end))), func() { m.report(shard, d) })
}

// quota is the task quota, stretched on a slow node.
func (m *Model) quota() int64 {
	return int64(float64(m.cfg.TaskQuota) * m.cfg.SlowFactor)
}

// advance gives the shard's idle time up to now to queued streaming work,
// which runs alone there. Called with s.mu held.
func (m *Model) advance(s *shard, now int64) {
	st := &s.strm
	from := max(st.at, s.busyUntil)
	st.at = max(st.at, now)
	if st.work == 0 || from >= now {
		return
	}
	run := min(st.work, now-from)
	if from != st.runEnd {
		st.runFrom = from
		st.credit = 0
	}
	st.work -= run
	st.done += run
	st.runEnd = from + run
	s.push(from, from+run, now)
}

// Immediate says whether units of request work on shard would be served
// at once if queued now: Do would return without sleeping, so a caller can
// run it on its own goroutine instead of handing it to another.
func (m *Model) Immediate(shard int, units float64) bool {
	s := m.shard(shard)
	svc := int64(units * float64(m.unit))
	now := m.now()
	s.mu.Lock()
	m.advance(s, now)
	pl := m.plan(s, now, svc)
	s.mu.Unlock()
	return pl.start+svc-now < int64(minSleep)
}

// Batch queues a non-preemptible batch of units (a compaction-like task) on
// shard and returns once it has finished. If it ran longer than the stall
// threshold while requests waited behind it, a stall is reported.
func (m *Model) Batch(ctx context.Context, shard int, units float64) error {
	return m.batch(ctx, shard, "compaction", time.Duration(units*float64(m.unit)))
}

// Stream runs streaming bytes on shard at bytesPerSec (the shard's
// bandwidth when it does nothing else, divided by SlowFactor) in the
// streaming scheduling group (streamGroup): alone it has the whole shard;
// while requests queue it gets StreamingShares of every
// StatementShares+StreamingShares of the shard's time, so requests slow it
// down and it slows requests by a sixth. It returns when its bytes have
// been run or ctx ends.
func (m *Model) Stream(ctx context.Context, shard int, bytes int64, bytesPerSec float64) error {
	if bytes <= 0 {
		return nil
	}
	if bytesPerSec <= 0 {
		return fmt.Errorf("stream %d bytes on shard %d: bandwidth must be positive", bytes, shard)
	}
	s := m.shard(shard)
	d := int64(float64(bytes) / bytesPerSec * m.cfg.SlowFactor * float64(time.Second))
	now := m.now()
	s.mu.Lock()
	m.advance(s, now)
	st := &s.strm
	if st.work == 0 && s.busyUntil <= now {
		st.runFrom, st.runEnd = now, now // starts running alone at once
	}
	st.work += d
	st.queued += d
	pos := st.queued
	s.mu.Unlock()
	for {
		now := m.now()
		s.mu.Lock()
		m.advance(s, now)
		if st.done >= pos {
			s.mu.Unlock()
			return nil
		}
		// The earliest it can be done: alone from the end of the queued
		// requests. Requests that come meanwhile push it further.
		until := max(now, s.busyUntil) + pos - st.done
		s.mu.Unlock()
		if err := m.sleepUntil(ctx, max(until, now+int64(minSleep))); err != nil {
			s.mu.Lock()
			if st.queued == pos { // the last queued: take back what has not run
				left := min(st.work, pos-st.done)
				st.work -= left
				st.queued -= left
			}
			s.mu.Unlock()
			return err
		}
	}
}

// batch runs a non-preemptible task of length d in scheduling group group.
func (m *Model) batch(ctx context.Context, shard int, group string, d time.Duration) error {
	s := m.shard(shard)
	now := m.now()
	s.mu.Lock()
	m.advance(s, now)
	start := max(now, s.busyUntil)
	b := &batch{queued: now, start: start, end: start + int64(d)}
	s.push(b.start, b.end, now)
	s.last = b
	s.mu.Unlock()
	m.scheduleReports(s, shard%len(m.shards), group, b, d)
	err := m.sleepUntil(ctx, b.end)
	if err != nil {
		return err
	}
	if m.cfg.StallThreshold > 0 && d > m.cfg.StallThreshold {
		s.mu.Lock()
		waited := b.waited
		if s.last == b {
			s.last = nil
		}
		s.mu.Unlock()
		if waited {
			m.report(shard%len(m.shards), d)
		}
	}
	return nil
}

// scheduleReports arms the detector's timer chain for a batch long enough to
// be reported: each report fires while the batch runs, as Seastar's timer
// signal does, and is printed if a request is waiting behind the batch by then.
func (m *Model) scheduleReports(s *shard, sh int, group string, b *batch, d time.Duration) {
	det := m.cfg.Detector
	if det == nil || m.cfg.StallThreshold <= 0 || d <= m.cfg.StallThreshold {
		return
	}
	startAt := m.epoch.Add(time.Duration(b.start))
	for i, off := range StallOffsets(m.cfg.StallThreshold, d) {
		time.AfterFunc(time.Until(startAt.Add(off)), func() {
			if i == 0 {
				det.StartTask(sh)
			}
			s.mu.Lock()
			waited := b.waited
			s.mu.Unlock()
			if waited {
				det.Report(sh, group, off)
			}
		})
	}
}

// push records the busy interval [start, end) and prunes intervals that
// ended before the utilization window. Called with s.mu held.
func (s *shard) push(start, end, now int64) {
	s.busyUntil = end
	if n := len(s.ivs); n > s.ivOff && s.ivs[n-1].end == start {
		s.ivs[n-1].end = end
	} else {
		s.ivs = append(s.ivs, interval{start, end})
	}
	cut := now - int64(utilWindow)
	for s.ivOff < len(s.ivs) && s.ivs[s.ivOff].end < cut {
		s.ivOff++
	}
	// Compact once the dead head dominates, keeping appends amortised O(1).
	if s.ivOff > 64 && s.ivOff*2 > len(s.ivs) {
		n := copy(s.ivs, s.ivs[s.ivOff:])
		s.ivs = s.ivs[:n]
		s.ivOff = 0
	}
}

func (m *Model) sleepUntil(ctx context.Context, end int64) error {
	d := time.Duration(end - m.now())
	if d < minSleep {
		return ctx.Err()
	}
	t, _ := m.timers.Get().(*time.Timer)
	if t == nil {
		t = time.NewTimer(d)
	} else {
		t.Reset(d)
	}
	select {
	case <-t.C:
		m.timers.Put(t)
		return nil
	case <-ctx.Done():
		t.Stop() // Go ≥1.23: no stale value is left in t.C after Stop
		m.timers.Put(t)
		return ctx.Err()
	}
}

// Utilization is the busy fraction of each shard over the last second
// (scylla_reactor_utilization, as a fraction 0..1).
func (m *Model) Utilization() []float64 {
	now := m.now()
	from := now - int64(utilWindow)
	out := make([]float64, len(m.shards))
	for i, s := range m.shards {
		var busy int64
		s.mu.Lock()
		m.advance(s, now)
		for _, iv := range s.ivs[s.ivOff:] {
			lo, hi := max(iv.start, from), min(iv.end, now)
			if hi > lo {
				busy += hi - lo
			}
		}
		s.mu.Unlock()
		out[i] = float64(busy) / float64(utilWindow)
	}
	return out
}

// Backlog is how long a request arriving now on shard would wait before
// starting (0 when the shard is idle).
func (m *Model) Backlog(shard int) time.Duration {
	s := m.shard(shard)
	now := m.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(max(0, s.busyUntil-now))
}

// Stalls is the total number of stalls (each counted once, however many
// times the detector reported it).
func (m *Model) Stalls() uint64 { return m.stalls.Load() }

// ShardStalls is the number of stalls reported per shard.
func (m *Model) ShardStalls() []uint64 {
	out := make([]uint64, len(m.shards))
	for i, s := range m.shards {
		out[i] = s.stalls.Load()
	}
	return out
}

func (m *Model) report(shard int, d time.Duration) {
	m.stalls.Add(1)
	m.shards[shard].stalls.Add(1)
	if m.cfg.OnStall != nil {
		m.cfg.OnStall(shard, d)
	}
}

// late handles one tick of the watchdog (meter), which measures how late
// its timer fires: lateness above the threshold means nothing on this
// process could run (GC, scheduler, an overloaded machine) — a stall of
// shard 0, as a blocked reactor would be.
func (m *Model) late(late time.Duration) {
	if late <= m.cfg.StallThreshold {
		return
	}
	if det := m.cfg.Detector; det != nil {
		det.StartTask(0)
		for _, off := range StallOffsets(m.cfg.StallThreshold, late) {
			det.Report(0, "main", off)
		}
	}
	m.report(0, late)
}

// SchedulingLag is the total time the watchdog's timer fired late (beyond
// the timer's own granularity, schedlag.Slack): time in
// which this process was runnable but did not run (the host's other
// processes, the Go runtime). It is what Seastar calls steal time
// (src/core/reactor.cc, cpu_steal_time_ms); 0 without a watchdog.
func (m *Model) SchedulingLag() time.Duration {
	if m.meter == nil {
		return 0
	}
	return m.meter.Lag()
}

// Close stops the watchdog. Work in flight still completes.
func (m *Model) Close() {
	if m.meter != nil {
		m.meter.Stop()
	}
}
