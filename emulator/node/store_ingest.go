package node

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/sstable"
)

// A streamed tablet is loaded as sstables, as ScyllaDB's file streaming
// does (enable_file_stream, on by default in db/config.cc; tablet migration
// in service/storage_service.cc stream_tablet and streaming/stream_blob.cc):
// the target receives the source's sstables and loads them as new sstables
// of the tablet's compaction group, with no commitlog and no memtable.
// Merged through batches instead, a streamed tablet went through the WAL,
// the memtable and flushes into L0 with keys over the whole key space, then
// compactions down the levels: much of a joining node's CPU, and its point
// reads checked many L0 files.

// Streamed sstables are written in the store's directory, so that the disk
// model (which walks the data directory) sees them while they grow, under
// names Pebble does not take for its own files (base.ParseFilename).
const (
	streamFilePrefix = "stream-"
	streamFileSuffix = ".sst.tmp"
)

// StreamedTablet writes one tablet's streamed pairs into sstables and
// ingests them into the store. From its creation until Load or Abort, the
// writes the store gets for the tablet's range (as its pending replica) are
// held in a batch, committed after the last file is ingested: in the
// memtable they would overlap the files, and Pebble ingests a file that
// overlaps the memtable only after flushing it (or, at newer format major
// versions, rotating it), a small flush over the whole key space per tablet
// that then compacts with the whole base level. Held writes are not read:
// a pending replica serves no reads (datapath.go replicasOf). Add, Load and
// Abort are for one goroutine; after an error no file is left and Abort is
// still safe to call.
type StreamedTablet struct {
	s          *Store
	start, end []byte // the tablet's keys
	w          *sstable.Writer
	path       string

	mu   sync.Mutex    // guards held against Apply
	held *pebble.Batch // nil once released
}

// NewStreamedTablet starts loading a streamed tablet whose keys are in
// [start, end).
func (s *Store) NewStreamedTablet(start, end []byte) *StreamedTablet {
	t := &StreamedTablet{s: s, start: start, end: end, held: s.db.NewBatch()}
	s.streamMu.Lock()
	s.streams = append(s.streams, t)
	s.streaming.Store(int32(len(s.streams)))
	s.streamMu.Unlock()
	return t
}

