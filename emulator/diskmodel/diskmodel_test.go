package diskmodel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

type logRec struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRec) logf(level, logger, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+" "+logger+" - "+fmt.Sprintf(format, args...))
}

func (l *logRec) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

func write(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUsageFromDataDir(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "000001.sst"), 3000)
	write(t, filepath.Join(dir, "b", "c", "000002.log"), 1000)
	t0 := time.Now()
	d := New(dir, 10000, nil)
	if d.Used() != 4000 || d.Avail() != 6000 || d.Capacity() != 10000 {
		t.Fatalf("used %d avail %d cap %d", d.Used(), d.Avail(), d.Capacity())
	}
	// Cached: a new file is not seen until the refresh interval passes.
	write(t, filepath.Join(dir, "a", "000003.sst"), 2000)
	if d.Used() != 4000 && time.Since(t0) < RefreshInterval {
		t.Errorf("walked again within the refresh interval: %d", d.Used())
	}
	time.Sleep(RefreshInterval + 20*time.Millisecond)
	if d.Used() != 6000 {
		t.Errorf("after refresh: used %d, want 6000", d.Used())
	}
	// Removal (tablets moved away) lowers usage.
	os.Remove(filepath.Join(dir, "a", "000001.sst"))
	d.Refresh()
	if d.Used() != 3000 || d.Utilization() != 0.3 {
		t.Errorf("after removal: used %d util %v", d.Used(), d.Utilization())
	}
}

func TestMissingDirIsEmpty(t *testing.T) {
	d := New(filepath.Join(t.TempDir(), "not-yet"), 100, nil)
	if d.Used() != 0 || d.Avail() != 100 {
		t.Errorf("used %d avail %d", d.Used(), d.Avail())
	}
}

func TestCheckWriteFullDisk(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "data"), 900)
	var l logRec
	d := New(dir, 1000, l.logf)
	if err := d.CheckWrite(50); err != nil {
		t.Fatalf("write that fits: %v", err)
	}
	// Admitted bytes count before the next walk: 950 + 60 > 1000.
	err := d.CheckWrite(60)
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeWriteFailure || !strings.Contains(ee.Message, "No space left on device") {
		t.Fatalf("err = %#v, want WriteFailure with No space left on device", err)
	}
	for range 20 {
		d.CheckWrite(100)
	}
	if n := l.count("No space left on device"); n != 1 {
		t.Errorf("%d ENOSPC log lines, want 1 (rate-limited): %q", n, l.lines)
	}
	if !strings.HasPrefix(l.lines[len(l.lines)-1], "ERROR commitlog - ") {
		t.Errorf("log line %q", l.lines[len(l.lines)-1])
	}
	if d.Failed() != 21 {
		t.Errorf("failed %d", d.Failed())
	}
	// Small writes still fit.
	if err := d.CheckWrite(10); err != nil {
		t.Errorf("small write: %v", err)
	}
}

func TestCriticalLevelsLoggedOncePerCrossing(t *testing.T) {
	dir := t.TempDir()
	var l logRec
	d := New(dir, 1000, l.logf)
	for range 10 {
		if err := d.CheckWrite(96); err != nil { // up to 960 bytes admitted
			t.Fatal(err)
		}
	}
	if n := l.count("is high"); n != 1 {
		t.Errorf("%d high-level warnings, want 1: %q", n, l.lines)
	}
	d.CheckWrite(25) // 985 > 98%
	d.CheckWrite(5)
	if n := l.count("Reached the critical disk utilization level (98.0%)"); n != 1 {
		t.Errorf("%d critical warnings, want 1: %q", n, l.lines)
	}
	// Nothing was written to the directory: the walk finds it empty and
	// the levels re-arm.
	d.Refresh()
	if n := l.count("Dropped below the critical"); n != 1 {
		t.Errorf("no drop line: %q", l.lines)
	}
	for range 10 {
		d.CheckWrite(99)
	}
	if n := l.count("Reached the critical"); n != 2 {
		t.Errorf("critical warnings after re-crossing: %d", n)
	}
	for _, s := range l.lines {
		if strings.Contains(s, "Reached") && !strings.HasPrefix(s, "WARN ") {
			t.Errorf("critical line not WARN: %q", s)
		}
	}
}

func TestUnlimited(t *testing.T) {
	d := New(t.TempDir(), 0, nil)
	if err := d.CheckWrite(1 << 40); err != nil {
		t.Error(err)
	}
}

func BenchmarkCheckWrite(b *testing.B) {
	dir := b.TempDir()
	for i := range 200 {
		os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), make([]byte, 1000), 0o644)
	}
	d := New(dir, 1<<40, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d.CheckWrite(100)
		}
	})
}

// fakeFS makes statfs answer a filesystem of size bytes with avail left
// (4 KiB blocks), as a tmpfs mounted at the data directory would.
func fakeFS(t *testing.T, size, avail *int64) {
	t.Helper()
	old := statfs
	statfs = func(path string, st *syscall.Statfs_t) error {
		st.Bsize, st.Frsize = 4096, 4096
		st.Blocks, st.Bfree, st.Bavail = uint64(*size/4096), uint64(*avail/4096), uint64(*avail/4096)
		return nil
	}
	t.Cleanup(func() { statfs = old })
}

