package node

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/cpustat"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DataMountpoint is the mountpoint label of the data filesystem metrics.
const DataMountpoint = "/var/lib/scylla"

type atomicCounter struct {
	prometheus.Counter
	v atomic.Int64
}

func (c *atomicCounter) Add(f float64) { c.v.Add(int64(f)); c.Counter.Add(f) }
func (c *atomicCounter) get() int64    { return c.v.Load() }

type metrics struct {
	reg                         *prometheus.Registry
	exporter                    *prometheus.Registry // node_exporter's, served on its own port
	writeLatency, readLatency   prometheus.Observer
	writeTimeouts, readTimeouts prometheus.Counter
	unavailable                 prometheus.Counter
	replicaWrites               prometheus.Counter
	migrations                  prometheus.Counter
	streamIn, streamOut         *atomicCounter
	remoteReads                 *atomicCounter
	stalls                      prometheus.Observer
}

// skipEmpty exports a metric only once count is non-zero (Seastar's
// metric_definition::set_skip_when_empty). Unchecked: Describe sends nothing.
type skipEmpty struct {
	prometheus.Collector
	count func() int64
}

func (s skipEmpty) Describe(chan<- *prometheus.Desc) {}

func (s skipEmpty) Collect(ch chan<- prometheus.Metric) {
	if s.count() > 0 {
		s.Collector.Collect(ch)
	}
}

// countedHistogram is a histogram that knows how many samples it has.
type countedHistogram struct {
	prometheus.Histogram
	n atomic.Int64
}

func (h *countedHistogram) Observe(v float64) { h.n.Add(1); h.Histogram.Observe(v) }

// stallBuckets are the upper bounds of Seastar's time_estimated_histogram
// (approximate_exponential_histogram<512, 33554432, 4>, to_metrics_histogram:
// bucket i's bound is the lower limit of bucket i+1).
func stallBuckets() []float64 {
	var out []float64
	for e := 0; 512<<e < 33554432; e++ {
		base := float64(int64(512) << e)
		for i := 0; i < 4; i++ {
			if e == 0 && i == 0 {
				continue
			}
			out = append(out, base+float64(i)*base/4)
		}
	}
	return append(out, 33554432)
}

