// Package diskmodel models the data disk of an emulated node: usage is the
// real bytes under the node's data directory, measured against an emulated
// capacity (the instance type's disk, scaled down), or, for the image
// double (NewFilesystem), against the real filesystem the data directory
// is on, as a ScyllaDB node's disk is. Writes past the capacity fail with
// "No space left on device", and crossing the high and critical
// utilization levels is logged as ScyllaDB does.
package diskmodel

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

const (
	// RefreshInterval bounds how often the data directory is walked:
	// ScyllaDB's disk space monitor polls every second at or above 90%
	// (db/config.cc: disk_space_monitor_high_polling_interval_in_seconds 1),
	// and writes admitted in between count as pending. Walking every 200
	// ms stat'ed each of a filled node's ~1,000 sstables 5 times a second:
	// 8% of its CPU (issue 17).
	RefreshInterval = time.Second
	// HighLevel and CriticalLevel are the utilization levels whose
	// crossings are logged. CriticalLevel is the default of ScyllaDB's
	// critical_disk_utilization_level (db/config.cc, from 2025.4.0): above
	// it the node rejects user writes (CheckMutation).
	HighLevel     = 0.95
	CriticalLevel = 0.98
	// CriticalMessage is what a write rejected above the critical level
	// fails with: replica::critical_disk_utilization_exception
	// ("Critical disk utilization: {}", replica/exceptions.hh) thrown by
	// database::do_apply with "rejected write mutation"
	// (replica/database.cc), sent back to the coordinator as a FAILURE
	// with that message and not logged (service/storage_proxy.cc).
	CriticalMessage = "Critical disk utilization: rejected write mutation"
	// errorLogInterval rate-limits the ENOSPC error line.
	errorLogInterval = time.Second
	// ENOSPCMessage is the failure text a client and the log see.
	ENOSPCMessage = "storage_io_error (Storage I/O error: 28: No space left on device)"
)

// Logf logs one line: level is "ERROR", "WARN", "INFO" or "DEBUG", logger the
// ScyllaDB logger name ("commitlog", "disk_space_monitor", ...).
type Logf func(level, logger, format string, args ...any)

// StatfsInterval bounds how often a filesystem disk's statfs is read: a
// system call, far cheaper than the walk, so that the space left follows
// the filesystem closely.
const StatfsInterval = 100 * time.Millisecond

// Disk is the emulated disk of one node. Safe for concurrent use.
type Disk struct {
	dir      string
	capacity int64
	logf     Logf

	// onFS: capacity and space left are the filesystem's (statfs of dir).
	onFS      bool
	reserve   int64        // bytes writes must leave free on the filesystem
	fsSize    atomic.Int64 // bytes of the filesystem
	fsAvail   atomic.Int64 // bytes available to a non-root user at the last statfs
	fsPending atomic.Int64 // bytes admitted by CheckWrite since that statfs
	lastStat  atomic.Int64 // unix nanos of the last statfs

	walked     atomic.Int64 // bytes found by the last walk
	pending    atomic.Int64 // bytes admitted by CheckWrite since the last walk
	lastWalk   atomic.Int64 // unix nanos of the last walk
	refreshing atomic.Bool

	// critical is critical_disk_utilization_level (CriticalLevel unless
	// set); rejected counts the user writes refused above it.
	critical atomic.Uint64 // math.Float64bits
	rejected atomic.Uint64

	mu          sync.Mutex // guards the logging state below
	aboveHigh   bool
	aboveCrit   bool
	lastErrLog  time.Time
	suppressed  int
	failedTotal atomic.Uint64
}

// New returns the disk of dataDir with capacityBytes of emulated capacity
// (≤ 0: unlimited). logf may be nil.
func New(dataDir string, capacityBytes int64, logf func(level, logger, format string, args ...any)) *Disk {
	if logf == nil {
		logf = func(string, string, string, ...any) {}
	}
	d := &Disk{dir: dataDir, capacity: capacityBytes, logf: logf}
	d.Refresh()
	return d
}

// NewFilesystem returns the disk of dataDir as the filesystem it is on:
// capacity and space left from statfs (Blocks and Bavail × Bsize, as
// node_exporter and ScyllaDB's disk space monitor read them), usage (the
// node's load) still the bytes under dataDir. A tmpfs of N bytes mounted
// there is a disk of N bytes that fills up; an unmounted container
// directory is the host's disk. Writes are refused with ENOSPC once they
// would leave less than reserve bytes: the room the node's own store
// needs to flush and compact (a real "no space left" under the store's
// manifest write would crash the double where ScyllaDB refuses writes:
// from 2025.4 it rejects them above critical_disk_utilization_level, 98%,
// db/config.cc). logf may be nil.
func NewFilesystem(dataDir string, reserve int64, logf func(level, logger, format string, args ...any)) (*Disk, error) {
	if logf == nil {
		logf = func(string, string, string, ...any) {}
	}
	d := &Disk{dir: dataDir, logf: logf, onFS: true, reserve: reserve}
	if err := d.readStatfs(); err != nil {
		return nil, err
	}
	d.Refresh()
	return d, nil
}

