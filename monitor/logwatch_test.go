package monitor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	cases := []struct {
		line     string
		typ      string // "" = no event
		errType  string
		severity string
		stallMS  float64
	}{
		{"INFO  2026-11-30 12:00:00,123 [shard 0:main] init - Scylla version 2026.1 initialization completed.", "", "", "", 0},
		{"WARN  2026-11-30 12:00:01,500 [shard 1:main] seastar_memory - oversized allocation", "", "", "", 0},
		{"WARN  2026-11-30 12:00:02,000 [shard 1:stmt] seastar - Reactor stalled for 32 ms on shard 1. Backtrace: 0x5a5b 0x5c5d", results.EventStall, ErrReactorStalled, SeverityNormal, 32},
		{"Reactor stalled for 2049 ms on shard 3, in scheduling group main", results.EventStall, ErrReactorStalled, SeverityNormal, 2049},
		{"ERROR 2026-11-30 12:00:03,000 [shard 0:strm] database - failed to write sstable: std::system_error (error system:28, No space left on device)", results.EventDBError, ErrNoSpace, SeverityError, 0},
		{"ERROR 2026-11-30 12:00:04,000 [shard 2:main] storage_proxy - exception: std::bad_alloc (std::bad_alloc)", results.EventDBError, ErrBadAlloc, SeverityError, 0},
		{"ERROR 2026-11-30 12:00:05,000 [shard 0:main] init - Startup failed: std::runtime_error (injected fault)", results.EventDBError, ErrStartupFailed, SeverityCritical, 0},
		{"ERROR 2026-11-30 12:00:06,000 [shard 0:main] compaction - std::runtime_error (something broke)", results.EventDBError, ErrRuntime, SeverityError, 0},
		{"ERROR 2026-11-30 12:00:07,000 [shard 1:main] storage_service - some failure", results.EventDBError, ErrDatabase, SeverityError, 0},
		{"Nov 30 12:00:07 node-1 scylla[123]: !ERR   | [shard 1:main] repair - failed something", results.EventDBError, ErrDatabase, SeverityError, 0},
		{"ERROR 2026-11-30 12:00:08,000 [shard 0:main] seastar - Aborting on shard 0.", results.EventDBError, ErrAborting, SeverityCritical, 0},
		{"INFO  2026-11-30 12:00:09,000 [shard 0:main] seastar - Backtrace: 0x1 0x2", results.EventDBError, ErrBacktrace, SeverityError, 0},
		{"ERROR 2026-11-30 12:00:10,000 [shard 0:main] cql_server - exception while processing connection: std::system_error (error system:104, Connection reset by peer)", "", "", "", 0},
		{"ERROR 2026-11-30 12:00:11,000 [shard 0:main] audit: Backtrace-like audit line", "", "", "", 0},
		{"WARN  2026-11-30 12:00:12,000 [shard 0:main] rpc - client 127.0.0.3:7000: fail to connect: Connection refused", "", "", "", 0},
	}
	for _, tc := range cases {
		ev, ok := Classify("node-1", tc.line, now)
		if tc.typ == "" {
			if ok {
				t.Errorf("%q: unexpected event %+v", tc.line, ev)
			}
			continue
		}
		if !ok {
			t.Errorf("%q: no event, want %s", tc.line, tc.errType)
			continue
		}
		if ev.Type != tc.typ || ev.ErrorType != tc.errType || ev.Severity != tc.severity || ev.StallMS != tc.stallMS || ev.Node != "node-1" || ev.Line != tc.line {
			t.Errorf("%q: got %+v, want type %s/%s severity %s stall %v", tc.line, ev, tc.typ, tc.errType, tc.severity, tc.stallMS)
		}
		if strings.HasPrefix(tc.line, "ERROR 2026") || strings.HasPrefix(tc.line, "WARN  2026") || strings.HasPrefix(tc.line, "INFO  2026") {
			want, _ := time.ParseInLocation("2006-01-02 15:04:05,000", tc.line[6:29], time.Local)
			if !ev.Time.Equal(want) {
				t.Errorf("%q: time %v, want %v", tc.line, ev.Time, want)
			}
		} else if !ev.Time.Equal(now) {
			t.Errorf("%q: time %v, want now", tc.line, ev.Time)
		}
	}
}

