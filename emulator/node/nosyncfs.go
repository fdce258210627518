package node

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
//
// It also recycles sstable files. Creating a file cost ~500 µs of CPU on
// this VM's ext4 (inode allocation; 6 µs on tmpfs), renaming one ~15 µs:
// creating compaction outputs was 14% of a filled node's CPU in the main
// job. An obsolete sstable Pebble removes is truncated (its bytes are freed,
// as a removal would) and kept under a name Pebble does not parse; the next
// sstable Pebble creates takes it over by rename. Overwriting a filled
// i4i.large-sized store then cost 137-155 µs of CPU per write instead of
// 166-189.
type noSyncFS struct {
	vfs.FS
	dir string // where the pool's files are kept: the store's directory

	mu   sync.Mutex
	pool []string // empty files ready for reuse
	seq  int

	created, reused atomic.Int64 // sstable files (tests)

	// life is the node's (life.go): every change to its files waits while
	// it is paused and never happens once it is killed.
	life *Life
}

// maxRecycled bounds the pool. Compactions remove their inputs after
// creating their outputs, in bursts; with 32, a third of the sstables of a
// store filled and overwritten were still created, with 256 a quarter (the
// rest is the store's growth). An empty file costs the disk walk a stat.
const maxRecycled = 256

// recycledPrefix names the pool's files.
const recycledPrefix = "recycled-"

func newNoSyncFS(dir string) (*noSyncFS, error) {
	if err := removeLeftovers(dir); err != nil {
		return nil, err
	}
	return &noSyncFS{FS: vfs.Default, dir: dir}, nil
}

// removeLeftovers removes the files of ours a killed process left beside
// Pebble's: empty pool files, and streamed sstables it was writing
// (store_ingest.go), which are not the DB's.
func removeLeftovers(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s for leftover files: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, recycledPrefix) || strings.HasPrefix(n, streamFilePrefix) && strings.HasSuffix(n, streamFileSuffix) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return fmt.Errorf("removing leftover file %s: %w", n, err)
			}
		}
	}
	return nil
}

func (fs *noSyncFS) Create(name string) (vfs.File, error) {
	fs.life.Hold()
	if !isTableFile(name) {
		return fs.noSync(fs.FS.Create(name))
	}
	var f vfs.File
	var err error
	if old := fs.take(name); old != "" {
		if f, err = fs.FS.ReuseForWrite(old, name); err != nil {
			fs.FS.Remove(old)
		} else {
			fs.reused.Add(1)
		}
	}
	if f == nil {
		if f, err = fs.FS.Create(name); err != nil {
			return nil, err
		}
		fs.created.Add(1)
	}
	return &tableFile{File: noSyncFile{f, fs.life}}, nil
}

// take pops a pooled file for Pebble's sstable name ("" if none).
func (fs *noSyncFS) take(name string) string {
	if !strings.HasSuffix(name, ".sst") {
		return ""
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.pool) == 0 {
		return ""
	}
	f := fs.pool[len(fs.pool)-1]
	fs.pool = fs.pool[:len(fs.pool)-1]
	return f
}

// Remove keeps a removed sstable, emptied, in the pool when there is room.
// Only a Pebble sstable with no other link is recycled: a streamed file
// ingested by hard link shares its inode with the table it became.
func (fs *noSyncFS) Remove(name string) error {
	fs.life.Hold()
	if !strings.HasSuffix(name, ".sst") || filepath.Dir(name) != filepath.Clean(fs.dir) {
		return fs.FS.Remove(name)
	}
	fs.mu.Lock()
	full := len(fs.pool) >= maxRecycled
	fs.seq++
	to := filepath.Join(fs.dir, fmt.Sprintf("%s%d", recycledPrefix, fs.seq))
	fs.mu.Unlock()
	if full {
		return fs.FS.Remove(name)
	}
	if st, err := os.Stat(name); err != nil || st.Sys().(*syscall.Stat_t).Nlink != 1 {
		return fs.FS.Remove(name)
	}
	if err := os.Truncate(name, 0); err != nil {
		return fs.FS.Remove(name)
	}
	if err := fs.FS.Rename(name, to); err != nil {
		return fs.FS.Remove(name)
	}
	fs.mu.Lock()
	fs.pool = append(fs.pool, to)
	fs.mu.Unlock()
	return nil
}

func (fs *noSyncFS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.noSync(fs.FS.OpenReadWrite(name, opts...))
}

func (fs *noSyncFS) OpenDir(name string) (vfs.File, error) { return fs.noSync(fs.FS.OpenDir(name)) }

func (fs *noSyncFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	fs.life.Hold()
	return fs.noSync(fs.FS.ReuseForWrite(oldname, newname))
}

// The other changes to the node's files wait on its life too.

func (fs *noSyncFS) Link(oldname, newname string) error {
	fs.life.Hold()
	return fs.FS.Link(oldname, newname)
}

