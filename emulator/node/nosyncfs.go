package node

import (
	"runtime"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

// noSyncFS is the node's file system for Pebble: the OS one without syncs.
// An emulated node's data must survive its process being killed (the page
// cache keeps it), not the host crashing; on this kind of VM every fsync,
// fdatasync and sync_file_range is an expensive system call that Pebble
// issues per sstable and per 512 KiB written (a tenth of a filled node's
// CPU under overwrites, issue 17). ScyllaDB's own syncs are not modelled:
// the capacity model charges for the work, not the host's disk.
// Preallocation (fallocate of WAL files) is dropped for the same reason.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) Create(name string) (vfs.File, error) {
	f, err := noSync(fs.FS.Create(name))
	if err != nil || !isTableFile(name) {
		return f, err
	}
	return &yieldingFile{File: f}, nil
}

func (fs noSyncFS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return noSync(fs.FS.OpenReadWrite(name, opts...))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) { return noSync(fs.FS.OpenDir(name)) }

func (fs noSyncFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	return noSync(fs.FS.ReuseForWrite(oldname, newname))
}

func noSync(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                    { return nil }
func (noSyncFile) SyncData() error                { return nil }
func (noSyncFile) SyncTo(int64) (bool, error)     { return true, nil }
func (noSyncFile) Preallocate(int64, int64) error { return nil }

// Background work yields like a Seastar task. A flush or compaction is one
// goroutine doing CPU work for up to seconds, and Go preempts a goroutine
// only after 10 ms, so requests (and the watchdog's timer) on a P running
// compactions waited up to tens of ms. Seastar runs compaction in its own
// scheduling group as tasks that give the CPU back once the task quota is
// used (src/core/reactor.cc: task_quota_ms, 0.5 ms by default;
// need_preempt), so a request waits at most about that long behind it.
// Sstable writers (flushes, compactions, streamed tablets) write a block at
// a time; every write checks the quota. On one P, point reads every 2 ms
// during a full store's compactions waited P99 24-35 ms without it and
// 3.7-4.0 ms with it (BenchmarkReadDelayDuringCompaction).
const taskQuota = 500 * time.Microsecond

// yieldHook is called at every yield (tests count them).
var yieldHook = runtime.Gosched

// isTableFile says whether Pebble (or streaming) creates name for an
// sstable, written by background work; WAL and manifest writes are on the
// request or metadata path and do not yield.
func isTableFile(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, streamFileSuffix)
}

type yieldingFile struct {
	vfs.File
	since time.Time // the current task's start
}

func (f *yieldingFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	now := time.Now()
	if f.since.IsZero() {
		f.since = now
	} else if now.Sub(f.since) >= taskQuota {
		yieldHook()
		f.since = time.Now()
	}
	return n, err
}
