// Package scenarios is the scenario model of elasticity: the types of a YAML
// scenario, strict loading with file:line and field-path errors, defaults,
// validation and --set overrides. The planner (package plan) turns a loaded
// scenario into the one immutable plan that `elasticity plan` prints and the
// orchestrator (package run) executes.
package scenarios

import (
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/csstress"
)

// Database flavours.
const (
	FlavourScylla    = "scylla"
	FlavourCassandra = "cassandra"
)

// Nemesis step kinds: the single key of a nemesis list item.
const (
	KindGrow         = "grow_cluster"
	KindShrink       = "shrink_cluster"
	KindDecommission = "decommission"
	KindDrain        = "drain"
	KindHold         = "hold"
	KindHook         = "hook"
)

// Step modes.
const (
	ModeSerial   = "serial"
	ModeParallel = "parallel"
)

// Scenario is one resolved scenario: what Load returns after strict decoding,
// --set overrides, defaults and validation. Every field has its default
// filled in, so consumers never need to apply defaults themselves.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// Backend is a registered backend's name (provision.Names; default
	// provision.DefaultBackend, emulated nodes as processes).
	Backend  string   `yaml:"backend"`
	Cluster  Cluster  `yaml:"cluster"`
	Dataset  Dataset  `yaml:"dataset"`
	Workload Workload `yaml:"workload"`
	// SteadyState is the length of Cycle #0 (measured before the nemesis).
	SteadyState Duration `yaml:"steady_state"`
	// Compactions is the wait for compactions to settle before the steady
	// state (and its calibration).
	Compactions Compactions `yaml:"compactions"`
	// Nemesis is the sequence of topology steps, run in order.
	Nemesis []Step `yaml:"nemesis"`
	// FinalHold keeps the workload running after the last step ("Sleep 30 minutes").
	FinalHold  Duration   `yaml:"final_hold"`
	Thresholds Thresholds `yaml:"thresholds"`
	// ExpectedErrors are database errors the scenario expects (SCT's
	// DbEventsFilter): the ERROR and CRITICAL events they match do not fail the run.
	ExpectedErrors []ExpectedError `yaml:"expected_errors,omitempty"`
	// Severities override the default severity of database error types
	// (SCT's defaults/severities.yaml), e.g. {NO_SPACE_ERROR: WARNING}.
	Severities map[string]string `yaml:"severities,omitempty"`
	Report     Report            `yaml:"report"`
	// Validate reads back the data the run wrote, after the final hold
	// (and optionally after each step): any lost row fails the run.
	Validate Validate `yaml:"validate"`
	Timeouts Timeouts `yaml:"timeouts"`
	// Backends are the registered backends' own sections by name (the
	// YAML key), each the backend's own type, decoded, defaulted and
	// validated by it (provision.Options).
	Backends map[string]provision.Options `yaml:",inline"`

	// source is the file the scenario came from ("" when parsed from bytes without a name).
	source string
	// lines and sets locate fields for Warnings (see decoder.pos).
	lines map[string]int
	sets  []string
}

// where turns a recorded line (negative: from the i-th --set) into File and Line.
func (s *Scenario) where(line int) (string, int) {
	if line < 0 && -line-1 < len(s.sets) {
		return "--set " + s.sets[-line-1], 0
	}
	return s.source, line
}

// Cluster is the initial database cluster.
type Cluster struct {
	// Flavour is scylla (default) or cassandra.
	Flavour string `yaml:"flavour"`
	// Version is the database version (image tag, AMI lookup); "" = backend default.
	Version string `yaml:"version,omitempty"`
	// Image is an explicit container image or AMI id; "" = derived from version.
	Image string `yaml:"image,omitempty"`
	// Name is the database cluster_name.
	Name string `yaml:"name"`
	// DC is the data centre name.
	DC string `yaml:"dc"`
	// Racks are the rack names; in YAML a list of names or a count (3 = rack1, rack2, rack3).
	Racks RackList `yaml:"racks"`
	// NodesPerRack is the number of initial nodes in every rack.
	NodesPerRack int `yaml:"nodes_per_rack"`
	// InstanceType is the initial nodes' type, a provision catalog name.
	InstanceType string `yaml:"instance_type"`
	// TabletsInitial is the keyspace's initial tablet count; 0 = vnodes.
	TabletsInitial int `yaml:"tablets_initial"`
	// ExtraArgs are passed to the database on start.
	ExtraArgs []string `yaml:"extra_args,omitempty"`
}

