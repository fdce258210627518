package node

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func startTestNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	cfg.ClusterName, cfg.ListenAddress, cfg.DataDir = "test", "127.0.0.1", t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func scrapeNode(t *testing.T, n *Node) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	n.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// scylla_reactor_stalls is a histogram aggregated over shards, absent until
// the first stall (Seastar src/core/reactor.cc: make_histogram("stalls", ...)
// .aggregate({shard_label}).set_skip_when_empty()), in microseconds with
// time_estimated_histogram's buckets (estimated_histogram.hh);
// scylla_stall_detector_reported is a per-shard counter of printed reports
// (cpu_stall_detector's "stall_detector" group). Reports are raw lines.
func TestStallMetricsAndRawReports(t *testing.T) {
	var log syncBuf
	n := startTestNode(t, Config{VCPUs: 2, InternodePort: 17911, StallThreshold: 20 * time.Millisecond, OpsPerVCPU: 1000,
		Log: scyllalog.New(&log)})
	fams := scrapeNode(t, n)
	if f := fams["scylla_reactor_stalls"]; f != nil {
		t.Fatalf("scylla_reactor_stalls exported before any stall: %v", f)
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		n.cap.Do(context.Background(), 1, 1)
	}()
	if err := n.cap.Batch(context.Background(), 1, 100); err != nil { // 100 ms: reports at 26 and 72 ms
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	fams = scrapeNode(t, n)
	h := fams["scylla_reactor_stalls"]
	if h == nil || h.GetType() != dto.MetricType_HISTOGRAM || len(h.Metric) != 1 {
		t.Fatalf("scylla_reactor_stalls = %v", h)
	}
	hm := h.Metric[0]
	for _, l := range hm.Label {
		if l.GetName() == "shard" {
			t.Errorf("histogram has a shard label (Seastar aggregates it away)")
		}
	}
	b := hm.Histogram.Bucket // 64 bounds, then +Inf
	// (The runtime-pause watchdog may add stalls of shard 0 on a busy machine.)
	if hm.Histogram.GetSampleCount() < 1 || len(b) != 65 || b[0].GetUpperBound() != 640 || b[63].GetUpperBound() != 33554432 {
		t.Fatalf("histogram count %d, %d buckets %v..%v", hm.Histogram.GetSampleCount(), len(b), b[0].GetUpperBound(), b[len(b)-1].GetUpperBound())
	}
	if s := hm.Histogram.GetSampleSum(); s < 100000 {
		t.Errorf("sum %v us, want at least the 100000 of the batch", s)
	}
	c := fams["scylla_stall_detector_reported"]
	if c == nil || c.GetType() != dto.MetricType_COUNTER || len(c.Metric) != 2 {
		t.Fatalf("scylla_stall_detector_reported = %v", c)
	}
	for _, m := range c.Metric {
		if m.Label[0].GetValue() == "1" && m.Counter.GetValue() != 2 {
			t.Errorf("shard 1: %v reported, want 2", m.Counter.GetValue())
		}
	}
	var reports []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "Reactor stalled") && strings.Contains(l, "on shard 1,") {
			reports = append(reports, l)
		}
	}
	if len(reports) != 2 || !strings.HasPrefix(reports[0], "Reactor stalled for 26 ms on shard 1, in scheduling group compaction. Backtrace: 0x") ||
		!strings.HasPrefix(reports[1], "Reactor stalled for 72 ms on shard 1,") {
		t.Errorf("raw reports %q", reports)
	}
}
