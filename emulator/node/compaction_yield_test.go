package node

import (
	"bytes"
	"encoding/binary"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// fillTestStore writes keys 1 KiB rows (timestamp 1) into a new store of
// the given emulated capacity and waits for the flush.
func fillTestStore(tb testing.TB, capacity int64, keys int) *Store {
	s, err := OpenStore(tb.TempDir(), capacity)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	writeRows(tb, s, keys)
	if err := s.Flush(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// writeRows writes rows 0..keys-1 with 1 KiB values at timestamp 1, in
// batches of 100.
func writeRows(tb testing.TB, s *Store, keys int) {
	ids := [][16]byte{{3}}
	v := make([]byte, 1024)
	batch := make([]engine.Mutation, 0, 100)
	for i := range keys {
		k := binary.BigEndian.AppendUint64(nil, uint64(i))
		batch = append(batch, engine.Mutation{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: 1})
		if len(batch) == cap(batch) || i == keys-1 {
			if err := s.Apply(batch, slices.Repeat(ids, len(batch)), false); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// overwrite rewrites random keys of a filled store at rate rows/s in
// batches until stop closes, and returns the rows written.
func overwrite(tb testing.TB, s *Store, keys, rate int, stop <-chan struct{}) int {
	ids := [][16]byte{{3}}
	v := make([]byte, 1024)
	start, n := time.Now(), 0
	for {
		select {
		case <-stop:
			return n
		default:
		}
		batch := make([]engine.Mutation, 10)
		for i := range batch {
			k := binary.BigEndian.AppendUint64(nil, uint64(mrand.IntN(keys)))
			batch[i] = engine.Mutation{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: time.Now().UnixMicro()}
		}
		if err := s.Apply(batch, slices.Repeat(ids, len(batch)), false); err != nil {
			tb.Error(err)
			return n
		}
		n += len(batch)
		if d := time.Duration(n)*time.Second/time.Duration(rate) - time.Since(start); d > 0 {
			time.Sleep(d)
		}
	}
}

// TestSstableWritersYieldAtTheTaskQuota: flushes and compactions give the
// CPU back every task quota (Seastar's task_quota_ms), WAL writes do not.
func TestSstableWritersYieldAtTheTaskQuota(t *testing.T) {
	var yields atomic.Int64
	yieldHook = func() { yields.Add(1) }
	t.Cleanup(func() { yieldHook = runtime.Gosched })
	const capacity, keys = 117 << 20, 40_000
	s := fillTestStore(t, capacity, keys)
	afterFill := yields.Load()
	if afterFill == 0 {
		t.Fatalf("flushing %d MiB of rows into sstables never yielded", keys>>10)
	}
	// A whole-range compaction rewrites every file: it yields too.
	if err := s.Compact([]byte{0}, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	if yields.Load() == afterFill {
		t.Fatal("a manual compaction of the whole store never yielded")
	}
	// WAL and manifest files never yield: they are on the request and
	// metadata paths (whatever background compaction runs meanwhile, so the
	// file types are checked rather than counted).
	fs, err := newNoSyncFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, table := range map[string]bool{"000007.log": false, "MANIFEST-000001": false, "000008.sst": true, "stream-1.sst.tmp": true} {
		f, err := fs.Create(filepath.Join(fs.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(*tableFile); ok != table {
			t.Errorf("%s: written as a table file %v, want %v", name, ok, table)
		}
		f.Close()
	}
}

// BenchmarkReadDelayDuringCompaction is what background work costs a
// request on the same process: a filled i4i.large store (117 MiB at 70%)
// overwritten at 3,000 rows/s, its compactions running, while point reads
// are issued every 2 ms; each read's delay is measured from its scheduled
// start. The "no-yield" variant is the store without the task quota. It
// runs on one P, as a Seastar shard is one thread: with two, the reads
// mostly found the other P free on this idle 2-core machine, which six
// node processes sharing it do not.
func BenchmarkReadDelayDuringCompaction(b *testing.B) {
	for _, yield := range []bool{true, false} {
		name := "yield"
		if !yield {
			name = "no-yield"
		}
		b.Run(name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			if !yield {
				yieldHook = func() {}
				b.Cleanup(func() { yieldHook = runtime.Gosched })
			}
			const capacity, keys = 117 << 20, 80_000
			s := fillTestStore(b, capacity, keys)
			for b.Loop() {
				stop := make(chan struct{})
				var wg sync.WaitGroup
				var written int
				wg.Add(1)
				go func() { defer wg.Done(); written = overwrite(b, s, keys, 3000, stop) }()
				var delays []time.Duration
				start := time.Now()
				for i := 0; time.Since(start) < 5*time.Second; i++ {
					at := start.Add(time.Duration(i) * 2 * time.Millisecond)
					time.Sleep(time.Until(at))
					k := binary.BigEndian.AppendUint64(nil, uint64(mrand.IntN(keys)))
					if _, err := s.ReadRow([16]byte{3}, engine.Read{PartitionKey: k}); err != nil {
						b.Fatal(err)
					}
					delays = append(delays, time.Since(at))
				}
				close(stop)
				wg.Wait()
				slices.Sort(delays)
				b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(delays[len(delays)*999/1000].Microseconds())/1000, "p999-ms")
				b.ReportMetric(float64(delays[len(delays)-1].Microseconds())/1000, "max-ms")
				b.ReportMetric(float64(written)/time.Since(start).Seconds(), "writes/s")
				m := s.db.Metrics()
				b.ReportMetric(float64(m.Compact.Count), "compactions")
			}
		})
	}
}

// TestTableFilesGatherWrites: an sstable's 4 KiB block writes reach the
// file in large writes, and whatever reads the file, its size or syncs it
// sees every byte written before.
func TestTableFilesGatherWrites(t *testing.T) {
	dir := t.TempDir()
	fs, err := newNoSyncFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(filepath.Join(dir, "000001.sst"))
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat([]byte{7}, 4096)
	for range 10 {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "000001.sst")); err != nil || st.Size() != 0 {
		t.Fatalf("after 40 KiB of block writes the file holds %d bytes (%v): want them gathered", st.Size(), err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 40960 {
		t.Fatalf("Stat: %v, %v: want 40960 bytes", st, err)
	}
	big := bytes.Repeat([]byte{9}, 200<<10)
	if _, err := f.Write(big); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3)
	if _, err := f.ReadAt(got, 40960-1); err != nil || !bytes.Equal(got, []byte{7, 9, 9}) {
		t.Fatalf("ReadAt across the boundary: %v, %v", got, err)
	}
	if _, err := f.Write(block[:100]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "000001.sst"))
	if err != nil || len(b) != 40960+200<<10+100 || b[len(b)-1] != 7 || b[40960] != 9 {
		t.Fatalf("closed file: %d bytes, %v", len(b), err)
	}
}