// Dataset is the schema and how the disks are filled.
type Dataset struct {
	RF       int    `yaml:"rf"`
	Keyspace string `yaml:"keyspace"`
	Table    string `yaml:"table"`
	// ValueSize is fixed ("1KiB") or a range ({min: 512B, max: 2KiB}).
	ValueSize ValueSize `yaml:"value_size"`
	// KeyDistribution is how fill picks keys: sequential, the only one (the fill writes new keys in order).
	KeyDistribution string `yaml:"key_distribution"`
	// Fill phases run in order; each writes until the cluster's disk usage reaches its target.
	Fill []FillPhase `yaml:"fill"`
	// FillConcurrency is the number of in-flight fill writes.
	FillConcurrency int `yaml:"fill_concurrency"`
	// FillRate caps fill writes (ops/s); 0 = as fast as the cluster takes them.
	FillRate Rate `yaml:"fill_rate,omitempty"`
}

// What a fill phase's target is measured on.
const (
	FillByMax     = "max"
	FillByAverage = "average"
)

// FillPhase writes data until the cluster's disk usage reaches TargetPercent, then holds.
type FillPhase struct {
	Name          string   `yaml:"name"`
	TargetPercent Percent  `yaml:"target_percent"`
	Hold          Duration `yaml:"hold"`
	// By is what reaches the target: the fullest node ("max", the default,
	// as SCT's get_max_disk_usage stops the fill) or the cluster "average".
	By string `yaml:"by"`
}

// Compactions: before the calibration and the steady state, wait until no
// compaction has run on any node (scylla_compaction_manager_compactions
// summed over the cluster is 0) for Quiet, as SCT's
// wait_no_compactions_running does after a fill (sdcm/tester.py), so that
// the fills' compaction debt does not set Cycle #0's latency. The wait is
// bounded by timeouts.compactions; past it the run goes on with a warning.
type Compactions struct {
	// Wait turns the wait on (default true).
	Wait bool `yaml:"wait"`
	// Quiet is how long no compaction may run (scaled on local, at least
	// MinLocalCompactionsQuiet there).
	Quiet Duration `yaml:"quiet"`
}

// Workload is the fixed-rate mixed workload: measured alone in Cycle #0
// (steady state), then kept running through the nemesis to the end of the run.
type Workload struct {
	// Mix is the write:read ratio ("1:1" or {write: 1, read: 1}).
	Mix Mix `yaml:"mix"`
	// Rate is the fixed total rate in ops/s. Exactly one of Rate and LoadPercent is set.
	Rate Rate `yaml:"rate,omitempty"`
	// LoadPercent is the rate as a percentage of capacity measured by a calibration run.
	LoadPercent Percent `yaml:"load_percent,omitempty"`
	// Calibration is how long capacity is measured when LoadPercent is used (scaled on local).
	Calibration Duration `yaml:"calibration"`
	// Concurrency is the maximum number of in-flight operations.
	Concurrency int `yaml:"concurrency"`
	// Consistency levels per operation.
	Consistency Consistency `yaml:"consistency"`
	// Distribution is how keys are picked: uniform (default), sequential,
	// gaussian, gaussian(S) or gaussian(M%,S%) (keygen.Parse).
	Distribution string `yaml:"distribution"`
	// CapacityAfter probes the capacity again after the last topology step,
	// as the calibration did before the steady state (with load_percent
	// only; default true): capacity per vCPU before and after.
	CapacityAfter bool `yaml:"capacity_after"`

	// The workload's model (at most one of StressCmd, Profile and Kind;
	// none: the built-in key/value table). See Workload.ModelSpec.

	// StressCmd is a cassandra-stress command line (write, read, mixed
	// ratio(...), counter_write, counter_read with their options).
	StressCmd string `yaml:"stress_cmd,omitempty"`
	// Profile is a cassandra-stress user profile file, relative to the
	// scenario file's directory; it is read when the scenario loads (the
	// path becomes absolute).
	Profile string `yaml:"profile,omitempty"`
	// Ops is the content of cassandra-stress's ops(...) for Profile:
	// "insert=1,read1=2".
	Ops string `yaml:"ops,omitempty"`
	// Kind is a scylla-bench mode (write, read, counter_update,
	// counter_read, scan, mixed) with scylla-bench's -partition-count,
	// -clustering-row-count and -clustering-row-size below.
	Kind               string `yaml:"kind,omitempty"`
	PartitionCount     int    `yaml:"partition_count,omitempty"`
	ClusteringRowCount int    `yaml:"clustering_row_count,omitempty"`
	// ClusteringRowSize is a size or scylla-bench's distribution
	// ("fixed:512", "uniform:64..128").
	ClusteringRowSize string `yaml:"clustering_row_size,omitempty"`

	// profileYAML is the Profile file's content, or the profile of a
	// `cassandra-stress user` StressCmd (read at load).
	profileYAML []byte
	// user is StressCmd's `user profile=… ops(…)` line, parsed at load
	// (nil: not a user line); user.Profile is then the absolute path.
	user *csstress.User
}

