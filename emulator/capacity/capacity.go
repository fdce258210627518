// Package capacity models the compute capacity of an emulated ScyllaDB node:
// one shard per vCPU, each a single server in virtual time. Requests and
// other non-preemptible batches queue FIFO on their shard; callers sleep
// until their virtual finish time, so latency grows with queueing as a
// shard nears saturation, and a queue that is too long rejects requests
// with Overloaded, as ScyllaDB does. Streaming is a scheduling group of its
// own, and so is compaction: they share the shard with requests as
// Seastar's CPU scheduler shares it (groups.go).
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

// CoordinatorUnits is what coordinating a request costs its coordinator,
// in the model's unit, one replica operation (a remote replica's whole
// share: its messaging, apply and answer). ScyllaDB's own figure is larger
// than one replica's apply alone: perf_simple_query on one shard, RF=1
// (scylladb commit 957bf48eb2, PR #10368), counts 49,782 instructions per
// write and 40,615 when the replica refuses it on entry (USING TIMEOUT 0s:
// replica/database.cc returns timed_out_error before the memtable and
// commitlog), so the CQL layer and storage_proxy are 4.4 times the local
// apply (reads: 43,028 and 33,403, 3.5 times). A remote replica's
// messaging is not measured there; one unit is the least the coordinator
// can cost against a unit that includes it.
const CoordinatorUnits = 1.0

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
	// CompactionShares gives the compaction group's shares from a shard's
	// compaction work not yet run, as ScyllaDB's compaction backlog
	// controller does; nil means StatementShares.
	CompactionShares func(backlog time.Duration) float64
	// WatchdogPeriod is the watchdog tick; default min(threshold/2, 50 ms).
	WatchdogPeriod time.Duration
	// NoWatchdog disables the runtime-pause watchdog (batch stalls remain).
	NoWatchdog bool
	// Held, when set, says the watchdog skips its ticks (a node paused or
	// killed in a shared process, node.Life): after a pause its first tick
	// is late by the pause, as a SIGSTOPped process's timer is.
	Held func() bool
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
	bg     background
	// stretches: background tasks put into queued requests' time, the
	// first of them the stretchBase-th made (groups.go).
	stretches   []stretch
	stretchBase int64
	made        atomic.Int64 // stretchSeq, read without mu by waking requests
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
		m.meter = schedlag.StartHeld(cfg.WatchdogPeriod, m.late, cfg.Held)
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
		task = m.runTask(s, now, pl)
	}
	for i := range s.bg.g {
		s.bg.g[i].credit = pl.credit[i]
	}
	end := pl.start + svc
	s.push(pl.start, end, now)
	seq := s.stretchSeq()
	s.mu.Unlock()
	if task != nil {
		m.taskStalled(s, shard%len(m.shards), groupNames[pl.group], task)
	}
	return m.sleepShifted(ctx, s, seq, end)
}

// sleepShifted sleeps until end, and on until the later end a background
// group that got work meanwhile gave the request (shareQueued).
func (m *Model) sleepShifted(ctx context.Context, s *shard, seq, end int64) error {
	for {
		if err := m.sleepUntil(ctx, end); err != nil {
			return err
		}
		if s.made.Load() == seq {
			return nil // no group got work meanwhile
		}
		s.mu.Lock()
		later, next := s.shiftedEnd(seq, end)
		s.mu.Unlock()
		if later == end {
			return nil
		}
		end, seq = later, next
	}
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

// Batch queues a non-preemptible task of units on shard, in the compaction
// group's name, and returns once it has finished: a task that does not give
// the shard back at the quota. If it ran longer than the stall threshold
// while requests waited behind it, a stall is reported.
func (m *Model) Batch(ctx context.Context, shard int, units float64) error {
	d := time.Duration(units * float64(m.unit))
	s := m.shard(shard)
	now := m.now()
	s.mu.Lock()
	m.advance(s, now)
	start := max(now, s.busyUntil)
	b := &batch{queued: now, start: start, end: start + int64(d)}
	s.push(b.start, b.end, now)
	s.last = b
	seq := s.stretchSeq()
	s.mu.Unlock()
	m.scheduleReports(s, shard%len(m.shards), groupNames[Compaction], b, d)
	err := m.sleepShifted(ctx, s, seq, b.end)
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
				det.StartStall(sh, startAt.Add(d))
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
	engine.WillWait(ctx)
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
