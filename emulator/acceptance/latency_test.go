package acceptance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// Latency tests use a low per-vCPU capacity so that saturating the cluster
// costs little real CPU on a shared machine: 3 × i4i.large at 150 ops per
// vCPU is 900 replica operations/s, i.e. 300 writes/s at RF=3.
// Streaming at 2 MiB/s per vCPU keeps a scale-out streaming for seconds.
var latOpts = clusterOpts{StorageScaleMiBPerGB: 0.05, OpsPerVCPU: 150, StreamMiBPerVCPU: 2}

func modelledWriteCapacity(c *tcluster, rf int) float64 {
	vcpus := 0
	for _, n := range c.Nodes {
		vcpus += vcpusOf(n.Type)
	}
	return float64(vcpus) * c.opts.OpsPerVCPU / float64(rf)
}

func writeOp(s *gocql.Session, keys int64) func(ctx context.Context, seq int) error {
	return func(ctx context.Context, seq int) error {
		k := rand.Int64N(keys)
		return s.Query(fmt.Sprintf(`INSERT INTO %s.%s (k, v) VALUES (?, ?)`, keyspace, table), k, value(k)[:256]).
			Consistency(gocql.Quorum).WithContext(ctx).Exec()
	}
}

// TestLatencyAboveCapacity: at 150% of the modelled capacity the client's
// median is many times the median at 50%: the queue grows to the model's
// 2 s limit. Medians, because host noise reaches the tails first: measured
// beside other work and with a busy loop on each of 2 cores, the median at
// 50% was 9.4-12.2 ms and at 150% 0.96-1.02 s (P99 12.9-67.5 ms and about
// 2 s). A model that did not queue above capacity gives a ratio near 1.
func TestLatencyAboveCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs load for ~10 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newCluster(t, latOpts, threeSmall()...)
	s := c.session(t)
	createSchema(t, s, 3, 16)
	capacity := modelledWriteCapacity(c, 3)

	op := writeOp(s, 10000)
	openLoop(ctx, 0.3*capacity, time.Second, 256, op) // warm up connections
	half := openLoop(ctx, 0.5*capacity, 4*time.Second, 256, op)
	t.Logf("50%% of %.0f writes/s: %v", capacity, half)
	over := openLoop(ctx, 1.5*capacity, 4*time.Second, 1024, op)
	t.Logf("150%% of %.0f writes/s: %v", capacity, over)
	if len(half.Lat) < half.Intended*9/10 {
		t.Errorf("at 50%% only %d of %d writes succeeded: %v", len(half.Lat), half.Intended, half.Errors)
	}
	// Failures (Overloaded, timeouts) above capacity are fine; latency of
	// those that succeed must show the queueing.
	if over.P(0.5) < 10*half.P(0.5) {
		t.Errorf("median at 150%% = %v, at 50%% = %v: want many times higher", over.P(0.5), half.P(0.5))
	}
}

// BenchmarkLatencyDuringScaleOut: under load near capacity, the latency
// while one node per rack joins and tablets stream, against the steady
// state's. One node per rack, so that every replica of a write streams:
// with a single rack streaming, QUORUM would mostly hide the slowed
// replica. A benchmark, not a test (issue 45): at 60% of capacity
// streaming's 200 of 1200 shares raise the small nodes' utilization to
// about 72% while the big nodes take replicas over, a rise host noise
// crosses. On an idle machine the P99 during scale-out was once 20.74 ms
// against a steady 20.92 ms; beside other work the steady P99 ranged
// 35-128 ms over three runs and the ratio 2.7-4.6. The mechanism itself
// (streaming's share of a busy shard) is emulator/capacity's
// TestStreamingGetsItsSharesUnderLoad.
func BenchmarkLatencyDuringScaleOut(b *testing.B) {
	for range b.N {
		steady, during := latencyDuringScaleOut(b)
		for _, p := range []struct {
			name string
			q    float64
		}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}} {
			b.ReportMetric(float64(steady.P(p.q))/1e6, "steady_"+p.name+"_ms")
			b.ReportMetric(float64(during.P(p.q))/1e6, "scaleout_"+p.name+"_ms")
			b.ReportMetric(float64(during.P(p.q))/float64(steady.P(p.q)), "scaleout/steady_"+p.name)
		}
	}
}