// Mix is the write:read ratio; only the ratio matters (1:1 == 50:50).
type Mix struct {
	Write float64 `yaml:"write"`
	Read  float64 `yaml:"read"`
}

// WriteFraction is Write/(Write+Read).
func (m Mix) WriteFraction() float64 {
	if m.Write+m.Read == 0 {
		return 0
	}
	return m.Write / (m.Write + m.Read)
}

// Consistency levels per operation (CQL names: ONE, QUORUM, LOCAL_QUORUM, ALL ...).
type Consistency struct {
	Write string `yaml:"write"`
	Read  string `yaml:"read"`
}

// Step is one nemesis list item: exactly one of the kind pointers is set.
// In YAML an item is a mapping with a single key naming the kind, e.g.
//
//   - grow_cluster: {instance_type: i4i.4xlarge, count_per_rack: 1, mode: serial}
type Step struct {
	// Name is given by the `name` key of the step's body, or "grow_cluster #1" style.
	Name   string
	Grow   *Grow   // grow_cluster
	Shrink *Shrink // shrink_cluster and decommission
	Drain  *Drain  // drain
	Hold   *Hold   // hold
	Hook   *Hook   // hook

	kind string
}

// Kind is the YAML key of the step: grow_cluster, shrink_cluster, decommission, drain, hold or hook.
func (s Step) Kind() string { return s.kind }

// ResultKind is the short kind used in results (grow | shrink | drain | hold | hook).
func (s Step) ResultKind() results.StepKind {
	switch s.kind {
	case KindGrow:
		return results.KindGrow
	case KindShrink, KindDecommission:
		return results.KindShrink
	case KindDrain:
		return results.KindDrain
	case KindHold:
		return results.KindHold
	case KindHook:
		return results.KindHook
	}
	return results.StepKind(s.kind)
}

// Grow adds nodes to every rack (or the listed racks).
type Grow struct {
	// InstanceType of the new nodes; defaults to cluster.instance_type.
	InstanceType string `yaml:"instance_type"`
	// CountPerRack is the number of nodes added to each rack.
	CountPerRack int `yaml:"count_per_rack"`
	// Mode serial adds one node at a time (one cycle per node); parallel adds all at once (one cycle).
	Mode string `yaml:"mode"`
	// Racks restricts the step to these racks; empty = all racks.
	Racks []string `yaml:"racks,omitempty"`
}

// Shrink decommissions nodes: CountPerRack per rack, newest first, or the named Nodes.
type Shrink struct {
	CountPerRack int      `yaml:"count_per_rack,omitempty"`
	Nodes        []string `yaml:"nodes,omitempty"`
	Mode         string   `yaml:"mode"`
	Racks        []string `yaml:"racks,omitempty"`
}

// Drain evacuates the data of nodes (by name, or CountPerRack newest first
// in each of Racks), then removes them. Mode parallel requests every
// node's removal at once; before ScyllaDB 2026.1 the topology coordinator
// executes one node request at a time (service/topology_coordinator.cc), so
// the requests queue there; from 2026.1 the nodes are drained in parallel
// and only their final step queues (results.ScaleIn). The step's events
// show which.
type Drain struct {
	Nodes        []string `yaml:"nodes,omitempty"`
	CountPerRack int      `yaml:"count_per_rack,omitempty"`
	Racks        []string `yaml:"racks,omitempty"`
	Mode         string   `yaml:"mode"`
	// Workers was a number of "streaming workers" that mapped to no
	// ScyllaDB setting; it stays only to be refused with that reason.
	Workers int `yaml:"workers,omitempty"`
}

// Hold keeps the workload running for Duration (scaled on local). In YAML
// `- hold: 10m` is short for `- hold: {duration: 10m}`.
type Hold struct {
	Duration Duration `yaml:"duration"`
}

