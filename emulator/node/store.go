package node

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Key layout in Pebble:
//
//	'd' table-id(16) token(8, sign-flipped big endian) uvarint(len pk) pk clustering -> row
//	'm' name -> node-local metadata (host id, cluster metadata)
//
// Rows are stored with Pebble's merge operator: a write merges its cells
// into the stored row cell by cell, the newer timestamp winning, so that
// concurrent writes and streamed copies of the same row converge without a
// read before write.
const (
	prefixData = 'd'
	prefixMeta = 'm'
	mergerName = "elasticity.row.v1"
)

// cell is one stored cell.
type cell struct {
	Name    string
	TS      int64 // microseconds
	Expiry  int64 // unix seconds; 0 = none
	TTL     int64 // seconds, of a live expiring cell (0 in rows written before it was kept)
	Null    bool
	Counter bool // Value holds counter shards (see counter.go)
	Value   []byte
	deleted bool
}

// Cell value tags in the row encoding.
const (
	tagValue   = 0
	tagNull    = 1
	tagCounter = 2
	// tagTTL is or'ed into tagValue when a uvarint TTL follows the tag.
	tagTTL = 0x80
)

func tokenBytes(t int64) [8]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t)^(1<<63))
	return b
}

// tableStart is the first key of a table's data.
func tableStart(id [16]byte) []byte {
	k := make([]byte, 0, 17)
	k = append(k, prefixData)
	return append(k, id[:]...)
}

// tokenKey is the first key of a token within a table (inclusive bound).
func tokenKey(id [16]byte, token int64) []byte {
	return appendTokenKey(make([]byte, 0, tokenKeyLen), id, token)
}

// tokenKeyLen is the length of a token key: prefix, table id, token.
const tokenKeyLen = 1 + 16 + 8

func appendTokenKey(k []byte, id [16]byte, token int64) []byte {
	k = append(k, prefixData)
	k = append(k, id[:]...)
	tb := tokenBytes(token)
	return append(k, tb[:]...)
}

// tokenRangeKeys are [start, end) keys covering tokens first..last inclusive.
func tokenRangeKeys(id [16]byte, first, last int64) (start, end []byte) {
	start = tokenKey(id, first)
	if last == 1<<63-1 {
		end = tableStart(id)
		end = keyUpperBound(end)
	} else {
		end = tokenKey(id, last+1)
	}
	return start, end
}

