package monitor

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/provision"
)

// scyllaCompactions is a ScyllaDB 9180 page with the compaction manager's
// series as Seastar writes them (compaction/compaction_manager.cc,
// register_metrics: one series per shard).
func scyllaCompactions(running ...int) string {
	var b strings.Builder
	b.WriteString("# HELP scylla_compaction_manager_compactions Holds the number of currently active compactions.\n")
	b.WriteString("# TYPE scylla_compaction_manager_compactions gauge\n")
	for s, n := range running {
		b.WriteString("scylla_compaction_manager_compactions{shard=\"" + strconv.Itoa(s) + "\"} " + strconv.Itoa(n) + ".000000\n")
	}
	b.WriteString("# HELP scylla_compaction_manager_completed_compactions Holds the number of completed compaction tasks.\n")
	b.WriteString("# TYPE scylla_compaction_manager_completed_compactions counter\n")
	b.WriteString("scylla_compaction_manager_completed_compactions{shard=\"0\"} 12\n")
	return b.String()
}

// metricsNode serves page at a loopback port and returns the node reading it.
func metricsNode(t *testing.T, name string, page func() string) *cluster.Node {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, page())
	}))
	t.Cleanup(srv.Close)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	return &cluster.Node{Node: provision.Node{Name: name, Address: host, MetricsPort: p}}
}

func TestCompactionsSumsShardsPerNode(t *testing.T) {
	nodes := []*cluster.Node{
		metricsNode(t, "node-1", func() string { return scyllaCompactions(1, 2) }),
		metricsNode(t, "node-2", func() string { return scyllaCompactions(0, 0) }),
	}
	got, err := Compactions(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	if got["node-1"] != 3 || got["node-2"] != 0 || len(got) != 2 {
		t.Fatalf("running = %v, want node-1 3 and node-2 0", got)
	}
	// The disk monitor records the gauge per node in metrics.jsonl.
	fams, err := ParseMetrics(strings.NewReader(scyllaCompactions(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if v := pick(fams)["compaction_manager_compactions"]; v != 3 {
		t.Fatalf("picked compaction_manager_compactions = %v, want 3", v)
	}
}

// A node without the series (an image from before the metric, another
// database) makes the cluster's compactions unknown: ErrNotExported,
// naming it; a node that cannot be read is an ordinary error.
func TestCompactionsNotExported(t *testing.T) {
	old := metricsNode(t, "node-2", func() string {
		return "# TYPE scylla_reactor_utilization gauge\nscylla_reactor_utilization{shard=\"0\"} 3\n"
	})
	nodes := []*cluster.Node{metricsNode(t, "node-1", func() string { return scyllaCompactions(0) }), old}
	got, err := Compactions(context.Background(), nodes)
	var ne *NotExportedError
	if !errors.Is(err, ErrNotExported) || !errors.As(err, &ne) || len(ne.Nodes) != 1 || ne.Nodes[0] != "node-2" || ne.Metric != CompactionsMetric {
		t.Fatalf("err = %v, want ErrNotExported naming node-2", err)
	}
	if got["node-1"] != 0 {
		t.Fatalf("running = %v", got)
	}

	gone := &cluster.Node{Node: provision.Node{Name: "node-3", Address: "127.0.0.1", MetricsPort: 1}}
	got, err = Compactions(context.Background(), []*cluster.Node{nodes[0], gone})
	if err == nil || errors.Is(err, ErrNotExported) || !strings.Contains(err.Error(), "node-3") {
		t.Fatalf("err = %v, want a read error naming node-3", err)
	}
	if _, ok := got["node-1"]; !ok {
		t.Fatalf("running = %v: node-1 was read", got)
	}
}