// newMetrics registers the node's metrics under ScyllaDB's names. Latencies
// are in microseconds, as ScyllaDB exports them.
func newMetrics(n *Node) *metrics {
	reg := prometheus.NewRegistry()
	mt := &metrics{reg: reg}
	buckets := prometheus.ExponentialBuckets(50, 1.5, 30)
	sg := prometheus.Labels{"scheduling_group_name": "statement", "shard": "0"}
	wl := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "scylla_storage_proxy_coordinator_write_latency", Help: "The general write latency histogram (microseconds)", Buckets: buckets, ConstLabels: sg})
	rl := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "scylla_storage_proxy_coordinator_read_latency", Help: "The general read latency histogram (microseconds)", Buckets: buckets, ConstLabels: sg})
	mt.writeLatency, mt.readLatency = wl, rl
	wt := prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_storage_proxy_coordinator_write_timeouts", Help: "write timeouts", ConstLabels: sg})
	rt := prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_storage_proxy_coordinator_read_timeouts", Help: "read timeouts", ConstLabels: sg})
	un := prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_storage_proxy_coordinator_unavailable", Help: "unavailable errors", ConstLabels: sg})
	rw := prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_database_total_writes", Help: "replica writes applied", ConstLabels: prometheus.Labels{"shard": "0"}})
	mg := prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_load_balancer_migrations_produced", Help: "tablet migrations started by this node's load balancer", ConstLabels: prometheus.Labels{"shard": "0"}})
	mt.writeTimeouts, mt.readTimeouts, mt.unavailable, mt.replicaWrites, mt.migrations = wt, rt, un, rw, mg
	mt.streamIn = &atomicCounter{Counter: prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_streaming_total_incoming_bytes", Help: "bytes received by streaming", ConstLabels: prometheus.Labels{"shard": "0"}})}
	mt.streamOut = &atomicCounter{Counter: prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_streaming_total_outgoing_bytes", Help: "bytes sent by streaming", ConstLabels: prometheus.Labels{"shard": "0"}})}
	// scylla_reactor_stalls is a histogram of stall durations in
	// microseconds, aggregated over shards (src/core/reactor.cc:
	// sm::make_histogram("stalls", ...).aggregate({shard_label})), with the
	// bucket bounds of time_estimated_histogram (include/seastar/core/internal/
	// estimated_histogram.hh: 512 us .. 33554432 us, 4 buckets per power of 2).
	// Seastar adds every task run over 2x --task-quota-ms; the emulator
	// models no sub-threshold task runs, so it adds the stalls it reports.
	// set_skip_when_empty: no series until the first stall.
	st := &countedHistogram{Histogram: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "scylla_reactor_stalls", Help: "A histogram of reactor stall durations", Buckets: stallBuckets()})}
	mt.stalls = st
	// The data reads other coordinators asked of this replica
	// (service/storage_proxy.cc, REPLICA_STATS_CATEGORY "reads",
	// op_type "data", set_skip_when_empty): the emulator's remote reads
	// all return data; it sends no digest reads.
	mt.remoteReads = &atomicCounter{Counter: prometheus.NewCounter(prometheus.CounterOpts{Name: "scylla_storage_proxy_replica_reads",
		Help:        "number of remote reads this Node received. op_type label could be data, mutation_data or digest",
		ConstLabels: prometheus.Labels{"op_type": "data", "scheduling_group_name": "statement", "shard": "0"}})}
	reg.MustRegister(wl, rl, wt, rt, un, rw, mg, mt.streamIn.Counter, mt.streamOut.Counter,
		skipEmpty{st, st.n.Load}, skipEmpty{mt.remoteReads.Counter, mt.remoteReads.get})

	for s := 0; s < n.cfg.VCPUs; s++ {
		lab := prometheus.Labels{"shard": strconv.Itoa(s)}
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "scylla_reactor_utilization", Help: "CPU utilization of the shard (percent)", ConstLabels: lab},
			func() float64 {
				u := n.cap.Utilization()
				if s < len(u) {
					return u[s] * 100
				}
				return 0
			}))
		// Seastar's cpu_stall_detector counter: reports printed (not
		// suppressed), per shard (src/core/reactor.cc, group "stall_detector").
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "scylla_stall_detector_reported", Help: "Total number of reported stalls, look in the traces for the exact reason", ConstLabels: lab},
			func() float64 { return float64(n.stalls.Reported(s)) }))
		// Seastar's steal time: "the time in which something else was
		// running while the reactor was runnable" (src/core/reactor.cc,
		// cpu_steal_time_ms, a counter per shard). One process runs every
		// shard here, so each shard reports the process's scheduling lag
		// measured by the capacity model's watchdog: the host's noise.
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "scylla_reactor_cpu_steal_time_ms", Help: "Total steal time, the time in which something else was running while the reactor was runnable (not sleeping).", ConstLabels: lab},
			func() float64 { return float64(n.cap.SchedulingLag().Milliseconds()) }))
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "scylla_tablets_count", Help: "tablet replicas on the shard", ConstLabels: lab},
			func() float64 {
				l := shardLoad(n.view.Load().m)[n.hostID]
				if s < len(l) {
					return float64(l[s])
				}
				return 0
			}))
	}
	registerCompactionMetrics(reg, n)
	registerCacheMetrics(reg, n)
	for _, op := range []string{"bootstrap", "decommission", "removenode"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "scylla_streaming_finished_percentage", Help: "progress of the node operation's streaming (percent)", ConstLabels: prometheus.Labels{"ops": op, "shard": "0"}},
			func() float64 { return n.finishedPercentage(op) }))
	}
	mt.exporter = prometheus.NewRegistry()
	// node_exporter's filesystem collector (node_filesystem_*), which
	// ScyllaDB's images run beside scylla on port 9100 (scylladb/scylladb
	// dist/docker/etc/supervisord.conf.d/scylla-node-exporter.conf;
	// scylla-machine-image enables scylla-node-exporter.service). ScyllaDB's
	// own port 9180 has no node_* series.
	fs := prometheus.Labels{"mountpoint": DataMountpoint, "device": "/dev/md0", "fstype": "xfs"}
	mt.exporter.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "node_filesystem_size_bytes", Help: "Filesystem size in bytes.", ConstLabels: fs},
		func() float64 { return float64(n.disk.Capacity()) }))
	mt.exporter.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "node_filesystem_avail_bytes", Help: "Filesystem space available to non-root users in bytes.", ConstLabels: fs},
		func() float64 { return float64(n.disk.Avail()) }))
	mt.exporter.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "node_filesystem_free_bytes", Help: "Filesystem free space in bytes.", ConstLabels: fs},
		func() float64 { return float64(n.disk.Avail()) }))
	// And its cpu collector (node_cpu_seconds_total) of the machine.
	if c, err := cpustat.Collector(); err == nil {
		mt.exporter.MustRegister(c)
	}
	return mt
}

