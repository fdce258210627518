package sched

import (
	"context"
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runN pushes n operations through the open-model path (every operation due
// at once, none dropped) with a no-op operation and measures it.
func runN(tb testing.TB, n int64, rate float64) (sum Summary, wall, cpu time.Duration, allocs uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done atomic.Int64
	fn := func(context.Context, int, uint64) error {
		if done.Add(1) == n {
			cancel()
		}
		return nil
	}
	s, err := New(Config{Ops: []string{"write", "read"}, Rate: rate, MaxLag: -1, Concurrency: 64, Sink: func(results.LatencyRecord) {}}, fn)
	if err != nil {
		tb.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	c0, t0 := cpuTime(), time.Now()
	sum, err = s.Run(ctx)
	wall, cpu = time.Since(t0), cpuTime()-c0
	runtime.ReadMemStats(&m1)
	if err != nil {
		tb.Fatal(err)
	}
	return sum, wall, cpu, m1.Mallocs - m0.Mallocs
}

// BenchmarkSchedule is the generator's own cost per operation: schedule,
// hand-off to a worker, two HDR recordings and the interval snapshots, with a
// no-op operation. Run with -cpu 1 for the per-core figure:
//
//	go test -run '^$' -bench Schedule -cpu 1 ./stress/sched/
func BenchmarkSchedule(b *testing.B) {
	n := int64(max(b.N, 1000))
	b.ResetTimer()
	sum, wall, cpu, allocs := runN(b, n, 1e9)
	b.StopTimer()
	if sum.Succeeded < n {
		b.Fatalf("%d of %d operations", sum.Succeeded, n)
	}
	b.ReportMetric(float64(allocs)/float64(n), "mallocs/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(n)/cpu.Seconds(), "ops/cpu-s")
	b.ReportMetric(float64(n)/wall.Seconds(), "ops/s")
}

// BenchmarkFixedRate50k runs the real schedule (sleeping between due
// operations) at 50,000 ops/s for one second per iteration and reports how
// much of a core it used and how well it kept the rate.
//
//	go test -run '^$' -bench FixedRate -cpu 1 -benchtime 3x ./stress/sched/
func BenchmarkFixedRate50k(b *testing.B) {
	const rate = 50000
	for range b.N {
		s, err := New(Config{Ops: []string{"write", "read"}, Rate: rate, Concurrency: 64, Sink: func(results.LatencyRecord) {}}, noop)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c0 := cpuTime()
		sum, err := s.Run(ctx)
		cpu := cpuTime() - c0
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		el := sum.End.Sub(sum.Start).Seconds()
		b.ReportMetric(float64(sum.Succeeded)/el, "achieved-ops/s")
		b.ReportMetric(cpu.Seconds()/el*100, "cpu-%")
		b.ReportMetric(float64(sum.Dropped), "dropped")
		b.ReportMetric(float64(sum.Late)/float64(max(sum.Intended, 1))*100, "late-%")
		w, _ := sum.Op("write")
		b.ReportMetric(w.Response.P50*1000, "resp-p50-µs")
		b.ReportMetric(w.Response.P99*1000, "resp-p99-µs")
	}
}

// The schedule+measurement path must stay in single-digit allocations per
// operation (amortised snapshots included).
func TestAllocationsPerOperation(t *testing.T) {
	const n = 100000
	sum, _, _, allocs := runN(t, n, 1e9)
	if sum.Succeeded < n {
		t.Fatalf("%d operations", sum.Succeeded)
	}
	if per := float64(allocs) / n; per >= 1 {
		t.Fatalf("%.2f allocations per operation", per)
	}
}

var long = flag.Bool("long", false, "run TestLongRSS (10 minutes at 5,000 ops/s; -long-duration to change)")
var longDuration = flag.Duration("long-duration", 10*time.Minute, "duration of TestLongRSS")

func rssKB(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestLongRSS runs the generator at 5,000 ops/s for -long-duration with a
// no-op operation and checks that the resident set stays flat:
//
//	go test -run TestLongRSS -v ./stress/sched/ -args -long
func TestLongRSS(t *testing.T) {
	if !*long {
		t.Skip("needs -long")
	}
	s, err := New(Config{Ops: []string{"write", "read"}, Rate: 5000, Concurrency: 128, Sink: func(results.LatencyRecord) {}}, noop)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *longDuration)
	defer cancel()
	type sample struct {
		at  time.Duration
		rss int64
	}
	var samples []sample
	stop := make(chan struct{})
	sampled := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(sampled)
		tick := time.NewTicker(*longDuration / 20)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				samples = append(samples, sample{time.Since(start).Round(time.Second), rssKB(t)})
			}
		}
	}()
	sum, err := s.Run(ctx)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		t.Logf("%8v RSS %6d KiB", s.at, s.rss)
	}
	t.Logf("succeeded %d (%.1f ops/s), dropped %d", sum.Succeeded, sum.AchievedRate, sum.Dropped)
	if len(samples) < 4 {
		t.Fatalf("only %d samples", len(samples))
	}
	// After warm-up (the first quarter), RSS must stay flat: GC cycles move it
	// by a few MiB, a leak of even 100 bytes per operation would add 300 MB.
	ref := samples[len(samples)/4].rss
	peak := int64(0)
	for _, s := range samples[len(samples)/4:] {
		peak = max(peak, s.rss)
	}
	t.Logf("RSS after warm-up %d KiB, peak %d KiB, last %d KiB", ref, peak, samples[len(samples)-1].rss)
	if float64(peak) > float64(ref)*1.25+4096 {
		t.Fatalf("RSS grew from %d to %d KiB", ref, peak)
	}
	if sum.Dropped != 0 || sum.Intended < int64(4900*longDuration.Seconds()) {
		t.Fatalf("rate not kept: %+v", sum)
	}
}
