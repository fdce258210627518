package monitor

import (
	"fmt"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
	"github.com/elasticity-dev/elasticity/results"
)

// The emulator's own log lines must classify as the watcher expects.
func TestClassifyEmulatorLines(t *testing.T) {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 123e6, time.Local)
	line := func(level, logger, msg string) string {
		l := scyllalog.Format(ts, level, 1, "main", logger, msg)
		return l[:len(l)-1]
	}
	now := time.Now()
	ev, ok := Classify("node-1", capacity.StallMessage(1, "main", 47*time.Millisecond), now)
	if !ok || ev.Type != results.EventStall || ev.StallMS != 47 || !ev.Time.Equal(now.UTC()) {
		t.Fatalf("stall: %+v %v", ev, ok)
	}
	if ev, ok := Classify("node-1", capacity.SuppressedMessage(1, 3), now); ok {
		t.Fatalf("suppressed line classified alone as %+v", ev)
	}
	for msg, want := range map[string]string{
		"Startup failed: std::runtime_error (injected)":                              ErrStartupFailed,
		"write failed: std::system_error (error system:28, No space left on device)": ErrNoSpace,
		"something went wrong": ErrDatabase,
	} {
		logger := "database"
		if want == ErrStartupFailed {
			logger = "init"
		}
		ev, ok := Classify("node-1", line(scyllalog.Error, logger, msg), time.Now())
		if !ok || ev.ErrorType != want || !ev.Time.Equal(ts) {
			t.Errorf("%q: %+v, want %s", msg, ev, want)
		}
	}
}

// The emulator's stall reports for one 200 ms stall (its StallOffsets, from
// Seastar's reactor.cc) count as one stall of the longest report.
func TestLogWatcherCountsEmulatorStallOnce(t *testing.T) {
	var got []results.Event
	w := &LogWatcher{Node: "node-1", Emit: func(e results.Event) { got = append(got, e) }}
	for _, off := range capacity.StallOffsets(25*time.Millisecond, 200*time.Millisecond) {
		w.Line(capacity.StallMessage(0, "streaming", off))
	}
	w.flush(true)
	if len(got) != 1 || got[0].StallMS != 197 {
		t.Fatalf("events %+v, want one stall of 197 ms", got)
	}
}

// A rate-limited stall sequence as Seastar prints it (the emulator's
// capacity.StallDetector and StallOffsets mirror src/core/reactor.cc's
// cpu_stall_detector): on shard 1, four 40 ms stalls, then a 1.7 s stall
// reported at each doubling and a 50 ms one, then the minute's Rate-limit
// line, then a 100 ms stall in the next minute. Seastar prints 7 reports
// (its stall_detector_reported counter) of 6 distinct stalls and suppresses
// 6 reports: 5 re-reports of the long stall and the 50 ms stall's only
// one. The watcher counts the 6 stalls it saw once each and the 6
// suppressed reports as reports, not as 6 more stalls (12, as it once did).
func TestLogWatcherRateLimitedStallsAsSeastarCounts(t *testing.T) {
	clock := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	var events []results.Event
	w := &LogWatcher{Node: "node-1", StallThresholdMS: 25, Now: now, Emit: func(e results.Event) { events = append(events, e) }}
	det := capacity.NewStallDetector(2, 0, w.Line).WithClock(now)
	const thr = 25 * time.Millisecond
	stall := func(d time.Duration) (reports int) {
		start := clock
		det.StartStall(1, start.Add(d))
		for _, off := range capacity.StallOffsets(thr, d) {
			clock = start.Add(off)
			det.Report(1, "statement", off)
			reports++
		}
		clock = start.Add(d + 100*time.Millisecond)
		return reports
	}
	reports := 0
	for _, d := range []time.Duration{40, 40, 40, 40, 1700, 50} {
		reports += stall(d * time.Millisecond)
	}
	if reports != 11 {
		t.Fatalf("%d reports, want 11 (4 + 6 of the 1.7 s stall + 1)", reports)
	}
	clock = clock.Add(time.Minute)
	det.Tick() // the next task run after the minute: the Rate-limit line
	stall(100 * time.Millisecond)
	w.flush(true)

	var stalls []float64
	var suppressed int64
	for _, e := range events {
		switch e.Type {
		case results.EventStall:
			stalls = append(stalls, e.StallMS)
		case results.EventStallsSuppressed:
			suppressed += e.Count
			if e.Line != "Rate-limit: suppressed 6 backtraces on shard 1" {
				t.Errorf("suppressed line %q", e.Line)
			}
		default:
			t.Errorf("unexpected event %+v", e)
		}
	}
	if got := det.Reported(1); got != 7 {
		t.Fatalf("Seastar printed %d reports, want 7", got)
	}
	if want := []float64{32, 32, 32, 32, 32, 90}; fmt.Sprint(stalls) != fmt.Sprint(want) {
		t.Errorf("stalls %v, want %v", stalls, want)
	}
	if suppressed != int64(reports-capacity.DefaultStallReportsPerMinute) {
		t.Errorf("suppressed reports %d, want %d", suppressed, reports-capacity.DefaultStallReportsPerMinute)
	}
}