// latencyDuringScaleOut measures the steady state at 60% of the modelled
// capacity, then the same load while one big node per rack joins, until
// the data is balanced.
func latencyDuringScaleOut(t testing.TB) (steady, during loadResult) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newCluster(t, latOpts, threeSmall()...)
	s := c.session(t)
	createSchema(t, s, 3, 16)
	rows := fillTo(ctx, t, c, s, c.Nodes, 0.6)
	waitNoCompactions(ctx, t, c.Nodes)
	capacity := modelledWriteCapacity(c, 3)
	rate := 0.6 * capacity
	op := writeOp(s, rows)

	steady = openLoop(ctx, rate, 4*time.Second, 512, op)
	t.Logf("steady at %.0f writes/s: %v", rate, steady)

	loadCtx, stopLoad := context.WithCancel(ctx)
	done := make(chan loadResult)
	go func() { done <- openLoop(loadCtx, rate, time.Minute, 512, op) }()
	t0 := time.Now()
	var specs []nodeSpec
	for _, r := range racks {
		specs = append(specs, nodeSpec{Type: big, Rack: r})
	}
	nodes, err := c.add(ctx, specs...)
	if err != nil {
		stopLoad()
		<-done
		t.Fatalf("scale-out under load: %v", err)
	}
	waitBalanced(ctx, t, c.Nodes[0], nodes)
	took := time.Since(t0)
	stopLoad()
	during = <-done
	t.Logf("during scale-out (%v) at %.0f writes/s: %v", took.Round(time.Millisecond), rate, during)
	return steady, during
}

// BenchmarkStreamingJoin moves a known volume to a joining node and
// compares the time until quiesce with what the configured streaming
// bandwidth predicts.
func BenchmarkStreamingJoin(b *testing.B) {
	b.StopTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		c := newCluster(b, scaleOpts, threeSmall()...)
		s := c.session(b)
		createSchema(b, s, 3, 32)
		if err := writeRows(ctx, s, 0, 3000, 16); err != nil { // ~12 MiB per replica
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		// Sample the joining node's incoming bytes to see when streaming
		// actually ran (first to last byte), apart from the join and the
		// balancer's planning.
		var node atomic.Pointer[tnode]
		sampled := make(chan [2]time.Duration, 1)
		sctx, stopSampling := context.WithCancel(ctx)
		go func() {
			var first, last time.Duration
			var prev float64
			for sctx.Err() == nil {
				if nd := node.Load(); nd != nil {
					// Tablet migrations use file streaming, which leaves
					// scylla_streaming_total_incoming_bytes alone: watch the disk.
					if size, avail, err := nd.disk(sctx); err == nil && size-avail > prev {
						v := size - avail
						if prev == 0 {
							first = time.Since(t0)
						}
						prev, last = v, time.Since(t0)
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			sampled <- [2]time.Duration{first, last}
		}()
		nodes, err := c.add(ctx, nodeSpec{Type: big, Rack: "rack1"})
		if err != nil {
			stopSampling()
			b.Fatalf("join: %v", err)
		}
		node.Store(nodes[0])
		waitBalanced(ctx, b, c.Nodes[0], nodes)
		took := time.Since(t0)
		b.StopTimer()
		stopSampling()
		span := <-sampled
		size, avail, err := nodes[0].disk(ctx)
		if err != nil {
			b.Fatal(err)
		}
		in := size - avail
		predicted := predictedStreamTime(c, nodes[0], in)
		b.ReportMetric(in/(1<<20), "MiB_moved")
		b.ReportMetric(took.Seconds(), "s_to_quiesce")
		b.ReportMetric(predicted.Seconds(), "s_predicted")
		b.ReportMetric(took.Seconds()/predicted.Seconds(), "actual/predicted")
		b.ReportMetric((span[1]-span[0]).Seconds()/predicted.Seconds(), "streaming_span/predicted")
		cancel()
	}
}
