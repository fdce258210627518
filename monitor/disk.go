// Package monitor watches a running cluster: disk usage and scraped metrics
// (metrics.jsonl), node logs turned into events (reactor stalls, database
// errors), and node deaths that nobody announced.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// DataMountpoint is the data filesystem's mountpoint in node_exporter metrics.
const DataMountpoint = "/var/lib/scylla"

// DefaultNodeExporterPort is node_exporter's port.
const DefaultNodeExporterPort = 9100

// ScrapedMetrics are the scylla_* series copied into NodeSample.Metrics
// (without the prefix): summed over shards, or averaged when avg is true.
var ScrapedMetrics = []struct {
	Name string
	Avg  bool
}{
	{"scylla_reactor_stalls", false}, // a histogram: its sample count
	{"scylla_stall_detector_reported", false},
	{"scylla_reactor_utilization", true},
	// Seastar's steal time per shard; averaged, it is the node process's
	// scheduling lag (host noise) in ms, a counter.
	{"scylla_reactor_cpu_steal_time_ms", true},
	{"scylla_tablets_count", false},
	{"scylla_streaming_total_incoming_bytes", false},
	{"scylla_streaming_total_outgoing_bytes", false},
	{"scylla_load_balancer_migrations_produced", false},
	{"scylla_storage_proxy_coordinator_write_timeouts", false},
	{"scylla_storage_proxy_coordinator_read_timeouts", false},
	// Running compactions (a gauge per shard): what the wait before the
	// steady state watches (Compactions).
	{CompactionsMetric, false},
	// The compaction backlog over the shard's memory, the input of
	// ScyllaDB's compaction controller (compaction_manager.cc), per shard;
	// averaged, the node's: a backlog that keeps growing says compaction
	// is not keeping up with the writes.
	{CompactionBacklogMetric, true},
	// The row cache's partition hits and misses (row_cache.cc, group
	// "cache"): per cycle, how warm the replicas' caches were
	// (results.CacheHits).
	{"scylla_" + results.SampleCacheHits, false},
	{"scylla_" + results.SampleCacheMisses, false},
}

// DiskMonitor samples disk usage and a few metrics of every node.
type DiskMonitor struct {
	nodes    func() []*cluster.Node
	w        *results.JSONLWriter
	interval time.Duration
	// Timeout bounds one node's scrape.
	Timeout time.Duration
	// Logf receives scrape failures (once per node, from its second failure in a row).
	Logf func(format string, args ...any)
	HTTP *http.Client
	// Inside reads a node's data file system from inside it (the docker
	// backend's df in the container) where node_exporter cannot be read;
	// with it set, the REST load fallback is never used. nil: REST load.
	Inside func(ctx context.Context, n *cluster.Node) (provision.DiskUsage, error)

	mu     sync.Mutex
	latest map[string]results.NodeSample
	failed map[string]int // consecutive failed samples per node
}

// NewDiskMonitor samples the nodes nodes() returns every interval into w
// (w may be nil: then samples are only kept in memory).
func NewDiskMonitor(nodes func() []*cluster.Node, w *results.JSONLWriter, interval time.Duration) *DiskMonitor {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	return &DiskMonitor{
		nodes: nodes, w: w, interval: interval, Timeout: 5 * time.Second,
		Logf:   func(string, ...any) {},
		HTTP:   &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2}},
		latest: map[string]results.NodeSample{}, failed: map[string]int{},
	}
}

// Run samples every interval until ctx ends.
func (m *DiskMonitor) Run(ctx context.Context) error {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		m.SampleAll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// SampleAll reads every node once, records and writes the samples.
func (m *DiskMonitor) SampleAll(ctx context.Context) []results.NodeSample {
	nodes := m.nodes()
	out := make([]results.NodeSample, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = m.Sample(ctx, n)
		}()
	}
	wg.Wait()
	m.mu.Lock()
	live := map[string]bool{}
	for _, s := range out {
		live[s.Node] = true
		if s.Error != "" {
			// A node that is still starting fails once; say so from the second failure on, once.
			if m.failed[s.Node]++; m.failed[s.Node] == 2 {
				m.Logf("monitor: reading disk usage of %s: %s", s.Node, s.Error)
			}
			continue
		}
		delete(m.failed, s.Node)
		m.latest[s.Node] = s
	}
	for name := range m.latest { // nodes that left no longer count
		if !live[name] {
			delete(m.latest, name)
		}
	}
	for name := range m.failed {
		if !live[name] {
			delete(m.failed, name)
		}
	}
	m.mu.Unlock()
	if m.w != nil && ctx.Err() == nil {
		for _, s := range out {
			if err := m.w.Write(s); err != nil {
				m.Logf("monitor: %v", err)
			}
		}
	}
	return out
}

