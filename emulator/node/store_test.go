package node

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
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
// groups reclaim overwritten rows per tablet (replica/compaction_group.hh),
// and its compactions need little room beside their inputs (a tablet's
// worth there). With Pebble's level multiplier 10 and a base level of 1/32
// of the disk the same overwrites took a node from 82% to 99%.
//
// Disk usage is read only once the store has caught up with its writes
// (storeCaughtUp), and the writes wait for that every 1,000 rows (about a
// memtable), so that what is measured is the store's shape, not how much
// CPU the host gave its compactions (issue 45 item 3): read at fixed
// moments, the readings depended on the host. Read this way, idle or with
// busy loops beside it, 21 runs went from 79.8-80.8% to 84.5-85.6%.
//
// The transient room is what the compactions wrote while their inputs
// were still there (endedCompactions.room, from Pebble's compaction
// events), 1.4-1.9% of the disk in 8 of them, not the highest disk
// reading, which, polled every 20 ms, peaked at 85.2-88.2% in the 21 runs
// and at 97.3% once in CI: a reading shows as much of the WAL's and the
// compactions' room as the moment it falls on does. The readings' peak is
// logged with what held the disk then.
func TestOverwritesOfAFullNodeAreReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store")
	}
	const capacity = 117 << 20 // an emulated i4i.large
	s, dir := openTestStore(t, capacity)
	var compactions endedCompactions
	seen := compactions.add
	s.bg.compactionEnd.Store(&seen)
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
	// caughtUp waits until the store has caught up and returns its usage
	// then; peak gets every reading on the way (compactions' transient
	// room).
	var peak float64
	var peakHeld string
	caughtUp := func() float64 {
		deadline := time.Now().Add(3 * time.Minute)
		last := -1.0
		for {
			m := s.db.Metrics()
			n, files := dirBytes(t, dir)
			u := 100 * float64(n) / capacity
			if u > peak {
				peak, peakHeld = u, roomHeld(files, m)
			}
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
	compactions.reset()
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
	room, held := compactions.room()
	roomPct := 100 * float64(room) / capacity
	t.Logf("filled %.1f%%, after %d overwrites %.1f%% in %v; compactions held at most %.1f%% of the disk at once (%s); the readings peaked at %.1f%% (%s)",
		filled, overwrites, after, time.Since(start).Round(time.Millisecond), roomPct, held, peak, peakHeld)
	if after > filled+6 {
		t.Errorf("overwrites grew the node from %.1f%% to %.1f%%: overwritten rows are not reclaimed", filled, after)
	}
	if roomPct > 6 {
		t.Errorf("compactions held %.1f%% of the disk at once: they need too much transient room (%s)", roomPct, held)
	}
}

// endedCompactions records the compactions a store ends (its
// backgroundPriority's compactionEnd), with when they ended.
type endedCompactions struct {
	mu    sync.Mutex
	ended []endedCompaction
}

type endedCompaction struct {
	end  time.Time
	info pebble.CompactionInfo
}

func (e *endedCompactions) add(i pebble.CompactionInfo) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = append(e.ended, endedCompaction{time.Now(), i})
}

func (e *endedCompactions) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = nil
}

// room is the most that compactions wrote while their inputs were still
// on disk: at the end of each compaction, its output and that of every
// compaction running then, counted whole (an upper bound: theirs were
// still being written). Moves and delete-only compactions write nothing.
// It also says which compactions those were.
func (e *endedCompactions) room() (int64, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var most int64
	var what []string
	for _, c := range e.ended {
		var sum int64
		var parts []string
		for _, o := range e.ended {
			if o.end.Add(-o.info.TotalDuration).After(c.end) || o.end.Before(c.end) {
				continue // not running when c ended
			}
			n := compactionOutput(o.info)
			sum += n
			parts = append(parts, fmt.Sprintf("%s %v → L%d wrote %.1f MiB", o.info.Reason, inputLevels(o.info), o.info.Output.Level, float64(n)/(1<<20)))
		}
		if sum > most {
			most, what = sum, parts
		}
	}
	return most, fmt.Sprintf("%d compactions; at the most: %s", len(e.ended), strings.Join(what, ", "))
}

func compactionOutput(i pebble.CompactionInfo) int64 {
	if i.Reason == "move" || i.Reason == "delete-only" || i.Err != nil {
		return 0
	}
	var n int64
	for _, t := range i.Output.Tables {
		n += int64(t.Size)
	}
	return n
}

func inputLevels(i pebble.CompactionInfo) []string {
	var ls []string
	for _, l := range i.Input {
		ls = append(ls, fmt.Sprintf("L%d", l.Level))
	}
	return ls
}

// roomHeld says what a store's files hold, by kind, and what Pebble was
// doing: what a failed check on its disk usage needs to be understood.
func roomHeld(files map[string]int64, m *pebble.Metrics) string {
	kinds := map[string]int64{}
	for name, n := range files {
		kind := filepath.Ext(name)
		if strings.HasPrefix(name, "MANIFEST") {
			kind = "MANIFEST"
		}
		kinds[kind] += n
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(&b, "%s %.1f MiB, ", k, float64(kinds[k])/(1<<20))
	}
	fmt.Fprintf(&b, "Pebble's disk usage %.1f MiB (%d obsolete and %d zombie tables), %d flushes and %d compactions running, levels' MiB",
		float64(m.DiskSpaceUsage())/(1<<20), m.Table.ObsoleteCount, m.Table.ZombieCount, m.Flush.NumInProgress, m.Compact.NumInProgress)
	for i, l := range m.Levels {
		fmt.Fprintf(&b, " L%d %.1f", i, float64(l.Size)/(1<<20))
	}
	return b.String()
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
