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

// Meter sums the lag of its own timer until stopped.
type Meter struct {
	lag      atomic.Int64 // ns
	onLate   func(late time.Duration)
	hold     func()
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Start starts a meter ticking every period (DefaultPeriod when <= 0).
func Start(period time.Duration) *Meter { return StartWith(period, nil) }

// StartWith is Start with onLate, when set, told every tick's whole
// lateness from the meter's goroutine (the emulated nodes' stall reports:
// a runtime pause is a stall).
func StartWith(period time.Duration, onLate func(late time.Duration)) *Meter {
	return StartHeld(period, onLate, nil)
}

// StartHeld is StartWith for a meter whose timer, once due, waits in hold
// (when set) before it reads the time: an emulated node paused in a
// process it shares with others (node.Life) is late by its pause, as a
// SIGSTOPped process's timer is.
func StartHeld(period time.Duration, onLate func(late time.Duration), hold func()) *Meter {
	if period <= 0 {
		period = DefaultPeriod
	}
	m := &Meter{onLate: onLate, hold: hold, stop: make(chan struct{}), done: make(chan struct{})}
	go m.run(period)
	return m
}

func (m *Meter) run(period time.Duration) {
	defer close(m.done)
	t := time.NewTimer(period)
	defer t.Stop()
	expected := time.Now().Add(period)
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			if m.hold != nil {
				m.hold()
			}
			now := time.Now()
			late := now.Sub(expected)
			m.lag.Add(int64(Excess(late)))
			if m.onLate != nil {
				m.onLate(late)
			}
			// Restart from the actual wake time, so one pause counts once.
			expected = now.Add(period)
			t.Reset(period)
		}
	}
}

// Lag is the total lag measured so far.
func (m *Meter) Lag() time.Duration { return time.Duration(m.lag.Load()) }

// Stop stops the meter; Lag keeps its total.
func (m *Meter) Stop() {
	m.stopOnce.Do(func() { close(m.stop) })
	<-m.done
}