// holdForStream writes a mutation of key with put into the held batch of
// the tablet being streamed in that holds key, if any.
func (s *Store) holdForStream(key []byte, put func(pebble.Writer) error) (bool, error) {
	if s.streaming.Load() == 0 {
		return false, nil
	}
	s.streamMu.RLock()
	var t *StreamedTablet
	for _, st := range s.streams {
		if bytes.Compare(key, st.start) >= 0 && bytes.Compare(key, st.end) < 0 {
			t = st
			break
		}
	}
	s.streamMu.RUnlock()
	if t == nil {
		return false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held == nil {
		return false, nil // released meanwhile: the caller's batch follows it
	}
	if err := put(t.held); err != nil {
		return false, fmt.Errorf("holding a write to a tablet being streamed in: %w", err)
	}
	return true, nil
}

// release commits the held writes and stops holding new ones.
func (t *StreamedTablet) release() error {
	t.mu.Lock()
	b := t.held
	t.held = nil
	var err error
	if b != nil {
		if !b.Empty() {
			err = b.Commit(pebble.NoSync)
		}
		b.Close()
	}
	t.mu.Unlock()
	if b == nil {
		return nil
	}
	t.s.cache.invalidate() // the held writes did not update it
	s := t.s
	s.streamMu.Lock()
	s.streams = slices.DeleteFunc(s.streams, func(x *StreamedTablet) bool { return x == t })
	s.streaming.Store(int32(len(s.streams)))
	s.streamMu.Unlock()
	if err != nil {
		return fmt.Errorf("applying the writes held while a tablet streamed in: %w", err)
	}
	return nil
}

// Add writes pairs, in increasing key order and after those added before,
// as MERGE entries: the row merge operator keeps the newest timestamp per
// cell whatever the order, so the streamed rows converge with the writes the
// pending replica got during the migration. A file that reaches the bottom
// level's target size is ingested at once, so that a large tablet is a few
// files of the sizes compactions write.
func (t *StreamedTablet) Add(kvs []KV) error {
	for _, kv := range kvs {
		if t.w == nil {
			if err := t.create(); err != nil {
				return err
			}
		}
		if err := t.w.Merge(kv.K, kv.V); err != nil {
			return errors.Join(fmt.Errorf("writing a streamed sstable: %w", err), t.Abort())
		}
		if t.w.EstimatedSize() >= uint64(t.s.size.bottomFile) {
			if err := t.ingest(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Load ingests what was added and not yet ingested, then applies the held
// writes.
func (t *StreamedTablet) Load() error {
	if t.w != nil {
		if err := t.ingest(); err != nil {
			return errors.Join(err, t.release())
		}
	}
	return t.release()
}

// Abort removes the file being written, if any, and applies the held writes
// (a retry streams the tablet again). A no-op after Load.
func (t *StreamedTablet) Abort() error {
	if t.w != nil {
		t.w.Close() // closes the file; its content no longer matters
		t.s.opts.FS.Remove(t.path)
		t.w, t.path = nil, ""
	}
	return t.release()
}

func (t *StreamedTablet) create() error {
	s := t.s
	path := filepath.Join(s.dir, fmt.Sprintf("%s%d%s", streamFilePrefix, s.tmp.Add(1), streamFileSuffix))
	f, err := s.opts.FS.Create(path)
	if err != nil {
		return fmt.Errorf("creating a streamed sstable: %w", err)
	}
	t.w, t.path = sstable.NewWriter(objstorageprovider.NewFileWritable(f), s.writerOptions()), path
	return nil
}

// ingest finishes the current file and ingests it.
func (t *StreamedTablet) ingest() error {
	w, path := t.w, t.path
	t.w, t.path = nil, ""
	err := w.Close()
	if err != nil {
		err = fmt.Errorf("finishing streamed sstable %s: %w", path, err)
	} else if err = t.s.db.Ingest([]string{path}); err != nil {
		err = fmt.Errorf("ingesting streamed sstable %s: %w", path, err)
	}
	// The file's rows are not in the row cache (table.cc invalidates the
	// cache for sstables it loads).
	t.s.cache.invalidate()
	// Pebble links (or copies) an ingested file into the DB and removes the
	// original, but not when the ingest fails. A leftover link would count
	// twice in the disk model's walk.
	if rerr := t.s.opts.FS.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = fmt.Errorf("removing ingested sstable %s: %w", path, rerr)
	}
	return err
}

// The store keeps Pebble's default format major version: with writes held,
// an ingest rarely overlaps the memtable (only with writes that came before
// streaming began), and FormatFlushableIngest, which queues such an ingest
// behind the memtable instead of flushing and waiting, measured the same
// (BenchmarkStreamTablets) while rotating the memtable anyway.

// writerOptions are those Pebble's own flushes and compactions write with
// (compaction.go runCompaction): the newest table format the DB's format
// major version allows, without value blocks (not enabled here), and the
// levels' block, filter and compression settings, which are the same for
// every level.
func (s *Store) writerOptions() sstable.WriterOptions {
	fmv := s.db.FormatMajorVersion()
	tf := fmv.MaxTableFormat()
	if tf == sstable.TableFormatPebblev3 && (s.opts.Experimental.EnableValueBlocks == nil || !s.opts.Experimental.EnableValueBlocks()) {
		tf = sstable.TableFormatPebblev2
	}
	o := s.opts.MakeWriterOptions(0, tf)
	if fmv < pebble.FormatBlockPropertyCollector {
		o.BlockPropertyCollectors = nil
	}
	return o
}
