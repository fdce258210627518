package node

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// node_filesystem_* come from node_exporter, which ScyllaDB's images run
// beside scylla on port 9100 (scylladb/scylladb dist/docker/etc/
// supervisord.conf.d/scylla-node-exporter.conf); ScyllaDB's own metrics
// (9180) have no node_* series.
func TestNodeExporterSeparateFromScyllaMetrics(t *testing.T) {
	n := startTestNode(t, Config{VCPUs: 1, InternodePort: 17912, DiskBytes: 64 << 20})
	for name := range scrapeNode(t, n) {
		if strings.HasPrefix(name, "node_") {
			t.Errorf("%s on ScyllaDB's metrics", name)
		}
	}
	rec := httptest.NewRecorder()
	n.NodeExporterHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node_filesystem_size_bytes", "node_filesystem_avail_bytes"} {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s = %v", name, f)
		}
		m := f.Metric[0]
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["mountpoint"] != "/var/lib/scylla" || labels["device"] == "" || labels["fstype"] == "" {
			t.Errorf("%s labels %v", name, labels)
		}
		v := m.Gauge.GetValue()
		if name == "node_filesystem_size_bytes" && v != 64<<20 {
			t.Errorf("size %v, want the emulated 64 MiB", v)
		}
		if name == "node_filesystem_avail_bytes" && (v <= 0 || v > 64<<20) {
			t.Errorf("avail %v", v)
		}
	}
	// The cpu collector: the machine's CPU time per CPU and mode, steal
	// among them (what a report's CPU steal is computed from).
	steal := 0
	for _, m := range fams["node_cpu_seconds_total"].GetMetric() {
		for _, l := range m.Label {
			if l.GetName() == "mode" && l.GetValue() == "steal" && m.Counter != nil {
				steal++
			}
		}
	}
	if steal == 0 {
		t.Errorf("no node_cpu_seconds_total{mode=\"steal\"} counter on node_exporter's port")
	}
}
