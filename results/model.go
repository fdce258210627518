// Package results is the data model of one run and its on-disk layout.
//
// The run directory is written incrementally while a run goes (the .jsonl
// files are appended live), so a report can be recomputed from the .jsonl
// files alone, even for an interrupted run. result.json is the summary
// written at the end. This file is the contract between the writers (stress,
// monitor, nemesis, the phase runner) and the readers (reporting).
package results

import (
	"strconv"
	"time"
)

// File names inside a run directory.
const (
	FileScenario   = "scenario.yaml"
	FileEvents     = "events.jsonl"
	FileLatency    = "latency.jsonl"
	FileMetrics    = "metrics.jsonl"
	DirLogs        = "logs"
	FileResult     = "result.json"
	FileReportMD   = "report.md"
	FileReportHTML = "report.html"
)

// Run status values.
const (
	StatusRunning     = "running"
	StatusPassed      = "passed"
	StatusFailed      = "failed" // thresholds failed
	StatusError       = "error"  // infrastructure or database failure
	StatusInterrupted = "interrupted"
)

// Operation names used in latency.jsonl.
const (
	OpWrite = "write"
	OpRead  = "read"
	OpFill  = "fill"
)

// LatencyRecord is one line of latency.jsonl: one interval of one operation
// type. Histograms are HDR (1 µs .. 60 s, 3 significant digits, values in
// microseconds) encoded with hdrhistogram-go's Encode(V2CompressedEncodingCookieBase)
// so that merging the records of any window reproduces its percentiles exactly.
type LatencyRecord struct {
	Start time.Time `json:"start"` // interval start
	End   time.Time `json:"end"`   // interval end
	Op    string    `json:"op"`    // write | read | fill, or a workload model's operation name
	// Class is OpWrite or OpRead for an operation whose name is neither
	// (a model's insert, read1, counter_write ...): which of a cycle's
	// write and read figures it counts in. Empty when the name is the class
	// (the built-in write and read, fill), so their records are unchanged.
	Class string `json:"class,omitempty"`
	// Count is the number of operations that completed successfully in the interval.
	Count int64 `json:"count"`
	// Errors counts failed operations by class (timeout, unavailable, overloaded, no_space, other ...).
	Errors map[string]int64 `json:"errors,omitempty"`
	// Dropped counts operations the schedule intended but no worker could start
	// (the in-flight pool was full for longer than the catch-up policy allows).
	Dropped int64 `json:"dropped"`
	// Late counts operations that started later than their intended start by more than 1 ms.
	Late int64 `json:"late"`
	// Response time is measured from the intended start (coordinated-omission corrected);
	// service time from the actual send.
	Response Summary `json:"response"`
	Service  Summary `json:"service"`
	// ResponseHDR and ServiceHDR are the encoded HDR histograms (base64 text as produced by Encode).
	ResponseHDR string `json:"response_hdr"`
	ServiceHDR  string `json:"service_hdr"`
	// Source names the loader that produced the record (several loaders may write one file).
	Source string `json:"source,omitempty"`
	// LoaderLagMS is the loader process's own scheduling lag in the
	// interval, in ms (internal/schedlag): time it was runnable but did not
	// run, so operations due then were sent late (their response time, from
	// the intended start, includes it). The process's figure, on every
	// operation's record of the interval; merged records keep the worst
	// loader's.
	LoaderLagMS float64 `json:"loader_lag_ms,omitempty"`
}

// OpClass is the record's class: Class, or the operation's name.
func (r LatencyRecord) OpClass() string {
	if r.Class != "" {
		return r.Class
	}
	return r.Op
}