// compactionStats are the compaction manager's figures of the node's store.
type compactionStats struct {
	running, pending, completed int64
}

// compactionStats reads the store's compactions from Pebble: running are
// compactions in progress (flushes are not compactions, as in ScyllaDB,
// where memtable flushes do not go through the compaction manager),
// pending the levels whose score asks for a compaction not yet started,
// completed every compaction since the store opened (the backlog is
// compactionBacklog's).
func (s *Store) compactionStats() compactionStats {
	if s.closed.Load() {
		return compactionStats{}
	}
	m := s.db.Metrics()
	var want int64
	for _, l := range m.Levels {
		if l.Score >= 1 {
			want++
		}
	}
	return compactionStats{running: m.Compact.NumInProgress, pending: max(0, want-m.Compact.NumInProgress),
		completed: m.Compact.Count}
}

// shareOf is shard s's share of a node-wide count over n shards: the
// shards take turns, so the shares sum to the count and each only grows
// with it (a counter stays a counter on every shard).
func shareOf(count int64, s, n int) float64 {
	if count <= int64(s) {
		return 0
	}
	return float64((count-int64(s)-1)/int64(n) + 1)
}

// registerCacheMetrics exports the row cache's metrics per shard with
// ScyllaDB's names (db/row_cache.cc, cache_tracker::setup_metrics: group
// "cache"; bytes_used and partitions gauges, the rest counters). One cache
// serves every shard here: its figures are split across the shards.
func registerCacheMetrics(reg *prometheus.Registry, n *Node) {
	shards := max(1, n.cfg.VCPUs)
	cache := func() *rowCache {
		if n.store == nil {
			return nil
		}
		return n.store.cache
	}
	for s := 0; s < shards; s++ {
		lab := prometheus.Labels{"shard": strconv.Itoa(s)}
		share := func(f func(*rowCache) int64) func() float64 {
			return func() float64 {
				if c := cache(); c != nil {
					return shareOf(f(c), s, shards)
				}
				return 0
			}
		}
		gauge := func(name, help string, f func(*rowCache) int64) {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "scylla_cache_" + name, Help: help, ConstLabels: lab}, share(f)))
		}
		counter := func(name, help string, v func(*rowCache) *atomic.Uint64) {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "scylla_cache_" + name, Help: help, ConstLabels: lab},
				share(func(c *rowCache) int64 { return int64(v(c).Load()) })))
		}
		gauge("bytes_used", "current bytes used by the cache out of the total size of memory", (*rowCache).bytesUsed)
		gauge("partitions", "total number of cached partitions", (*rowCache).partitions)
		counter("partition_hits", "number of partitions needed by reads and found in cache", func(c *rowCache) *atomic.Uint64 { return &c.hits })
		counter("partition_misses", "number of partitions needed by reads and missing in cache", func(c *rowCache) *atomic.Uint64 { return &c.misses })
		counter("partition_insertions", "total number of partitions added to cache", func(c *rowCache) *atomic.Uint64 { return &c.insertions })
		counter("partition_evictions", "total number of evicted partitions", func(c *rowCache) *atomic.Uint64 { return &c.evictions })
		counter("partition_removals", "total number of invalidated partitions", func(c *rowCache) *atomic.Uint64 { return &c.removals })
		counter("mispopulations", "number of entries not inserted by reads", func(c *rowCache) *atomic.Uint64 { return &c.mispopulations })
	}
}

