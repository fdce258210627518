package node

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

func dirBytes(t *testing.T, dir string) (int64, map[string]int64) {
	var n int64
	files := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
				files[filepath.Base(p)] = fi.Size()
			}
		}
		return nil
	})
	return n, files
}

// openTestStore opens a store in a fresh directory, closed when t ends.
func openTestStore(t *testing.T, capacity int64) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenStore(dir, capacity)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func TestStoreMergeReadAndDeleteRangeFreesDisk(t *testing.T) {
	s, dir := openTestStore(t, 0)
	id := [16]byte{1}
	ids := [][16]byte{id}
	// Cell-level last write wins, whatever the arrival order.
	pk := []byte("pk")
	for _, m := range []engine.Mutation{
		{PartitionKey: pk, Cells: map[string][]byte{"a": []byte("new"), "b": []byte("b1")}, Timestamp: 20},
		{PartitionKey: pk, Cells: map[string][]byte{"a": []byte("old"), "c": []byte("c1")}, Timestamp: 10},
	} {
		if err := s.Apply([]engine.Mutation{m}, ids, false); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.Read(id, engine.Read{PartitionKey: pk})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, err %v", rows, err)
	}
	if c := rows[0].Cells; string(c["a"]) != "new" || string(c["b"]) != "b1" || string(c["c"]) != "c1" {
		t.Fatalf("merged cells = %q", c)
	}
	// 8 MiB of incompressible rows, then delete every token: bytes fall.
	v := make([]byte, 1024)
	for i := 0; i < 8192; i++ {
		rand.Read(v)
		k := make([]byte, 8)
		rand.Read(k)
		if err := s.Apply([]engine.Mutation{{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: 1}}, ids, false); err != nil {
			t.Fatal(err)
		}
	}
	s.db.Flush()
	before, _ := dirBytes(t, dir)
	st, en := tokenRangeKeys(id, -1<<63, 1<<63-1)
	if err := s.DeleteRange(st, en, true); err != nil {
		t.Fatal(err)
	}
	// Obsolete files are deleted in the background.
	after, files := dirBytes(t, dir)
	for deadline := time.Now().Add(10 * time.Second); after > before/4 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		after, files = dirBytes(t, dir)
	}
	t.Logf("data dir %d -> %d bytes: %v", before, after, files)
	if after > before/4 {
		t.Errorf("bytes did not fall enough: %d -> %d", before, after)
	}
}

// TestReadRowMatchesRead: the point lookup of a table without clustering
// columns answers as the partition scan does (live, expired, absent,
// deleted rows), across a flush.
func TestReadRowMatchesRead(t *testing.T) {
	s, _ := openTestStore(t, 0)
	id := [16]byte{7}
	now := time.Now().UnixMicro()
	ms := []engine.Mutation{
		{PartitionKey: []byte("live"), Cells: map[string][]byte{"v": []byte("a"), "n": nil}, Timestamp: now},
		{PartitionKey: []byte("ttl"), Cells: map[string][]byte{"v": []byte("b")}, Timestamp: now, TTL: time.Nanosecond},
		{PartitionKey: []byte("gone"), Cells: map[string][]byte{"v": []byte("c")}, Timestamp: now},
	}
	if err := s.Apply(ms, [][16]byte{id, id, id}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply([]engine.Mutation{{PartitionKey: []byte("gone"), Delete: true, Timestamp: now + 1}}, [][16]byte{id}, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the TTL'd cell expires (second resolution)
	for _, pk := range []string{"live", "ttl", "gone", "absent"} {
		r := engine.Read{PartitionKey: []byte(pk)}
		want, err1 := s.Read(id, r)
		got, err2 := s.ReadRow(id, r)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: Read %v, ReadRow %v", pk, err1, err2)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ReadRow %+v, Read %+v", pk, got, want)
		}
	}
	if rows, _ := s.ReadRow(id, engine.Read{PartitionKey: []byte("live")}); len(rows) != 1 || string(rows[0].Cells["v"]) != "a" {
		t.Errorf("live row read back as %+v", rows)
	}
}

