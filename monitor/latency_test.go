package monitor

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/elasticity-dev/elasticity/results"
)

// TestCoordinatorLatency: the coordinator latency histograms of a node's
// shards, as its metrics endpoint serves them, are summed bound by bound,
// without the +Inf bucket (the count) and without the bounds past the
// first that holds every sample; a node that serves neither has none.
func TestCoordinatorLatency(t *testing.T) {
	text := `# HELP scylla_storage_proxy_coordinator_write_latency The general write latency histogram
# TYPE scylla_storage_proxy_coordinator_write_latency histogram
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="0",le="640.000000"} 5
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="0",le="1280.000000"} 9
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="0",le="2560.000000"} 10
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="0",le="+Inf"} 10
scylla_storage_proxy_coordinator_write_latency_sum{scheduling_group_name="statement",shard="0"} 9000
scylla_storage_proxy_coordinator_write_latency_count{scheduling_group_name="statement",shard="0"} 10
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="1",le="640.000000"} 1
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="1",le="1280.000000"} 2
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="1",le="2560.000000"} 2
scylla_storage_proxy_coordinator_write_latency_bucket{scheduling_group_name="statement",shard="1",le="+Inf"} 2
scylla_storage_proxy_coordinator_write_latency_sum{scheduling_group_name="statement",shard="1"} 1500
scylla_storage_proxy_coordinator_write_latency_count{scheduling_group_name="statement",shard="1"} 2
`
	fams, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	got := coordinatorLatency(fams)
	if got == nil {
		t.Fatal("no coordinator latency")
	}
	want := results.Histogram{Count: 12, Buckets: []results.Bucket{{LE: 640, N: 6}, {LE: 1280, N: 11}, {LE: 2560, N: 12}}}
	if got.Write.Count != want.Count || len(got.Write.Buckets) != len(want.Buckets) {
		t.Fatalf("write %+v, want %+v", got.Write, want)
	}
	for i, b := range want.Buckets {
		if got.Write.Buckets[i] != b {
			t.Fatalf("write %+v, want %+v", got.Write, want)
		}
	}
	if got.Read.Count != 0 || got.Read.Buckets != nil {
		t.Fatalf("read %+v from no read histogram", got.Read)
	}
	if coordinatorLatency(map[string]*dto.MetricFamily{}) != nil {
		t.Fatal("latency from a node without the histograms")
	}
}
