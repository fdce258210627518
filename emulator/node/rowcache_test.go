package node

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// storedRow is what ReadRow would answer from Pebble alone, without the
// row cache.
func storedRow(t *testing.T, s *Store, id [16]byte, pk []byte) []engine.Row {
	t.Helper()
	v, closer, err := s.db.Get(partitionPrefix(id, Token(pk), pk))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	row, live, err := liveRow(v, []byte{}, time.Now().Unix(), true)
	if err != nil {
		t.Fatal(err)
	}
	if !live {
		return nil
	}
	return []engine.Row{row}
}

func rowsEqual(a, b []engine.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Timestamp != b[i].Timestamp || len(a[i].Cells) != len(b[i].Cells) || len(a[i].Meta) != len(b[i].Meta) {
			return false
		}
		for k, v := range a[i].Cells {
			w, ok := b[i].Cells[k]
			if !ok || !bytes.Equal(v, w) || (v == nil) != (w == nil) || a[i].Meta[k] != b[i].Meta[k] {
				return false
			}
		}
	}
	return true
}

// checkCacheMatchesStore reads every key through ReadRow (the cache) and
// from Pebble alone: they must agree.
func checkCacheMatchesStore(t *testing.T, s *Store, id [16]byte, keys int, step string) {
	t.Helper()
	for k := range keys {
		pk := binary.BigEndian.AppendUint32(nil, uint32(k))
		got, err := s.ReadRow(id, engine.Read{PartitionKey: pk, CellMeta: true})
		if err != nil {
			t.Fatalf("%s: reading key %d: %v", step, k, err)
		}
		if want := storedRow(t, s, id, pk); !rowsEqual(got, want) {
			t.Fatalf("%s: key %d: the cache answers %+v, the store holds %+v", step, k, got, want)
		}
	}
}

// TestRowCacheAnswersWhatTheStoreHolds drives a store through random
// writes (cells with random timestamps, TTLs and nulls), partition
// deletions, repaired rows, range deletions and streamed sstables, with a
// cache that holds everything (continuous) and one that keeps evicting,
// and checks after every step that each read answers what Pebble holds.
func TestRowCacheAnswersWhatTheStoreHolds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int64
	}{{"continuous", 64 << 20}, {"evicting", 6 * (rowCacheOverhead + 200)}} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTestStore(t, 0)
			s.cache.max = tc.budget
			id := [16]byte{7}
			const keys = 24
			rng := mrand.New(mrand.NewPCG(1, 2))
			pkOf := func(k int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(k)) }
			for step := range 400 {
				var what string
				switch op := rng.IntN(20); {
				case op < 12:
					pk := pkOf(rng.IntN(keys))
					cells := map[string][]byte{}
					for _, c := range []string{"a", "b", "c"} {
						if rng.IntN(2) == 0 {
							if rng.IntN(5) == 0 {
								cells[c] = nil
							} else {
								cells[c] = fmt.Appendf(nil, "%s%d", c, rng.IntN(1000))
							}
						}
					}
					m := engine.Mutation{PartitionKey: pk, Cells: cells, Timestamp: int64(rng.IntN(50))}
					if rng.IntN(6) == 0 {
						m.TTL = time.Hour
					}
					what = fmt.Sprintf("write %+v", m)
					if err := s.Apply([]engine.Mutation{m}, [][16]byte{id}, false); err != nil {
						t.Fatal(err)
					}
				case op < 14:
					pk := pkOf(rng.IntN(keys))
					what = fmt.Sprintf("delete partition %x", pk)
					if err := s.Apply([]engine.Mutation{{PartitionKey: pk, Delete: true}}, [][16]byte{id}, false); err != nil {
						t.Fatal(err)
					}
				case op < 16:
					pk := pkOf(rng.IntN(keys))
					v := encodeRow(nil, []cell{{Name: "b", TS: int64(rng.IntN(50)), Value: []byte("repaired")}})
					what = fmt.Sprintf("repair %x", pk)
					if err := s.MergeKVs([]KV{{K: partitionPrefix(id, Token(pk), pk), V: v}}); err != nil {
						t.Fatal(err)
					}
				case op < 17:
					lo, hi := rng.Int64(), rng.Int64()
					lo, hi = min(lo, hi), max(lo, hi)
					start, end := tokenRangeKeys(id, lo, hi)
					what = fmt.Sprintf("delete tokens [%d, %d]", lo, hi)
					if err := s.DeleteRange(start, end, rng.IntN(2) == 0); err != nil {
						t.Fatal(err)
					}
				case op < 18:
					what = "stream all tokens in"
					var kvs []KV
					for k := range keys {
						if rng.IntN(3) == 0 {
							pk := pkOf(k)
							v := encodeRow(nil, []cell{{Name: "c", TS: int64(rng.IntN(50)), Value: []byte("streamed")}})
							kvs = append(kvs, KV{K: partitionPrefix(id, Token(pk), pk), V: v})
						}
					}
					slices.SortFunc(kvs, func(a, b KV) int { return bytes.Compare(a.K, b.K) })
					start, end := tokenRangeKeys(id, -1<<63, 1<<63-1)
					st := s.NewStreamedTablet(start, end)
					held := engine.Mutation{PartitionKey: pkOf(rng.IntN(keys)), Cells: map[string][]byte{"a": []byte("held")}, Timestamp: 60}
					if err := s.Apply([]engine.Mutation{held}, [][16]byte{id}, false); err != nil {
						t.Fatal(err)
					}
					if err := st.Add(kvs); err != nil {
						t.Fatal(err)
					}
					if err := st.Load(); err != nil {
						t.Fatal(err)
					}
				case op < 19:
					what = "flush"
					if err := s.Flush(); err != nil {
						t.Fatal(err)
					}
				default:
					what = "compact"
					if err := s.Compact([]byte{prefixData}, []byte{prefixData + 1}); err != nil {
						t.Fatal(err)
					}
				}
				checkCacheMatchesStore(t, s, id, keys, fmt.Sprintf("step %d (%s)", step, what))
				checkKeyIndex(t, s.cache)
			}
			c := s.cache
			if c.hits.Load() == 0 {
				t.Errorf("no read was answered by the cache")
			}
			if tc.name == "evicting" && (c.evictions.Load() == 0 || c.misses.Load() == 0) {
				t.Errorf("a cache of %d bytes evicted %d rows and missed %d reads", tc.budget, c.evictions.Load(), c.misses.Load())
			}
			if c.bytesUsed() > tc.budget {
				t.Errorf("the cache uses %d bytes, more than its %d", c.bytesUsed(), tc.budget)
			}
		})
	}
}