// TestWALFilesAreACommitlogShareOfTheDisk: the write-ahead log files Pebble
// keeps (live, flushing, recycled) stand for ScyllaDB's commitlog, which
// grows to the shards' memory, about 3% of an i4i's disk; on an emulated
// i4i.large disk (234 MiB) they stay within 4% after many memtable flushes.
func TestWALFilesAreACommitlogShareOfTheDisk(t *testing.T) {
	const capacity = 234 << 20
	s, dir := openTestStore(t, capacity)
	ids := [][16]byte{{2}}
	v := make([]byte, 1024)
	var most int64
	for i := 0; i < 24<<10; i++ { // 24 MiB: a dozen memtables
		rand.Read(v)
		k := make([]byte, 8)
		rand.Read(k)
		if err := s.Apply([]engine.Mutation{{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: 1}}, ids, false); err != nil {
			t.Fatal(err)
		}
		if i%1024 == 0 {
			_, files := dirBytes(t, dir)
			var wal int64
			for name, n := range files {
				if filepath.Ext(name) == ".log" {
					wal += n
				}
			}
			most = max(most, wal)
		}
	}
	t.Logf("largest WAL total: %d bytes (%.1f%% of the disk)", most, 100*float64(most)/capacity)
	if most > capacity*4/100 {
		t.Errorf("WAL files reached %d bytes, %.1f%% of a %d-byte disk; ScyllaDB's commitlog is about 3%%", most, 100*float64(most)/capacity, capacity)
	}
	if most == 0 {
		t.Error("no WAL file seen")
	}
}

