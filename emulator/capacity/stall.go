package capacity

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Seastar's stall detector defaults (include/seastar/core/internal/
// stall_detector.hh and the reactor options in src/core/reactor.cc).
const (
	// StallSlack is cpu_stall_detector_config::slack: the fraction of the
	// threshold the timer may overshoot.
	StallSlack = 0.3
	// DefaultStallReportsPerMinute is --blocked-reactor-reports-per-minute.
	DefaultStallReportsPerMinute = 5
	// StallBuildID stands in for the executable's build id in the report.
	StallBuildID = "e1a571c17e5ca1ab1e0000000000000000000000"
)

// StallMessage is one report of Seastar's cpu_stall_detector::generate_trace
// (src/core/reactor.cc) in its default one-line form
// (--blocked-reactor-report-format-oneline, print_with_backtrace and
// backtrace_buffer::append_backtrace_oneline), written raw to stderr with no
// level or timestamp:
//
//	Reactor stalled for 32 ms on shard 1, in scheduling group main. Backtrace: 0x4a1b2c3 ... (BuildId: ...)
//
// delta is how long the task has been running when the timer fired (Seastar
// prints it truncated to whole milliseconds). The addresses are derived from
// shard and delta, so a line is reproducible.
func StallMessage(shard int, group string, delta time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Reactor stalled for %d ms on shard %d, in scheduling group %s. Backtrace:", delta.Milliseconds(), shard, group)
	x := uint64(shard)*0x9E3779B97F4A7C15 ^ uint64(delta)
	for range 6 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&b, " 0x%x", 0x4000000+x%0x2000000)
	}
	fmt.Fprintf(&b, " (BuildId: %s)", StallBuildID)
	return b.String()
}

// SuppressedMessage is cpu_stall_detector::report_suppressions' line
// (src/core/reactor.cc), also raw on stderr.
func SuppressedMessage(shard, suppressed int) string {
	noun := "backtraces"
	if suppressed == 1 {
		noun = "backtrace"
	}
	return fmt.Sprintf("Rate-limit: suppressed %d %s on shard %d", suppressed, noun, shard)
}

// StallOffsets is when, into one stall, Seastar's detector reports it
// (src/core/reactor.cc: start_task_run arms the timer at threshold + slack;
// on_signal reports, doubles _report_at (`_report_at <<= 1`) and re-arms it
// threshold*_report_at + slack later). For threshold 25 ms a 200 ms stall is
// reported at 32.5, 90 and 197.5 ms.
func StallOffsets(threshold, stall time.Duration) []time.Duration {
	if threshold <= 0 {
		return nil
	}
	slack := time.Duration(float64(threshold) * StallSlack)
	var out []time.Duration
	at := time.Duration(1)
	for t := threshold*at + slack; t <= stall; t += threshold*at + slack {
		out = append(out, t)
		at <<= 1
	}
	return out
}

// StallDetector mirrors Seastar's cpu_stall_detector reporting
// (src/core/reactor.cc): each report goes through maybe_report's per-shard
// rate limit (_max_reports_per_minute reports per minute, the rest counted
// as suppressed) and report_suppressions prints the suppressed count once
// the minute is over. Reported reports count in scylla_stall_detector_reported
// (a counter per shard, incremented in generate_trace). Safe for concurrent use.
type StallDetector struct {
	perMinute int
	write     func(line string)
	now       func() time.Time

	mu     sync.Mutex
	shards []stallShard
}

type stallShard struct {
	reported   int       // reports in the current minute (_reported)
	minuteMark time.Time // _minute_mark
	busyUntil  time.Time // end of the stall the shard is in (no task starts before)
	total      atomic.Uint64
}

// NewStallDetector returns a detector for shards shards writing raw lines
// with write (without the newline). perMinute <= 0 means the default 5.
func NewStallDetector(shards, perMinute int, write func(line string)) *StallDetector {
	if perMinute <= 0 {
		perMinute = DefaultStallReportsPerMinute
	}
	if write == nil {
		write = func(string) {}
	}
	now := time.Now()
	d := &StallDetector{perMinute: perMinute, write: write, now: time.Now, shards: make([]stallShard, max(1, shards))}
	for i := range d.shards {
		d.shards[i].minuteMark = now
	}
	return d
}

// WithClock makes the detector read time from now (for replaying a known
// sequence of stalls); it returns d.
func (d *StallDetector) WithClock(now func() time.Time) *StallDetector {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.now = now
	t := now()
	for i := range d.shards {
		d.shards[i].minuteMark = t
	}
	return d
}

// StartTask is start_task_run's report_suppressions: at the start of a task
// after the minute is over, print how many reports were suppressed in it and
// start a new minute. A shard in a stall starts no task (the stalled task
// holds the reactor), so nothing happens until the stall is over: a
// stall's reports all fall in one minute, before its Rate-limit line.
func (d *StallDetector) StartTask(shard int) {
	d.startTask(shard, time.Time{})
}

// StartStall is start_task_run for a task that will stall the shard until
// end: the suppressed count of a finished minute is printed first, and no
// other task starts on the shard before end.
func (d *StallDetector) StartStall(shard int, end time.Time) {
	d.startTask(shard, end)
}

func (d *StallDetector) startTask(shard int, stallEnd time.Time) {
	now := d.now()
	d.mu.Lock()
	s := &d.shards[shard%len(d.shards)]
	if now.Before(s.busyUntil) {
		d.mu.Unlock()
		return
	}
	s.busyUntil = stallEnd
	var line string
	if now.Sub(s.minuteMark) > time.Minute {
		if s.reported > d.perMinute {
			line = SuppressedMessage(shard, s.reported-d.perMinute)
		}
		s.reported, s.minuteMark = 0, now
	}
	d.mu.Unlock()
	if line != "" {
		d.write(line)
	}
}

// Tick runs StartTask on every shard (a reactor always has tasks to run, so
// Seastar prints the suppressed count soon after the minute ends).
func (d *StallDetector) Tick() {
	for i := range d.shards {
		d.StartTask(i)
	}
}

// Report is one firing of the detector's timer delta into a stall on shard
// (on_signal → maybe_report): printed unless this minute's quota is used.
func (d *StallDetector) Report(shard int, group string, delta time.Duration) {
	d.mu.Lock()
	s := &d.shards[shard%len(d.shards)]
	ok := s.reported < d.perMinute
	s.reported++
	d.mu.Unlock()
	if ok {
		s.total.Add(1)
		d.write(StallMessage(shard, group, delta))
	}
}

// Reported is scylla_stall_detector_reported of a shard.
func (d *StallDetector) Reported(shard int) uint64 {
	return d.shards[shard%len(d.shards)].total.Load()
}