// keyUpperBound is the smallest key greater than every key with prefix p.
func keyUpperBound(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

func partitionPrefix(id [16]byte, token int64, pk []byte) []byte {
	return rowKey(id, token, pk, nil)
}

// rowKey is built in one allocation: a key per replica read and write
// grew its slice three times (issue 45).
func rowKey(id [16]byte, token int64, pk, clustering []byte) []byte {
	k := make([]byte, 0, tokenKeyLen+binary.MaxVarintLen64+len(pk)+len(clustering))
	k = appendTokenKey(k, id, token)
	k = binary.AppendUvarint(k, uint64(len(pk)))
	k = append(k, pk...)
	return append(k, clustering...)
}

// encodeRow serialises cells (sorted by name for a stable encoding).
func encodeRow(dst []byte, cells []cell) []byte {
	// Room for all of it first: appending a 1 KiB value to an empty
	// buffer grew it eight times (issue 45).
	size := binary.MaxVarintLen64
	for _, c := range cells {
		size += 4*binary.MaxVarintLen64 + 1 + len(c.Name) + len(c.Value)
	}
	dst = slices.Grow(dst, size)
	dst = binary.AppendUvarint(dst, uint64(len(cells)))
	for _, c := range cells {
		dst = binary.AppendUvarint(dst, uint64(len(c.Name)))
		dst = append(dst, c.Name...)
		dst = binary.AppendVarint(dst, c.TS)
		dst = binary.AppendVarint(dst, c.Expiry)
		if c.Null {
			dst = append(dst, tagNull)
			continue
		}
		switch {
		case c.Counter:
			dst = append(dst, tagCounter)
		case c.TTL != 0:
			dst = append(dst, tagValue|tagTTL)
			dst = binary.AppendUvarint(dst, uint64(c.TTL))
		default:
			dst = append(dst, tagValue)
		}
		dst = binary.AppendUvarint(dst, uint64(len(c.Value)))
		dst = append(dst, c.Value...)
	}
	return dst
}

var errCorrupt = errors.New("corrupt row encoding")

func decodeRow(b []byte) ([]cell, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	b = b[k:]
	cells := make([]cell, 0, n)
	for i := uint64(0); i < n; i++ {
		var c cell
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, errCorrupt
		}
		c.Name = string(b[k : k+int(l)])
		b = b[k+int(l):]
		if c.TS, k = binary.Varint(b); k <= 0 {
			return nil, errCorrupt
		}
		b = b[k:]
		if c.Expiry, k = binary.Varint(b); k <= 0 {
			return nil, errCorrupt
		}
		b = b[k:]
		if len(b) < 1 {
			return nil, errCorrupt
		}
		tag := b[0]
		b = b[1:]
		switch tag {
		case tagValue:
		case tagValue | tagTTL:
			ttl, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, errCorrupt
			}
			c.TTL = int64(ttl)
			b = b[k:]
		case tagNull:
			c.Null = true
		case tagCounter:
			c.Counter = true
		default:
			return nil, errCorrupt
		}
		if !c.Null {
			l, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < l {
				return nil, errCorrupt
			}
			c.Value = b[k : k+int(l)]
			b = b[k+int(l):]
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// compareCells orders two versions of a cell for a merge as ScyllaDB's
// compare_atomic_cell_for_merge (mutation/atomic_cell.cc): the newer write
// timestamp wins; on a tie a tombstone beats a live cell, an expiring cell
// a non-expiring one, the later expiry the earlier and, on equal expiries,
// the lower TTL (the later derived write time, expiry - ttl: ScyllaDB's
// extension to Cassandra's order); then the larger value (two tombstones:
// the later deletion). The result does not depend on the order in which
// versions meet.
func compareCells(a, b cell) int {
	if a.TS != b.TS {
		return cmp.Compare(a.TS, b.TS)
	}
	if a.Null != b.Null {
		if a.Null {
			return 1
		}
		return -1
	}
	if a.Null {
		return cmp.Compare(a.Expiry, b.Expiry)
	}
	if (a.Expiry != 0) != (b.Expiry != 0) {
		if a.Expiry != 0 {
			return 1
		}
		return -1
	}
	if a.Expiry != b.Expiry {
		return cmp.Compare(a.Expiry, b.Expiry)
	}
	if a.Expiry != 0 && a.TTL != b.TTL {
		return cmp.Compare(b.TTL, a.TTL)
	}
	return bytes.Compare(a.Value, b.Value)
}

// mergeCells merges b into a, the winning version per cell (compareCells);
// two counter cells merge shard by shard instead.
func mergeCells(a, b []cell) []cell {
	for _, c := range b {
		found := false
		for i := range a {
			if a[i].Name == c.Name {
				found = true
				if c.Counter && a[i].Counter {
					a[i].Value = mergeShards(a[i].Value, c.Value)
					a[i].TS = max(a[i].TS, c.TS)
				} else if compareCells(c, a[i]) > 0 {
					a[i] = c
				}
				break
			}
		}
		if !found {
			a = append(a, c)
		}
	}
	return a
}

// rowMerger implements pebble.ValueMerger. Pebble merges every MERGE key a
// compaction or read meets, most of them with a single operand (a row
// written once): that one is kept as it is, without decoding and encoding
// it again (decoding, copying and re-encoding every row was most of a
// compaction's allocations). Mergers are pooled with their buffers: Finish
// gives Pebble the merger as the value's closer, which Pebble closes once
// the value is no longer used (an iterator's or compaction's next step, a
// Get's closer); a merger and its ~1 KiB copy were two allocations per
// point read and per row flushed or compacted (issue 45).
type rowMerger struct {
	only  []byte // the single operand so far, copied into buf; nil once merged
	cells []cell
	buf   []byte // only's storage, kept between uses
	out   []byte // a merged row's encoding, kept between uses
}

var rowMergers = sync.Pool{New: func() any { return new(rowMerger) }}

// Close returns the merger to the pool (io.Closer, for Finish's value).
func (m *rowMerger) Close() error {
	clear(m.cells)
	m.cells, m.only = m.cells[:0], nil
	if cap(m.buf) > maxPooledRow {
		m.buf = nil
	}
	if cap(m.out) > maxPooledRow {
		m.out = nil
	}
	rowMergers.Put(m)
	return nil
}

// maxPooledRow: larger rows' buffers are not kept in the pool.
const maxPooledRow = 64 << 10

func (m *rowMerger) add(v []byte) error {
	if m.only != nil {
		cs, err := decodeRow(m.only)
		if err != nil {
			return err
		}
		m.cells, m.only = cs, nil // cs alias m.only, which this merger owns
	}
	cs, err := decodeRow(v)
	if err != nil {
		return err
	}
	// Decoded values alias v, which Pebble may reuse: copy them.
	for i := range cs {
		cs[i].Value = bytes.Clone(cs[i].Value)
	}
	m.cells = mergeCells(m.cells, cs)
	return nil
}

func (m *rowMerger) MergeNewer(v []byte) error { return m.add(v) }
func (m *rowMerger) MergeOlder(v []byte) error { return m.add(v) }
func (m *rowMerger) Finish(bool) ([]byte, io.Closer, error) {
	if m.only != nil {
		return m.only, m, nil
	}
	sort.Slice(m.cells, func(i, j int) bool { return m.cells[i].Name < m.cells[j].Name })
	m.out = encodeRow(m.out[:0], m.cells)
	return m.out, m, nil
}

var rowMergeOperator = &pebble.Merger{
	Name: mergerName,
	Merge: func(key, value []byte) (pebble.ValueMerger, error) {
		// Pebble may reuse value after the call: keep a copy.
		m := rowMergers.Get().(*rowMerger)
		m.buf = append(m.buf[:0], value...)
		m.only = m.buf
		return m, nil
	},
}

// Store is a node's Pebble database.
type Store struct {
	db   *pebble.DB
	dir  string
	opts *pebble.Options // as opened (defaults filled in), for sstable writers
	size storeSizing
	tmp  atomic.Uint64 // names streamed sstables being written

	// Tablets being streamed in, whose writes are held back (store_ingest.go).
	streamMu  sync.RWMutex
	streams   []*StreamedTablet
	streaming atomic.Int32 // len(streams), read without the lock

	closed atomic.Bool // metrics read nothing from a closed store

	cache *rowCache // what ReadRow reads, as ScyllaDB's row cache (rowcache.go)
	heat  sync.Map  // [16]byte table ID -> *tableHeat: its reads' cache hits (hitrate.go)

	bg *backgroundPriority // flushes' and compactions' thread priority

	// stalled: Pebble is holding writes back (its memtables wait for a
	// flush), so a write would wait (Node.servesAtOnce).
	stalled *atomic.Bool
	// life is the node's (life.go): a paused or killed node writes nothing.
	life *Life
}

func (s *Store) writesStalled() bool { return s.stalled.Load() }

// OpenStore opens (or creates) the database in dir. capacityBytes is the
// emulated disk size (0 = unknown): Pebble's memtable, WAL and file sizes are
// scaled to it, because an emulated disk is only tens of MiB. With Pebble's
// defaults the WAL (plus a recycled one) alone took half of such a disk, and
// dropping a moved tablet rewrote large files that still held other tablets,
// so old nodes briefly ran out of space while they were shedding data.
func OpenStore(dir string, capacityBytes int64) (*Store, error) {
	return openStore(dir, capacityBytes, rowCacheSize(capacityBytes), nil)
}

// openStore is OpenStore for a node with a life of its own (life.go): its
// file system holds every write while the node is paused and parks it once
// the node is killed, and a fatal error of Pebble's ends the node, not its
// process.
func openStore(dir string, capacityBytes, rowCacheBytes int64, life *Life) (*Store, error) {
	sz := storeSizes(capacityBytes)
	// The block cache holds about an eighth of the emulated disk (8 to 64
	// MiB): with Pebble's 8 MiB default, point reads of a filled node read
	// most blocks from the page cache again (pread and a copy: a tenth of
	// a node's CPU under BenchmarkNodeCost, issue 17).
	fs, err := newNoSyncFS(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the store's file system in %s: %w", dir, err)
	}
	fs.life = life
	cache := pebble.NewCache(blockCacheSize(capacityBytes))
	defer cache.Unref() // the DB holds its own reference
	opts := &pebble.Options{
		Cache:        cache,
		Merger:       rowMergeOperator,
		MemTableSize: uint64(sz.memtable),
		// ScyllaDB compacts each tablet's sstables as their own LSM tree
		// (replica/compaction_group.hh: "each group can be thought of an
		// isolated LSM tree"), with incremental compaction freeing input
		// fragments as it goes (compaction/incremental_compaction_strategy.hh),
		// so a full node's overwrites are reclaimed and a compaction's
		// transient room is about a tablet. One Pebble tree over all tablets
		// gets the same bounds from its shape: a base level of 1/24 of the
		// disk that L0 goes straight into, a bottom level 25 times larger
		// (overwritten rows wait at most there, ~4% of the data), small
		// files (one L5 file meets ~1/40 of the bottom level, and small
		// bottom files keep Pebble's expanded compactions, 25 files, small:
		// an L5 compaction needs a few % of the disk, not ~10%), and two
		// compactions at a time (every shard compacts; one could not keep up).
		// With Pebble's level multiplier 10 and a base level of 1/32, 20,000
		// overwrites of an i4i.large's disk at 80% grew it by 12.5 points
		// (peak 93.6%); with these, 4.7 (peak 86.3%)
		// (TestOverwritesOfAFullNodeAreReclaimed).
		LBaseMaxBytes:            sz.lbase,
		MaxConcurrentCompactions: func() int { return 2 },
		// Small upper-level files are many: keep them open.
		MaxOpenFiles: 4096,
		Logger:       quietLogger{life: life},
		FS:           fs,
	}
	opts.Experimental.LevelMultiplier = 25
	// No block compression: disk usage then follows the data written, and
	// the CPU goes to serving requests. Small files let a dropped tablet's
	// range be deleted file by file (delete-only compactions) instead of
	// rewritten.
	// Pebble indexes LevelOptions from the base level, not by level
	// (compaction_picker.go adjustedOutputLevel): Levels[0] is L0, Levels[1]
	// the base level, Levels[2] the one under it, the bottom level once the
	// node holds data (with a multiplier of 25 the base level is L5).
	opts.Levels = make([]pebble.LevelOptions, 7)
	for i := range opts.Levels {
		opts.Levels[i].Compression = pebble.NoCompression
		opts.Levels[i].TargetFileSize = sz.upperFile
		if i >= 2 {
			opts.Levels[i].TargetFileSize = sz.bottomFile
		}
		// Bloom filters let a single-row read (ReadRow) skip the files
		// that do not hold its key (about 1.25 bytes per key).
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		opts.Levels[i].FilterType = pebble.TableFilter
	}
	// The emulated memory is what the commitlog sizing below assumes:
	// four memtables (storeSizes).
	bg := newBackgroundPriority(4 * sz.memtable)
	opts.EventListener = &pebble.EventListener{}
	bg.listen(opts.EventListener)
	stalled := new(atomic.Bool)
	opts.EventListener.WriteStallBegin = func(pebble.WriteStallBeginInfo) { stalled.Store(true) }
	opts.EventListener.WriteStallEnd = func() { stalled.Store(false) }
	opts.EnsureDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("opening pebble in %s: %w", dir, err)
	}
	empty, err := holdsNoRows(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening pebble in %s: %w", dir, err)
	}
	bg.start(db)
	return &Store{db: db, dir: dir, opts: opts, size: sz, bg: bg, stalled: stalled, life: life,
		cache: newRowCache(rowCacheBytes, empty)}, nil
}

// holdsNoRows: the store holds no data key (a new node's), so an empty
// row cache knows all of it.
func holdsNoRows(db *pebble.DB) (bool, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixData}, UpperBound: []byte{prefixData + 1}})
	if err != nil {
		return false, err
	}
	empty := !it.First()
	return empty, errors.Join(it.Error(), it.Close())
}

