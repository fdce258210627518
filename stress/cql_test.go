package stress

import (
	"context"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/elasticity-dev/elasticity/results"
)

// session connects to a single-node CQL server on b.
func session(t testing.TB, b engine.Backend) *gocql.Session {
	t.Helper()
	hp := enginetest.StartServer(t, "127.0.3.2:0", b)
	host, port, _ := net.SplitHostPort(hp)
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := NewSession(ctx, SessionConfig{Hosts: []string{host}, Port: p, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := CreateSchema(ctx, s, Schema{Keyspace: "ks", Table: "kv", RF: 1}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Fill, then a mixed workload reading the filled keys, written to
// latency.jsonl and read back.
func TestCQLFillThenWorkload(t *testing.T) {
	s := session(t, enginetest.NewMemory("test"))
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), results.FileLatency)
	out, err := results.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	sink := func(r results.LatencyRecord) {
		if err := out.Write(r); err != nil {
			t.Error(err)
		}
	}
	var written atomic.Int64
	n, err := RunFill(ctx, s, Fill{Keyspace: "ks", Table: "kv", ValueSize: 100, Concurrency: 16, CheckEvery: 20 * time.Millisecond},
		func() bool { return written.Load() >= 2000 }, sink, func(w int64) { written.Store(w) })
	if err != nil {
		t.Fatal(err)
	}
	if n < 2000 || written.Load() != n {
		t.Fatalf("fill: %d keys issued, %d written", n, written.Load())
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sum, err := Run(rctx, s, Workload{Keyspace: "ks", Table: "kv", WriteRatio: 1, ReadRatio: 1, Rate: 1000, Concurrency: 32,
		KeyCount: n, ValueMin: 50, ValueMax: 150, Distribution: "gaussian", Interval: 500 * time.Millisecond}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if sum.Errors != 0 || sum.Dropped != 0 || sum.ReadMisses != 0 {
		t.Fatalf("errors %d dropped %d misses %d: %+v", sum.Errors, sum.Dropped, sum.ReadMisses, sum.Ops)
	}
	// The run ends when its context's timer fires, late on a loaded machine: compare with its real length.
	want := sum.Stopped.Sub(sum.Start).Seconds() * 1000
	if math.Abs(float64(sum.Intended)-want) > 0.01*want+5 || sum.Intended != sum.Succeeded {
		t.Fatalf("intended %d succeeded %d in %.3f s at 1000/s", sum.Intended, sum.Succeeded, want/1000)
	}
	var recs []results.LatencyRecord
	if err := results.ReadJSONL(path, func(_ int, r *results.LatencyRecord) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{results.OpFill, results.OpWrite, results.OpRead} {
		w, err := results.MergeWindow(recs, time.Time{}, time.Time{}, op)
		if err != nil {
			t.Fatal(err)
		}
		if w.Count == 0 || w.Response.TotalCount() != w.Count {
			t.Fatalf("%s: count %d, histogram %d", op, w.Count, w.Response.TotalCount())
		}
	}
}

// A backend that blocks every request for 1 s mid-run: the response time
// shows the stall, the service time of the bounded pool does not, and every
// intended operation is accounted for.
func TestCQLStallShowsInResponseTime(t *testing.T) {
	var stallFrom, stallTo atomic.Int64 // unix nanos
	block := func() {
		now := time.Now().UnixNano()
		if now >= stallFrom.Load() && now < stallTo.Load() {
			time.Sleep(time.Duration(stallTo.Load() - now))
		}
	}
	b := &enginetest.Faulty{Backend: enginetest.NewMemory("stall"),
		WriteErr: func([]engine.Mutation, engine.Consistency) error { block(); return nil },
		ReadErr:  func(engine.Read, engine.Consistency) error { block(); return nil },
	}
	s := session(t, b)
	t0 := time.Now()
	stallFrom.Store(t0.Add(1500 * time.Millisecond).UnixNano())
	stallTo.Store(t0.Add(2500 * time.Millisecond).UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	var recs []results.LatencyRecord
	sum, err := Run(ctx, s, Workload{Keyspace: "ks", Table: "kv", WriteRatio: 1, ReadRatio: 1, Rate: 1000, Concurrency: 8,
		KeyCount: 1000, ValueMin: 100, MaxLag: 2 * time.Second},
		func(r results.LatencyRecord) { recs = append(recs, r) })
	if err != nil {
		t.Fatal(err)
	}
	if sum.Intended != sum.Succeeded+sum.Errors+sum.Dropped {
		t.Fatalf("intended %d != %d + %d + %d", sum.Intended, sum.Succeeded, sum.Errors, sum.Dropped)
	}
	if sum.Intended < 3900 {
		t.Fatalf("intended %d in 4 s at 1000/s", sum.Intended)
	}
	win, err := results.MergeWindow(recs, time.Time{}, time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	resp, svc := results.SummarizeHDR(win.Response), results.SummarizeHDR(win.Service)
	t.Logf("response %+v", resp)
	t.Logf("service  %+v", svc)
	if resp.P99 < 500 {
		t.Fatalf("response p99 %.1f ms hides a 1 s stall", resp.P99)
	}
	if svc.P99 > 100 {
		t.Fatalf("service p99 %.1f ms: only the 8 in-flight operations were stalled", svc.P99)
	}
}

// BenchmarkCQLNull is the whole client path per operation (generator, gocql,
// loopback, CQL front end) against a do-nothing backend, closed loop:
//
//	go test -run '^$' -bench CQLNull -benchtime 20000x ./stress/
func BenchmarkCQLNull(b *testing.B) {
	benchClosedLoop(b, session(b, enginetest.NewNull()), false)
}

// benchClosedLoop measures writes and reads through s, closed loop with 32 in
// flight; withCPU adds the process's CPU per operation (meaningful when the
// server runs in another process).
func benchClosedLoop(b *testing.B, s *gocql.Session, withCPU bool) {
	for _, typ := range []string{"write", "read"} {
		b.Run(typ, func(b *testing.B) {
			w := Workload{Keyspace: "ks", Table: "kv", KeyCount: 1000, ValueMin: 100, Concurrency: 32}
			if typ == "write" {
				w.WriteRatio = 1
			} else {
				w.ReadRatio = 1
			}
			op, _, err := w.bind(context.Background(), s)
			if err != nil {
				b.Fatal(err)
			}
			n := int64(max(b.N, 100))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var done atomic.Int64
			counted := func(ctx context.Context, t int, seq uint64) error {
				err := op(ctx, t, seq)
				if done.Add(1) == n {
					cancel()
				}
				return err
			}
			r, err := newRunner(w, counted, new(atomic.Int64), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			c0, s0, t0 := cpuNow(), procCPU(serverPID), time.Now()
			sum, err := r.Run(ctx)
			el, cpu, srv := time.Since(t0), cpuNow()-c0, procCPU(serverPID)-s0
			b.StopTimer()
			if err != nil || sum.Errors > 0 {
				b.Fatalf("%v %+v", err, sum.Ops)
			}
			b.ReportMetric(float64(sum.Succeeded)/el.Seconds(), "ops/s")
			if withCPU {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(sum.Succeeded), "client-cpu-ns/op")
				if serverPID != 0 {
					b.ReportMetric(float64(srv.Nanoseconds())/float64(sum.Succeeded), "server-cpu-ns/op")
				}
			}
		})
	}
}