// statfs is the system call, replaced in tests.
var statfs = syscall.Statfs

// FilesystemSize is the size in bytes of the filesystem dir is on.
func FilesystemSize(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Blocks) * st.Bsize, nil
}

func (d *Disk) readStatfs() error {
	var st syscall.Statfs_t
	if err := statfs(d.dir, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", d.dir, err)
	}
	pend := d.fsPending.Load()
	d.fsSize.Store(int64(st.Blocks) * st.Bsize)
	d.fsAvail.Store(int64(st.Bavail) * st.Bsize)
	d.fsPending.Add(-pend) // what was admitted before is in the figures now
	d.lastStat.Store(time.Now().UnixNano())
	return nil
}

func (d *Disk) maybeStatfs() {
	if time.Now().UnixNano()-d.lastStat.Load() < int64(StatfsInterval) {
		return
	}
	if err := d.readStatfs(); err != nil {
		d.logf("WARN", "disk_space_monitor", "Failed to read the filesystem of %s: %v", d.dir, err)
	}
}

// Capacity is the disk's size in bytes (node_filesystem_size_bytes): the
// emulated capacity, or the filesystem's.
func (d *Disk) Capacity() int64 {
	if d.onFS {
		d.maybeStatfs()
		return d.fsSize.Load()
	}
	return d.capacity
}

// OnFilesystem reports whether the disk is the data directory's filesystem.
func (d *Disk) OnFilesystem() bool { return d.onFS }

// Used is the bytes in use: the last walk of the data directory plus what
// was admitted since, refreshed when the walk is older than RefreshInterval.
func (d *Disk) Used() int64 {
	d.maybeRefresh()
	return d.walked.Load() + d.pending.Load()
}

// Avail is the bytes left (node_filesystem_avail_bytes), never negative:
// on a filesystem, what statfs last said less what was admitted since.
func (d *Disk) Avail() int64 {
	if d.onFS {
		d.maybeStatfs()
		return max(0, d.fsAvail.Load()-d.fsPending.Load())
	}
	if d.capacity <= 0 {
		return 0
	}
	return max(0, d.capacity-d.Used())
}

// Utilization is Used/Capacity (0 when unlimited); on a filesystem,
// (size - available) / size, as ScyllaDB's disk space monitor computes it
// from std::filesystem::space.
func (d *Disk) Utilization() float64 {
	if d.onFS {
		size := d.Capacity()
		if size <= 0 {
			return 0
		}
		return float64(size-d.Avail()) / float64(size)
	}
	if d.capacity <= 0 {
		return 0
	}
	return float64(d.Used()) / float64(d.capacity)
}

// SetCriticalLevel sets critical_disk_utilization_level (a fraction in
// (0, 1]; other values leave the default, as ScyllaDB's clamp to [0, 1]
// would make 0 reject everything and the option is checked at startup).
func (d *Disk) SetCriticalLevel(level float64) {
	if level > 0 && level <= 1 {
		d.critical.Store(math.Float64bits(level))
	}
}

// CriticalLevelOf is the critical_disk_utilization_level in force.
func (d *Disk) CriticalLevelOf() float64 {
	if b := d.critical.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return CriticalLevel
}

// Rejected counts user writes rejected above the critical level
// (database's total_writes_rejected_due_to_out_of_space_prevention).
func (d *Disk) Rejected() uint64 { return d.rejected.Load() }

// CheckMutation admits a user write of n bytes as a replica: above the
// critical level ScyllaDB's disk space monitor (utils/disk_space_monitor.cc,
// utilization (capacity - available) / capacity) has put the database in
// critical disk utilization mode, and database::do_apply rejects writes to
// every table but those of internal keyspaces (replica/database.cc); below
// it the write must still fit (CheckWrite). Streaming and repair take
// CheckWrite alone.
//
// On a filesystem a user write that would eat into the store's reserve is
// refused the same way. A node on a disk so small that the level leaves
// less than the reserve lowers the level to where the reserve starts
// (node.setCriticalLevel), and the disk then hovers there under load: a
// write of n bytes admitted below the level with less than n left above
// the reserve failed with ENOSPC and its ERROR line (4 NO_SPACE_ERROR
// events failed the main scenario on docker), where ScyllaDB's
// out-of-space prevention refuses user writes quietly.
func (d *Disk) CheckMutation(n int64) error {
	if u := d.Utilization(); u > d.CriticalLevelOf() || d.intoReserve(n) {
		d.checkLevels(u)
		d.rejected.Add(1)
		return &engine.Error{Code: engine.CodeWriteFailure, Message: CriticalMessage, Failures: 1, WriteType: "SIMPLE"}
	}
	return d.CheckWrite(n)
}

// Failed counts writes rejected for lack of space.
func (d *Disk) Failed() uint64 { return d.failedTotal.Load() }