func TestWatchStopsAtEOFAndOnCancel(t *testing.T) {
	var got []results.Event
	in := "INFO  2026-11-30 12:00:00,123 [shard 0:main] init - ok\nWARN  2026-11-30 12:00:02,000 [shard 1:main] seastar - Reactor stalled for 40 ms on shard 1.\nERROR 2026-11-30 12:00:03,000 [shard 0:main] x - No space left on device"
	if err := Watch(context.Background(), "node-2", strings.NewReader(in), func(e results.Event) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	// The stall is emitted once over (here at the end of the log).
	if len(got) != 2 || got[0].ErrorType != ErrNoSpace || got[1].StallMS != 40 {
		t.Fatalf("events = %+v", got)
	}

	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, "node-2", pr, func(results.Event) {}) }()
	pw.Write([]byte("INFO line\n"))
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Watch did not return after cancel")
	}
}

// One 200 ms stall at threshold 25 reported at ~25, 50, 100 and 200 ms, then
// Seastar's suppressed-count line (seastar src/core/reactor.cc,
// cpu_stall_detector::on_signal and report_suppressions): one stall of
// 200 ms, and 3 suppressed reports that are not stalls (maybe_report counts
// re-reports as much as new stalls).
func TestLogWatcherStallDoublingAndSuppressed(t *testing.T) {
	var got []results.Event
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	w := &LogWatcher{Node: "node-1", StallThresholdMS: 25, Now: func() time.Time { return clock },
		Emit: func(e results.Event) { got = append(got, e) }}
	for _, ms := range []int{25, 50, 100, 200} {
		clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
		w.Line(fmt.Sprintf("Reactor stalled for %d ms on shard 2, in scheduling group statement. Backtrace: 0x1 0x2 (BuildId: ab)", ms))
	}
	// Another shard's stall in between does not end it.
	w.Line("Reactor stalled for 33 ms on shard 0, in scheduling group main. Backtrace: 0x3 (BuildId: ab)")
	clock = clock.Add(time.Minute)
	w.Line("Rate-limit: suppressed 3 backtraces on shard 2")
	w.flush(true)
	var long, shard0, suppressed int
	for _, e := range got {
		if e.Node != "node-1" {
			t.Fatalf("event %+v", e)
		}
		switch {
		case e.Type == results.EventStallsSuppressed && e.Count == 3 && strings.HasPrefix(e.Line, "Rate-limit"):
			suppressed++
		case e.Type != results.EventStall || e.ErrorType != ErrReactorStalled:
			t.Fatalf("event %+v", e)
		case e.StallMS == 200:
			long++
		case e.StallMS == 33:
			shard0++
		default:
			t.Errorf("unexpected stall %+v", e)
		}
	}
	if long != 1 || shard0 != 1 || suppressed != 1 || len(got) != 3 {
		t.Fatalf("200 ms: %d, shard 0: %d, suppressed lines: %d of %d events %+v", long, shard0, suppressed, len(got), got)
	}
	// Two stalls in a row on one shard are two, and a stall is emitted once
	// it can no longer be reported again.
	got = nil
	w.Line("Reactor stalled for 32 ms on shard 1, in scheduling group main. Backtrace: 0x1 (BuildId: ab)")
	w.Line("Reactor stalled for 33 ms on shard 1, in scheduling group main. Backtrace: 0x1 (BuildId: ab)")
	clock = clock.Add(3 * time.Second)
	w.flush(false)
	if len(got) != 2 || got[0].StallMS != 32 || got[1].StallMS != 33 {
		t.Fatalf("two short stalls: %+v", got)
	}
}