// registerCompactionMetrics exports the compaction manager's metrics per
// shard, with ScyllaDB's names, types and help texts (scylladb/scylladb
// compaction/compaction_manager.cc, compaction_manager::register_metrics:
// group "compaction_manager"; compactions, pending_compactions,
// postponed_compactions, backlog and normalized_backlog are gauges,
// completed_compactions and failed_compactions counters; each shard's
// compaction manager exports its own, labelled shard only).
// scylla_compaction_manager_compactions is what SCT's
// wait_no_compactions_running sums (sdcm/tester.py, is_compaction_running).
// One Pebble store serves every shard here: its figures are split across
// the shards, so the sums over shards are the store's.
func registerCompactionMetrics(reg *prometheus.Registry, n *Node) {
	// One scrape reads every shard's series: Pebble's metrics are read
	// once for them all.
	var mu sync.Mutex
	var at time.Time
	var last compactionStats
	stats := func() compactionStats {
		mu.Lock()
		defer mu.Unlock()
		if n.store != nil && time.Since(at) > 100*time.Millisecond {
			last, at = n.store.compactionStats(), time.Now()
		}
		return last
	}
	shards := max(1, n.cfg.VCPUs)
	backlog := n.newCompactionBacklog()
	for s := 0; s < shards; s++ {
		lab := prometheus.Labels{"shard": strconv.Itoa(s)}
		gauge := func(name, help string, f func() float64) {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "scylla_compaction_manager_" + name, Help: help, ConstLabels: lab}, f))
		}
		counter := func(name, help string, f func() float64) {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "scylla_compaction_manager_" + name, Help: help, ConstLabels: lab}, f))
		}
		gauge("compactions", "Holds the number of currently active compactions.",
			func() float64 { return shareOf(stats().running, s, shards) + n.compactingInModel(s) })
		gauge("pending_compactions", "Holds the number of compaction tasks waiting for an opportunity to run.",
			func() float64 { return shareOf(stats().pending, s, shards) })
		counter("completed_compactions", "Holds the number of completed compaction tasks.",
			func() float64 { return shareOf(stats().completed, s, shards) })
		counter("failed_compactions", "Holds the number of failed compaction tasks.",
			func() float64 { return 0 })
		gauge("postponed_compactions", "Holds the number of tables with postponed compaction.",
			func() float64 { return 0 })
		gauge("backlog", "Holds the sum of compaction backlog for all tables in the system.",
			func() float64 { return backlog.bytes(n.compactionWork(s)) })
		gauge("normalized_backlog", "Holds the sum of normalized compaction backlog for all tables in the system. Backlog is normalized by dividing backlog by shard's available memory.",
			func() float64 { return backlog.normalized(n.compactionWork(s)) })
	}
}

// compactionWork is the compaction work shard s's model has not yet run.
func (n *Node) compactionWork(s int) time.Duration {
	if n.cap == nil {
		return 0
	}
	return n.cap.CompactionWork(s)
}

// compactingInModel is 1 while shard s's capacity model still runs the
// cost of compactions the store has done: to the compaction manager the
// compaction is active until then.
func (n *Node) compactingInModel(s int) float64 {
	if n.compactionWork(s) > 0 {
		return 1
	}
	return 0
}

// finishedPercentage is the progress of this node's streaming operation.
func (n *Node) finishedPercentage(op string) float64 {
	v := n.view.Load()
	me := v.m.Nodes[n.hostID]
	if me == nil {
		return 0
	}
	switch op {
	case "bootstrap":
		if me.State == engine.StateJoining {
			return 0
		}
		return 100
	case "decommission", "removenode":
		var nm *NodeMeta
		for _, x := range v.m.Nodes {
			if drains(x) && x.Removing == (op == "removenode") {
				nm = x
			}
		}
		if nm == nil || nm.DrainTotal == 0 {
			return 100
		}
		left := sum(shardLoad(v.m)[nm.HostID])
		return 100 * float64(nm.DrainTotal-left) / float64(nm.DrainTotal)
	}
	return 0
}

// MetricsHandler serves ScyllaDB's /metrics (port 9180).
func (n *Node) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(n.met.reg, promhttp.HandlerOpts{})
}

// NodeExporterHandler serves node_exporter's /metrics (port 9100): the data
// filesystem's size and free space.
func (n *Node) NodeExporterHandler() http.Handler {
	return promhttp.HandlerFor(n.met.exporter, promhttp.HandlerOpts{})
}