// Hook runs an external command. It gets ELASTICITY_STEP, ELASTICITY_NODES
// and ELASTICITY_HOSTS on top of Env.
type Hook struct {
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args,omitempty"`
	Env     map[string]string `yaml:"env,omitempty"`
	// Timeout is a wall-clock limit (never scaled).
	Timeout Duration `yaml:"timeout"`
	// IgnoreFailure keeps the run going when the command fails.
	IgnoreFailure bool `yaml:"ignore_failure,omitempty"`
}

// Thresholds are SCT fixed_limit-style limits checked at the end of a run.
type Thresholds struct {
	// Cycles are latency limits and throughput floors per cycle.
	Cycles []CycleThreshold `yaml:"cycles,omitempty"`
	// Durations are ceilings of named durations (results.StandardDurations,
	// a fill phase name, or a nemesis step name for every duration of that
	// step). Real-world durations: scaled on local.
	Durations DurationLimits `yaml:"durations,omitempty"`
	// Recovery tunes the sustained latency-recovery rule.
	Recovery RecoveryRule `yaml:"recovery"`
	// Baseline are Argus-style rules against the best value of the previous
	// runs of the scenario (--baseline DIR, or the runs in --history DIR).
	Baseline BaselineRules `yaml:"baseline,omitempty"`
	// RackBalance bounds the spread of disk usage between the nodes of a
	// rack in each row of the rack balance table.
	RackBalance RackBalance `yaml:"rack_balance"`
}

// RackBalance is the rack balance threshold: the most the disk usage of a
// rack's nodes may differ (max - min, percentage points), and whether a
// wider spread warns (SCT's default, Status.WARNING) or fails the run
// (SCT's _enforce_balance, Status.ERROR).
type RackBalance struct {
	MaxSpread Percent `yaml:"max_spread"`
	Action    string  `yaml:"action"`
}

// RecoveryRule: latency has recovered at the start of the first run of
// Intervals consecutive intervals within target (default 10).
type RecoveryRule struct {
	Intervals int `yaml:"intervals"`
}

// BaselineRules are Argus ValidationRules per metric, judged against the
// best value of the previous runs.
type BaselineRules struct {
	Cycles    []BaselineCycle   `yaml:"cycles,omitempty"`
	Durations BaselineDurations `yaml:"durations,omitempty"`
}

// BaselineCycle holds the rules on the metrics of the cycles selected by
// Cycle (as in thresholds.cycles). A nil rule is unset.
type BaselineCycle struct {
	Cycle          string `yaml:"cycle"`
	WriteP90MS     *Rule  `yaml:"write_p90_ms,omitempty"`
	WriteP99MS     *Rule  `yaml:"write_p99_ms,omitempty"`
	ReadP90MS      *Rule  `yaml:"read_p90_ms,omitempty"`
	ReadP99MS      *Rule  `yaml:"read_p99_ms,omitempty"`
	WriteOpsPerSec *Rule  `yaml:"write_ops_per_sec,omitempty"`
	ReadOpsPerSec  *Rule  `yaml:"read_ops_per_sec,omitempty"`
	TotalOpsPerSec *Rule  `yaml:"total_ops_per_sec,omitempty"`
}

// Rule is one Argus ValidationRule (argus/client/generic_result.py): limits
// relative to the best previous value in percent or in the metric's unit,
// and a fixed limit. A nil field is unset.
type Rule struct {
	BestPct    *float64 `yaml:"best_pct,omitempty"`
	BestAbs    *float64 `yaml:"best_abs,omitempty"`
	FixedLimit *float64 `yaml:"fixed_limit,omitempty"`
}

// BaselineDurations is an ordered mapping from duration name to rule.
type BaselineDurations []BaselineDuration

// BaselineDuration is the rule on one named duration (in seconds).
type BaselineDuration struct {
	Name string
	Rule Rule
}

// CycleThreshold applies to the cycles selected by Cycle. A zero limit is unset.
type CycleThreshold struct {
	// Cycle is "*" (default: every cycle), "steady_state", "nemesis" or an exact name ("Cycle #1").
	Cycle      string  `yaml:"cycle"`
	WriteP90MS float64 `yaml:"write_p90_ms,omitempty"`
	WriteP99MS float64 `yaml:"write_p99_ms,omitempty"`
	ReadP90MS  float64 `yaml:"read_p90_ms,omitempty"`
	ReadP99MS  float64 `yaml:"read_p99_ms,omitempty"`
	// Floors.
	WriteOpsPerSec float64 `yaml:"write_ops_per_sec,omitempty"`
	ReadOpsPerSec  float64 `yaml:"read_ops_per_sec,omitempty"`
	TotalOpsPerSec float64 `yaml:"total_ops_per_sec,omitempty"`
	// Limits relative to the steady state (Cycle #0): at most this many
	// times its latency, at least this share of its throughput.
	WriteP90Ratio float64 `yaml:"write_p90_ratio_to_steady,omitempty"`
	WriteP99Ratio float64 `yaml:"write_p99_ratio_to_steady,omitempty"`
	ReadP90Ratio  float64 `yaml:"read_p90_ratio_to_steady,omitempty"`
	ReadP99Ratio  float64 `yaml:"read_p99_ratio_to_steady,omitempty"`
	TotalOpsRatio float64 `yaml:"total_ops_ratio_to_steady,omitempty"`
}

