package node

import (
	"bytes"
	"encoding/binary"
	mrand "math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// cpuTime is the CPU (user+system) of the process, or of the calling OS
// thread with who = rusageThread.
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const rusageThread = 1 // RUSAGE_THREAD (Linux)

// BenchmarkStreamTablets streams 200 tablets of ~100 KiB into an emulated
// i4i.large store, as a joining node does, while a reader does point reads
// of the rows already streamed and the pending replica gets writes for the
// tablets (before, during and after their streaming). It reports the CPU per
// streamed MiB (process CPU, less the reader's thread, until compactions
// settle) and per point read, during streaming and afterwards.
func BenchmarkStreamTablets(b *testing.B) {
	for range b.N {
		benchStreamTablets(b)
	}
}

func benchStreamTablets(b *testing.B) {
	const (
		capacity   = 117 << 20
		tabletsN   = 1024
		streamed   = 200
		rowsPer    = 100
		valueBytes = 1000
	)
	s, err := OpenStore(b.TempDir(), capacity)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id := [16]byte{9}
	tm := &TabletMap{Tablets: make([]Tablet, tabletsN)}
	// Tablets 0, 5, 10, ...: spread over the key space, as a new node's are.
	want := map[int]int{}
	var order []int
	for i := 0; len(order) < streamed; i += 5 {
		want[i] = len(order)
		order = append(order, i)
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	pks := make([][][]byte, streamed) // by position in want
	for i, full := uint64(0), 0; full < streamed; i++ {
		pk := binary.BigEndian.AppendUint64(nil, i)
		ti, ok := want[tm.index(Token(pk))]
		if !ok || len(pks[ti]) == rowsPer {
			continue
		}
		pks[ti] = append(pks[ti], pk)
		if len(pks[ti]) == rowsPer {
			full++
		}
	}
	value := make([]byte, valueBytes)
	row := func(ts int64) []byte {
		for i := range value {
			value[i] = byte(rng.Uint32())
		}
		return encodeRow(nil, []cell{{Name: "v", TS: ts, Value: value}})
	}
	write := func(pk []byte) {
		m := engine.Mutation{PartitionKey: pk, Cells: map[string][]byte{"v": value[:100]}, Timestamp: 2}
		if err := s.Apply([]engine.Mutation{m}, [][16]byte{id}, false); err != nil {
			b.Fatal(err)
		}
	}

	// The reader reads random rows of the tablets streamed so far, on its
	// own OS thread so that its CPU can be told apart.
	var done atomic.Bool
	var ready atomic.Int64 // tablets streamed so far (prefix of order)
	var wg sync.WaitGroup
	var readCPU time.Duration
	var reads int
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := mrand.New(mrand.NewPCG(3, 4))
		start := cpuTime(rusageThread)
		for !done.Load() {
			n := ready.Load()
			if n == 0 {
				time.Sleep(time.Millisecond)
				continue
			}
			ti := want[order[r.IntN(int(n))]]
			pk := pks[ti][r.IntN(rowsPer)]
			if _, err := s.ReadRow(id, engine.Read{PartitionKey: pk}); err != nil {
				panic(err)
			}
			if reads++; reads%20 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		readCPU = cpuTime(rusageThread) - start
	}()

	t0, c0 := time.Now(), cpuTime(syscall.RUSAGE_SELF)
	var streamedBytes int64
	for n, idx := range order {
		// Tablets arrive at ~10 MiB/s (a joining node's streaming rate).
		if d := time.Duration(n)*10*time.Millisecond - time.Since(t0); d > 0 {
			time.Sleep(d)
		}
		ti := want[idx]
		// The source's rows of the tablet, in key order (one chunk).
		kvs := make([]KV, 0, rowsPer)
		for _, pk := range pks[ti] {
			kvs = append(kvs, KV{K: rowKey(id, Token(pk), pk, nil), V: row(1)})
			streamedBytes += int64(len(kvs[len(kvs)-1].K) + len(kvs[len(kvs)-1].V))
		}
		slices.SortFunc(kvs, func(a, b KV) int { return bytes.Compare(a.K, b.K) })
		first, last := tabletRange(idx, tabletsN)
		start, end := tokenRangeKeys(id, first, last)
		// Writes the pending replica gets for the tablet while it streams.
		during := func() {
			for range 10 {
				write(pks[ti][rng.IntN(rowsPer)])
			}
		}
		if err := ingestStreamedTablet(s, start, end, [][]KV{kvs}, during); err != nil {
			b.Fatal(err)
		}
		ready.Store(int64(n + 1))
		// Writes to tablets the node already owns.
		for range 10 {
			done := want[order[rng.IntN(n+1)]]
			write(pks[done][rng.IntN(rowsPer)])
		}
	}
	streamWall := time.Since(t0)
	done.Store(true)
	wg.Wait()
	// Compactions the streaming left behind belong to it.
	for i := 0; i < 600 && s.db.Metrics().Compact.NumInProgress > 0; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	streamCPU := cpuTime(syscall.RUSAGE_SELF) - c0 - readCPU
	m := s.db.Metrics()

	// Point reads afterwards, on the LSM the streaming left.
	const after = 20000
	c1 := cpuTime(syscall.RUSAGE_SELF)
	for range after {
		ti := rng.IntN(streamed)
		if _, err := s.ReadRow(id, engine.Read{PartitionKey: pks[ti][rng.IntN(rowsPer)]}); err != nil {
			b.Fatal(err)
		}
	}
	afterCPU := cpuTime(syscall.RUSAGE_SELF) - c1

	var compacted uint64
	for _, l := range m.Levels {
		compacted += l.BytesCompacted
	}
	mib := float64(streamedBytes) / (1 << 20)
	b.ReportMetric(streamCPU.Seconds()*1000/mib, "cpu-ms/MiB")
	b.ReportMetric(float64(readCPU.Microseconds())/float64(max(reads, 1)), "cpu-µs/read-during")
	b.ReportMetric(float64(afterCPU.Microseconds())/after, "cpu-µs/read-after")
	ingested := make([]uint64, len(m.Levels))
	for i, l := range m.Levels {
		ingested[i] = l.BytesIngested >> 10
	}
	b.Logf("flushes %d, compactions %d (default %d, move %d, delete-only %d), KiB ingested by level %v", m.Flush.Count, m.Compact.Count, m.Compact.DefaultCount, m.Compact.MoveCount, m.Compact.DeleteOnlyCount, ingested)
	b.Logf("streamed %.1f MiB in %v (%d reads alongside); WAL written %d KiB, compacted %d KiB, L0 files %d, levels files %v",
		mib, streamWall.Round(time.Millisecond), reads, m.WAL.BytesWritten>>10, compacted>>10, m.Levels[0].NumFiles, levelFiles(m.Levels[:]))
}

func levelFiles(ls []pebble.LevelMetrics) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.NumFiles
	}
	return out
}

// ingestStreamedTablet loads a streamed tablet's chunks, as streamIn does,
// calling during once streaming has started.
func ingestStreamedTablet(s *Store, start, end []byte, chunks [][]KV, during func()) error {
	t := s.NewStreamedTablet(start, end)
	defer t.Abort()
	during()
	for _, c := range chunks {
		if err := t.Add(c); err != nil {
			return err
		}
	}
	return t.Load()
}
