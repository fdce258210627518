package monitor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Seastar's stall reports (seastar src/core/reactor.cc, cpu_stall_detector).
// A stall is one task run that does not give the reactor back:
// start_task_run sets _run_started_at and _report_at = 1 and arms the timer
// at threshold + slack; each time it fires with no task processed,
// on_signal calls maybe_report and doubles _report_at, so one stall is
// reported again each time it doubles, every report giving the time since
// the run started (generate_trace: "Reactor stalled for N ms on shard S").
// maybe_report counts every report, first or repeated, in _reported and
// prints only the first --blocked-reactor-reports-per-minute (5) of the
// minute; report_suppressions, at the first task run after the minute, prints
// "Rate-limit: suppressed N backtraces on shard S" with N = _reported - 5:
// suppressed *reports*, which may all be re-reports of the last printed
// stall or belong to up to N stalls never printed. Seastar's own counters
// agree: stall_detector_reported (_total_reported, in generate_trace) counts
// printed reports only, and the scylla_reactor_stalls histogram adds each
// long task run once, with its whole length (account_runtime). So the
// watcher counts each printed stall once (its longest report) and gives the
// suppressed count as what it is, a number of reports (a
// stall_reports_suppressed event), never as stalls. The reports are raw
// stderr lines (no level, no timestamp); with
// --blocked-reactor-report-format-oneline=0 the frames follow on lines of
// their own, and the perf-based detector may add a "kernel callstack:" line.
var (
	suppressedRe = regexp.MustCompile(`Rate-limit: suppressed (\d+) backtraces? on shard (\d+)`)
	// A stall report's continuation: "Backtrace:", frames ("  0x1234",
	// "  /opt/scylladb/libreloc/libc.so.6+0x1234"), "kernel callstack: ...".
	continuationRe = regexp.MustCompile(`^(\s+(\S+\+)?0x[0-9a-f]+\s*$|Backtrace:\s*$|kernel callstack:)`)
	// commandUsedRe is the line ScyllaDB prints as it starts (scylladb
	// main.cc print_starting_message: `command used: "/usr/bin/scylla ..."`,
	// raw on stdout); thresholdArgRe finds the stall threshold in it.
	commandUsedRe  = regexp.MustCompile(`command used: "([^"]*)"`)
	thresholdArgRe = regexp.MustCompile(`--blocked-reactor-notify-ms[= ]+(\d+)`)
	// dockerTime is the prefix `docker logs --timestamps` adds (UTC).
	dockerTime = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z) `)
)

// DefaultStallThresholdMS is Seastar's default --blocked-reactor-notify-ms
// (seastar src/core/reactor_config / reactor.cc: 25 ms), the threshold of a
// node whose command line does not set it.
const DefaultStallThresholdMS = 25

// StallThresholdFromCommand is the --blocked-reactor-notify-ms of a command
// line (the last one given; Seastar refuses a repeat anyway), else Seastar's
// default.
func StallThresholdFromCommand(cmd string) float64 {
	ms := float64(DefaultStallThresholdMS)
	for _, m := range thresholdArgRe.FindAllStringSubmatch(cmd, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			ms = v
		}
	}
	return ms
}

// LogWatcher turns one node's log into events: database errors line by
// line, reactor stalls counted once each (its longest report), and the
// reports Seastar's rate limit suppressed, as a count of reports.
type LogWatcher struct {
	Node string
	Emit func(results.Event)
	// Location is the time zone of ScyllaDB's own timestamps (default
	// time.Local, right for local nodes; containers and machine images log UTC).
	Location *time.Location
	// StallThresholdMS is the node's --blocked-reactor-notify-ms until its
	// log says (default 25): the "command used" line ScyllaDB prints as it
	// starts sets it to what the node was really started with (on the
	// scylladb/scylla images of 2025.1–2025.3, 999999999:
	// dist/docker/scyllasetup.py appends it), and emits a stall_threshold
	// event: no stall shorter is reported.
	StallThresholdMS float64
	// Now is the clock for lines without a timestamp (default time.Now).
	Now func() time.Time

	mu         sync.Mutex
	pending    map[int]*pendingStall // by shard
	afterStall bool                  // the previous line was a stall report or its continuation
}

type pendingStall struct {
	ev      results.Event
	arrived time.Time // when its last report was read
	start   time.Time // report time minus its length (when the line had a time)
	timed   bool
}

func (w *LogWatcher) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Watch reads r line by line until it ends or ctx is done (closing r if it
// is an io.Closer, so that a following reader stops too), then emits the
// stalls still pending.
func (w *LogWatcher) Watch(ctx context.Context, r io.Reader) error {
	if c, ok := r.(io.Closer); ok {
		stop := context.AfterFunc(ctx, func() { c.Close() })
		defer stop()
	}
	done := make(chan struct{})
	defer close(done)
	go func() { // a stall that reports no more is over: emit it
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				w.flush(false)
			}
		}
	}()
	defer w.flush(true)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			w.Line(line)
		}
		if err != nil {
			if ctx.Err() != nil || err == io.EOF || err == io.ErrClosedPipe {
				return nil
			}
			return err
		}
	}
}

// Line handles one log line.
func (w *LogWatcher) Line(line string) {
	now := w.now()
	var ts time.Time
	timed := false
	if m := dockerTime.FindStringSubmatch(line); m != nil {
		if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			ts, timed = t.UTC(), true
		}
		line = line[len(m[0]):]
	}
	loc := w.Location
	if loc == nil {
		loc = time.Local
	}
	if !timed && logTime.MatchString(line) {
		ts, timed = lineTimeIn(line, now, loc), true
	}
	if !timed {
		ts = now.UTC()
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.afterStall && continuationRe.MatchString(line) {
		return // part of the report above: never an error
	}
	w.afterStall = false
	if m := commandUsedRe.FindStringSubmatch(line); m != nil {
		w.StallThresholdMS = StallThresholdFromCommand(m[1])
		w.emit(results.Event{Time: ts, Type: results.EventStallThreshold, Node: w.Node, StallMS: w.StallThresholdMS, Line: line})
		return
	}
	if m := suppressedRe.FindStringSubmatch(line); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		w.emit(results.Event{Time: ts, Type: results.EventStallsSuppressed, Node: w.Node, Count: n, Line: line,
			Message: fmt.Sprintf("Seastar's rate limit suppressed %d stall reports on shard %s (re-reports of a printed stall or further stalls, 0 to %d of them; lengths unknown)", n, m[2], n)})
		return
	}
	ev, ok := Classify(w.Node, line, ts)
	if !ok {
		return
	}
	ev.Time = ts
	if ev.Type != results.EventStall {
		w.emit(ev)
		return
	}
	w.afterStall = true
	shard := -1
	if m := LogPatterns[0].Re.FindStringSubmatch(line); m != nil && m[2] != "" {
		shard, _ = strconv.Atoi(m[2])
	}
	start := ts.Add(-time.Duration(ev.StallMS * float64(time.Millisecond)))
	if w.pending == nil {
		w.pending = map[int]*pendingStall{}
	}
	if p := w.pending[shard]; p != nil {
		if continues(p, ev, start, timed, now) {
			p.ev, p.arrived, p.start, p.timed = ev, now, start, timed
			return
		}
		w.emit(p.ev)
	}
	w.pending[shard] = &pendingStall{ev: ev, arrived: now, start: start, timed: timed}
}

// continues says whether a report is a later report of pending's stall:
// longer by the doubling (Seastar's next report comes at more than twice the
// previous one's length; 1.5 leaves room for rounding), read no later than
// the stall could have lasted, and started at the same time when both
// lines carry times.
func continues(p *pendingStall, ev results.Event, start time.Time, timed bool, now time.Time) bool {
	if ev.StallMS < 1.5*p.ev.StallMS {
		return false
	}
	grew := time.Duration((ev.StallMS - p.ev.StallMS) * float64(time.Millisecond))
	if now.Sub(p.arrived) > grew+time.Second {
		return false
	}
	if timed && p.timed {
		tol := max(50*time.Millisecond, time.Duration(0.1*ev.StallMS*float64(time.Millisecond)))
		if d := start.Sub(p.start); d > tol || d < -tol {
			return false
		}
	}
	return true
}

// flush emits pending stalls that can no longer be reported again (the next
// report would have come within about twice the last one's length), or all.
func (w *LogWatcher) flush(all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	for shard, p := range w.pending {
		wait := time.Duration(3*p.ev.StallMS*float64(time.Millisecond)) + 2*time.Second
		if all || now.Sub(p.arrived) > wait {
			w.emit(p.ev)
			delete(w.pending, shard)
		}
	}
}

// emit is called with w.mu held, so events leave in order.
func (w *LogWatcher) emit(ev results.Event) {
	if w.Emit != nil {
		w.Emit(ev)
	}
}
