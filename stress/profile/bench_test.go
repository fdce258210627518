package profile

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
)

// cpuSeconds is the CPU time this process has used (user + system).
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkProfileOpsPerCPUSecond compares the engine's cost of a user
// profile with the built-in workload's: the same emulated node, the same
// rate, the same shape of data (testdata/keyvalue.yaml is the built-in
// table as a profile: a bigint key, a 1 KiB blob, insert=1,read=1), run
// alternately, each for 2 s per iteration. It reports successful
// operations per CPU-second of this process (which also runs the
// emulated node) for each, and their ratio. Numbers mean something only
// on a quiet machine:
//
//	go test -run '^$' -bench ProfileOpsPerCPUSecond -benchtime 5x ./stress/profile/
func BenchmarkProfileOpsPerCPUSecond(b *testing.B) {
	const (
		rate = 2000
		keys = 2000
		each = 2 * time.Second
	)
	s := emulated(b)
	ctx := context.Background()
	if err := stress.CreateSchema(ctx, s, stress.Schema{Keyspace: "bench_kv", Table: "kv", RF: 1}); err != nil {
		b.Fatal(err)
	}
	var written atomic.Int64
	if _, err := stress.RunFill(ctx, s, stress.Fill{Keyspace: "bench_kv", Table: "kv", ValueSize: 1024, Concurrency: 16, CheckEvery: 20 * time.Millisecond},
		func() bool { return written.Load() >= keys }, nil, written.Store); err != nil {
		b.Fatal(err)
	}
	m := load(b, "testdata/keyvalue.yaml", "insert=1,read=1")
	createSchema(b, s, m)
	fillPartitions(b, s, m, keys)
	kv := stress.Workload{Keyspace: "bench_kv", Table: "kv", WriteRatio: 1, ReadRatio: 1, Rate: rate, Concurrency: 32,
		KeyCount: keys, ValueMin: 1024}
	prof := kv
	prof.Model = m
	var kvOps, kvCPU, pOps, pCPU float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, c := runFor(b, s, kv, each)
		kvOps, kvCPU = kvOps+o, kvCPU+c
		o, c = runFor(b, s, prof, each)
		pOps, pCPU = pOps+o, pCPU+c
	}
	b.StopTimer()
	b.ReportMetric(kvOps/kvCPU, "builtin-ops/cpu-s")
	b.ReportMetric(pOps/pCPU, "profile-ops/cpu-s")
	b.ReportMetric((pOps/pCPU)/(kvOps/kvCPU), "profile/builtin")
}

// runFor runs w for d and returns its successful operations and the CPU
// seconds the process used meanwhile.
func runFor(b *testing.B, s *gocql.Session, w stress.Workload, d time.Duration) (ops, cpu float64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c0 := cpuSeconds(b)
	sum, err := stress.Run(ctx, s, w, nil)
	c1 := cpuSeconds(b)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Errors != 0 {
		b.Fatalf("%d errors: %+v", sum.Errors, sum.Ops)
	}
	return float64(sum.Succeeded), c1 - c0
}
