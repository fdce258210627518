package stress

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

func TestFillStopsWhenDone(t *testing.T) {
	var keys sync.Map
	op := func(_ context.Context, _ int, seq uint64) error {
		keys.Store(seq, true)
		time.Sleep(100 * time.Microsecond)
		return nil
	}
	var recs atomic.Int64
	var lastProgress atomic.Int64
	var calls atomic.Int64
	n, err := runFill(context.Background(), Fill{Concurrency: 4, CheckEvery: 20 * time.Millisecond, Interval: 50 * time.Millisecond}, op,
		func() bool { return calls.Add(1) >= 5 },
		func(r results.LatencyRecord) {
			if r.Op != results.OpFill {
				t.Errorf("record op %q", r.Op)
			}
			recs.Add(r.Count)
		},
		func(w int64) { lastProgress.Store(w) })
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || recs.Load() != n || lastProgress.Load() != n {
		t.Fatalf("wrote %d keys, records count %d, progress %d", n, recs.Load(), lastProgress.Load())
	}
	for i := uint64(0); i < uint64(n); i++ {
		if _, ok := keys.Load(i); !ok {
			t.Fatalf("key %d of [0,%d) never written", i, n)
		}
	}
}

func TestFillRateCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	n, err := runFill(ctx, Fill{RateCap: 1000}, func(context.Context, int, uint64) error { return nil }, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n < 450 || n > 600 { // the 0.5 s timer fires late on a loaded machine
		t.Fatalf("%d writes in 0.5 s at a cap of 1000/s", n)
	}
}

func TestFillGivesUpWhenNothingSucceeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := runFill(ctx, Fill{Concurrency: 2, Interval: 50 * time.Millisecond, CheckEvery: 10 * time.Millisecond, GiveUpAfter: 200 * time.Millisecond},
		func(context.Context, int, uint64) error {
			time.Sleep(time.Millisecond)
			return errors.New("write failed: No space left on device")
		}, nil, nil, nil)
	if !errors.Is(err, ErrFillStalled) || !strings.Contains(err.Error(), ErrNoSpace) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("gave up after %v", time.Since(start))
	}
}

// kneeAt8 is a fake server that answers in 2 ms up to 8 operations in
// flight and in 300 ms beyond, and a mixed workload for it. (Latencies are
// far from a 150 ms ceiling on either side so that a loaded test machine
// does not move the knee.)
func kneeAt8(t *testing.T) (sched.Op, Workload) {
	t.Helper()
	var inflight atomic.Int64
	op := func(ctx context.Context, _ int, _ uint64) error {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		d := 2 * time.Millisecond
		if n > 8 {
			d = 300 * time.Millisecond
		}
		time.Sleep(d)
		return nil
	}
	w := Workload{Keyspace: "ks", Table: "t", WriteRatio: 1, ReadRatio: 1}
	if err := w.normalise(); err != nil {
		t.Fatal(err)
	}
	return op, w
}

