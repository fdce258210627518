package reporting

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// tenHours is a 10-hour run: 36,000 one-second intervals per operation type
// (steady state 4 h, three serial grow cycles of 2 h), a sample of 1,000
// values per interval, disk samples every 10 s.
var tenHours = fixture{interval: time.Second, steady: 4 * time.Hour, fill: 10 * time.Minute, hold: time.Minute,
	join: 40 * time.Minute, balance: 60 * time.Minute, recover: 20 * time.Minute, final: 0, perOp: 1000, pool: 24, metricsEvery: 10}

func BenchmarkRender10h(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	start := time.Now()
	if err := writeFixture(dir, tenHours); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, results.FileLatency))
	b.Logf("generated in %s; latency.jsonl %.0f MB", time.Since(start).Round(time.Millisecond), float64(st.Size())/1e6)
	var peak uint64
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Render(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Cycles) != 4 {
			b.Fatalf("%d cycles", len(res.Cycles))
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapSys)
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak)/1e6, "MB-heap-sys")
}

// cpuTime is the process's user+system CPU time: on a shared machine wall
// time says more about the neighbours than about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFinalizeFixture renders the checked-in 26-minute run (10 s intervals).
func BenchmarkFinalizeFixture(b *testing.B) {
	dir := copyRun(b, filepath.Join("testdata", "run1"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Finalize(dir, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}
