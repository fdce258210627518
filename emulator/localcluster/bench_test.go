package localcluster

import (
	"context"
	crand "crypto/rand"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// BenchmarkWriteThroughput measures sustained QUORUM writes of 1 KiB values
// at RF=3 on 3 local node processes (the capacity model set far above what
// the host can do, so the host is measured). It reports rows/s and
// replica writes/s (rows × RF).
func BenchmarkWriteThroughput(b *testing.B) { benchWrites(b, 128, "1000000") }

// BenchmarkWriteLatency is one client writing sequentially at the default
// capacity model: ns/op is the QUORUM write latency through the driver.
func BenchmarkWriteLatency(b *testing.B) { benchWrites(b, 1, "2000") }

// BenchmarkWriteLatencyUnmodelled is the same without the capacity model's
// service time: the host's own per-request latency.
func BenchmarkWriteLatencyUnmodelled(b *testing.B) { benchWrites(b, 1, "1000000") }

func benchWrites(b *testing.B, workers int, opsPerVCPU string) {
	exe, _ := os.Executable()
	opts := Options{Binary: exe, Env: []string{nodeEnv + "=1"}, Nodes: 3, Racks: 3, Dir: b.TempDir(), BaseAddress: "127.0.144.15",
		StartTimeout: 30 * time.Second, ExtraNodeArgs: []string{"--initial-tablets", "16", "--ops-per-vcpu", opsPerVCPU, "--disk-gb", "0"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, s := startBenchCluster(ctx, b, opts, 2)
	value := make([]byte, 1024)
	crand.Read(value)
	var next atomic.Int64
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1)
				if k > int64(b.N) {
					return
				}
				if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, k, value).Consistency(gocql.Quorum).Exec(); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/el, "rows/s")
	b.ReportMetric(3*float64(b.N)/el, "replica-writes/s")
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d writes failed", f)
	}
}

// startBenchCluster starts a benchmark's three nodes (with a CPU profile when
// BENCH_NODE_PROFILE is set), opens a token-aware session with conns
// connections per host and creates ks.t at RF=3; both close with b.
func startBenchCluster(ctx context.Context, b *testing.B, opts Options, conns int) (*Cluster, *gocql.Session) {
	b.Helper()
	if p := os.Getenv("BENCH_NODE_PROFILE"); p != "" {
		opts.ExtraNodeArgs = append(opts.ExtraNodeArgs, "--cpu-profile", p)
	}
	c, err := Start(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	cl := gocql.NewCluster(c.Hosts()...)
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cl.Timeout = 10 * time.Second
	cl.NumConns = conns
	s, err := cl.CreateSession()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	for _, q := range []string{`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND tablets = {'enabled': true}`, ddlTable} {
		if err := s.Query(q).Exec(); err != nil {
			b.Fatal(err)
		}
	}
	return c, s
}
