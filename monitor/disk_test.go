package monitor

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/cluster/fakescylla"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

var fakePorts = fakescylla.Ports{REST: 19200, Metrics: 19280, NodeExporter: 19291}

func fakeNodes(t *testing.T, base int) (*fakescylla.Cluster, []*cluster.Node) {
	fc := fakescylla.New()
	t.Cleanup(fc.Close)
	var nodes []*cluster.Node
	for i := 1; i <= 3; i++ {
		addr := "127.0.4." + itoa(base+i)
		err := fc.Start(addr, fakePorts, func(n *fakescylla.Node) {
			switch i {
			case 1:
				n.DiskSize, n.DiskAvail = 100e9, 10e9
				n.Metrics = map[string]float64{"scylla_reactor_stalls": 5, "scylla_tablets_count": 64, "scylla_other": 1}
				n.CPUSeconds = []map[string]float64{{"user": 60, "system": 20, "idle": 15, "steal": 5}, {"user": 50, "idle": 47, "steal": 3}}
			case 2:
				n.Load = 40e9 // no filesystem series: REST fallback
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &cluster.Node{Node: provision.Node{Name: "node-" + itoa(i), Address: addr, Rack: "rack" + itoa(i),
			InstanceType: "i4i.large", RESTPort: fakePorts.REST, MetricsPort: fakePorts.Metrics, NodeExporterPort: fakePorts.NodeExporter}, DiskBytes: 100e9})
	}
	fc.Stop("127.0.4." + itoa(base+3)) // node-3 does not answer
	return fc, nodes
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDiskMonitorSnapshot(t *testing.T) {
	_, nodes := fakeNodes(t, 50)
	path := filepath.Join(t.TempDir(), results.FileMetrics)
	w, err := results.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	m := NewDiskMonitor(func() []*cluster.Node { return nodes }, w, time.Second)
	m.Timeout = time.Second
	perNode, total, err := m.Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "node-3") {
		t.Fatalf("err = %v, want node-3 named", err)
	}
	if len(perNode) != 2 {
		t.Fatalf("nodes = %+v", perNode)
	}
	n1, n2 := perNode[0], perNode[1]
	if n1.Node != "node-1" || n1.TotalGB != 100 || n1.UsedGB != 90 || n1.AvailGB != 10 || n1.UsagePercent != 90 || n1.Rack != "rack1" {
		t.Fatalf("node-1 = %+v", n1)
	}
	if n2.Node != "node-2" || n2.UsedGB != 40 || n2.UsagePercent != 40 {
		t.Fatalf("node-2 = %+v", n2)
	}
	if total.Node != "cluster" || total.TotalGB != 200 || total.UsedGB != 130 || math.Abs(total.UsagePercent-65) > 1e-9 {
		t.Fatalf("cluster = %+v", total)
	}
	if p := m.ClusterUsagePercent(); math.Abs(p-65) > 1e-9 {
		t.Fatalf("ClusterUsagePercent = %v", p)
	}
	// The fill stops on the fullest node (90%), not the average (65%).
	if p := m.MaxUsagePercent(); math.Abs(p-90) > 1e-9 {
		t.Fatalf("MaxUsagePercent = %v, want node-1's 90", p)
	}
	latest := m.Latest()
	if len(latest) != 2 || latest[0].Source != results.DiskSourceNodeExporter || latest[1].Source != results.DiskSourceRESTLoadFallback {
		t.Fatalf("latest = %+v", latest)
	}
	if latest[0].Metrics["reactor_stalls"] != 5 || latest[0].Metrics["tablets_count"] != 64 || len(latest[0].Metrics) != 2 {
		t.Fatalf("metrics = %v", latest[0].Metrics)
	}
	// node_cpu_seconds_total summed over the CPUs: steal, and all modes.
	if s := latest[0]; s.CPUStealSeconds != 8 || s.CPUSeconds != 200 {
		t.Fatalf("node-1 CPU: steal %v of %v s, want 8 of 200", s.CPUStealSeconds, s.CPUSeconds)
	}
	if s := latest[1]; s.CPUSeconds != 0 {
		t.Fatalf("node-2 has no node_cpu series and got %v CPU seconds", s.CPUSeconds)
	}
	w.Close()
	var lines []results.NodeSample
	if err := results.ReadJSONL(path, func(_ int, s *results.NodeSample) error { lines = append(lines, *s); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[2].Error == "" {
		t.Fatalf("metrics.jsonl = %+v", lines)
	}
}

func TestDiskMonitorRun(t *testing.T) {
	_, nodes := fakeNodes(t, 60)
	path := filepath.Join(t.TempDir(), results.FileMetrics)
	w, _ := results.OpenJSONL(path)
	m := NewDiskMonitor(func() []*cluster.Node { return nodes[:2] }, w, 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 450*time.Millisecond)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n < 6 {
		t.Fatalf("%d samples written, want >= 6", n)
	}
}

func TestParseMetricsMountpoint(t *testing.T) {
	text := `# TYPE node_filesystem_size_bytes gauge
node_filesystem_size_bytes{mountpoint="/"} 1
node_filesystem_size_bytes{mountpoint="/var/lib/scylla"} 1000
# TYPE scylla_reactor_utilization gauge
scylla_reactor_utilization{shard="0"} 50
scylla_reactor_utilization{shard="1"} 70
`
	fams, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := fsValue(fams["node_filesystem_size_bytes"]); !ok || v != 1000 {
		t.Fatalf("size = %v %v", v, ok)
	}
	if got := pick(fams); got["reactor_utilization"] != 60 || got[results.SampleReactorUtilizationBusiest] != 70 {
		t.Fatalf("picked %v", got)
	}
}

// Where node_exporter cannot be read and the backend reads the disk from
// inside the node (docker: df in the container), that is the figure and
// its source, never REST load; a failed read is the sample's error.
func TestDiskMonitorInside(t *testing.T) {
	_, nodes := fakeNodes(t, 70)
	m := NewDiskMonitor(func() []*cluster.Node { return nodes[:2] }, nil, time.Second)
	m.Timeout = time.Second
	var asked []string
	m.Inside = func(ctx context.Context, n *cluster.Node) (provision.DiskUsage, error) {
		asked = append(asked, n.Name)
		return provision.DiskUsage{TotalBytes: 2e9, UsedBytes: 5e8, AvailBytes: 1.5e9, Source: results.DiskSourceContainerDF}, nil
	}
	latest := m.SampleAll(context.Background())
	if len(latest) != 2 || latest[0].Source != results.DiskSourceNodeExporter || latest[1].Source != results.DiskSourceContainerDF ||
		latest[1].DiskTotalBytes != 2e9 || latest[1].DiskUsedBytes != 5e8 || strings.Join(asked, ",") != "node-2" {
		t.Fatalf("samples %+v, asked %v", latest, asked)
	}
	m.Inside = func(ctx context.Context, n *cluster.Node) (provision.DiskUsage, error) {
		return provision.DiskUsage{}, errors.New("docker exec node-2 df: container is paused")
	}
	s := m.Sample(context.Background(), nodes[1])
	if s.Source != "" || !strings.Contains(s.Error, "container is paused") || s.DiskTotalBytes != 0 {
		t.Fatalf("failed read: %+v", s)
	}
}