// TestRowCacheOfANewStoreIsContinuous: a new store's cache knows every
// row, so reads of rows written or never written read nothing from
// Pebble; a store reopened with data starts with an empty cache that
// reads populate.
func TestRowCacheOfANewStoreIsContinuous(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte{8}
	pk := []byte("written")
	if err := s.Apply([]engine.Mutation{{PartitionKey: pk, Cells: map[string][]byte{"v": []byte("x")}, Timestamp: 1}}, [][16]byte{id}, false); err != nil {
		t.Fatal(err)
	}
	for _, k := range [][]byte{pk, []byte("never written")} {
		if _, err := s.ReadRow(id, engine.Read{PartitionKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	if h, m := s.cache.hits.Load(), s.cache.misses.Load(); h != 2 || m != 0 {
		t.Errorf("a new store's cache: %d hits, %d misses; want 2 and 0", h, m)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenStore(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		rows, err := s.ReadRow(id, engine.Read{PartitionKey: pk})
		if err != nil || len(rows) != 1 || string(rows[0].Cells["v"]) != "x" {
			t.Fatalf("after reopening: %+v, %v", rows, err)
		}
	}
	if h, m := s.cache.hits.Load(), s.cache.misses.Load(); h != 1 || m != 1 {
		t.Errorf("a reopened store's cache: %d hits, %d misses; want 1 and 1 (the first read populates)", h, m)
	}
}

// TestRowCacheReadsRacingWritesPopulateNoStaleRow: readers that miss and
// writers of the same rows run together, with a cache that keeps
// evicting; once they stop, every cached row is what the store holds (a
// read that found the store before a write must not insert what it found
// after the write updated the cache).
func TestRowCacheReadsRacingWritesPopulateNoStaleRow(t *testing.T) {
	s, _ := openTestStore(t, 0)
	s.cache.max = 8 * (rowCacheOverhead + 100)
	id := [16]byte{9}
	const keys = 16
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := mrand.New(mrand.NewPCG(uint64(w), 3))
			for i := range 3000 {
				pk := binary.BigEndian.AppendUint32(nil, uint32(rng.IntN(keys)))
				if w%2 == 0 {
					m := engine.Mutation{PartitionKey: pk, Cells: map[string][]byte{"v": fmt.Appendf(nil, "%d-%d", w, i)}, Timestamp: int64(i)}
					if err := s.Apply([]engine.Mutation{m}, [][16]byte{id}, false); err != nil {
						t.Error(err)
						return
					}
				} else if _, err := s.ReadRow(id, engine.Read{PartitionKey: pk}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	c := s.cache
	c.mu.Lock()
	cached := c.rows.Keys()
	c.mu.Unlock()
	for _, k := range cached {
		c.mu.Lock()
		v, _ := c.rows.Peek(k)
		c.mu.Unlock()
		stored, closer, err := s.db.Get([]byte(k))
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			if v != nil {
				t.Errorf("key %x: cached %q, the store holds none", k, v)
			}
		case err != nil:
			t.Fatal(err)
		default:
			if !bytes.Equal(v, stored) {
				t.Errorf("key %x: cached %q, the store holds %q", k, v, stored)
			}
			closer.Close()
		}
	}
	if c.misses.Load() == 0 || c.evictions.Load() == 0 {
		t.Errorf("the race was not run: %d misses, %d evictions", c.misses.Load(), c.evictions.Load())
	}
}

// TestRowCacheReadThatMissedAWriteDoesNotPopulate: a read that missed,
// read the store, and meanwhile a write to the key updated the cache: what
// the read found is older than the write and must not be cached; a read
// with no write in between populates.
func TestRowCacheReadThatMissedAWriteDoesNotPopulate(t *testing.T) {
	c := newRowCache(1<<20, false)
	pk := []byte("k")
	key := partitionPrefix([16]byte{1}, Token(pk), pk)
	old := encodeRow(nil, []cell{{Name: "v", TS: 1, Value: []byte("old")}})
	_, cached, stamp := c.get(key)
	if cached {
		t.Fatal("an empty, not continuous cache answered")
	}
	newer := encodeRow(nil, []cell{{Name: "v", TS: 2, Value: []byte("new")}})
	c.merged(key, newer)
	c.populate(key, old, stamp)
	if v, cached, _ := c.get(key); cached {
		t.Fatalf("the read that missed the write cached %q", v)
	}
	_, _, stamp = c.get(key)
	c.populate(key, newer, stamp)
	if v, cached, _ := c.get(key); !cached || !bytes.Equal(v, newer) {
		t.Fatalf("a read with no write in between: cached %v, %q", cached, v)
	}
}

// checkKeyIndex: the ordered index holds exactly the cached keys.
func checkKeyIndex(t *testing.T, c *rowCache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	cached := c.rows.Keys()
	slices.Sort(cached)
	var indexed []string
	c.keys.Ascend(func(k string) bool { indexed = append(indexed, k); return true })
	if !slices.Equal(cached, indexed) {
		t.Fatalf("the key index holds %d keys, the cache %d", len(indexed), len(cached))
	}
}

// TestRowCacheRemovedRangeKeepsTheRest: dropping one table's range leaves
// the other table's entries cached.
func TestRowCacheRemovedRangeKeepsTheRest(t *testing.T) {
	c := newRowCache(1<<20, false)
	row := encodeRow(nil, []cell{{Name: "v", TS: 1, Value: []byte("x")}})
	var dropped, kept [][]byte
	for i := range 50 {
		pk := binary.BigEndian.AppendUint32(nil, uint32(i))
		for _, id := range [][16]byte{{1}, {2}} {
			key := partitionPrefix(id, Token(pk), pk)
			_, _, stamp := c.get(key)
			c.populate(key, row, stamp)
			if id[0] == 1 {
				dropped = append(dropped, key)
			} else {
				kept = append(kept, key)
			}
		}
	}
	start := tableStart([16]byte{1})
	c.removedRange(start, keyUpperBound(start))
	for _, k := range dropped {
		if _, cached, _ := c.get(k); cached {
			t.Fatalf("key %x of the dropped range is still cached", k)
		}
	}
	for _, k := range kept {
		if v, cached, _ := c.get(k); !cached || !bytes.Equal(v, row) {
			t.Fatalf("key %x outside the dropped range: cached %v", k, cached)
		}
	}
	checkKeyIndex(t, c)
}

// An emulated node's row cache holds the share of its disk a real one's
// memory does (about 2% across the i4i family), not an eighth of it: with
// an eighth, a small node held a whole hot set of reads that a real
// i4i.large cannot, and its hit rate matched the large nodes'.
func TestRowCacheHoldsARealNodesShareOfItsDisk(t *testing.T) {
	const mibPerGB = 0.2
	for _, it := range []struct {
		name          string
		memGB, diskGB float64
	}{{"i4i.large", 16, 468}, {"i4i.xlarge", 32, 937}, {"i4i.4xlarge", 128, 3750}, {"i4i.16xlarge", 512, 15000}} {
		got := RowCacheBytes(it.memGB, mibPerGB)
		share := float64(got) / (it.diskGB * mibPerGB * (1 << 20))
		if share < 0.015 || share > 0.025 {
			t.Errorf("%s: row cache %d B is %.2f%% of its %g GB disk, want about 2%%", it.name, got, 100*share, it.diskGB)
		}
		if old := rowCacheSize(int64(it.diskGB * mibPerGB * (1 << 20))); got >= old {
			t.Errorf("%s: row cache %d B is not below the disk-sized %d B", it.name, got, old)
		}
	}
	if RowCacheBytes(0, mibPerGB) != 0 || RowCacheBytes(16, 0) != 0 {
		t.Error("an unknown memory or scale must leave the cache to the disk's size (0)")
	}
	if got := RowCacheBytes(2, 0.01); got != minRowCacheBytes {
		t.Errorf("a tiny node's cache is %d B, want the floor %d B", got, minRowCacheBytes)
	}
}