func (fs *noSyncFS) RemoveAll(name string) error {
	fs.life.Hold()
	return fs.FS.RemoveAll(name)
}

func (fs *noSyncFS) Rename(oldname, newname string) error {
	fs.life.Hold()
	return fs.FS.Rename(oldname, newname)
}

func (fs *noSyncFS) MkdirAll(dir string, perm os.FileMode) error {
	fs.life.Hold()
	return fs.FS.MkdirAll(dir, perm)
}

func (fs *noSyncFS) noSync(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f, fs.life}, nil
}

// noSyncFile is a file of the node's without syncs, whose writes wait on
// the node's life.
type noSyncFile struct {
	vfs.File
	life *Life
}

func (f noSyncFile) Write(p []byte) (int, error) {
	f.life.Hold()
	return f.File.Write(p)
}

func (f noSyncFile) WriteAt(p []byte, off int64) (int, error) {
	f.life.Hold()
	return f.File.WriteAt(p, off)
}

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
// a time; every write checks the quota (tableFile). On one P, point reads every 2 ms
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

// tableFile is an sstable being written by background work: writes yield
// at the task quota, and are gathered into 128 KiB writes. Pebble's
// sstable writer writes through a 4 KiB bufio.Writer, a write system call
// per block: 13% of a compaction's CPU on this VM.
type tableFile struct {
	vfs.File
	since time.Time // the current task's start
	buf   *[]byte   // pending bytes, from tableBufs
}

const tableWriteSize = 128 << 10

var tableBufs = sync.Pool{New: func() any { b := make([]byte, 0, tableWriteSize); return &b }}

func (f *tableFile) Write(p []byte) (int, error) {
	if f.buf == nil {
		f.buf = tableBufs.Get().(*[]byte)
	}
	if len(*f.buf)+len(p) > tableWriteSize {
		if err := f.flush(); err != nil {
			return 0, err
		}
	}
	if len(p) >= tableWriteSize {
		if _, err := f.File.Write(p); err != nil {
			return 0, err
		}
	} else {
		*f.buf = append(*f.buf, p...)
	}
	now := time.Now()
	if f.since.IsZero() {
		f.since = now
	} else if now.Sub(f.since) >= taskQuota {
		yieldHook()
		f.since = time.Now()
	}
	return len(p), nil
}

// flush writes the pending bytes.
func (f *tableFile) flush() error {
	if f.buf == nil || len(*f.buf) == 0 {
		return nil
	}
	_, err := f.File.Write(*f.buf)
	*f.buf = (*f.buf)[:0]
	return err
}

// Everything that reads the file or its size, or syncs it, sees the
// pending bytes first.

func (f *tableFile) Close() error {
	err := f.flush()
	if f.buf != nil {
		tableBufs.Put(f.buf)
		f.buf = nil
	}
	return errors.Join(err, f.File.Close())
}

func (f *tableFile) Sync() error {
	return errors.Join(f.flush(), f.File.Sync())
}

func (f *tableFile) SyncData() error {
	return errors.Join(f.flush(), f.File.SyncData())
}

func (f *tableFile) SyncTo(length int64) (bool, error) {
	if err := f.flush(); err != nil {
		return false, err
	}
	return f.File.SyncTo(length)
}

func (f *tableFile) Stat() (os.FileInfo, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

func (f *tableFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *tableFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *tableFile) Read(p []byte) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

// storeLocks are the stores' LOCK files that nodes with a life of their
// own (life.go) hold in this process. Pebble's own lock (vfs.Default)
// refuses a second lock of the file in one process until the first is
// closed; a killed node's store is never closed, and the node started
// again in its place must open it. Here a lock held by a killed node is
// free, as the kernel frees a killed process's: the file stays locked
// (fcntl) by the process against others.
var storeLocks struct {
	mu sync.Mutex
	m  map[string]*storeLock
}

type storeLock struct {
	name string
	f    *os.File
	life *Life
}

func (fs *noSyncFS) Lock(name string) (io.Closer, error) {
	if fs.life == nil {
		return fs.FS.Lock(name)
	}
	storeLocks.mu.Lock()
	defer storeLocks.mu.Unlock()
	if l := storeLocks.m[name]; l != nil && !l.life.Killed() {
		return nil, fmt.Errorf("lock %s is held by a running node of this process", name)
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	spec := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &spec); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	if storeLocks.m == nil {
		storeLocks.m = map[string]*storeLock{}
	}
	l := &storeLock{name: name, f: f, life: fs.life}
	storeLocks.m[name] = l
	return l, nil
}

// Close releases the lock unless a later node of this process holds it
// (closing any descriptor of the file would release the process's lock).
func (l *storeLock) Close() error {
	storeLocks.mu.Lock()
	defer storeLocks.mu.Unlock()
	if storeLocks.m[l.name] != l {
		return nil
	}
	delete(storeLocks.m, l.name)
	return l.f.Close()
}