// storeSizing is the Pebble shape for an emulated disk.
type storeSizing struct {
	memtable, upperFile, bottomFile, lbase int64
}

// storeSizes picks the memtable (and so WAL file) size, the target sstable
// sizes above and at the bottom level, and the base level size for an
// emulated disk: about 1/128, 1/1024, 1/512 and 1/24 of it, within
// Pebble-sane bounds.
func storeSizes(capacityBytes int64) storeSizing {
	if capacityBytes <= 0 {
		return storeSizing{memtable: 8 << 20, upperFile: 512 << 10, bottomFile: 2 << 20, lbase: 64 << 20}
	}
	// A memtable is a WAL file, and Pebble keeps the live one, one being
	// flushed and MemTableStopWritesThreshold+1 = 3 recycled ones (open.go):
	// about four files on disk. ScyllaDB's commitlog, on the same disk,
	// grows to the shards' memory (db/commitlog/commitlog.cc,
	// commitlog_total_space_in_mb -1), about 3% of an i4i's disk (16 GiB of
	// RAM for 468 GB on i4i.large); four WAL files of 1/128 are that 3%.
	// With 1/64 they were 6.5% of a node at 90% and pushed it out of space.
	return storeSizing{
		memtable:   clampInt64(capacityBytes/128, 256<<10, 8<<20),
		upperFile:  clampInt64(capacityBytes/1024, 64<<10, 512<<10),
		bottomFile: clampInt64(capacityBytes/512, 128<<10, 2<<20),
		lbase:      clampInt64(capacityBytes/24, 512<<10, 64<<20),
	}
}