// Multi-line reports (--blocked-reactor-report-format-oneline=0, and the
// perf detector's kernel callstack) are part of the stall, never errors;
// docker --timestamps give the event time in UTC and ScyllaDB's own
// timestamps are read in the node's zone.
func TestLogWatcherBacktraceLinesAndTimes(t *testing.T) {
	var got []results.Event
	w := &LogWatcher{Node: "node-1", Location: time.UTC, Emit: func(e results.Event) { got = append(got, e) }}
	for _, l := range []string{
		"2026-11-30T12:00:00.500000000Z Reactor stalled for 40 ms on shard 1, in scheduling group main.",
		"2026-11-30T12:00:00.500000000Z Backtrace:",
		"2026-11-30T12:00:00.500000000Z   0x5a1b2c3",
		"2026-11-30T12:00:00.500000000Z   /opt/scylladb/libreloc/libc.so.6+0x27b89",
		"2026-11-30T12:00:00.500000000Z kernel callstack: 0xffffffff 0xfffffffe",
		"ERROR 2026-11-30 12:00:03,000 [shard 0:main] database - something failed",
	} {
		w.Line(l)
	}
	w.flush(true)
	if len(got) != 2 {
		t.Fatalf("events %+v", got)
	}
	if got[0].ErrorType != ErrDatabase || !got[0].Time.Equal(time.Date(2026, 11, 30, 12, 0, 3, 0, time.UTC)) {
		t.Errorf("error event %+v", got[0])
	}
	if got[1].Type != results.EventStall || got[1].StallMS != 40 || !got[1].Time.Equal(time.Date(2026, 11, 30, 12, 0, 0, 5e8, time.UTC)) {
		t.Errorf("stall event %+v", got[1])
	}
	// A "Backtrace:" not following a stall is still SCT's BACKTRACE error.
	got = nil
	w.Line("INFO  2026-11-30 12:00:09,000 [shard 0:main] seastar - Backtrace: 0x1 0x2")
	if len(got) != 1 || got[0].ErrorType != ErrBacktrace {
		t.Errorf("backtrace after an ordinary line: %+v", got)
	}
}

// The stall threshold is the one the node was really started with, read
// from the "command used" line ScyllaDB prints as it starts (scylladb
// main.cc print_starting_message): 50 from the local backend's flag,
// 999999999 from the scylladb/scylla 2025.1–2025.3 entrypoint
// (dist/docker/scyllasetup.py), Seastar's 25 when the line has none. A
// suppressed count stays a count of reports, whatever the threshold.
func TestLogWatcherThresholdFromCommandLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want float64
	}{
		{`command used: "/usr/bin/elasticity node --listen-address 127.0.0.2 --blocked-reactor-notify-ms 50 --vcpus 2"`, 50},
		{`2026-11-30T12:00:00.000000000Z command used: "/usr/bin/scylla --log-to-syslog 0 --developer-mode 1 --blocked-reactor-notify-ms 999999999"`, 999999999},
		{`command used: "/usr/bin/scylla --blocked-reactor-notify-ms=30 --smp 2"`, 30},
		{`command used: "/usr/bin/scylla --smp 2"`, DefaultStallThresholdMS},
	} {
		var got []results.Event
		w := &LogWatcher{Node: "node-2", StallThresholdMS: 25, Location: time.UTC, Emit: func(e results.Event) { got = append(got, e) }}
		w.Line("Scylla version 2025.1.0 with build-id 0 starting ...")
		w.Line(tc.line)
		w.Line("pid: 7")
		w.Line("Rate-limit: suppressed 2 backtraces on shard 1")
		w.flush(true)
		if len(got) != 2 || got[0].Type != results.EventStallThreshold || got[0].StallMS != tc.want || got[0].Node != "node-2" {
			t.Fatalf("%s: events %+v", tc.line, got)
		}
		if e := got[1]; e.Type != results.EventStallsSuppressed || e.Count != 2 || e.StallMS != 0 {
			t.Fatalf("%s: suppressed reports given as %+v, want a count of 2 reports", tc.line, e)
		}
	}
}
