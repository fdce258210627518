package monitor

import (
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