// CheckWrite admits a write of n bytes, or returns an *engine.Error with
// CodeWriteFailure and "No space left on device" when it does not fit.
func (d *Disk) CheckWrite(n int64) error {
	if d.onFS {
		if d.intoReserve(n) {
			d.failedTotal.Add(1)
			d.logENOSPC()
			return &engine.Error{Code: engine.CodeWriteFailure, Message: ENOSPCMessage, Failures: 1, WriteType: "SIMPLE"}
		}
		d.fsPending.Add(n)
		d.pending.Add(n)
		d.checkLevels(d.Utilization())
		return nil
	}
	if d.capacity <= 0 {
		return nil
	}
	used := d.Used()
	if used+n > d.capacity {
		d.failedTotal.Add(1)
		d.logENOSPC()
		return &engine.Error{Code: engine.CodeWriteFailure, Message: ENOSPCMessage, Failures: 1, WriteType: "SIMPLE"}
	}
	d.pending.Add(n)
	d.checkLevels(float64(used+n) / float64(d.capacity))
	return nil
}

// intoReserve: on a filesystem, a write of n bytes would leave less free
// than the store's reserve.
func (d *Disk) intoReserve(n int64) bool {
	return d.onFS && n > d.Avail()-d.reserve
}

func (d *Disk) logENOSPC() {
	d.mu.Lock()
	now := time.Now()
	if now.Sub(d.lastErrLog) < errorLogInterval {
		d.suppressed++
		d.mu.Unlock()
		return
	}
	suppressed := d.suppressed
	d.lastErrLog, d.suppressed = now, 0
	d.mu.Unlock()
	msg := "Exception in segment reservation: %s"
	args := []any{ENOSPCMessage}
	if suppressed > 0 {
		msg += " (%d similar errors suppressed)"
		args = append(args, suppressed)
	}
	d.logf("ERROR", "commitlog", msg, args...)
}

// checkLevels logs each crossing of the high and critical levels once, in
// either direction.
func (d *Disk) checkLevels(u float64) {
	d.mu.Lock()
	var lines [][]any
	if high := u > HighLevel; high != d.aboveHigh {
		d.aboveHigh = high
		if high {
			lines = append(lines, []any{"WARN", "disk_space_monitor", "Disk utilization of %s is high: %.1f%% (above %.1f%%)", d.dir, u * 100, HighLevel * 100})
		} else {
			lines = append(lines, []any{"INFO", "disk_space_monitor", "Disk utilization of %s is back to %.1f%% (below %.1f%%)", d.dir, u * 100, HighLevel * 100})
		}
	}
	// main.cc's subscription to the disk space monitor logs the crossings
	// (dsmlog, "disk_space_monitor", utils/disk_space_monitor.cc).
	if crit := u > d.CriticalLevelOf(); crit != d.aboveCrit {
		d.aboveCrit = crit
		verb, level := "Dropped below", "INFO"
		if crit {
			verb, level = "Reached", "WARN"
		}
		lines = append(lines, []any{level, "disk_space_monitor", "%s the critical disk utilization level (%.1f%%). Current disk utilization %.1f%%", verb, d.CriticalLevelOf() * 100, u * 100})
	}
	d.mu.Unlock()
	for _, l := range lines {
		d.logf(l[0].(string), l[1].(string), l[2].(string), l[3:]...)
	}
}

func (d *Disk) maybeRefresh() {
	if time.Now().UnixNano()-d.lastWalk.Load() < int64(RefreshInterval) {
		return
	}
	d.Refresh()
}

// Refresh walks the data directory now (unless a walk is under way) and
// re-evaluates the utilization levels, so that usage that fell (tablets
// moved away, compaction) re-arms the warnings.
func (d *Disk) Refresh() {
	if !d.refreshing.CompareAndSwap(false, true) {
		return
	}
	defer d.refreshing.Store(false)
	// Pending writes admitted before the walk starts are on disk (or in a
	// memtable whose WAL is) by the time it ends; drop them from pending.
	pend := d.pending.Load()
	size, err := dirSize(d.dir)
	if err != nil {
		d.logf("WARN", "disk_space_monitor", "Failed to measure %s: %v", d.dir, err)
	}
	d.walked.Store(size)
	d.pending.Add(-pend)
	d.lastWalk.Store(time.Now().UnixNano())
	switch {
	case d.onFS:
		d.checkLevels(d.Utilization())
	case d.capacity > 0:
		d.checkLevels(float64(size+d.pending.Load()) / float64(d.capacity))
	}
}

// dirSize sums the sizes of the regular files under dir, each file once
// however many hard links it has (a snapshot's links to live sstables take
// no space, as du and df count them); files that vanish during the walk
// (compaction, tablet cleanup) are skipped.
func dirSize(dir string) (int64, error) {
	var total int64
	seen := map[fileID]bool{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if path == dir {
				return err
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if id, ok := fileIDOf(info); ok {
			if seen[id] {
				return nil
			}
			seen[id] = true
		}
		total += info.Size()
		return nil
	})
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return 0, nil // not created yet
	}
	if err != nil {
		return total, fmt.Errorf("walk data directory %s: %w", dir, err)
	}
	return total, nil
}