// TestOverwritesOfAFullNodeAreReclaimed: a node filled to ~80% and then
// overwritten uniformly (the mixed workload at 90% disk) stays within a few
// points of where it started, as a ScyllaDB node does, whose compaction
// groups reclaim overwritten rows per tablet (replica/compaction_group.hh).
// With Pebble's level multiplier 10 and a base level of 1/32 of the disk
// the same overwrites took a node from 82% to 99%.
//
// Disk usage is read only once the store has caught up with its writes
// (storeCaughtUp), and the writes wait for that every 1,000 rows (about a
// memtable), so that what is measured is the store's shape, not how much
// CPU the host gave its compactions (issue 45 item 3). Read at fixed
// moments, the readings depended on the host (it failed twice at load
// 9-17): the wait for compactions ended at the first moment none ran
// (before a flush's compaction had started, or between two) or after 10 s,
// with obsolete files not yet deleted, so on an idle machine the fill read
// 84.2% where the settled store holds 80.7%; and at load the compactions,
// at a low nice value (bgsched.go), fell behind the wall-clock writes
// (Pebble's debt up to 39% of the disk at a peak reading). Read this
// way, with a busy loop on each of 2 cores beside other work (load 5-28),
// four runs gave 80.7-80.8% filled, 85.3-85.5% after (4.6-4.8 points) and a peak of
// 87.4-88.2%; with Pebble's multiplier 10 and a base level of 1/32 the
// same run went from 80.7% to 92.8% (peak 94.4%) and failed both checks.
// The peak is read as often as the waits poll, so a slower host sees more
// of a compaction's transient room, but never more than there is: the
// writes wait, so no compaction debt adds to it.
func TestOverwritesOfAFullNodeAreReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store")
	}
	const capacity = 117 << 20 // an emulated i4i.large
	s, dir := openTestStore(t, capacity)
	ids := [][16]byte{{3}}
	v := make([]byte, 1024)
	put := func(i int) {
		k := binary.BigEndian.AppendUint64(nil, uint64(i))
		rand.Read(v[:16])
		m := engine.Mutation{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: time.Now().UnixMicro()}
		if err := s.Apply([]engine.Mutation{m}, ids, false); err != nil {
			t.Fatal(err)
		}
	}
	used := func() float64 { n, _ := dirBytes(t, dir); return 100 * float64(n) / capacity }
	// caughtUp waits until the store has caught up and returns its usage
	// then; peak gets every reading on the way (compactions' transient
	// room).
	var peak float64
	caughtUp := func() float64 {
		deadline := time.Now().Add(3 * time.Minute)
		last := -1.0
		for {
			m := s.db.Metrics()
			u := used()
			peak = max(peak, u)
			if storeCaughtUp(m) && u == last {
				return u
			}
			if time.Now().After(deadline) {
				t.Fatalf("the store did not catch up with its writes in 3 minutes: %d compactions running, levels' scores %v", m.Compact.NumInProgress, levelScores(m))
			}
			last = u
			time.Sleep(20 * time.Millisecond)
		}
	}
	const keys = 87_500
	writeRows(t, s, keys)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	filled := caughtUp()
	peak = filled
	// A quarter of the keys overwritten at 1,000 writes/s at most (a node's
	// share of the workload is a few hundred; faster would measure Pebble's
	// compaction debt instead).
	const overwrites, rate = 20_000, 1000
	start := time.Now()
	for j := 1; j <= overwrites; j++ {
		put(mrand.IntN(keys))
		if d := time.Duration(j)*time.Second/rate - time.Since(start); d > 0 {
			time.Sleep(d)
		}
		if j%1000 == 0 {
			caughtUp()
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	after := caughtUp()
	t.Logf("filled %.1f%%, after %d overwrites %.1f%% (peak %.1f%%) in %v", filled, overwrites, after, peak, time.Since(start).Round(time.Millisecond))
	if after > filled+6 {
		t.Errorf("overwrites grew the node from %.1f%% to %.1f%%: overwritten rows are not reclaimed", filled, after)
	}
	if peak > filled+9 {
		t.Errorf("usage peaked at %.1f%% from %.1f%%: compactions need too much transient room", peak, filled)
	}
}

// storeCaughtUp: no flush or compaction running or due (every level's
// compaction score, as Pebble's picker computes it, below 1) and no
// obsolete or zombie file left to delete.
func storeCaughtUp(m *pebble.Metrics) bool {
	if m.Flush.NumInProgress > 0 || m.Compact.NumInProgress > 0 || m.Table.ObsoleteCount > 0 || m.Table.ZombieCount > 0 {
		return false
	}
	for _, l := range m.Levels {
		if l.Score >= 1 {
			return false
		}
	}
	return true
}

func levelScores(m *pebble.Metrics) []float64 {
	var s []float64
	for _, l := range m.Levels {
		s = append(s, l.Score)
	}
	return s
}

// TestStreamedTabletIsIngestedAndMergesWithWrites: a streamed tablet is
// loaded as sstables below L0 (file streaming, no WAL or memtable), rolled
// into several files when large, and converges cell by cell with the
// writes the pending replica got while it streamed, older or newer.
func TestStreamedTabletIsIngestedAndMergesWithWrites(t *testing.T) {
	s, dir := openTestStore(t, 0)
	id := [16]byte{5}
	ids := [][16]byte{id}
	// Other data in the store, flushed.
	if err := s.Apply([]engine.Mutation{{PartitionKey: []byte("other"), Cells: map[string][]byte{"a": []byte("x")}, Timestamp: 1}}, [][16]byte{{6}}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// The source's rows: ~3 MiB, more than one file (2 MiB with capacity 0).
	const rows = 3000
	big := make([]byte, 1024)
	var kvs []KV
	var streamed int
	for i := range rows {
		pk := binary.BigEndian.AppendUint32(nil, uint32(i))
		v := encodeRow(nil, []cell{{Name: "a", TS: 10, Value: []byte("stream")}, {Name: "b", TS: 10, Value: big}})
		kvs = append(kvs, KV{K: rowKey(id, Token(pk), pk, nil), V: v})
		streamed += len(kvs[i].K) + len(v)
	}
	slices.SortFunc(kvs, func(a, b KV) int { return bytes.Compare(a.K, b.K) })
	start, end := tokenRangeKeys(id, -1<<63, 1<<63-1)
	walBefore := s.db.Metrics().WAL.BytesWritten

	st := s.NewStreamedTablet(start, end)
	// Writes while the tablet streams: newer for rows 0-9, older (and a
	// new cell) for rows 10-19.
	for i := range 20 {
		pk := binary.BigEndian.AppendUint32(nil, uint32(i))
		m := engine.Mutation{PartitionKey: pk, Cells: map[string][]byte{"a": []byte("newer")}, Timestamp: 20}
		if i >= 10 {
			m = engine.Mutation{PartitionKey: pk, Cells: map[string][]byte{"a": []byte("older"), "c": []byte("c")}, Timestamp: 5}
		}
		if err := s.Apply([]engine.Mutation{m}, ids, false); err != nil {
			t.Fatal(err)
		}
	}
	for c := range slices.Chunk(kvs, 200) {
		if err := st.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Load(); err != nil {
		t.Fatal(err)
	}

	for i := range rows {
		pk := binary.BigEndian.AppendUint32(nil, uint32(i))
		got, err := s.ReadRow(id, engine.Read{PartitionKey: pk})
		if err != nil || len(got) != 1 {
			t.Fatalf("row %d: %+v, %v", i, got, err)
		}
		want := map[string]string{"a": "stream", "b": string(big)}
		switch {
		case i < 10:
			want["a"] = "newer"
		case i < 20:
			want["c"] = "c"
		}
		if len(got[0].Cells) != len(want) {
			t.Fatalf("row %d: cells %q, want %q", i, got[0].Cells, want)
		}
		for k, v := range want {
			if string(got[0].Cells[k]) != v {
				t.Fatalf("row %d: cell %s = %.10q, want %.10q", i, k, got[0].Cells[k], v)
			}
		}
	}
	m := s.db.Metrics()
	if wal := m.WAL.BytesWritten - walBefore; wal > uint64(streamed)/10 {
		t.Errorf("WAL grew by %d bytes for %d streamed: the rows went through the memtable", wal, streamed)
	}
	var below uint64
	var files uint64
	for l := 1; l < len(m.Levels); l++ {
		below += m.Levels[l].BytesIngested
		files += m.Levels[l].TablesIngested
	}
	if m.Levels[0].BytesIngested != 0 || below < uint64(streamed)*9/10 || files < 2 {
		t.Errorf("ingested %d bytes into L0 and %d in %d files below it, for %d streamed in more than one file", m.Levels[0].BytesIngested, below, files, streamed)
	}
	if _, files := dirBytes(t, dir); hasStreamFile(files) {
		t.Errorf("streamed sstables left in the data dir: %v", files)
	}
}

func hasStreamFile(files map[string]int64) bool {
	for name := range files {
		if strings.HasPrefix(name, streamFilePrefix) {
			return true
		}
	}
	return false
}

// TestAbortedStreamedTabletLeavesNoFile: an aborted stream removes its
// partial file and applies the writes it held; a file a killed process
// left is removed when the store opens.
func TestAbortedStreamedTabletLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := [16]byte{5}
	start, end := tokenRangeKeys(id, -1<<63, 1<<63-1)
	st := s.NewStreamedTablet(start, end)
	pk := []byte("held")
	if err := s.Apply([]engine.Mutation{{PartitionKey: pk, Cells: map[string][]byte{"a": []byte("w")}, Timestamp: 1}}, [][16]byte{id}, false); err != nil {
		t.Fatal(err)
	}
	k := []byte("streamed")
	if err := st.Add([]KV{{K: rowKey(id, Token(k), k, nil), V: encodeRow(nil, []cell{{Name: "a", TS: 1, Value: []byte("s")}})}}); err != nil {
		t.Fatal(err)
	}
	if _, files := dirBytes(t, dir); !hasStreamFile(files) {
		t.Fatalf("no streamed sstable while streaming: %v", files)
	}
	if err := st.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, files := dirBytes(t, dir); hasStreamFile(files) {
		t.Errorf("aborted stream left %v", files)
	}
	if rows, err := s.ReadRow(id, engine.Read{PartitionKey: pk}); err != nil || len(rows) != 1 {
		t.Errorf("write held during the aborted stream: %+v, %v", rows, err)
	}
	if rows, _ := s.ReadRow(id, engine.Read{PartitionKey: k}); len(rows) != 0 {
		t.Errorf("aborted stream's row is readable: %+v", rows)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, streamFilePrefix+"7"+streamFileSuffix)
	if err := os.WriteFile(left, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenStore(dir, 0) // the same process's store opens again
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := os.Stat(left); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("leftover streamed sstable after reopening: %v", err)
	}
}

// TestSstableFilesAreRecycled: the sstables compactions make obsolete are
// emptied and taken over by the next ones (file creation is what costs on
// this VM), and the store's data and disk usage stay right, also reopened.
func TestSstableFilesAreRecycled(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, 117<<20)
	if err != nil {
		t.Fatal(err)
	}
	ids := [][16]byte{{3}}
	write := func(from, to int, ts int64) {
		batch := make([]engine.Mutation, 0, 100)
		for i := from; i < to; i++ {
			k := binary.BigEndian.AppendUint64(nil, uint64(i))
			v := binary.BigEndian.AppendUint64(make([]byte, 1016), uint64(ts))
			batch = append(batch, engine.Mutation{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: ts})
			if len(batch) == cap(batch) || i == to-1 {
				if err := s.Apply(batch, slices.Repeat(ids, len(batch)), false); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
	}
	const keys = 30_000
	write(0, keys, 1)
	write(0, keys/2, 2) // overwrites: compactions make files obsolete
	if err := s.Compact([]byte{0}, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	fs := s.opts.FS.(*noSyncFS)
	created, reused := fs.created.Load(), fs.reused.Load()
	t.Logf("sstables: %d created, %d recycled", created, reused)
	if reused == 0 || reused < created {
		t.Errorf("%d sstables created and %d recycled: want most recycled", created, reused)
	}
	// Pooled files are empty, so the disk model's walk counts live data only.
	pooled, _ := filepath.Glob(filepath.Join(dir, recycledPrefix+"*"))
	for _, p := range pooled {
		if st, err := os.Stat(p); err != nil || st.Size() != 0 {
			t.Fatalf("pooled file %s: %v, %d bytes", p, err, st.Size())
		}
	}
	check := func() {
		for _, i := range []int{0, keys/2 - 1, keys / 2, keys - 1} {
			rows, err := s.ReadRow([16]byte{3}, engine.Read{PartitionKey: binary.BigEndian.AppendUint64(nil, uint64(i))})
			want := int64(1)
			if i < keys/2 {
				want = 2
			}
			if err != nil || len(rows) != 1 || rows[0].Timestamp != want {
				t.Fatalf("key %d: %v, %v: want one row at timestamp %d", i, rows, err, want)
			}
		}
	}
	check()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = OpenStore(dir, 117<<20); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if left, _ := filepath.Glob(filepath.Join(dir, recycledPrefix+"*")); len(left) != 0 {
		t.Errorf("reopened with %d pooled files left", len(left))
	}
	check()
}
