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
	ev, ok := Classify("node-1", line(scyllalog.Warn, "seastar", capacity.StallMessage(1, 47*time.Millisecond)), time.Now())
	if !ok || ev.Type != results.EventStall || ev.StallMS != 47 || !ev.Time.Equal(ts) {
		t.Fatalf("stall: %+v %v", ev, ok)
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
		if !ok || ev.ErrorType != want {
			t.Errorf("%q: %+v, want %s", msg, ev, want)
		}
	}
}