// Sample reads one node: ScyllaDB's metrics (port 9180) for the scylla_*
// series, and disk usage and its machine's CPU time from node_exporter
// (port 9100); where node_exporter cannot be read, disk usage from inside
// the node (Inside) or else REST load against its instance type's disk.
func (m *DiskMonitor) Sample(ctx context.Context, n *cluster.Node) results.NodeSample {
	s := results.NodeSample{Time: time.Now().UTC(), Node: n.Name, Address: n.Address, Rack: n.Rack, InstanceType: n.InstanceType}
	ctx, cancel := context.WithTimeout(ctx, m.Timeout)
	defer cancel()
	if fams, err := m.scrape(ctx, n.Address, n.MetricsPort); err == nil {
		s.Metrics = pick(fams)
		s.CoordinatorLatency = coordinatorLatency(fams)
	}
	port := n.NodeExporterPort
	if port == 0 {
		port = DefaultNodeExporterPort
	}
	fams, merr := m.scrape(ctx, n.Address, port)
	if merr == nil {
		s.CPUStealSeconds, s.CPUSeconds = cpuSeconds(fams["node_cpu_seconds_total"])
		size, okS := fsValue(fams["node_filesystem_size_bytes"])
		avail, okA := fsValue(fams["node_filesystem_avail_bytes"])
		if okS && okA {
			s.DiskTotalBytes, s.DiskAvailBytes, s.DiskUsedBytes = size, avail, size-avail
			s.Source = results.DiskSourceNodeExporter
			return s
		}
	}
	if m.Inside != nil {
		u, err := m.Inside(ctx, n)
		if err != nil {
			s.Error = fmt.Sprintf("node_exporter: %v; inside the node: %v", orNoFS(merr), err)
			return s
		}
		s.DiskTotalBytes, s.DiskUsedBytes, s.DiskAvailBytes, s.Source = u.TotalBytes, u.UsedBytes, u.AvailBytes, u.Source
		return s
	}
	cl := scyllarest.New(n.Address, n.RESTPort)
	cl.Timeout, cl.Attempts = m.Timeout, 1
	load, rerr := cl.Load(ctx)
	if rerr != nil || n.DiskBytes <= 0 {
		s.Error = fmt.Sprintf("node_exporter: %v; REST load: %v (disk size %.0f)", orNoFS(merr), rerr, n.DiskBytes)
		return s
	}
	s.DiskTotalBytes, s.DiskUsedBytes = n.DiskBytes, load
	s.DiskAvailBytes = max(n.DiskBytes-load, 0)
	s.Source = results.DiskSourceRESTLoadFallback
	return s
}

// cpuSeconds sums node_exporter's node_cpu_seconds_total over CPUs: the
// steal mode's, and all modes' (the machine's CPU time).
func cpuSeconds(f *dto.MetricFamily) (steal, all float64) {
	for _, m := range f.GetMetric() {
		v := m.GetCounter().GetValue()
		all += v
		for _, l := range m.GetLabel() {
			if l.GetName() == "mode" && l.GetValue() == "steal" {
				steal += v
			}
		}
	}
	return steal, all
}

func orNoFS(err error) any {
	if err == nil {
		return "no node_filesystem_* series for " + DataMountpoint
	}
	return err
}

func (m *DiskMonitor) scrape(ctx context.Context, addr string, port int) (map[string]*dto.MetricFamily, error) {
	return scrape(ctx, m.HTTP, addr, port)
}

// oneShot is the HTTP client of one-off scrapes (Tablets).
var oneShot = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}

// Tablets reads what tablets n holds now (scylla_tablets_count summed over
// shards) from ScyllaDB's metrics endpoint: what a drain waits to see reach zero.
func Tablets(ctx context.Context, n *cluster.Node) (int, error) {
	fams, err := scrape(ctx, oneShot, n.Address, n.MetricsPort)
	if err != nil {
		return 0, err
	}
	f := fams["scylla_tablets_count"]
	if f == nil {
		return 0, fmt.Errorf("%s: no scylla_tablets_count series", n.Name)
	}
	var sum float64
	for _, m := range f.Metric {
		sum += value(m)
	}
	return int(sum), nil
}

// scrape reads a metrics endpoint at addr (the address the runner reaches the node at).
func scrape(ctx context.Context, client *http.Client, addr string, port int) (map[string]*dto.MetricFamily, error) {
	url := "http://" + net.JoinHostPort(addr, strconv.Itoa(port)) + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: HTTP %d", url, resp.StatusCode)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics parses the Prometheus text format.
func ParseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return fams, nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// fsValue sums the series of the data mountpoint (one per device).
func fsValue(f *dto.MetricFamily) (float64, bool) {
	if f == nil {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if l.GetName() == "mountpoint" && l.GetValue() == DataMountpoint {
				sum += value(m)
				found = true
			}
		}
	}
	return sum, found
}

