package node

import "github.com/cockroachdb/pebble/vfs"

// noSyncFS is the node's file system for Pebble: the OS one without syncs.
// An emulated node's data must survive its process being killed (the page
// cache keeps it), not the host crashing; on this kind of VM every fsync,
// fdatasync and sync_file_range is an expensive system call that Pebble
// issues per sstable and per 512 KiB written (a tenth of a filled node's
// CPU under overwrites, issue 17). ScyllaDB's own syncs are not modelled:
// the capacity model charges for the work, not the host's disk.
// Preallocation (fallocate of WAL files) is dropped for the same reason.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) Create(name string) (vfs.File, error) { return noSync(fs.FS.Create(name)) }

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