// A disk on its filesystem (the image double): capacity and space left are
// statfs's, whatever the node was told; writes that do not fit what is
// left less the store's reserve, counting those admitted since the last
// statfs, fail with ENOSPC as ScyllaDB reports it; space freed on the
// filesystem is seen again.
func TestDiskOnFilesystem(t *testing.T) {
	size, avail := int64(64<<20), int64(1<<20)
	fakeFS(t, &size, &avail)
	var log logRec
	d, err := NewFilesystem(t.TempDir(), 100<<10, log.logf)
	if err != nil {
		t.Fatal(err)
	}
	if d.Capacity() != 64<<20 || d.Avail() != 1<<20 || !d.OnFilesystem() {
		t.Fatalf("capacity %d, avail %d", d.Capacity(), d.Avail())
	}
	if u := d.Utilization(); u < 0.98 || u > 0.99 {
		t.Errorf("utilization %.4f, want 63/64", u)
	}
	if err := d.CheckWrite(600 << 10); err != nil {
		t.Fatal(err)
	}
	err = d.CheckWrite(400 << 10) // 1000 KiB admitted in all: fits, but not with the 100 KiB reserve
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeWriteFailure || !strings.Contains(ee.Message, "No space left on device") {
		t.Fatalf("second write: %v, want ENOSPC", err)
	}
	if log.count("Exception in segment reservation: storage_io_error (Storage I/O error: 28: No space left on device)") != 1 || d.Failed() != 1 {
		t.Errorf("log %v, failed %d", log.lines, d.Failed())
	}
	// The filesystem frees space (compaction, a tablet moved away).
	avail = 32 << 20
	time.Sleep(StatfsInterval + 10*time.Millisecond)
	if d.Avail() != 32<<20 {
		t.Errorf("avail after freeing: %d", d.Avail())
	}
	if err := d.CheckWrite(600 << 10); err != nil {
		t.Errorf("a write that fits again: %v", err)
	}
}

// On a filesystem whose store reserve is more than the critical level
// leaves, a user write that would eat into the reserve is refused as above
// the level (a write failure with its message, no ERROR line), below the
// level; a streamed write at the same point still fails with ENOSPC.
func TestUserWritesRefusedAtTheStoreReserve(t *testing.T) {
	size, avail := int64(100<<20), int64(3<<20) // 97% used, 3 MiB left
	fakeFS(t, &size, &avail)
	var log logRec
	d, err := NewFilesystem(t.TempDir(), 3<<20-(200<<10), log.logf) // reserve: 3 MiB less 200 KiB
	if err != nil {
		t.Fatal(err)
	}
	if u := d.Utilization(); u >= d.CriticalLevelOf() {
		t.Fatalf("utilization %.3f: the test wants it below the level", u)
	}
	if err := d.CheckMutation(100 << 10); err != nil {
		t.Fatalf("a user write that fits above the reserve: %v", err)
	}
	err = d.CheckMutation(200 << 10) // 300 KiB admitted: into the reserve
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeWriteFailure || ee.Message != CriticalMessage {
		t.Fatalf("a user write into the reserve: %v, want a write failure %q", err, CriticalMessage)
	}
	if d.Rejected() != 1 || d.Failed() != 0 || log.count("No space left") != 0 {
		t.Errorf("rejected %d, failed %d, log %q", d.Rejected(), d.Failed(), log.lines)
	}
	err = d.CheckWrite(200 << 10)
	if !errors.As(err, &ee) || !strings.Contains(ee.Message, "No space left on device") || d.Failed() != 1 {
		t.Errorf("a streamed write into the reserve: %v (failed %d), want ENOSPC", err, d.Failed())
	}
}

// The filesystem's size of a real directory is its statfs's.
func TestFilesystemSizeIsStatfs(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	got, err := FilesystemSize(dir)
	if err != nil || got != int64(st.Blocks)*st.Bsize {
		t.Errorf("FilesystemSize = %d, %v; statfs %d", got, err, int64(st.Blocks)*st.Bsize)
	}
	if _, err := FilesystemSize(filepath.Join(dir, "missing")); err == nil {
		t.Error("no error for a missing directory")
	}
}

// Above critical_disk_utilization_level user writes are rejected as
// ScyllaDB's critical disk utilization mode does (replica/database.cc,
// replica/exceptions.hh): a write failure with its message, no "No space
// left" line; the crossing is logged by disk_space_monitor (main.cc). Other
// writes (streaming, repair, internal tables) still go in while they fit.
func TestUserWritesRejectedAboveTheCriticalLevel(t *testing.T) {
	var l logRec
	d := New(t.TempDir(), 1000, l.logf)
	d.SetCriticalLevel(0.9)
	if err := d.CheckMutation(900); err != nil { // 90%: not above
		t.Fatalf("a write up to the level: %v", err)
	}
	if err := d.CheckMutation(10); err != nil {
		t.Fatalf("a write from the level: %v", err)
	}
	err := d.CheckMutation(10) // from 91%
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeWriteFailure || ee.Message != CriticalMessage {
		t.Fatalf("a user write above the level: %v, want a write failure %q", err, CriticalMessage)
	}
	if d.Rejected() != 1 || d.Failed() != 0 || l.count("No space left") != 0 {
		t.Errorf("rejected %d, failed %d, log %q", d.Rejected(), d.Failed(), l.lines)
	}
	if n := l.count("WARN disk_space_monitor - Reached the critical disk utilization level (90.0%)"); n != 1 {
		t.Errorf("%d critical lines from disk_space_monitor: %q", n, l.lines)
	}
	if err := d.CheckWrite(50); err != nil {
		t.Errorf("a streamed write that fits: %v", err)
	}
	d.SetCriticalLevel(0) // out of range: the level stays
	if d.CriticalLevelOf() != 0.9 {
		t.Errorf("level %v after setting 0", d.CriticalLevelOf())
	}
}