// storeReserve is the room the store needs on a real filesystem to flush
// and compact (about four memtables: the WAL files it keeps), or 2%
// (ScyllaDB's critical_disk_utilization_level, 98%), whichever is more:
// user writes stop there (diskmodel.NewFilesystem). Measured on tmpfs
// (dockertest): with nothing reserved a 16 MiB node crashed in 2 fills of
// 5 ("MANIFEST flush failed: no space left on device"); with this, none
// in 8, writes going on 3 s after the first refusal, and a 96 MiB node
// fills to 97%.
func storeReserve(capacityBytes int64) int64 {
	sz := storeSizes(capacityBytes)
	return max(capacityBytes/50, 4*sz.memtable)
}

// blockCacheSize is the Pebble block cache for an emulated disk.
func blockCacheSize(capacityBytes int64) int64 {
	if capacityBytes <= 0 {
		return 64 << 20
	}
	return clampInt64(capacityBytes/8, 8<<20, 64<<20)
}

func clampInt64(v, lo, hi int64) int64 {
	return max(lo, min(v, hi))
}

// quietLogger is Pebble's logger: nothing but its fatal errors, which end
// the node's process (a panic) or, in a process shared with other nodes,
// the node (Life.Die: its host reports the death and closes what its
// peers see; the goroutine that met the error goes no further).
type quietLogger struct{ life *Life }

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (l quietLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l.life == nil {
		panic(msg)
	}
	if !strings.HasPrefix(msg, "pebble") {
		msg = "pebble: " + msg
	}
	l.life.Die(msg)
	l.life.Hold() // never returns: the node is dead
}

