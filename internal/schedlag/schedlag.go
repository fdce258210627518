// Package schedlag measures how long a process was runnable but did not
// run: the lateness of a periodic timer beyond the Go timer's own
// granularity. It is what Seastar calls steal time (src/core/reactor.cc,
// cpu_steal_time_ms). The emulated nodes export it as
// scylla_reactor_cpu_steal_time_ms (emulator/capacity's watchdog); the load
// generator records its own with every latency interval, since a loader that
// does not run delays every operation it was due to send.
package schedlag

import (
	"sync"
	"sync/atomic"
	"time"
)

// Slack is how late a timer fires with nothing else running: the Go
// netpoller sleeps in whole milliseconds (runtime/netpoll_epoll.go rounds a
// delay below 1 ms up to 1 ms), so a 12.5 ms tick fires about 0.8 ms late
// (p90 1 ms, p99 2 ms measured on an idle machine). Counted as lag, that
// granularity alone made 40-80 ms/s of "steal time" on an idle machine;
// lateness beyond it is the host's (or the runtime's).
const Slack = 2 * time.Millisecond

// Excess is the part of a timer's lateness that counts as lag.
func Excess(late time.Duration) time.Duration {
	if late > Slack {
		return late - Slack
	}
	return 0
}

// DefaultPeriod is a Meter's tick when Start is given none.
const DefaultPeriod = 12500 * time.Microsecond

// Meter sums the lag of its timer until stopped.
type Meter struct {
	lag    atomic.Int64 // ns
	onLate func(late time.Duration)
	held   func() bool
	last   time.Time // its last tick (or its start); the ticker's goroutine only
	// leave takes the meter off its ticker; mu is held by a tick in
	// progress, so that Stop waits for it.
	leave   func()
	mu      sync.Mutex
	stopped bool
}

// Start starts a meter ticking every period (DefaultPeriod when <= 0).
func Start(period time.Duration) *Meter { return StartWith(period, nil) }

// StartWith is Start with onLate, when set, told every tick's whole
// lateness from its timer's goroutine (the emulated nodes' stall reports:
// a runtime pause is a stall).
func StartWith(period time.Duration, onLate func(late time.Duration)) *Meter {
	return StartHeld(period, onLate, nil)
}

// StartHeld is StartWith for a meter that is held while held (when set)
// says so: an emulated node paused in a process it shares with others
// (node.Life). A held meter skips ticks; its first tick after is late by
// the hold, as a SIGSTOPped process's timer is.
//
// Meters of one period share one timer: the nodes of a host process measure
// one Go runtime, and a timer each was a wake-up each (three nodes at
// 12.5 ms: 240 a second, the largest share of an idle host's wake-ups,
// issue 45). Each meter keeps its own lag, lateness and holds.
func StartHeld(period time.Duration, onLate func(late time.Duration), held func() bool) *Meter {
	if period <= 0 {
		period = DefaultPeriod
	}
	m := &Meter{onLate: onLate, held: held, last: time.Now()}
	tickers.join(period, m)
	return m
}

// tickers are the shared timers, one per period.
var tickers = tickerSet{byPeriod: map[time.Duration]*ticker{}}

type tickerSet struct {
	mu       sync.Mutex
	byPeriod map[time.Duration]*ticker
}

// ticker is one timer and the meters it serves; its goroutine ends when
// its last meter stops.
type ticker struct {
	period time.Duration
	meters map[*Meter]struct{}
}

func (s *tickerSet) join(period time.Duration, m *Meter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.byPeriod[period]
	if t == nil {
		t = &ticker{period: period, meters: map[*Meter]struct{}{}}
		s.byPeriod[period] = t
		go s.run(t)
	}
	t.meters[m] = struct{}{}
	m.leave = func() {
		s.mu.Lock()
		delete(t.meters, m)
		s.mu.Unlock()
	}
}

// run ticks every period, restarting from the actual wake time so that
// one pause counts once, until no meter is left.
func (s *tickerSet) run(t *ticker) {
	tm := time.NewTimer(t.period)
	defer tm.Stop()
	var due []*Meter
	for range tm.C {
		now := time.Now()
		s.mu.Lock()
		if len(t.meters) == 0 {
			delete(s.byPeriod, t.period)
			s.mu.Unlock()
			return
		}
		due = due[:0]
		for m := range t.meters {
			due = append(due, m)
		}
		s.mu.Unlock()
		for _, m := range due {
			m.tick(now, t.period)
		}
		tm.Reset(t.period)
	}
}

// tick is one tick of the shared timer at now for m: late by how long
// after its own last tick plus the period it comes (a meter held over
// ticks is late by the hold; one that joined since the last tick is not
// late).
func (m *Meter) tick(now time.Time, period time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || m.held != nil && m.held() {
		return
	}
	late := max(now.Sub(m.last.Add(period)), 0)
	m.last = now
	m.lag.Add(int64(Excess(late)))
	if m.onLate != nil {
		m.onLate(late)
	}
}

// Lag is the total lag measured so far.
func (m *Meter) Lag() time.Duration { return time.Duration(m.lag.Load()) }

// Stop stops the meter; Lag keeps its total. Its onLate is not called
// once Stop has returned.
func (m *Meter) Stop() {
	m.leave()
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
}
