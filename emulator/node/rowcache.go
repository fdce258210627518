package node

import (
	"bytes"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// rowCache is a replica's row cache, as ScyllaDB's (db/row_cache.hh): the
// merged rows of partitions in memory, so that reading a cached partition
// touches no sstable. A point read through Pebble checks the memtables and
// every level's file for the key (its filter, index and data blocks, with
// the merge operands of every level merged): most of a replica read's CPU
// under BenchmarkNodeCost (issue 45).
//
// As in ScyllaDB, a new table's cache is continuous (replica/table.cc
// constructs it with is_continuous::yes): it knows every partition, so a
// write to a partition it does not hold adds it, and a read of a partition
// it does not hold finds it absent without reading the store. That lasts
// until the cache evicts an entry, or sstables loaded by streaming change
// what the store holds behind it (table.cc invalidates the cache for them);
// from then on, as after a restart, reads populate it and writes update
// only what it holds.
//
// It holds what ReadRow reads, the rows of tables without clustering
// columns (a partition is one row at its partition key); rows with
// clustering bytes are not cached. The cached value is the store's value,
// merged by the store's own merge operator, so that a read finds the same
// bytes in the cache as in Pebble.
type rowCache struct {
	mu   sync.Mutex
	rows *simplelru.LRU[string, []byte] // a nil value: known absent
	// keys orders rows' keys, so that dropping a range's entries visits
	// only those: a walk of every entry per moved tablet's cleanup held the
	// cache (and so the node's reads and writes) for a millisecond each,
	// hundreds of times as a join moved tablets away, and the main job's
	// P99 at each step doubled.
	keys *btree.BTreeG[string]
	used int64 // bytes, with rowCacheOverhead per entry
	max  int64
	// complete: every row the store holds is in rows (continuity).
	complete bool
	// stripes count the writes per stripe of keys, so that a read that
	// missed populates the cache only if no write to its key's stripe came
	// between its look-up and its store read (ScyllaDB's population phases,
	// row_cache.hh phase_of).
	stripes [cacheStripes]uint64

	hits, misses, insertions, evictions, removals, mispopulations atomic.Uint64
}

const (
	cacheStripes = 1024
	// rowCacheOverhead is an entry's memory beside its key and value: the
	// LRU's list element and the map's slot.
	rowCacheOverhead = 160
)

// newRowCache is a cache of max bytes; complete says the store is empty
// (a new table's cache is continuous).
func newRowCache(max int64, complete bool) *rowCache {
	rows, err := simplelru.NewLRU[string, []byte](math.MaxInt, nil)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &rowCache{rows: rows, keys: btree.NewOrderedG[string](32), max: max, complete: complete}
}

func entrySize(key string, v []byte) int64 {
	return int64(len(key)+len(v)) + rowCacheOverhead
}

func stripeOf(key []byte) int {
	h := uint32(2166136261) // FNV-1a
	for _, b := range key {
		h = (h ^ uint32(b)) * 16777619
	}
	return int(h % cacheStripes)
}

// get looks key up. cached says whether the cache answers: v is the row
// (nil: the store holds none). When it does not, stamp is what populate
// needs to insert what the store then returns.
func (c *rowCache) get(key []byte) (v []byte, cached bool, stamp uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.rows.Get(string(key)); ok {
		c.hits.Add(1)
		return v, true, 0
	}
	if c.complete {
		c.hits.Add(1)
		return nil, true, 0
	}
	c.misses.Add(1)
	return nil, false, c.stripes[stripeOf(key)]
}

// populate inserts what a read that missed found in the store (v nil: no
// row), unless a write to the key's stripe came in between: the read may
// have missed it.
func (c *rowCache) populate(key, v []byte, stamp uint64) {
	k := string(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stripes[stripeOf(key)] != stamp || c.rows.Contains(k) {
		c.mispopulations.Add(1)
		return
	}
	c.put(k, bytes.Clone(v))
}

// put sets key's value and evicts the least recently used entries beyond
// the budget. Called with mu held.
func (c *rowCache) put(key string, v []byte) {
	if old, ok := c.rows.Peek(key); ok {
		c.used -= entrySize(key, old)
	} else {
		c.insertions.Add(1)
		c.keys.ReplaceOrInsert(key)
	}
	c.rows.Add(key, v)
	c.used += entrySize(key, v)
	for c.used > c.max {
		k, old, ok := c.rows.RemoveOldest()
		if !ok {
			break
		}
		c.keys.Delete(k)
		c.used -= entrySize(k, old)
		c.evictions.Add(1)
		c.complete = false
	}
}

// merged applies a committed merge operand of key, as the store's merge
// operator merges it. The cache keeps operand: the caller must not change
// it. A row the operator cannot merge (a corrupt one) leaves the cache,
// which stops being continuous: the write itself is committed.
func (c *rowCache) merged(key, operand []byte) {
	if !cacheable(key) {
		return
	}
	k := string(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stripes[stripeOf(key)]++
	old, ok := c.rows.Peek(k)
	if !ok && !c.complete {
		return
	}
	if old == nil || supersedes(operand, old) {
		c.put(k, operand)
		return
	}
	v, err := mergeStored(key, old, operand)
	if err != nil {
		c.removeLocked(k)
		c.complete = false
		return
	}
	c.put(k, v)
}

// deleted records that key's row is gone (committed).
func (c *rowCache) deleted(key []byte) {
	if !cacheable(key) {
		return
	}
	k := string(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stripes[stripeOf(key)]++
	if c.complete {
		c.removeLocked(k)
	} else if c.rows.Contains(k) {
		c.put(k, nil)
	}
}

func (c *rowCache) removeLocked(key string) {
	if old, ok := c.rows.Peek(key); ok {
		c.rows.Remove(key)
		c.keys.Delete(key)
		c.used -= entrySize(key, old)
		c.removals.Add(1)
	}
}

// removedRange drops the entries of keys in [start, end) after the store
// deleted the range: their rows are gone (row_cache.hh invalidate of a
// partition range).
func (c *rowCache) removedRange(start, end []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.stripes {
		c.stripes[i]++
	}
	var in []string
	c.keys.AscendRange(string(start), string(end), func(k string) bool {
		in = append(in, k)
		return true
	})
	for _, k := range in {
		c.removeLocked(k)
	}
}

// invalidate empties the cache, which stops being continuous: the store
// took rows from elsewhere (streamed sstables, writes held back while a
// tablet streamed in).
func (c *rowCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.stripes {
		c.stripes[i]++
	}
	c.removals.Add(uint64(c.rows.Len()))
	c.rows.Purge()
	c.keys.Clear(false)
	c.used = 0
	c.complete = false
}

// bytesUsed is the cache's memory, for scylla_cache_bytes_used.
func (c *rowCache) bytesUsed() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// partitions is the number of entries, for scylla_cache_partitions.
func (c *rowCache) partitions() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(c.rows.Len())
}

// cacheable: a partition key's own row (no clustering bytes), what
// ReadRow reads.
func cacheable(key []byte) bool {
	_, ck, err := splitRowKey(key)
	return err == nil && len(ck) == 0
}

// supersedes: every cell of old loses to operand's cell of the same name
// (a row overwritten whole), so merging them gives operand.
func supersedes(operand, old []byte) bool {
	ocs, err := decodeRow(operand)
	if err != nil {
		return false
	}
	cs, err := decodeRow(old)
	if err != nil {
		return false
	}
	for _, c := range cs {
		i := slices.IndexFunc(ocs, func(o cell) bool { return o.Name == c.Name })
		if i < 0 || c.Counter || ocs[i].Counter || compareCells(ocs[i], c) <= 0 {
			return false
		}
	}
	return true
}

// mergeStored merges operand into old as the store's merge operator does.
func mergeStored(key, old, operand []byte) ([]byte, error) {
	m, err := rowMergeOperator.Merge(key, old)
	if err != nil {
		return nil, err
	}
	if err := m.MergeNewer(operand); err != nil {
		return nil, err
	}
	v, closer, err := m.Finish(true)
	if err != nil {
		return nil, err
	}
	v = bytes.Clone(v)
	if closer != nil {
		closer.Close()
	}
	return v, nil
}

// rowCacheSize is the row cache of an emulated disk whose node's memory is
// not known: as much memory as the block cache (blockCacheSize).
func rowCacheSize(capacityBytes int64) int64 { return blockCacheSize(capacityBytes) }

// Where a real node's memory goes, for RowCacheBytes.
const (
	// seastarReserveMinGB and seastarReserveShare: Seastar leaves the OS
	// max(1.5 GiB, 7%) of the machine's memory (src/core/resource.cc
	// calculate_memory, default_reserve_memory).
	seastarReserveMinGB = 1.5
	seastarReserveShare = 0.07
	// rowCacheShare is the row cache's part of Seastar's memory: the cache
	// takes the log-structured memory the memtables do not hold, and
	// memtables are flushed from unspooled_dirty_soft_limit (0.6) × half
	// of the memory (replica/database.cc _dirty_memory_manager:
	// available_memory × 0.50; db/config.cc): up to 30%. The standard
	// allocator's share (sstable indexes, filters, requests) is taken as a
	// further tenth.
	rowCacheShare    = 0.6
	minRowCacheBytes = 256 << 10
)

// RowCacheBytes is the row cache of a node with memoryGB of memory whose
// disk is scaled to mibPerGB MiB per GB: its memory is scaled alike, so
// that the cache holds the same share of the node's data as a real one's
// (an i4i.large's 8.7 GB of 468 GB, 1.9%; before, an eighth of the disk,
// held a hot set of reads the real node cannot, and the heat-weighted read
// balancing of consistency_level.cc saw equal hit rates where the real one
// sees a small node's misses). 0 when either is unknown.
func RowCacheBytes(memoryGB, mibPerGB float64) int64 {
	if memoryGB <= 0 || mibPerGB <= 0 {
		return 0
	}
	seastarGB := memoryGB - max(seastarReserveMinGB, seastarReserveShare*memoryGB)
	return max(int64(rowCacheShare*seastarGB*mibPerGB*(1<<20)), minRowCacheBytes)
}