func pick(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, sm := range ScrapedMetrics {
		f := fams[sm.Name]
		if f == nil || len(f.Metric) == 0 {
			continue
		}
		var sum float64
		for _, m := range f.Metric {
			sum += value(m)
		}
		if sm.Avg {
			sum /= float64(len(f.Metric))
		}
		out[sm.Name[len("scylla_"):]] = sum
	}
	if f := fams["scylla_reactor_utilization"]; f != nil && len(f.Metric) > 0 {
		out[results.SampleReactorUtilizationBusiest] = busiest(f)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// coordinatorLatency sums the node's coordinator latency histograms over
// their series (shards, scheduling groups); nil when it exports neither.
func coordinatorLatency(fams map[string]*dto.MetricFamily) *results.CoordinatorLatency {
	w, okw := histogram(fams["scylla_storage_proxy_coordinator_write_latency"])
	r, okr := histogram(fams["scylla_storage_proxy_coordinator_read_latency"])
	if !okw && !okr {
		return nil
	}
	return &results.CoordinatorLatency{Write: w, Read: r}
}

// histogram sums a histogram family's series by bucket bound, leaving out
// the +Inf bucket (the count) and the bounds above the last that grew,
// which say nothing more.
func histogram(f *dto.MetricFamily) (results.Histogram, bool) {
	var h results.Histogram
	if f == nil {
		return h, false
	}
	byLE := map[float64]float64{}
	found := false
	for _, m := range f.Metric {
		hm := m.GetHistogram()
		if hm == nil {
			continue
		}
		found = true
		h.Count += float64(hm.GetSampleCount())
		for _, b := range hm.GetBucket() {
			if le := b.GetUpperBound(); !math.IsInf(le, 0) {
				byLE[le] += float64(b.GetCumulativeCount())
			}
		}
	}
	for le, n := range byLE {
		h.Buckets = append(h.Buckets, results.Bucket{LE: le, N: n})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].LE < h.Buckets[j].LE })
	for i, b := range h.Buckets {
		if b.N >= h.Count {
			h.Buckets = h.Buckets[:i+1]
			break
		}
	}
	return h, found
}

// busiest is the highest value of a per-shard gauge: a node whose load
// falls on a few shards (a hot partition, few tablets) saturates them while
// the mean over its shards stays low.
func busiest(f *dto.MetricFamily) float64 {
	top := value(f.Metric[0])
	for _, m := range f.Metric[1:] {
		top = max(top, value(m))
	}
	return top
}

// Latest returns the last good sample of every current node, by node name.
func (m *DiskMonitor) Latest() []results.NodeSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]results.NodeSample, 0, len(m.latest))
	for _, s := range m.latest {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return nodeLess(out[i].Node, out[j].Node) })
	return out
}

// ClusterUsagePercent is used/total over the latest samples of all nodes, or 0.
func (m *DiskMonitor) ClusterUsagePercent() float64 {
	return Aggregate(m.Latest()).UsagePercent
}

// MaxUsagePercent is the fullest node's latest disk usage (SCT's
// get_max_disk_usage): an average hides a full node.
func (m *DiskMonitor) MaxUsagePercent() float64 {
	var top float64
	for _, s := range m.Latest() {
		top = max(top, ToNodeDisk(s).UsagePercent)
	}
	return top
}

// Snapshot samples every node now (writing the samples) and returns disk
// usage per node and for the cluster (Node "cluster"), for disk_snapshot
// events and fill stop conditions. Nodes that could not be read are left out
// and named in the error.
func (m *DiskMonitor) Snapshot(ctx context.Context) ([]results.NodeDisk, results.NodeDisk, error) {
	samples := m.SampleAll(ctx)
	var nodes []results.NodeDisk
	var good []results.NodeSample
	var errs []error
	for _, s := range samples {
		if s.Error != "" {
			errs = append(errs, fmt.Errorf("%s: %s", s.Node, s.Error))
			continue
		}
		good = append(good, s)
		nodes = append(nodes, ToNodeDisk(s))
	}
	return nodes, Aggregate(good), errors.Join(errs...)
}

// ToNodeDisk converts a sample to GB figures (1 GB = 1e9 bytes, as the instance catalog).
func ToNodeDisk(s results.NodeSample) results.NodeDisk {
	d := results.NodeDisk{Node: s.Node, Rack: s.Rack, InstanceType: s.InstanceType,
		TotalGB: s.DiskTotalBytes / 1e9, UsedGB: s.DiskUsedBytes / 1e9, AvailGB: s.DiskAvailBytes / 1e9}
	if s.DiskTotalBytes > 0 {
		d.UsagePercent = 100 * s.DiskUsedBytes / s.DiskTotalBytes
	}
	return d
}

// Aggregate sums samples into the cluster's figure (Node "cluster").
func Aggregate(samples []results.NodeSample) results.NodeDisk {
	var total, used, avail float64
	for _, s := range samples {
		total += s.DiskTotalBytes
		used += s.DiskUsedBytes
		avail += s.DiskAvailBytes
	}
	return ToNodeDisk(results.NodeSample{Node: "cluster", DiskTotalBytes: total, DiskUsedBytes: used, DiskAvailBytes: avail})
}

// nodeLess orders node-2 before node-10.
func nodeLess(a, b string) bool {
	na, ea := trailingInt(a)
	nb, eb := trailingInt(b)
	if ea && eb && a[:len(a)-len(strconv.Itoa(na))] == b[:len(b)-len(strconv.Itoa(nb))] {
		return na < nb
	}
	return a < b
}

func trailingInt(s string) (int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	return n, err == nil
}
