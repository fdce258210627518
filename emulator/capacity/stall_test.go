package capacity

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Seastar src/core/reactor.cc, print_with_backtrace and
// append_backtrace_oneline: one raw line, shard, scheduling group, frames,
// build id.
func TestStallMessageFormat(t *testing.T) {
	got := StallMessage(1, "streaming", 32*time.Millisecond+900*time.Microsecond)
	re := regexp.MustCompile(`^Reactor stalled for 32 ms on shard 1, in scheduling group streaming\. Backtrace:( 0x[0-9a-f]+)+ \(BuildId: [0-9a-f]+\)$`)
	if !re.MatchString(got) {
		t.Errorf("got %q", got)
	}
	if got != StallMessage(1, "streaming", 32*time.Millisecond+900*time.Microsecond) {
		t.Error("not reproducible")
	}
	if s := SuppressedMessage(3, 1); s != "Rate-limit: suppressed 1 backtrace on shard 3" {
		t.Errorf("singular: %q", s)
	}
	if s := SuppressedMessage(0, 4); s != "Rate-limit: suppressed 4 backtraces on shard 0" {
		t.Errorf("plural: %q", s)
	}
}

// Seastar src/core/reactor.cc, cpu_stall_detector::on_signal: report, then
// `_report_at <<= 1` and re-arm threshold*_report_at + slack (slack 0.3 of
// the threshold, stall_detector.hh).
func TestStallOffsetsDouble(t *testing.T) {
	got := StallOffsets(25*time.Millisecond, 200*time.Millisecond)
	want := []time.Duration{32500 * time.Microsecond, 90 * time.Millisecond, 197500 * time.Microsecond}
	if len(got) != len(want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offsets %v, want %v", got, want)
		}
	}
	if o := StallOffsets(25*time.Millisecond, 30*time.Millisecond); len(o) != 0 {
		t.Errorf("a 30 ms stall under threshold+slack is not reported: %v", o)
	}
}

type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) write(s string) { l.mu.Lock(); l.l = append(l.l, s); l.mu.Unlock() }
func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.l...)
}

// Seastar src/core/reactor.cc, maybe_report and report_suppressions: at most
// --blocked-reactor-reports-per-minute (default 5) reports per shard and
// minute; the rest are counted and printed as one line once the minute ends.
func TestStallDetectorRateLimit(t *testing.T) {
	var out lines
	d := NewStallDetector(2, 0, out.write)
	now := time.Now()
	d.now = func() time.Time { return now }
	for i := range 8 {
		d.Report(1, "main", time.Duration(30+i)*time.Millisecond)
	}
	d.Report(0, "main", 40*time.Millisecond)
	if got := out.get(); len(got) != 6 {
		t.Fatalf("%d lines, want 5 on shard 1 and 1 on shard 0: %q", len(got), got)
	}
	if d.Reported(1) != 5 || d.Reported(0) != 1 {
		t.Errorf("reported %d, %d", d.Reported(0), d.Reported(1))
	}
	d.Tick() // within the minute: nothing
	if len(out.get()) != 6 {
		t.Fatal("suppression printed before the minute ended")
	}
	now = now.Add(61 * time.Second)
	d.Tick()
	got := out.get()
	if len(got) != 7 || got[6] != "Rate-limit: suppressed 3 backtraces on shard 1" {
		t.Fatalf("lines %q", got)
	}
	// A new minute: reports again.
	d.Report(1, "main", 33*time.Millisecond)
	if got := out.get(); len(got) != 8 || !strings.HasPrefix(got[7], "Reactor stalled for 33 ms on shard 1") {
		t.Fatalf("lines %q", got)
	}
}

// A shard in a stall starts no task, so Seastar's report_suppressions
// (called from start_task_run, src/core/reactor.cc) cannot run during it:
// the minute's Rate-limit line and the new minute wait for the stall's end,
// and all of a stall's reports count in one minute.
func TestStallDetectorNoSuppressionLineDuringStall(t *testing.T) {
	var out lines
	d := NewStallDetector(1, 0, out.write)
	now := time.Now()
	d.now = func() time.Time { return now }
	for i := range 5 {
		d.Report(0, "main", time.Duration(30+i)*time.Millisecond)
	}
	start := now.Add(59 * time.Second)
	now = start
	d.StartStall(0, start.Add(4*time.Second)) // a 4 s stall across the minute's end
	offs := StallOffsets(25*time.Millisecond, 4*time.Second)
	for _, off := range offs {
		now = start.Add(off)
		d.Report(0, "main", off)
		d.Tick()
	}
	if got := out.get(); len(got) != 5 {
		t.Fatalf("lines during the stall: %q", got)
	}
	now = now.Add(5 * time.Second)
	d.Tick()
	want := fmt.Sprintf("Rate-limit: suppressed %d backtraces on shard 0", len(offs))
	if got := out.get(); len(got) != 6 || got[5] != want {
		t.Fatalf("after the stall: %q, want %q", got, want)
	}
}

// A long batch with a request behind it is reported while it runs, at each
// doubling (Seastar src/core/reactor.cc, cpu_stall_detector), and counted
// once as a stall.
func TestBatchStallReportedWhileItRuns(t *testing.T) {
	var out lines
	det := NewStallDetector(1, 0, out.write)
	var stalls []time.Duration
	var mu sync.Mutex
	m := New(Config{Shards: 1, OpsPerShard: 1000, StallThreshold: 20 * time.Millisecond, NoWatchdog: true, Detector: det,
		OnStall: func(_ int, d time.Duration) { mu.Lock(); stalls = append(stalls, d); mu.Unlock() }})
	defer m.Close()
	go func() {
		time.Sleep(5 * time.Millisecond)
		m.Do(context.Background(), 0, 1)
	}()
	during := make(chan []string, 1)
	go func() {
		time.Sleep(90 * time.Millisecond) // after the reports at 26 and 72 ms, before the end at 150
		during <- out.get()
	}()
	if err := m.Batch(context.Background(), 0, 150); err != nil { // 150 ms
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	got := out.get()
	// threshold 20, slack 6: reports at 26, 72 (26+46) and 150 (72+86 > 150: none).
	if len(got) != 2 || !strings.HasPrefix(got[0], "Reactor stalled for 26 ms on shard 0, in scheduling group compaction.") ||
		!strings.HasPrefix(got[1], "Reactor stalled for 72 ms on shard 0") {
		t.Fatalf("reports %q", got)
	}
	if len(<-during) == 0 {
		t.Error("no report while the batch was still running")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stalls) != 1 || stalls[0] != 150*time.Millisecond {
		t.Errorf("stalls %v, want one of 150ms", stalls)
	}
}
