package sched

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

type collect struct {
	mu   sync.Mutex
	recs []results.LatencyRecord
}

func (c *collect) sink(r results.LatencyRecord) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
}

func (c *collect) all() []results.LatencyRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]results.LatencyRecord(nil), c.recs...)
}

func noop(context.Context, int, uint64) error { return nil }

func runFor(t *testing.T, d time.Duration, cfg Config, fn Op) (Summary, *Scheduler) {
	t.Helper()
	s, err := New(cfg, fn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sum, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return sum, s
}

// checkAccounting: nothing is silently skipped.
func checkAccounting(t *testing.T, sum Summary) {
	t.Helper()
	if sum.Intended != sum.Succeeded+sum.Errors+sum.Dropped {
		t.Fatalf("intended %d != succeeded %d + errors %d + dropped %d", sum.Intended, sum.Succeeded, sum.Errors, sum.Dropped)
	}
	for _, o := range sum.Ops {
		if o.Intended != o.Succeeded+o.ErrorCount()+o.Dropped {
			t.Fatalf("%s: intended %d != %d + %d + %d", o.Op, o.Intended, o.Succeeded, o.ErrorCount(), o.Dropped)
		}
	}
}

func TestRateIsKept(t *testing.T) {
	var c collect
	sum, _ := runFor(t, time.Second, Config{Ops: []string{"write", "read"}, Rate: 2000, Interval: 200 * time.Millisecond, Sink: c.sink}, noop)
	checkAccounting(t, sum)
	// Operations 0..2000 are intended in [0, 1 s]; the run ends when the
	// test's timer fires, late on a loaded machine: compare with its real length.
	want := sum.Stopped.Sub(sum.Start).Seconds() * 2000
	if math.Abs(float64(sum.Intended)-want) > 0.01*want+3 {
		t.Fatalf("intended %d operations in %.3f s at 2000/s", sum.Intended, want/2000)
	}
	if sum.Dropped*50 > sum.Intended || sum.Errors != 0 {
		t.Fatalf("dropped %d errors %d with a no-op", sum.Dropped, sum.Errors)
	}
	w, _ := sum.Op("write")
	r, _ := sum.Op("read")
	if math.Abs(float64(w.Intended-r.Intended)) > 0.1*float64(sum.Intended) {
		t.Fatalf("mix write=1,read=1 gave %d writes and %d reads", w.Intended, r.Intended)
	}
	recs := c.all()
	var n int64
	for _, r := range recs {
		n += r.Count
		if r.ResponseHDR == "" || r.ServiceHDR == "" {
			t.Fatal("record without histograms")
		}
	}
	if n != sum.Succeeded {
		t.Fatalf("records count %d successes, summary %d", n, sum.Succeeded)
	}
	if len(recs) < 8 || len(recs)%2 != 0 {
		t.Fatalf("%d records for 2 ops over ~5 intervals", len(recs))
	}
}

func TestOverloadDropsAndWarns(t *testing.T) {
	var warned atomic.Int32
	slow := func(ctx context.Context, _ int, _ uint64) error {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	sum, _ := runFor(t, 1500*time.Millisecond, Config{
		Ops: []string{"write"}, Rate: 1000, Concurrency: 5, MaxLag: 100 * time.Millisecond,
		Interval: 250 * time.Millisecond, Warn: func(string) { warned.Add(1) },
	}, slow)
	checkAccounting(t, sum)
	// Capacity is 5 / 50 ms = 100/s against 1000/s intended.
	if sum.Dropped < sum.Intended/2 {
		t.Fatalf("dropped only %d of %d", sum.Dropped, sum.Intended)
	}
	if sum.Late == 0 {
		t.Fatal("no late operations")
	}
	if warned.Load() == 0 || len(sum.Warnings) == 0 || !strings.Contains(sum.Warnings[0], "concurrency 5 cannot sustain 1000 ops/s") {
		t.Fatalf("no loud warning: %q", sum.Warnings)
	}
	w, _ := sum.Op("write")
	// Response time includes the wait for a worker (up to MaxLag), service time does not.
	if w.Response.P99 < 100 || w.Response.P50 < w.Service.P50+20 {
		t.Fatalf("response p50 %.1f p99 %.1f ms, service p50 %.1f p99 %.1f ms", w.Response.P50, w.Response.P99, w.Service.P50, w.Service.P99)
	}
}

// A backend that blocks for a while: the response time of the stalled window
// shows the stall, the service time of the bounded pool barely does.
func TestStallShowsInResponseNotService(t *testing.T) {
	var stallFrom, stallTo atomic.Int64
	epoch := time.Now()
	stallFrom.Store(int64(400 * time.Millisecond))
	stallTo.Store(int64(700 * time.Millisecond))
	fn := func(ctx context.Context, _ int, _ uint64) error {
		if until := stallTo.Load(); time.Since(epoch) >= time.Duration(stallFrom.Load()) && time.Since(epoch) < time.Duration(until) {
			select {
			case <-time.After(time.Duration(until) - time.Since(epoch)):
			case <-ctx.Done():
			}
		}
		return nil
	}
	sum, _ := runFor(t, 1500*time.Millisecond, Config{Ops: []string{"write"}, Rate: 2000, Concurrency: 4, MaxLag: time.Second}, fn)
	checkAccounting(t, sum)
	w, _ := sum.Op("write")
	if w.Response.P99 < 150 {
		t.Fatalf("response p99 %.1f ms does not show a 300 ms stall", w.Response.P99)
	}
	if w.Service.P99 > 50 {
		t.Fatalf("service p99 %.1f ms: 4 stalled operations of ~3000 should stay above p99", w.Service.P99)
	}
	if w.Service.Max < 150 {
		t.Fatalf("service max %.1f ms misses the stalled in-flight operations", w.Service.Max)
	}
	// MaxLag 1 s covers a 300 ms stall; only a starved test process (a loaded
	// machine) leaves some of the last due operations unreached at the end.
	if sum.Dropped*20 > sum.Intended {
		t.Fatalf("dropped %d of %d with MaxLag 1 s and a 300 ms stall", sum.Dropped, sum.Intended)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	errTimeout := errors.New("timeout")
	fn := func(_ context.Context, op int, seq uint64) error {
		if seq%4 == 0 {
			return errTimeout
		}
		return nil
	}
	classify := func(err error) string {
		if errors.Is(err, errTimeout) {
			return "timeout"
		}
		return "other"
	}
	sum, _ := runFor(t, 500*time.Millisecond, Config{Ops: []string{"write", "read"}, Weights: []float64{3, 1}, Rate: 1000, Classify: classify}, fn)
	checkAccounting(t, sum)
	var timeouts int64
	for _, o := range sum.Ops {
		timeouts += o.Errors["timeout"]
	}
	if timeouts == 0 || timeouts != sum.Errors {
		t.Fatalf("timeouts %d of %d errors", timeouts, sum.Errors)
	}
	if d := math.Abs(float64(timeouts)/float64(sum.Intended) - 0.25); d > 0.05 {
		t.Fatalf("%d timeouts of %d", timeouts, sum.Intended)
	}
	w, _ := sum.Op("write")
	if r := float64(w.Intended) / float64(sum.Intended); r < 0.65 || r > 0.85 {
		t.Fatalf("write share %.2f for write=3,read=1", r)
	}
}

func TestSetRate(t *testing.T) {
	s, err := New(Config{Ops: []string{"write"}, Rate: 500}, noop)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = s.SetRate(2000)
	}()
	sum, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, sum)
	// ~250 at 500/s then ~1000 at 2000/s.
	if sum.Intended < 1100 || sum.Intended > 1400 {
		t.Fatalf("intended %d, want ~1250", sum.Intended)
	}
	if sum.TargetRate != 2000 {
		t.Fatalf("target rate %v", sum.TargetRate)
	}
	if err := s.SetRate(-1); err == nil {
		t.Fatal("negative rate accepted")
	}
}

func TestClosedLoop(t *testing.T) {
	fn := func(ctx context.Context, _ int, _ uint64) error {
		time.Sleep(2 * time.Millisecond)
		return nil
	}
	sum, _ := runFor(t, 500*time.Millisecond, Config{Ops: []string{"fill"}, Rate: 0, Concurrency: 4}, fn)
	checkAccounting(t, sum)
	if sum.Succeeded < 200 || sum.Dropped != 0 || sum.Late != 0 {
		t.Fatalf("closed loop: %+v", sum)
	}
	f, _ := sum.Op("fill")
	if f.Response != f.Service {
		t.Fatalf("closed loop response %+v != service %+v", f.Response, f.Service)
	}
}

// Operations that ignore the end of the run are cancelled after DrainTimeout
// and counted, not lost.
func TestDrainCancels(t *testing.T) {
	block := func(ctx context.Context, _ int, _ uint64) error {
		<-ctx.Done()
		return ctx.Err()
	}
	classify := func(err error) string {
		if errors.Is(err, context.Canceled) {
			return "cancelled"
		}
		return "other"
	}
	start := time.Now()
	sum, _ := runFor(t, 200*time.Millisecond, Config{Ops: []string{"write"}, Rate: 100, Concurrency: 3, DrainTimeout: 100 * time.Millisecond, Classify: classify}, block)
	if time.Since(start) > 2*time.Second {
		t.Fatalf("drain took %v", time.Since(start))
	}
	checkAccounting(t, sum)
	w, _ := sum.Op("write")
	if w.Errors["cancelled"] != 3 {
		t.Fatalf("cancelled %d, want the 3 in flight (%+v)", w.Errors["cancelled"], w)
	}
}

func TestLatencyJSONLRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), results.FileLatency)
	wr, err := results.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	var sinkErr error
	fn := func(_ context.Context, _ int, seq uint64) error {
		time.Sleep(time.Duration(seq%5) * 100 * time.Microsecond)
		return nil
	}
	sum, _ := runFor(t, 600*time.Millisecond, Config{Ops: []string{"write", "read"}, Rate: 1000, Interval: 100 * time.Millisecond,
		Sink: func(r results.LatencyRecord) {
			if err := wr.Write(r); err != nil && sinkErr == nil {
				sinkErr = err
			}
		}}, fn)
	if sinkErr != nil {
		t.Fatal(sinkErr)
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []results.LatencyRecord
	if err := results.ReadJSONL(path, func(_ int, r *results.LatencyRecord) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	win, err := results.MergeWindow(recs, time.Time{}, time.Time{}, "write")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sum.Op("write")
	if win.Count != w.Succeeded || win.Response.TotalCount() != w.Succeeded {
		t.Fatalf("merged %d / hdr %d, summary %d", win.Count, win.Response.TotalCount(), w.Succeeded)
	}
	// Merging every interval reproduces the whole run's percentiles exactly.
	if got := results.SummarizeHDR(win.Response); got != w.Response {
		t.Fatalf("merged %+v != cumulative %+v", got, w.Response)
	}
}

func TestPanickingOperationIsAnError(t *testing.T) {
	fn := func(_ context.Context, _ int, seq uint64) error {
		if seq == 3 {
			panic("boom")
		}
		return nil
	}
	sum, _ := runFor(t, 100*time.Millisecond, Config{Ops: []string{"write"}, Rate: 200}, fn)
	checkAccounting(t, sum)
	if sum.Errors != 1 {
		t.Fatalf("errors %d, want the one panic", sum.Errors)
	}
}

// While the pool is stuck the dispatcher falls behind the schedule; the
// operations it had not reached when the run ends still count as intended.
func TestBacklogAtTheEndIsCounted(t *testing.T) {
	release := make(chan struct{})
	fn := func(ctx context.Context, _ int, _ uint64) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	go func() { time.Sleep(900 * time.Millisecond); close(release) }()
	sum, _ := runFor(t, time.Second, Config{Ops: []string{"write"}, Rate: 5000, Concurrency: 2, MaxLag: 10 * time.Second}, fn)
	checkAccounting(t, sum)
	// Operations 0..5000 are intended in [0, 1 s].
	if sum.Intended < 4900 {
		t.Fatalf("intended %d at 5000/s over 1 s", sum.Intended)
	}
}

// The achieved rate is over the schedule, not over the drain of the
// operations still in flight when it stopped.
func TestAchievedRateExcludesDrain(t *testing.T) {
	slow := func(ctx context.Context, _ int, _ uint64) error {
		select {
		case <-time.After(400 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	sum, _ := runFor(t, time.Second, Config{Ops: []string{"write"}, Rate: 200, Concurrency: 200}, slow)
	checkAccounting(t, sum)
	if sum.End.Sub(sum.Start) < 1300*time.Millisecond {
		t.Fatalf("the run took %v: the last operations were not drained", sum.End.Sub(sum.Start))
	}
	// Including the 400 ms drain would give ~140 ops/s.
	if math.Abs(sum.AchievedRate-200) > 10 {
		t.Fatalf("achieved %.1f ops/s at 200/s", sum.AchievedRate)
	}
}

// Operations started on time at a fixed rate give exactly that rate: the
// operation due at the very end of the run is not an extra one (divided by
// the time to Stopped it was: +0.5% here, +0.1% for 10 s at 100 op/s).
func TestAchievedRateHasNoFencepost(t *testing.T) {
	sum, _ := runFor(t, time.Second, Config{Ops: []string{"write"}, Rate: 200}, noop)
	checkAccounting(t, sum)
	if sum.Dropped > 0 {
		t.Skipf("%d operations dropped: the machine stalled this process for over a second", sum.Dropped)
	}
	if math.Abs(sum.AchievedRate-200) > 0.2 {
		t.Fatalf("achieved %.3f ops/s at 200/s (%d operations, stopped after %v)", sum.AchievedRate, sum.Succeeded, sum.Stopped.Sub(sum.Start))
	}
}

// Workers start on demand: 1 ms operations at 500/s with room for 1,000 in
// flight need a handful of goroutines, not 1,000 (each with a stack gocql
// grows: ~20 MiB of resident memory at concurrency 1,000).
func TestWorkersStartOnDemand(t *testing.T) {
	var peak atomic.Int64
	op := func(ctx context.Context, _ int, _ uint64) error {
		if n := int64(runtime.NumGoroutine()); n > peak.Load() {
			peak.Store(n)
		}
		time.Sleep(time.Millisecond)
		return nil
	}
	base := runtime.NumGoroutine()
	sum, _ := runFor(t, time.Second, Config{Ops: []string{"write"}, Rate: 500, Concurrency: 1000}, op)
	checkAccounting(t, sum)
	if sum.Succeeded < 400 {
		t.Fatalf("%d operations succeeded at 500/s in 1 s", sum.Succeeded)
	}
	if extra := peak.Load() - int64(base); extra > 200 {
		t.Fatalf("%d goroutines for 1 ms operations at 500/s", extra)
	}
	t.Logf("peak goroutines: %d (before the run: %d)", peak.Load(), base)
}

// Every interval carries the loader's own scheduling lag: a process stopped
// for 300 ms (SIGSTOP, SIGCONT) sent everything due meanwhile late, and its
// records say so; a database that is slow for 300 ms is not the loader's lag.
func TestRecordsCarryTheLoadersOwnLag(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stops itself with kill(1)")
	}
	lagOf := func(recs []results.LatencyRecord) float64 {
		var ms float64
		for _, r := range recs {
			if r.Op == "write" { // one figure per interval, on each op's record
				ms += r.LoaderLagMS
			}
		}
		return ms
	}
	cfg := Config{Ops: []string{"write", "read"}, Rate: 1000, Concurrency: 64, Interval: 200 * time.Millisecond}

	stopped := &collect{}
	cfg.Sink = stopped.sink
	go func() {
		time.Sleep(400 * time.Millisecond)
		pid := strconv.Itoa(os.Getpid())
		_ = exec.Command("sh", "-c", "kill -STOP "+pid+"; sleep 0.3; kill -CONT "+pid).Run()
	}()
	sum, _ := runFor(t, 1500*time.Millisecond, cfg, noop)
	ms := lagOf(stopped.all())
	if ms < 250 || ms > 700 {
		t.Errorf("loader lag over a 300 ms stop of the process: %.1f ms, want about 300", ms)
	}
	if math.Abs(sum.LoaderLagMS-ms) > 0.001 || sum.LoaderLagPerSecond() < 100 {
		t.Errorf("summary: loader lag %.3f ms (%.1f ms/s), records %.3f ms", sum.LoaderLagMS, sum.LoaderLagPerSecond(), ms)
	}

	slow := &collect{}
	cfg.Sink = slow.sink
	epoch := time.Now()
	runFor(t, 1500*time.Millisecond, cfg, func(ctx context.Context, _ int, _ uint64) error {
		if e := time.Since(epoch); e >= 400*time.Millisecond && e < 700*time.Millisecond {
			time.Sleep(700*time.Millisecond - e)
		}
		return nil
	})
	if ms := lagOf(slow.all()); ms > 150 {
		t.Errorf("loader lag %.1f ms while the database (not the loader) was slow for 300 ms", ms)
	}
}