// Close flushes memtables and closes the database.
func (s *Store) Close() error {
	s.closed.Store(true)
	ferr := s.db.Flush()
	s.bg.close()
	if err := s.db.Close(); err != nil {
		return err
	}
	return ferr
}

// mutationSize estimates the stored bytes of a mutation (for the disk model).
func mutationSize(m *engine.Mutation) int64 {
	n := int64(len(m.PartitionKey) + len(m.Clustering) + 40)
	for k, v := range m.Cells {
		n += int64(len(k) + len(v) + 12)
	}
	return n
}

// Apply writes mutations into one batch. With counter set, the mutations'
// cells are counter shards (built by a counter leader), merged shard by
// shard with what is stored.
func (s *Store) Apply(ms []engine.Mutation, tableIDs [][16]byte, counter bool) error {
	b := s.db.NewBatch()
	defer b.Close()
	var buf []byte
	now := time.Now()
	// What the row cache learns once the batch is committed: a key and its
	// merge operand (nil: the row is deleted).
	type cached struct{ key, operand []byte }
	updates := make([]cached, 0, len(ms))
	for i := range ms {
		m := &ms[i]
		id := tableIDs[i]
		tok := Token(m.PartitionKey)
		key := rowKey(id, tok, m.PartitionKey, m.Clustering)
		if !m.Delete {
			cells := make([]cell, 0, len(m.Cells))
			var exp, ttl int64
			if m.TTL > 0 {
				exp = now.Add(m.TTL).Unix()
				ttl = int64(m.TTL / time.Second)
			}
			for name, v := range m.Cells {
				null := v == nil && !counter
				c := cell{Name: name, TS: m.Timestamp, Expiry: exp, Null: null, Counter: counter, Value: v}
				if !null && !counter {
					c.TTL = ttl
				}
				cells = append(cells, c)
			}
			slices.SortFunc(cells, func(a, b cell) int { return strings.Compare(a.Name, b.Name) })
			// A buffer of its own (encodeRow sizes it once): the batch
			// copies it and the row cache keeps it.
			buf = encodeRow(nil, cells)
		}
		put := func(w pebble.Writer) error {
			switch {
			case !m.Delete:
				return w.Merge(key, buf, nil)
			case len(m.Clustering) == 0:
				p := partitionPrefix(id, tok, m.PartitionKey)
				return w.DeleteRange(p, keyUpperBound(p), nil)
			default:
				return w.Delete(key, nil)
			}
		}
		held, err := s.holdForStream(key, put)
		if err != nil {
			return err
		}
		if !held {
			if err := put(b); err != nil {
				return err
			}
			switch {
			case !m.Delete:
				updates = append(updates, cached{key, buf})
			case len(m.Clustering) == 0:
				updates = append(updates, cached{key, nil})
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		s.cache.invalidate()
		return err
	}
	for _, u := range updates {
		if u.operand == nil {
			s.cache.deleted(u.key)
		} else {
			s.cache.merged(u.key, u.operand)
		}
	}
	return nil
}

// Read returns the rows of one partition (clustering order = byte order).
func (s *Store) Read(id [16]byte, r engine.Read) ([]engine.Row, error) {
	tok := Token(r.PartitionKey)
	p := partitionPrefix(id, tok, r.PartitionKey)
	lower := append(append([]byte(nil), p...), r.ClusteringPrefix...)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: keyUpperBound(lower)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	now := time.Now().Unix()
	var rows []engine.Row
	for ok := it.First(); ok; ok = it.Next() {
		row, live, err := liveRow(it.Value(), it.Key()[len(p):], now, r.CellMeta)
		if err != nil {
			return nil, err
		}
		if !live {
			continue
		}
		rows = append(rows, row)
		if r.Limit > 0 && len(rows) >= r.Limit {
			break
		}
	}
	return rows, it.Error()
}

// ReadRow is Read for a table without clustering columns: the partition
// is one row at one key, so a point lookup (bloom filters, no iterator)
// finds it; that was most of a replica read's CPU.
func (s *Store) ReadRow(id [16]byte, r engine.Read) ([]engine.Row, error) {
	key := partitionPrefix(id, Token(r.PartitionKey), r.PartitionKey)
	v, cached, stamp := s.cache.get(key)
	s.heatOf(id).count(cached)
	found := v != nil // the cache holds no nil row
	if !cached {
		stored, closer, err := s.db.Get(key)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			s.cache.populate(key, nil, stamp)
		case err != nil:
			return nil, err
		default:
			defer closer.Close()
			s.cache.populate(key, stored, stamp)
			v, found = stored, true
		}
	}
	if !found {
		return nil, nil
	}
	row, live, err := liveRow(v, []byte{}, time.Now().Unix(), r.CellMeta)
	if err != nil || !live {
		return nil, err
	}
	return []engine.Row{row}, nil
}

// liveRow decodes a stored row, leaving out expired cells; live is false
// when every cell has expired. Counter cells keep their shards.
func liveRow(v, clustering []byte, now int64, meta bool) (row engine.Row, live bool, err error) {
	cs, err := decodeRow(v)
	if err != nil {
		return row, false, fmt.Errorf("reading row: %w", err)
	}
	row = engine.Row{Clustering: bytes.Clone(clustering), Cells: make(map[string][]byte, len(cs))}
	n := 0
	for _, c := range cs {
		if c.Expiry != 0 && c.Expiry <= now {
			continue
		}
		n++
		if c.TS > row.Timestamp {
			row.Timestamp = c.TS
		}
		if meta {
			if row.Meta == nil {
				row.Meta = make(map[string]engine.CellMeta, len(cs))
			}
			row.Meta[c.Name] = engine.CellMeta{Timestamp: c.TS, Expiry: c.Expiry}
		}
		if c.Null {
			row.Cells[c.Name] = nil
		} else {
			row.Cells[c.Name] = bytes.Clone(c.Value)
		}
	}
	return row, n > 0 || len(cs) == 0, nil
}

// ReadRange returns up to limit rows (0 = all) of the partitions whose
// tokens lie in [first, last], in key order (token, partition, clustering),
// starting strictly after the row at key after when after is set.
func (s *Store) ReadRange(id [16]byte, first, last int64, after []byte, limit int, meta bool) ([]engine.RangeRow, error) {
	lower, upper := tokenRangeKeys(id, first, last)
	if after != nil && bytes.Compare(after, lower) >= 0 {
		lower = append(bytes.Clone(after), 0) // the next key after it
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	now := time.Now().Unix()
	var rows []engine.RangeRow
	for ok := it.First(); ok; ok = it.Next() {
		pk, ck, err := splitRowKey(it.Key())
		if err != nil {
			return nil, err
		}
		row, live, err := liveRow(it.Value(), ck, now, meta)
		if err != nil {
			return nil, err
		}
		if !live {
			continue
		}
		rows = append(rows, engine.RangeRow{PartitionKey: bytes.Clone(pk), Row: row})
		if limit > 0 && len(rows) >= limit {
			break
		}
	}
	return rows, it.Error()
}

// splitRowKey returns the partition key and clustering of a data key.
func splitRowKey(k []byte) (pk, ck []byte, err error) {
	const head = 1 + 16 + 8
	if len(k) < head {
		return nil, nil, errCorrupt
	}
	l, n := binary.Uvarint(k[head:])
	if n <= 0 || uint64(len(k)-head-n) < l {
		return nil, nil, errCorrupt
	}
	rest := k[head+n:]
	return rest[:l], rest[l:], nil
}

// KV is a raw key/value pair, for streaming.
type KV struct{ K, V []byte }

// Scan returns raw pairs in [start, end) up to about maxBytes, and the key to
// continue from (nil when the range is exhausted).
func (s *Store) Scan(start, end []byte, maxBytes int) ([]KV, []byte, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	var out []KV
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n >= maxBytes {
			return out, bytes.Clone(it.Key()), it.Error()
		}
		kv := KV{K: bytes.Clone(it.Key()), V: bytes.Clone(it.Value())}
		n += len(kv.K) + len(kv.V)
		out = append(out, kv)
	}
	return out, nil, it.Error()
}

// DeleteRange removes [start, end) and compacts it so that the bytes on
// disk actually fall.
func (s *Store) DeleteRange(start, end []byte, compact bool) error {
	if err := s.db.DeleteRange(start, end, pebble.NoSync); err != nil {
		return err
	}
	s.cache.removedRange(start, end)
	if compact {
		if err := s.db.Flush(); err != nil {
			return err
		}
		return s.db.Compact(start, end, true)
	}
	return nil
}

// Flush writes the memtable to sstables.
func (s *Store) Flush() error { return s.db.Flush() }

// CompactRange compacts [start, end) (after a Flush, to include recent
// deletes): the store's own housekeeping, which the capacity model does
// not charge (a moved tablet's range: ScyllaDB deletes its sstables).
func (s *Store) CompactRange(start, end []byte) error { return s.db.Compact(start, end, false) }

// MajorCompact compacts [start, end) as nodetool compact does: ScyllaDB
// rewrites the table's sstables, and the model charges the bytes read.
func (s *Store) MajorCompact(start, end []byte) error {
	s.bg.manual.Add(1)
	defer s.bg.manual.Add(-1)
	return s.db.Compact(start, end, false)
}

// Compact flushes the memtable and compacts [start, end) (cleanup: a
// rewrite of the table's sstables in ScyllaDB, charged as a major one).
func (s *Store) Compact(start, end []byte) error {
	if err := s.db.Flush(); err != nil {
		return err
	}
	s.bg.manual.Add(1)
	defer s.bg.manual.Add(-1)
	return s.db.Compact(start, end, true)
}

// GetMeta / PutMeta store node-local metadata.
func (s *Store) GetMeta(name string) ([]byte, error) {
	v, c, err := s.db.Get(append([]byte{prefixMeta}, name...))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return bytes.Clone(v), nil
}

func (s *Store) PutMeta(name string, v []byte) error {
	// NoSync: metadata is republished by the coordinator and pulled on
	// restart; a clean shutdown flushes it anyway.
	return s.db.Set(append([]byte{prefixMeta}, name...), v, pebble.NoSync)
}

// DiskUsage estimates the bytes on disk of keys in [start, end): the files
// wholly inside, and a share of those that straddle its ends.
func (s *Store) DiskUsage(start, end []byte) int64 {
	u, err := s.db.EstimateDiskUsage(start, end)
	if err != nil {
		return 0
	}
	return int64(u)
}