// DurationLimits is an ordered mapping from duration name to ceiling.
type DurationLimits []DurationLimit

// DurationLimit is one ceiling: Max, or PlanFactor times the plan's
// estimate of the duration ("1.5x plan").
type DurationLimit struct {
	Name       string
	Max        Duration
	PlanFactor float64
}

// Report lists the report formats written at the end of a run.
type Report struct {
	// Formats: md, html, json.
	Formats []string `yaml:"formats"`
	// DashboardURL is a link template (e.g. a Grafana dashboard of ScyllaDB
	// Monitoring) with {from_ms} and {to_ms}: each cycle gets a link to it.
	DashboardURL string `yaml:"dashboard_url,omitempty"`
	// DiskBalanceEvery is the period of the "DISK USAGE - rack balance"
	// table's rows (SCT's PeriodicDiskUsageToArgus interval; scaled on local).
	DiskBalanceEvery Duration `yaml:"disk_balance_every"`
}

// Validate is the data validation: the fill's keys are known and each
// key's value is a function of the key, so Sample keys are read back one
// by one and TokenRanges of the ring's 32 equal ranges are scanned end to
// end at Consistency, counting missing rows and rows with another value.
// Sample 0 and TokenRanges 0 turn it off.
type Validate struct {
	// Sample is a number of keys or "all" (default 10000).
	Sample CountOrAll `yaml:"sample"`
	// Consistency of the reads (default ALL: a row counts as lost only
	// when no replica has it; ONE shows what a single replica lost).
	Consistency string `yaml:"consistency"`
	// TokenRanges is how many of the ring's 32 equal token ranges are
	// scanned, spread over the ring, or "all" (default 4).
	TokenRanges CountOrAll `yaml:"token_ranges"`
	// AfterEachStep validates after every nemesis step too (under load).
	AfterEachStep bool `yaml:"after_each_step,omitempty"`
}

// CountOrAll is a non-negative count or "all" (All).
type CountOrAll int64

// All is the "all" of a CountOrAll.
const All CountOrAll = -1

// MarshalYAML writes "all" or the number.
func (c CountOrAll) MarshalYAML() (any, error) {
	if c == All {
		return "all", nil
	}
	return int64(c), nil
}

// Timeouts bound every wait of a run. They are wall-clock limits and are
// never scaled; their defaults depend on the backend.
type Timeouts struct {
	// NodeReady: a new node is UN (and an initial node answers CQL).
	NodeReady Duration `yaml:"node_ready"`
	// DataBalanced: tablet migrations / streaming after a topology change are done.
	DataBalanced Duration `yaml:"data_balanced"`
	// LatencyRecovered: latency back within thresholds after a step.
	LatencyRecovered Duration `yaml:"latency_recovered"`
	// Fill: one fill phase reaches its target.
	Fill Duration `yaml:"fill"`
	// Step: one whole nemesis step.
	Step Duration `yaml:"step"`
	// Teardown: destroying the cluster.
	Teardown Duration `yaml:"teardown"`
	// Compactions: compactions settle before the steady state (then the
	// run goes on with a warning).
	Compactions Duration `yaml:"compactions"`
}

// Source is the file the scenario was loaded from ("" if none).
func (s *Scenario) Source() string { return s.source }

// ExpectedError is one expected_errors filter: Type and/or Regex (on the
// original log line), optionally only During a nemesis step, cycle or phase,
// and at most MaxCount events (0: any number).
type ExpectedError struct {
	Type     string `yaml:"type,omitempty"`
	Regex    string `yaml:"regex,omitempty"`
	During   string `yaml:"during,omitempty"`
	MaxCount int    `yaml:"max_count,omitempty"`
}

// Given reports whether the field at path was given in the file or by --set
// (the planner notes the settings a workload model's own replace).
func (s *Scenario) Given(path string) bool {
	_, ok := s.lines[path]
	return ok
}
