package scyllalog

import (
	"strings"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 123e6, time.UTC)
	if got, want := Format(ts, Info, 0, "main", "init", "message"), "INFO  2026-11-30 12:00:00,123 [shard 0:main] init - message\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	var b strings.Builder
	l := New(&b)
	l.Now = func() time.Time { return ts }
	l.ShardLogf(1, "strm", Warn, "seastar", "Reactor stalled for %d ms on shard %d.", 32, 1)
	l.Logf(Debug, "x", "dropped")
	l.Logf(Error, "commitlog", "%d%% No space left on device", 100)
	want := "WARN  2026-11-30 12:00:00,123 [shard 1:strm] seastar - Reactor stalled for 32 ms on shard 1.\n" +
		"ERROR 2026-11-30 12:00:00,123 [shard 0:main] commitlog - 100% No space left on device\n"
	if b.String() != want {
		t.Errorf("got %q", b.String())
	}
	var nilLogger *Logger
	nilLogger.Logf(Error, "x", "no panic")
}