// The probe must stop at 16 and report the throughput of a level at or
// below 8.
func TestCalibrateFindsTheKnee(t *testing.T) {
	op, w := kneeAt8(t)
	var steps []CalibrationStep
	cal, err := calibrate(context.Background(), w, op, CalibrateOptions{
		Ceiling: 150 * time.Millisecond, Step: 400 * time.Millisecond, MaxConcurrency: 64,
		Progress: func(s CalibrationStep) { steps = append(steps, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Steps) != len(steps) {
		t.Fatalf("steps %+v", steps)
	}
	last := cal.Steps[len(cal.Steps)-1]
	if last.OK || last.Concurrency != 16 {
		t.Fatalf("probe stopped at %+v, want a failed level at 16 (%+v)", last, cal.Steps)
	}
	if cal.Concurrency < 4 || cal.Concurrency > 8 || cal.MaxOpsPerSec < 300 || cal.MaxOpsPerSec > 4100 {
		t.Fatalf("calibrated %.0f ops/s at concurrency %d (%+v)", cal.MaxOpsPerSec, cal.Concurrency, cal.Steps)
	}
	if cal.Stop != StopCeiling || cal.LowerBound() {
		t.Fatalf("stop %q, want %q (saturated)", cal.Stop, StopCeiling)
	}
}

// A probe that starts near the knee measures only the levels around it:
// from 4 it goes up to 8 and stops at 16; from 32 it comes down to 8. It
// finds the knee a probe from 1 finds, in fewer levels.
func TestCalibrateFromAStartingConcurrency(t *testing.T) {
	op, w := kneeAt8(t)
	for _, c := range []struct {
		start  int
		levels []int
	}{{4, []int{4, 8, 16}}, {32, []int{32, 16, 8}}, {8, []int{8, 16}}} {
		cal, err := calibrate(context.Background(), w, op, CalibrateOptions{
			Ceiling: 150 * time.Millisecond, Step: 400 * time.Millisecond, MaxConcurrency: 64, StartConcurrency: c.start})
		if err != nil {
			t.Fatalf("from %d: %v", c.start, err)
		}
		var levels []int
		for _, st := range cal.Steps {
			levels = append(levels, st.Concurrency)
		}
		if !slices.Equal(levels, c.levels) {
			t.Errorf("from %d: levels %v, want %v (%+v)", c.start, levels, c.levels, cal.Steps)
		}
		if cal.Concurrency != 8 || cal.Stop != StopCeiling || cal.MaxOpsPerSec < 300 {
			t.Errorf("from %d: calibrated %.0f ops/s at concurrency %d, stop %q; want the knee at 8", c.start, cal.MaxOpsPerSec, cal.Concurrency, cal.Stop)
		}
	}
	// Nothing passes: it comes down to 1 and fails.
	slow := func(context.Context, int, uint64) error { time.Sleep(200 * time.Millisecond); return nil }
	cal, err := calibrate(context.Background(), w, slow, CalibrateOptions{Ceiling: 50 * time.Millisecond, Step: 400 * time.Millisecond, StartConcurrency: 4})
	if err == nil || len(cal.Steps) != 3 || cal.Steps[2].Concurrency != 1 {
		t.Errorf("nothing under the ceiling from 4: %v, %+v", err, cal.Steps)
	}
}

func TestCalibrateNeedsACeiling(t *testing.T) {
	_, err := calibrate(context.Background(), Workload{}, func(context.Context, int, uint64) error { return nil }, CalibrateOptions{})
	if err == nil {
		t.Fatal("no error without a ceiling")
	}
}

func TestWorkloadRunnerWithFakeOp(t *testing.T) {
	w := Workload{Keyspace: "ks", Table: "t", WriteRatio: 1, ReadRatio: 3, Rate: 1000, Concurrency: 8}
	if err := w.normalise(); err != nil {
		t.Fatal(err)
	}
	var reads, writes atomic.Int64
	op := func(_ context.Context, typ int, _ uint64) error {
		if typ == opRead {
			reads.Add(1)
		} else {
			writes.Add(1)
		}
		return nil
	}
	r, err := newRunner(w, op, new(atomic.Int64), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	sum, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Intended != sum.Succeeded || sum.Succeeded != reads.Load()+writes.Load() {
		t.Fatalf("%+v", sum)
	}
	if share := float64(reads.Load()) / float64(sum.Succeeded); math.Abs(share-0.75) > 0.08 {
		t.Fatalf("read share %.2f for write=1,read=3", share)
	}
}

func TestWorkloadValidation(t *testing.T) {
	for _, w := range []Workload{
		{Keyspace: "ks", Table: "t"},
		{Keyspace: "k s", Table: "t", WriteRatio: 1},
		{Keyspace: "ks", Table: "t;drop", WriteRatio: 1},
		{Keyspace: "ks", Table: "t", WriteRatio: -1, ReadRatio: 2},
		{Keyspace: "ks", Table: "t", WriteRatio: 1, KeyCount: -5},
	} {
		if err := w.normalise(); err == nil {
			t.Fatalf("%+v accepted", w)
		}
	}
}

func TestSchemaStatements(t *testing.T) {
	st, err := Schema{Keyspace: "ks", Table: "kv", RF: 3, DC: "dc1", Tablets: 16}.Statements()
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND tablets = {'initial': 16}"
	if st[0] != want || st[1] != "CREATE TABLE IF NOT EXISTS ks.kv (key bigint PRIMARY KEY, value blob)" {
		t.Fatalf("%q", st)
	}
	st, _ = Schema{Keyspace: "ks", Table: "kv", RF: 1, DC: "dc1", Tablets: -1}.Statements()
	if !strings.HasSuffix(st[0], "AND tablets = {'enabled': false}") {
		t.Fatalf("%q", st[0])
	}
	if _, err := (Schema{Keyspace: "ks", Table: "kv", RF: 0, DC: "dc1"}).Statements(); err == nil {
		t.Fatal("RF 0 accepted")
	}
}

type fakeReqErr struct{ code int }

func (e fakeReqErr) Code() int       { return e.code }
func (e fakeReqErr) Message() string { return "x" }
func (e fakeReqErr) Error() string   { return fmt.Sprintf("request error %#x", e.code) }

func TestClassifyError(t *testing.T) {
	cases := map[string]error{
		ErrTimeout:      fmt.Errorf("op: %w", gocql.ErrTimeoutNoResponse),
		ErrCancelled:    context.Canceled,
		ErrNoConnection: gocql.ErrNoConnections,
		ErrOverloaded:   fakeReqErr{gocql.ErrCodeOverloaded},
		ErrUnavailable:  &gocql.RequestErrUnavailable{},
		ErrNoSpace:      errors.New("storage: No space left on device"),
		ErrOther:        errors.New("boom"),
	}
	cases[ErrTimeout+"2"] = &gocql.RequestErrWriteTimeout{}
	for want, err := range cases {
		if got := ClassifyError(err); got != strings.TrimSuffix(want, "2") {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}

var _ sched.Op = func(context.Context, int, uint64) error { return nil }

func TestCalibrateBudget(t *testing.T) {
	op := func(context.Context, int, uint64) error { time.Sleep(time.Millisecond); return nil }
	w := Workload{Keyspace: "ks", Table: "t", WriteRatio: 1}
	if err := w.normalise(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cal, err := calibrate(context.Background(), w, op, CalibrateOptions{Ceiling: time.Second, Step: 100 * time.Millisecond, Budget: 350 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Steps) != 3 || time.Since(start) > 600*time.Millisecond || cal.MaxOpsPerSec <= 0 {
		t.Fatalf("%d levels in %v: %+v", len(cal.Steps), time.Since(start), cal)
	}
	if cal.Stop != StopBudget || !cal.LowerBound() {
		t.Fatalf("stop %q, want %q (a lower bound)", cal.Stop, StopBudget)
	}
	// A budget of whole steps runs that many levels: each level's set-up
	// takes a little more than its step, and with no slack for it a
	// budget of 4 steps ran 3 (the local main job probed concurrency 1..8
	// in a budget sized for 1..16). Steps of 250 ms leave each level
	// 40 ms of set-up on a loaded machine (with 100 ms steps a busy CI
	// machine's set-up alone ended the budget after 3).
	cal, err = calibrate(context.Background(), w, op, CalibrateOptions{Ceiling: time.Second, Step: 250 * time.Millisecond, Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Steps) != 4 || cal.Stop != StopBudget {
		t.Fatalf("a budget of 4 steps ran %d levels (stop %q): %+v", len(cal.Steps), cal.Stop, cal.Steps)
	}
}

// The summary says how much the load generator itself lagged, and warns
// when that is enough to set the P99 it reports.
func TestSummaryShowsTheLoadGeneratorsLag(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		lagMS float64
		warn  bool
	}{{20, false}, {150, true}} {
		var b strings.Builder
		PrintSummary(&b, Summary{Summary: sched.Summary{Start: start, End: start.Add(10 * time.Second), LoaderLagMS: c.lagMS}})
		out := b.String()
		if want := fmt.Sprintf("load generator lag: %.1f ms/s", c.lagMS/10); !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
		if got := strings.Contains(out, "warning: the load generator itself did not run"); got != c.warn {
			t.Errorf("%.0f ms in 10 s: warning %v, want %v:\n%s", c.lagMS, got, c.warn, out)
		}
	}
}
