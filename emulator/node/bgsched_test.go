package node

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
)

// The controllers' shares are ScyllaDB's (backlog_controller.hh), and a
// group's shares map to the nice value of the same weight ratio.
func TestBackgroundSharesAreScyllaDBControllers(t *testing.T) {
	for _, c := range []struct {
		points  []controlPoint
		backlog float64
		shares  float64
	}{
		{compactionControl, 0, 50}, {compactionControl, 0.75, 75}, {compactionControl, 1.5, 100},
		{compactionControl, 15.75, 550}, {compactionControl, 30, 1000}, {compactionControl, 100, 1000},
		{flushControl, 0, 0}, {flushControl, 0.3, 5}, {flushControl, 0.6, 10}, {flushControl, 0.7, 105},
		{flushControl, 0.9, 600}, {flushControl, 1, 1000}, {flushControl, 2, 1000},
	} {
		if got := sharesAt(c.points, c.backlog); math.Abs(got-c.shares) > 1e-9 {
			t.Errorf("shares at backlog %v of %v: %v, want %v", c.backlog, c.points, got, c.shares)
		}
	}
	for shares, nice := range map[float64]int{1000: 0, 800: 1, 200: 7, 100: 10, 50: 13, 10: 19, 0: 19} {
		if got := niceFor(shares); got != nice {
			t.Errorf("niceFor(%v) = %d, want %d", shares, got, nice)
		}
	}
}

// threadNices reads the nice value of every thread of this process
// (field 19 of /proc/self/task/TID/stat).
func threadNices(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	out := map[int]int{}
	for _, e := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", e.Name(), "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		nice, _ := strconv.Atoi(f[16])
		tid, _ := strconv.Atoi(e.Name())
		out[tid] = nice
	}
	return out
}

// Flushes and compactions run on threads at their controllers' priority,
// and those threads end with them: requests never run at it.
func TestFlushesAndCompactionsRunAtTheirGroupsPriority(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread priority is Linux only")
	}
	var seen []int
	hook := make(chan int, 1000)
	onLowered = func(nice int) { hook <- nice }
	defer func() { onLowered = nil }()
	s, err := OpenStore(t.TempDir(), 117<<20) // i4i.large's emulated disk
	if err != nil {
		t.Fatal(err)
	}
	writeRows(t, s, 30000) // flushes and compactions
	writeRows(t, s, 30000) // overwrites: more compactions
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	close(hook)
	for n := range hook {
		seen = append(seen, n)
	}
	t.Logf("background threads' nice values: %v", seen)
	if len(seen) == 0 {
		t.Fatal("no flush or compaction lowered its thread's priority")
	}
	for _, n := range seen {
		// A flush of one memtable is below the soft limit (nice 19), a
		// compaction at least 50 shares' priority (nice 13) and at most
		// 1000's (nice 0) but the debt of one store is well under that.
		if n < 1 || n > 19 {
			t.Errorf("background thread at nice %d, want 1..19", n)
		}
	}
	// No thread keeps a lowered priority once its work ended.
	deadline := time.Now().Add(2 * time.Second)
	for {
		var niced []string
		for tid, n := range threadNices(t) {
			if n != 0 {
				niced = append(niced, strconv.Itoa(tid)+"@"+strconv.Itoa(n))
			}
		}
		if len(niced) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads still at a lowered priority after the store closed: %v", niced)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := syscallNice(t); n != 0 {
		t.Errorf("the test's own thread is at nice %d", n)
	}
}

// A streamed tablet is written on a thread at the streaming group's
// priority; the request worker that asked for it keeps its own.
func TestStreamingRunsAtItsGroupsPriorityOnItsOwnThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread priority is Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var inside int
	if err := inBackground(capacity.StreamingShares, func() error { inside = syscallNice(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != niceFor(capacity.StreamingShares) || inside != 7 {
		t.Errorf("streaming ran at nice %d, want 7 (200 shares)", inside)
	}
	if n := syscallNice(t); n != 0 {
		t.Errorf("the caller's thread is at nice %d after streaming, want 0", n)
	}
}

func syscallNice(t *testing.T) int {
	t.Helper()
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}