// Summary holds the headline numbers of a histogram, in milliseconds.
type Summary struct {
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// NodeSample is one line of metrics.jsonl: what a monitor read from one node at one time.
type NodeSample struct {
	Time         time.Time `json:"time"`
	Node         string    `json:"node"`
	Address      string    `json:"address,omitempty"`
	Rack         string    `json:"rack,omitempty"`
	InstanceType string    `json:"instance_type,omitempty"`
	// Disk of the data filesystem (node_filesystem_{size,avail}_bytes{mountpoint="/var/lib/scylla"}, or REST load as fallback).
	DiskTotalBytes float64 `json:"disk_total_bytes"`
	DiskUsedBytes  float64 `json:"disk_used_bytes"`
	DiskAvailBytes float64 `json:"disk_avail_bytes"`
	// Optional counters and gauges scraped from the node (scylla_* names without the prefix), e.g.
	// reactor_stalls, tablets_count, streaming_total_incoming_bytes, reactor_utilization.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// The node's machine's CPU time, from node_exporter's
	// node_cpu_seconds_total summed over CPUs: in steal mode (the
	// hypervisor ran something else while a vCPU had work) and in all modes.
	CPUStealSeconds float64 `json:"cpu_steal_seconds,omitempty"`
	CPUSeconds      float64 `json:"cpu_seconds,omitempty"`
	// CoordinatorLatency is the node's coordinator latency histograms
	// (scylla_storage_proxy_coordinator_{write,read}_latency), cumulative.
	CoordinatorLatency *CoordinatorLatency `json:"coordinator_latency_us,omitempty"`
	Source             string              `json:"source,omitempty"` // "node_exporter" | "container_df" | "container_df_host_fs" | "rest_load_fallback"
	Error              string              `json:"error,omitempty"`  // set when the node could not be read
}

// Disk sample sources (NodeSample.Source; monitor reads the disks).
const (
	// DiskSourceNodeExporter: node_filesystem_{size,avail}_bytes of the
	// data mountpoint from node_exporter (port 9100 beside every ScyllaDB
	// node).
	DiskSourceNodeExporter = "node_exporter"
	// DiskSourceContainerDF: node_exporter could not be read (ScyllaDB's
	// image has none from 2026.3), so `df -P -B1 /var/lib/scylla` ran
	// inside the node (docker exec): the node's own data file system (a
	// tmpfs).
	DiskSourceContainerDF = "container_df"
	// DiskSourceContainerDFHost: as DiskSourceContainerDF, with nothing
	// mounted at /var/lib/scylla (docker.data_mount none): the figures are
	// the host's file system's.
	DiskSourceContainerDFHost = "container_df_host_fs"
	// DiskSourceRESTLoadFallback: node_exporter could not be read, so used
	// is REST /storage_service/load (live SSTable bytes only: no commitlog,
	// compaction space or filesystem overhead) against the node's disk
	// size. Reports warn when a run used it.
	DiskSourceRESTLoadFallback = "rest_load_fallback"
)

// Event types of events.jsonl.
const (
	EventRunStart      = "run_start"      // Setup set
	EventRunEnd        = "run_end"        // Status, Message (reason)
	EventPhaseStart    = "phase_start"    // Phase: provision, schema, fill, hold, steady_state, nemesis, final_hold, teardown; Name: e.g. "Soft Limit"
	EventPhaseEnd      = "phase_end"      // Phase, Name
	EventCycleStart    = "cycle_start"    // Cycle: "Cycle #0", "Cycle #1" ...; Step: nemesis step name ("" for steady state)
	EventCycleEnd      = "cycle_end"      // Cycle, Step
	EventDiskSnapshot  = "disk_snapshot"  // Name: "Soft Limit" | "Hard Limit" | "Scale out" | "Final" ...; Disk set
	EventStepRequested = "step_requested" // Step, Kind (grow|shrink|drain|hook|hold), Mode (serial|parallel), Nodes
	EventNodesNormal   = "nodes_normal"   // Step, Nodes: the new nodes are UN / left nodes are gone
	EventDataBalanced  = "data_balanced"  // Step: quiesce_topology returned, no migrations in flight
	EventLatencyRecov  = "latency_recovered"
	EventStepEnd       = "step_end" // Step
	// EventCleanupStart, EventCleanupEnd: Step, Cycle, Nodes: nodetool
	// cleanup of the run's vnodes keyspace on the nodes that held data
	// before a grow (DurCleanup). EventCleanupSkipped: Step, Cycle,
	// Message: why it did not run (a tablets keyspace).
	EventCleanupStart   = "cleanup_start"
	EventCleanupEnd     = "cleanup_end"
	EventCleanupSkipped = "cleanup_skipped"
	// EventNodeOp: Step, Cycle, Kind, Mode, Node, State (requested |
	// joined | left): one node's part of a topology step, as the topology
	// coordinator executed it (joins one at a time; removals one at a
	// time before ScyllaDB 2026.1, drained together from 2026.1: ScaleIn).
	EventNodeOp    = "node_op"
	EventNodeState = "node_state"      // Node, State (started|joining|normal|leaving|left|down|up|died|removed), Expected
	EventStall     = "reactor_stalled" // Node, StallMS, Line
	// EventStallsSuppressed: Node, Count = the stall reports Seastar's rate
	// limit suppressed ("Rate-limit: suppressed N backtraces on shard S",
	// seastar src/core/reactor.cc report_suppressions), Line. They are
	// reports, not stalls: re-reports of a printed stall or reports of
	// stalls never printed, 0 to Count stalls of unknown length.
	EventStallsSuppressed = "stall_reports_suppressed"
	// EventStallThreshold: Node, StallMS = the --blocked-reactor-notify-ms
	// the node was started with (its "command used" line), Line.
	EventStallThreshold = "stall_threshold"
	EventDBError        = "database_error"  // Node, ErrorType, Severity, Line
	EventProgress       = "progress"        // Phase, Message (what the run is waiting for)
	EventWarning        = "warning"         // Message
	EventValidation     = "data_validation" // Validation: the rows read back after a step or at the end
	EventCapacity       = "capacity_probe"  // Name "after", CapacityOps: the capacity probed after the last topology step
)

// Event is one line of events.jsonl: the run's timeline.
type Event struct {
	Time     time.Time `json:"time"`
	Type     string    `json:"type"`
	Phase    Phase     `json:"phase,omitempty"`
	Name     string    `json:"name,omitempty"`
	Cycle    string    `json:"cycle,omitempty"`
	Step     string    `json:"step,omitempty"`
	Kind     StepKind  `json:"kind,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	Node     string    `json:"node,omitempty"`
	Nodes    []string  `json:"nodes,omitempty"`
	State    string    `json:"state,omitempty"`
	Expected bool      `json:"expected,omitempty"`
	StallMS  float64   `json:"stall_ms,omitempty"`
	// Count is how many of something the event stands for (stall_reports_suppressed).
	Count int64 `json:"count,omitempty"`
	// PlanSeconds are the plan's estimates of the durations this phase or
	// step measures, by duration name (step_requested, fill phase_start).
	PlanSeconds map[string]float64 `json:"plan_seconds,omitempty"`
	ErrorType   string             `json:"error_type,omitempty"` // DATABASE_ERROR, NO_SPACE_ERROR, BAD_ALLOC, BACKTRACE, STARTUP_FAILED ...
	Severity    string             `json:"severity,omitempty"`   // CRITICAL, ERROR, WARNING, NORMAL
	Line        string             `json:"line,omitempty"`
	Message     string             `json:"message,omitempty"`
	Status      string             `json:"status,omitempty"`
	Setup       *Setup             `json:"setup,omitempty"`
	Disk        []NodeDisk         `json:"disk,omitempty"`
	// CapacityOps is the capacity a capacity_probe measured (ops/s).
	CapacityOps float64 `json:"capacity_ops,omitempty"`
	// Probe is what the load generator saw of its own host during a
	// capacity probe (capacity_probe, and the "calibrated" progress event
	// of the calibration before the steady state).
	Probe *CapacityProbe `json:"probe,omitempty"`
	// Validation is the outcome of a data validation (data_validation).
	Validation *Validation `json:"validation,omitempty"`
}

// Setup describes what was run; it is carried by the run_start event.
type Setup struct {
	Scenario        string       `json:"scenario"`
	Description     string       `json:"description,omitempty"`
	RunID           string       `json:"run_id"`
	Backend         string       `json:"backend"`
	Emulated        bool         `json:"emulated"` // numbers are shapes, not ScyllaDB's absolute figures
	Flavour         string       `json:"flavour"`  // scylla | cassandra
	DatabaseVersion string       `json:"database_version,omitempty"`
	InitialNodes    []NodeInfo   `json:"initial_nodes"`
	Racks           []string     `json:"racks"`
	RF              int          `json:"rf"`
	Tablets         int          `json:"tablets"` // initial tablets, 0 = vnodes
	FillTargets     []FillTarget `json:"fill_targets"`
	WriteRatio      float64      `json:"write_ratio"`
	ReadRatio       float64      `json:"read_ratio"`
	RateOpsPerSec   float64      `json:"rate_ops_per_sec"`
	LoadPercent     float64      `json:"load_percent,omitempty"`
	CapacityOps     float64      `json:"capacity_ops,omitempty"` // calibrated capacity when load_percent is used
	// ValueSizeBytes is dataset.value_size's mean; 0 for a workload model
	// (whose own sizes win: Model.KeyBytes).
	ValueSizeBytes int `json:"value_size_bytes"`
	// Model is the workload model when it is not the built-in key/value
	// one (workload.stress_cmd, profile, kind): what ran, its operations
	// and what data validation could cover.
	Model       *WorkloadModel `json:"workload_model,omitempty"`
	Nemesis     []NemesisInfo  `json:"nemesis"`
	Thresholds  []Threshold    `json:"thresholds,omitempty"`
	TimeScale   float64        `json:"time_scale,omitempty"` // local and docker backends: scenario durations were multiplied by this
	Limitations []string       `json:"limitations,omitempty"`
	// RecoveryIntervals is N of sustained recovery (thresholds.recovery.intervals; 0: DefaultRecoveryIntervals).
	RecoveryIntervals int `json:"recovery_intervals,omitempty"`
	// DashboardURL is the scenario's report.dashboard_url template ({from_ms}, {to_ms}).
	DashboardURL string `json:"dashboard_url,omitempty"`
	// ExpectedErrors and Severities are the scenario's expected_errors and severities.
	ExpectedErrors []ErrorFilter     `json:"expected_errors,omitempty"`
	Severities     map[string]string `json:"severities,omitempty"`
	// BaselineRules are the scenario's thresholds.baseline (Argus
	// ValidationRules); Baseline the best values of the previous runs they
	// are judged against, looked up when the run started.
	BaselineRules []BaselineRule    `json:"baseline_rules,omitempty"`
	Baseline      *Baseline         `json:"baseline,omitempty"`
	Extra         map[string]string `json:"extra,omitempty"`
	// RackBalance is how the rack balance table is taken and judged.
	RackBalance *RackBalanceSpec `json:"rack_balance,omitempty"`
}

// WorkloadModel describes a workload model (stress.ModelInfo as the plan
// resolved it).
type WorkloadModel struct {
	Form        string       `json:"form"` // the scenario field: workload.stress_cmd, workload.profile, workload.kind
	Kind        string       `json:"kind"` // "cassandra-stress mixed", "profile timeseries.yaml" ...
	Keyspace    string       `json:"keyspace"`
	Table       string       `json:"table"`
	Ops         []WorkloadOp `json:"ops"`
	Regenerable bool         `json:"regenerable"`
	Notes       []string     `json:"notes,omitempty"`
	// KeyUnit is what one key of the model is ("row", "partition"), KeyBytes
	// the model's estimate of its mean bytes (0: the model does not say).
	KeyUnit  string  `json:"key_unit,omitempty"`
	KeyBytes float64 `json:"key_bytes,omitempty"`
}

// WorkloadOp is one operation of a workload model with its share of the mix.
type WorkloadOp struct {
	Name     string  `json:"name"`
	Class    string  `json:"class"`
	SharePct float64 `json:"share_pct"`
}

// FillTarget is one fill phase of the dataset.
type FillTarget struct {
	Name          string  `json:"name"` // "Soft Limit", "Hard Limit"
	TargetPercent float64 `json:"target_percent"`
	HoldSeconds   float64 `json:"hold_seconds"`
}

// NemesisInfo summarises one nemesis step of the scenario.
type NemesisInfo struct {
	Name         string   `json:"name"`
	Kind         StepKind `json:"kind"` // grow | shrink | drain | hold | hook
	Mode         string   `json:"mode,omitempty"`
	InstanceType string   `json:"instance_type,omitempty"`
	CountPerRack int      `json:"count_per_rack,omitempty"`
	// VCPUs of each node a grow adds (the plan's node record).
	VCPUs int `json:"vcpus,omitempty"`
}

// NodeInfo describes one node of the cluster.
type NodeInfo struct {
	Name         string  `json:"name"`
	Address      string  `json:"address"`
	Rack         string  `json:"rack"`
	InstanceType string  `json:"instance_type"`
	VCPUs        int     `json:"vcpus"`
	DiskBytes    float64 `json:"disk_bytes,omitempty"`
	AddedBy      string  `json:"added_by,omitempty"` // nemesis step that added it; "" for initial nodes
}

// NodeDisk is disk usage of one node (or the cluster, Node == "cluster") at one time.
type NodeDisk struct {
	Node         string  `json:"node"`
	Rack         string  `json:"rack,omitempty"`
	InstanceType string  `json:"instance_type,omitempty"`
	TotalGB      float64 `json:"total_gb"`
	UsedGB       float64 `json:"used_gb"`
	AvailGB      float64 `json:"available_gb"`
	UsagePercent float64 `json:"usage_percent"`
}

// Threshold is an SCT fixed_limit-style limit. Metric is one of
// write_p90_ms, write_p99_ms, read_p90_ms, read_p99_ms (upper limits),
// write_ops_per_sec, read_ops_per_sec, total_ops_per_sec (floors),
// or duration_seconds (ceiling; Cycle then names a duration, e.g. "Add new node(s)").
type Threshold struct {
	Cycle  string  `json:"cycle"` // "*" for every cycle, "steady_state", "nemesis", or an exact cycle name
	Metric string  `json:"metric"`
	Limit  float64 `json:"limit"`
	Floor  bool    `json:"floor,omitempty"` // true: value must be >= limit; false: value must be <= limit
	// RatioToSteady: Limit is a multiple of the steady state's (Cycle #0's) value of Metric.
	RatioToSteady bool `json:"ratio_to_steady,omitempty"`
	// RatioToPlan: a duration ceiling that is a multiple of the plan's
	// estimate of that duration ("1.5x plan").
	RatioToPlan bool `json:"ratio_to_plan,omitempty"`
}

// Result is result.json.
type Result struct {
	FormatVersion int            `json:"format_version"`
	Status        string         `json:"status"`
	Reason        string         `json:"reason,omitempty"`
	StartedAt     time.Time      `json:"started_at"`
	EndedAt       time.Time      `json:"ended_at"`
	Setup         Setup          `json:"setup"`
	Nodes         []NodeInfo     `json:"nodes"`
	Cycles        []Cycle        `json:"cycles"`
	Disk          []DiskPhase    `json:"disk_usage"`
	Durations     []Duration     `json:"durations"`
	Steps         []StepTiming   `json:"steps"`
	Stalls        Stalls         `json:"stalls"`
	Errors        []ErrorSummary `json:"errors"`
	// ErrorEvents are the database errors one by one, in time order, with
	// where in the run they happened and whether a filter expected them.
	ErrorEvents []ErrorEvent `json:"error_events"`
	Verdicts    []Verdict    `json:"thresholds"`
	Derived     *Derived     `json:"derived,omitempty"`
	// CapacityAfterOps is the capacity probed after the last topology step
	// (ops/s; 0 when not probed), as the calibration before the steady state.
	CapacityAfterOps float64 `json:"capacity_after_ops,omitempty"`
	// CapacityProbes are the calibration before the steady state
	// ("before") and the probe after the last topology step ("after"),
	// each with whether its figure is only a lower bound of the capacity.
	CapacityProbes []CapacityProbe `json:"capacity_probes,omitempty"`
	// RackBalance is the "DISK USAGE - rack balance" table: disk usage per
	// node and the spread per rack every Setup.RackBalance.EverySeconds.
	RackBalance []RackBalanceRow `json:"rack_balance,omitempty"`
	// Validations are the data validations in run order (the last one
	// after the final hold).
	Validations []Validation `json:"data_validation,omitempty"`
}

// Cycle is one measured window: Cycle #0 is steady state, then one per serial
// grow step or one per parallel batch.
type Cycle struct {
	Name         string    `json:"name"`
	Step         string    `json:"step,omitempty"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	DurationS    float64   `json:"duration_seconds"`
	WriteP90MS   float64   `json:"write_p90_ms"`
	WriteP99MS   float64   `json:"write_p99_ms"`
	ReadP90MS    float64   `json:"read_p90_ms"`
	ReadP99MS    float64   `json:"read_p99_ms"`
	WriteOpsPerS float64   `json:"write_ops_per_sec"`
	ReadOpsPerS  float64   `json:"read_ops_per_sec"`
	Errors       int64     `json:"errors"`
	Dropped      int64     `json:"dropped"`
	// Ops are the cycle's figures per operation of the workload model, in
	// the order the records first name them (write and read for the
	// built-in model); the write and read figures above aggregate them by
	// class.
	Ops    []OpFigures `json:"ops,omitempty"`
	Stalls Stalls      `json:"stalls"`
	// HostLagMSPerS is the scheduling lag of the most-lagged node during
	// the cycle, in ms per second (the rate of reactor_cpu_steal_time_ms:
	// time a node was runnable but did not run, i.e. the host's noise);
	// 0 when the nodes do not export it.
	HostLagMSPerS float64 `json:"host_lag_ms_per_sec,omitempty"`
	// LoaderLagMSPerS is the same for the load generator: the scheduling
	// lag of the most-lagged loader process during the cycle, in ms per
	// second (LatencyRecord.LoaderLagMS); 0 when its records carry none.
	LoaderLagMSPerS float64 `json:"loader_lag_ms_per_sec,omitempty"`
	// CPUStealPct is the CPU steal of the most-stolen node machine during
	// the cycle, in percent of its CPU time (node_exporter's
	// node_cpu_seconds_total{mode="steal"}): time its hypervisor ran
	// something else while a vCPU had work, which the nodes' own lag does
	// not see. 0 when node_exporter has no such series.
	CPUStealPct float64 `json:"cpu_steal_pct,omitempty"`
	// HostBound: the nodes' and the loader's lag and the CPU steal (1% is
	// 10 ms/s) together were at least HostBoundLagMSPerS, enough delayed
	// operations to set the cycle's P99 (see Limitations); or the seconds in
	// which the load generator lagged set it (LoaderLagged.SetP99).
	HostBound bool `json:"host_bound,omitempty"`
	// LoaderLagged is the cycle's P99 without the intervals in which a
	// loader lagged HostBoundLagMSPerS per second or more: a lag that comes
	// in a burst (a node starting, a collection) delays every operation of
	// its second, which in a short cycle is more than the 1% that sets P99,
	// where the cycle's mean lag stays low. nil when no interval lagged so.
	LoaderLagged *LoaderLagged `json:"loader_lagged,omitempty"`
	// NodeWriteP99MS and NodeReadP99MS are the P99 the nodes' coordinators
	// measured during the cycle (nodelatency.go); 0 when they export none.
	NodeWriteP99MS float64 `json:"node_write_p99_ms,omitempty"`
	NodeReadP99MS  float64 `json:"node_read_p99_ms,omitempty"`
	// CompactionBacklog is the compaction backlog of the node whose backlog
	// grew the most during the cycle (scylla_compaction_manager_normalized_backlog,
	// averaged over its shards); nil when the nodes do not export it.
	CompactionBacklog *BacklogGrowth `json:"compaction_backlog,omitempty"`
	// CompactionBehind: that backlog ended at CompactionBehindBacklog or
	// more and grew during the cycle by CompactionBehindGrowth and an eighth
	// of where it began. Compaction did not keep up with the writes:
	// ScyllaDB's controller gives it more of every shard as the backlog
	// grows, up to as much as the requests get, so latency rises with it,
	// and the offered load is more than the cluster sustains.
	CompactionBehind bool `json:"compaction_behind,omitempty"`
	// BusiestReactor is the node whose busiest shard was the most utilized
	// during the cycle, and how long it was saturated: a saturated shard
	// queues its requests, so a P99 that rose with one is the cluster's own
	// (where a host-bound cycle's is the machine's). nil when the nodes'
	// samples carry no busiest-shard reading.
	BusiestReactor *ReactorPeak `json:"busiest_reactor,omitempty"`
	// Cache is the replicas' row cache during the cycle: the share of the
	// partitions reads looked up that were in cache, over all nodes and on
	// the coldest node. nil when the nodes do not export the counters.
	Cache *CacheHits `json:"cache,omitempty"`
}

// CacheHits are a cycle's row cache hits (scylla_cache_partition_hits over
// hits and scylla_cache_partition_misses, row_cache.cc's "cache" group). A
// replica whose cache is cold reads its partitions from sstables, and
// coordinators send it fewer reads (heat-weighted load balancing,
// consistency_level.cc): its reads go to the other replicas, so a node that
// joined cold loads the old ones until it warms.
type CacheHits struct {
	HitPct float64 `json:"hit_pct"`
	// ColdestNode is the node with the lowest hit rate among those that
	// looked up at least MinCacheLookups partitions in the cycle.
	ColdestNode   string  `json:"coldest_node,omitempty"`
	ColdestHitPct float64 `json:"coldest_hit_pct,omitempty"`
	// ColdestLookupsPerS is how many partitions it looked up per second.
	ColdestLookupsPerS float64 `json:"coldest_lookups_per_sec,omitempty"`
}

// MinCacheLookups: a node with fewer partition look-ups in a cycle (one that
// gave its data away, or is idle) is not named the coldest: its rate says
// little.
const MinCacheLookups = 100

// The row cache counters a NodeSample carries (monitor.ScrapedMetrics).
const (
	SampleCacheHits   = "cache_partition_hits"
	SampleCacheMisses = "cache_partition_misses"
)

// OpFigures are one operation's figures in a cycle.
type OpFigures struct {
	Name    string  `json:"name"`
	Class   string  `json:"class"` // OpWrite or OpRead
	Count   int64   `json:"count"` // successful operations
	OpsPerS float64 `json:"ops_per_sec"`
	P50MS   float64 `json:"p50_ms"`
	P90MS   float64 `json:"p90_ms"`
	P99MS   float64 `json:"p99_ms"`
	Errors  int64   `json:"errors"`
	Dropped int64   `json:"dropped"`
}

// CapacityProbe is one capacity probe: the closed-loop saturation probe of
// the load generator (stress.CalibrateWith) and the host it ran on.
type CapacityProbe struct {
	Name        string    `json:"name"` // ProbeBefore | ProbeAfter
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	CapacityOps float64   `json:"capacity_ops"`
	// Unsaturated: the probe ended (its budget, its highest concurrency)
	// with the P99 still under the ceiling, so the cluster did not saturate.
	Unsaturated bool `json:"unsaturated,omitempty"`
	// LoaderLagMSPerS and MachineBusyPct are the most-lagged load
	// generator's scheduling lag and its machine's busy CPU share at the
	// levels that decided the figure (stress.Calibration.HostFigures).
	LoaderLagMSPerS float64 `json:"loader_lag_ms_per_sec,omitempty"`
	MachineBusyPct  float64 `json:"machine_busy_pct,omitempty"`
	// HostLagMSPerS and CPUStealPct are the nodes' lag and their machines'
	// CPU steal during the probe, as a cycle's.
	HostLagMSPerS float64 `json:"host_lag_ms_per_sec,omitempty"`
	CPUStealPct   float64 `json:"cpu_steal_pct,omitempty"`
	// HostBound: the lags and steal added up as in a host-bound cycle, or
	// the load generator's machine had no CPU left (HostBoundBusyPct): the
	// probe measured the machine, and the cluster's capacity is higher.
	HostBound bool `json:"host_bound,omitempty"`
	// ReactorUtilizationPct is the highest reactor utilization any node's
	// busiest shard showed during the probe (scylla_reactor_utilization);
	// nil when the samples have none (Cassandra), or only the mean over
	// shards, which a few saturated shards hardly move (a hot partition,
	// a table with fewer tablets than shards): such a probe is not judged.
	ReactorUtilizationPct *float64 `json:"reactor_utilization_pct,omitempty"`
	// ReactorsUnsaturated: every node's reactor stayed under
	// ProbeReactorSaturatedPct during the probe, so the nodes' CPU did not
	// end it: the load generator's host did, or the nodes' disks or
	// network (ReactorUtilizationPct says what was seen).
	ReactorsUnsaturated bool `json:"reactors_unsaturated,omitempty"`
	// LowerBound: HostBound, Unsaturated or ReactorsUnsaturated;
	// CapacityOps is then only the least the cluster sustains, not its
	// capacity.
	LowerBound bool `json:"lower_bound,omitempty"`
}

// The capacity probes' names (CapacityProbe.Name).
const (
	ProbeBefore = "before"
	ProbeAfter  = "after"
)

// Probe is the named capacity probe, nil when the run has none.
func (r *Result) Probe(name string) *CapacityProbe {
	for i := range r.CapacityProbes {
		if r.CapacityProbes[i].Name == name {
			return &r.CapacityProbes[i]
		}
	}
	return nil
}

// CompactionBehindCycles names the cycles in which compaction fell behind.
func CompactionBehindCycles(cycles []Cycle) []string {
	var names []string
	for _, c := range cycles {
		if c.CompactionBehind {
			names = append(names, c.Name)
		}
	}
	return names
}

// BacklogGrowth is one node's normalized compaction backlog (the backlog
// over the shard's memory) at the start and at the end of a window.
type BacklogGrowth struct {
	Node  string  `json:"node"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// ScyllaDB's compaction controller turns the normalized backlog into the
// compaction group's shares: 50 at 0, 100 at 1.5, 1000 (as many as the
// statement group) from 30 (backlog_controller.hh, compaction_controller).
const (
	// CompactionBehindBacklog is where compaction takes a quarter of a busy
	// shard (333 shares against the requests' 1000): a backlog there or
	// above is one the requests feel.
	CompactionBehindBacklog = 9
	// CompactionBehindGrowth is the controller's first step (1.5): a
	// single compaction's sstables add about that much at once on a small
	// emulated shard, so less is the sawtooth of a steady load.
	CompactionBehindGrowth = 1.5
)

// behind: the backlog ended where the requests feel it and grew by more
// than a steady load's sawtooth moves it.
func (g *BacklogGrowth) behind() bool {
	return g.End >= CompactionBehindBacklog && g.End-g.Start >= max(CompactionBehindGrowth, g.Start/8)
}

// HostBoundLagMSPerS: an operation waits while its loader or its
// coordinator is runnable but not running, so their lags add up (the
// most-lagged node's and loader's, per second of the cycle); 1% of the
// time delays about 1% of the operations by a pause, which is enough to
// set a P99.
const HostBoundLagMSPerS = 10

// HostBoundBusyPct: a closed-loop probe leaves a machine that has CPU to
// spare idle between round trips at every level; when the load generator's
// machine was busy this share of the time or more, runnable work waited for
// a CPU and the probe's throughput is the machine's, not the cluster's.
const HostBoundBusyPct = 95

// The reactor utilization a node sample carries (NodeSample.Metrics, in
// percent): SampleReactorUtilization is scylla_reactor_utilization's mean
// over the node's shards, SampleReactorUtilizationBusiest its busiest
// shard's.
const (
	SampleReactorUtilization        = "reactor_utilization"
	SampleReactorUtilizationBusiest = "reactor_utilization_busiest_shard"
)

// LoaderLagged is a cycle's intervals in which a loader lagged, and its
// P99 without them.
type LoaderLagged struct {
	// Seconds are the lagged intervals' (each loader's interval once).
	Seconds float64 `json:"seconds"`
	// WriteP99MS and ReadP99MS are the cycle's P99 over its other
	// intervals; 0 when every interval lagged.
	WriteP99MS float64 `json:"write_p99_ms"`
	ReadP99MS  float64 `json:"read_p99_ms"`
	// SetP99: without them the cycle's write or read P99 is at most
	// LaggedSetP99Share of itself, so those seconds set it.
	SetP99 bool `json:"set_p99,omitempty"`
}

// LaggedSetP99Share: a cycle whose P99 falls to this share of itself or
// below without the load generator's lagged seconds had its P99 set by
// them. Leaving a few of a cycle's seconds out moves a P99 the model set
// by far less: its slow operations are spread over the cycle.
const LaggedSetP99Share = 0.8

// ReactorPeak is the reactor utilization of a node's busiest shard over an
// interval (SampleReactorUtilizationBusiest: Seastar's 5 s average).
type ReactorPeak struct {
	Node string `json:"node"`
	// PeakPct is its highest reading.
	PeakPct float64 `json:"peak_pct"`
	// SaturatedS is the time its readings were ReactorSaturatedPct or
	// more: each such reading counts the time since the one before it.
	SaturatedS float64 `json:"saturated_s,omitempty"`
}

// ReactorSaturatedPct: a shard reading this or more had next to no idle
// polls for most of Seastar's 5 s average (reactor.cc, the load timer), so
// its requests queued behind one another; the emulator's reading is its
// capacity model's busy share, which reads 100% exactly when requests
// queue on the shard.
const ReactorSaturatedPct = 95

// ProbeReactorSaturatedPct: a capacity probe's P99 rises to its ceiling
// (or its throughput stops growing) when something saturates. When it is
// the nodes' CPU, a reactor has no idle time left: Seastar counts as idle
// only the polls that found no work (reactor.cc, the load timer: the
// gauge "utilization" is 100 × (1 − idle share), averaged over 5 s), so a
// saturated shard reads about 100%, and so does the emulator's (its
// capacity model's busy share). Measured on this project's 2-core
// machine: model-bound probes (i4i.large nodes, ~3,000-6,500 op/s) read
// 100% from their last levels on, and so did one i4i.16xlarge node with
// only 4 tablets (its 4 busy shards of 64 bound it at ~15,000 op/s while
// the mean over shards read 5-11%, hence the busiest shard); probes
// beyond the host (i4i.16xlarge nodes with every shard owning tablets,
// ~22,000-25,000 op/s where the model sustains several times that) read
// at most 26-33% on their busiest shard. Half is a margin for a
// saturating level shorter than Seastar's 5 s average and for sampling
// between levels: a probe whose busiest shard stayed under it was ended
// by something else: the load generator's host, or the nodes' disks or
// network, which leave the reactor idle while they wait.
const ProbeReactorSaturatedPct = 50

// Stalls counts REACTOR_STALLED events as SCT does: each stall once, in the
// bucket whose label is the smallest of 10, 20, 30, 50, 100, 200, 1000, 2000
// ms strictly greater than the stall (labels are exclusive upper bounds:
// "10ms" is under 10 ms, "20ms" 10–19 ms, ...), stalls of 2000 ms and more
// in "2000ms+"; Total is the sum of the buckets. Every bucket is listed,
// empty ones too.
type Stalls struct {
	Total   int64            `json:"total"`
	Buckets []StallBucket    `json:"buckets"`
	PerNode map[string]int64 `json:"per_node,omitempty"`
	// ThresholdMS is each node's --blocked-reactor-notify-ms as its
	// command line gave it (whole-run stalls only): no stall shorter is
	// reported, and at NoStallReportsMS or more none is.
	ThresholdMS map[string]float64 `json:"threshold_ms,omitempty"`
	// SuppressedReports is the stall reports Seastar's rate limit kept out
	// of the log (stall_reports_suppressed events), not in Total: they may
	// all be re-reports of a stall counted already, or stand for up to as
	// many further stalls of unknown length.
	SuppressedReports int64 `json:"suppressed_reports,omitempty"`
}

// NoStallReportsMS is a stall threshold no stall reaches in a run: the
// scylladb/scylla images of 2025.1–2025.3 start ScyllaDB with 999999999
// (dist/docker/scyllasetup.py), which turns stall reports off.
const NoStallReportsMS = 3_600_000

// StallBucket is the count of stalls shorter than BelowMS (and at least the
// previous bucket's bound); BelowMS is 0 for the open last bucket "2000ms+".
type StallBucket struct {
	Label   string `json:"label"`
	BelowMS int    `json:"below_ms,omitempty"`
	Count   int64  `json:"count"`
}

// StallIntervalsMS are SCT's stall bucket bounds (sdcm/sct_events/event_counter.py STALL_INTERVALS).
var StallIntervalsMS = []int{10, 20, 30, 50, 100, 200, 1000, 2000}

// StallOpenLabel is the bucket of stalls of StallIntervalsMS's last bound and more.
const StallOpenLabel = "2000ms+"

// StallLabels are the bucket labels in order: "10ms" ... "2000ms", "2000ms+".
func StallLabels() []string {
	out := make([]string, 0, len(StallIntervalsMS)+1)
	for _, b := range StallIntervalsMS {
		out = append(out, strconv.Itoa(b)+"ms")
	}
	return append(out, StallOpenLabel)
}

// StallBucketIndex is the index in StallLabels of a stall of ms
// milliseconds: like SCT's _get_interval, the first bound strictly greater.
func StallBucketIndex(ms float64) int {
	for i, b := range StallIntervalsMS {
		if ms < float64(b) {
			return i
		}
	}
	return len(StallIntervalsMS)
}

// Count returns the count of the bucket labelled label (0 when absent).
func (s Stalls) Count(label string) int64 {
	for _, b := range s.Buckets {
		if b.Label == label {
			return b.Count
		}
	}
	return 0
}

// DiskPhase is disk usage per node and for the cluster at a named phase.
type DiskPhase struct {
	Phase   string     `json:"phase"`
	Time    time.Time  `json:"time"`
	Nodes   []NodeDisk `json:"nodes"`
	Cluster NodeDisk   `json:"cluster"`
	Source  string     `json:"source,omitempty"` // "snapshot" (disk_snapshot event) or "metrics" (nearest metrics.jsonl samples)
}

// Duration is a named duration (fill phases, Add new node(s), New node(s) ready, Data balanced, Latency recovered).
type Duration struct {
	Name    string    `json:"name"`
	Step    string    `json:"step,omitempty"`
	Cycle   string    `json:"cycle,omitempty"` // the cycle of a step's batch
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	// PlanSeconds is the plan's estimate of this duration, recorded when
	// the run started the phase or step (0: no estimate).
	PlanSeconds float64 `json:"plan_seconds,omitempty"`
}

// States of node_op events.
const (
	NodeOpRequested = "requested"
	NodeOpJoined    = "joined"
	NodeOpLeft      = "left"
)

// NodeOp is one node's part of a topology step: when it was requested and
// when it joined (grow) or left (shrink, drain). The topology coordinator
// executes one join at a time (scylladb service/topology_coordinator.cc),
// so in a parallel grow the nodes are requested together and join one
// after another; in a parallel removal they leave one after another before
// 2026.1 and are drained together from 2026.1 (ScaleIn).
type NodeOp struct {
	Node        string     `json:"node"`
	RequestedAt time.Time  `json:"requested_at"`
	JoinedAt    *time.Time `json:"joined_at,omitempty"`
	LeftAt      *time.Time `json:"left_at,omitempty"`
}

// StepTiming is the timeline of one topology step.
type StepTiming struct {
	Step        string     `json:"step"`
	Cycle       string     `json:"cycle,omitempty"` // one step has one cycle per serial node or parallel batch
	Kind        StepKind   `json:"kind"`
	Mode        string     `json:"mode,omitempty"`
	Nodes       []string   `json:"nodes,omitempty"`
	RequestedAt time.Time  `json:"requested_at"`
	NormalAt    *time.Time `json:"normal_at,omitempty"`
	BalancedAt  *time.Time `json:"balanced_at,omitempty"`
	RecoveredAt *time.Time `json:"recovered_at,omitempty"`
	// NotRecovered: latency did not recover (sustained) before the next step or the end.
	NotRecovered bool       `json:"not_recovered,omitempty"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	// CleanupStartAt, CleanupEndAt: nodetool cleanup on the old nodes (DurCleanup).
	CleanupStartAt *time.Time `json:"cleanup_start_at,omitempty"`
	CleanupEndAt   *time.Time `json:"cleanup_end_at,omitempty"`
	// CleanupSkipped says why cleanup did not run after this step (tablets).
	CleanupSkipped string `json:"cleanup_skipped,omitempty"`
	// NodeOps is each node's request and join or leave, in request order.
	NodeOps []NodeOp `json:"node_ops,omitempty"`
	// PlanSeconds are the plan's estimates of this step's durations by name.
	PlanSeconds map[string]float64 `json:"plan_seconds,omitempty"`
}

// ErrorSummary groups database errors by type and node.
type ErrorSummary struct {
	Type     string    `json:"type"`
	Node     string    `json:"node"`
	Severity string    `json:"severity"`
	Count    int64     `json:"count"`
	First    time.Time `json:"first"`
	Line     string    `json:"line"` // first line seen
}

// Verdict is the outcome of one threshold against one cycle or duration.
type Verdict struct {
	Threshold Threshold `json:"threshold"`
	Subject   string    `json:"subject"` // cycle or duration name
	Value     float64   `json:"value"`
	Passed    bool      `json:"passed"`
	// Limit is the limit the value was judged against: Threshold.Limit, or
	// for a ratio the ratio times Baseline (Cycle #0's value, or the
	// duration's plan estimate), or for a baseline rule its tightest limit.
	Limit    float64 `json:"limit"`
	Baseline float64 `json:"baseline,omitempty"`
	// Rule is the baseline rule of the verdict; Baseline is then the best
	// value of the previous runs and BaselineRun the run it came from
	// (NoBaseline: no previous run had a value, only fixed_limit applied).
	Rule        *BaselineRule `json:"rule,omitempty"`
	BaselineRun string        `json:"baseline_run,omitempty"`
	NoBaseline  bool          `json:"no_baseline,omitempty"`
}

// Derived holds answers a reviewer would otherwise have to compute by hand.
type Derived struct {
	ScaleOutSeconds float64 `json:"scale_out_seconds,omitempty"`
	// The scale-out broken down, each from the first step_requested of a topology step:
	// until the last new nodes were normal, the data balanced, and the latency recovered.
	NodesNormalSeconds      float64            `json:"nodes_normal_seconds,omitempty"`
	DataBalancedSeconds     float64            `json:"data_balanced_seconds,omitempty"`
	LatencyRecoveredSeconds float64            `json:"latency_recovered_seconds,omitempty"`
	VCPUsBefore             int                `json:"vcpus_before,omitempty"`
	VCPUsAfter              int                `json:"vcpus_after,omitempty"`
	Mode                    string             `json:"mode,omitempty"`
	OpsPerVCPUBefore        float64            `json:"ops_per_vcpu_before,omitempty"`
	OpsPerVCPUAfter         float64            `json:"ops_per_vcpu_after,omitempty"`
	DiskBalancePerRackPct   map[string]float64 `json:"disk_balance_per_rack_pct,omitempty"`
	// Capacity (calibrated before the steady state, probed again after the
	// last topology step) per vCPU, and the offered rate's share of each.
	CapacityPerVCPUBefore float64 `json:"capacity_per_vcpu_before,omitempty"`
	CapacityPerVCPUAfter  float64 `json:"capacity_per_vcpu_after,omitempty"`
	OfferedPctBefore      float64 `json:"offered_pct_of_capacity_before,omitempty"`
	OfferedPctAfter       float64 `json:"offered_pct_of_capacity_after,omitempty"`
	// CapacityBeforeLowerBound and CapacityAfterLowerBound: that probe was
	// host-bound or did not saturate the cluster (CapacityProbe.LowerBound),
	// so its capacity per vCPU is a floor, and a smaller figure after than
	// before is not a measured drop.
	CapacityBeforeLowerBound bool `json:"capacity_before_lower_bound,omitempty"`
	CapacityAfterLowerBound  bool `json:"capacity_after_lower_bound,omitempty"`
}
