// Package plan is the planner: Resolve turns a loaded scenario
// (package scenarios) into its one immutable Plan, what `elasticity plan`
// prints and the orchestrator (package run) executes. Resolving copies the
// scenario into the plan in the plan's own terms; estimating adds the
// figures and durations computed from the backend's model.
package plan

import (
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// Plan is what a scenario will do, computed without running anything: the
// nodes, the data volume of each fill phase, the phases in order with their
// (scaled) durations, thresholds, timeouts and a wall-time estimate.
// Estimated figures are marked as such; the run measures the real ones.
type Plan struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
	Backend     string `json:"backend"`
	// Emulated comes from the backend: figures are shapes, not ScyllaDB's.
	Emulated bool `json:"emulated"`
	// TimeScale multiplies scenario durations (1 except on local and docker).
	TimeScale float64 `json:"time_scale"`
	// StorageScaleMiBPerGB is set for scaled disks (emulated nodes, docker's
	// tmpfs): a node's disk is catalog GB × this many MiB.
	StorageScaleMiBPerGB float64 `json:"storage_scale_mib_per_gb,omitempty"`
	// LocalDataDir is where the nodes keep their data on this machine, as the
	// backend names it (provision.Config.NodeData: local.data_dir).
	LocalDataDir   string   `json:"local_data_dir,omitempty"`
	Flavour        string   `json:"flavour"`
	Version        string   `json:"version,omitempty"`
	Racks          []string `json:"racks"`
	RF             int      `json:"rf"`
	TabletsInitial int      `json:"tablets_initial"`
	Keyspace       string   `json:"keyspace"`
	Table          string   `json:"table"`
	ValueSize      string   `json:"value_size"`
	// Nodes are node groups: the initial nodes and those each grow step adds.
	Nodes []Nodes `json:"nodes"`
	// InitialCapacityBytes is the initial cluster's raw disk capacity.
	InitialCapacityBytes float64             `json:"initial_capacity_bytes"`
	Fill                 []Fill              `json:"fill"`
	Workload             Workload            `json:"workload"`
	Phases               []Phase             `json:"phases"`
	Thresholds           []results.Threshold `json:"thresholds"`
	Timeouts             []Timeout           `json:"timeouts"`
	// RackBalance is the rack balance table's period (scaled) and threshold.
	RackBalance results.RackBalanceSpec `json:"rack_balance"`
	// Validate is the data validation (Sample and TokenRanges -1: all).
	Validate Validation `json:"validate"`
	// EstimatedSeconds is the estimated wall time of the whole run.
	EstimatedSeconds float64 `json:"estimated_seconds"`
	// Extra holds the backend's own lines (e.g. cost estimates), grouped by Section.
	Extra []Line `json:"extra,omitempty"`

	// What the run executes (the resolved scenario.yaml says the same in
	// the scenario's own terms): not part of the plan's JSON.

	// Provision is the backend's part: cluster spec, loaders, its section.
	Provision provision.Config `json:"-"`
	// Model is the backend's facts (emulated, capacity, streaming).
	Model provision.Model `json:"-"`
	// Limitations are stated in every report of the run.
	Limitations []string `json:"-"`
	// DashboardURL is report.dashboard_url (a template with {from_ms} and {to_ms}).
	DashboardURL string `json:"-"`
	// ExpectedErrors and Severities judge the run's database errors.
	ExpectedErrors []results.ErrorFilter `json:"-"`
	Severities     map[string]string     `json:"-"`
	// BaselineRules are thresholds.baseline (judged against previous runs).
	BaselineRules []results.BaselineRule `json:"baseline_rules,omitempty"`
	// RecoveryIntervals is N of sustained latency recovery.
	RecoveryIntervals int    `json:"recovery_intervals"`
	Data              Data   `json:"-"`
	Load              Load   `json:"-"`
	Steps             []Step `json:"-"`
	// Compactions is the wait for compactions before the steady state.
	Compactions Compactions `json:"compactions"`
	// SteadyState and FinalHold are scaled.
	SteadyState time.Duration `json:"-"`
	FinalHold   time.Duration `json:"-"`
	Waits       Waits         `json:"-"`
	// YAML is the resolved scenario, written to scenario.yaml.
	YAML []byte `json:"-"`
}

// Nodes is a group of nodes of one type in one rack.
type Nodes struct {
	Rack         string `json:"rack"`
	InstanceType string `json:"instance_type"`
	Count        int    `json:"count"`
	VCPUs        int    `json:"vcpus"`
	// DiskBytes is one node's disk (scaled on local).
	DiskBytes float64 `json:"disk_bytes"`
	// AddedBy is the nemesis step adding these nodes ("" for the initial cluster).
	AddedBy string `json:"added_by,omitempty"`
}

// Fill is one fill phase's data volume.
type Fill struct {
	Name          string  `json:"name"`
	TargetPercent float64 `json:"target_percent"`
	// By is max (the fullest node reaches the target) or average (the cluster).
	By string `json:"by"`
	// TargetBytes is the data on disk (all replicas) at the target.
	TargetBytes float64 `json:"target_bytes"`
	// WriteBytes is what this phase adds on disk (all replicas); UniqueBytes = WriteBytes / RF.
	WriteBytes  float64 `json:"write_bytes"`
	UniqueBytes float64 `json:"unique_bytes"`
	// Rows is the number of rows this phase writes (UniqueBytes / mean value size).
	Rows             int64   `json:"rows"`
	EstimatedSeconds float64 `json:"estimated_seconds"`
	HoldSeconds      float64 `json:"hold_seconds"`
	// Hold is HoldSeconds as the run waits it.
	Hold time.Duration `json:"-"`
}

// ByAverage says whether the cluster's average reaches the target (else the fullest node).
func (f Fill) ByAverage() bool { return f.By == scenarios.FillByAverage }

// Workload is the resolved workload.
type Workload struct {
	WriteRatio  float64 `json:"write_ratio"`
	ReadRatio   float64 `json:"read_ratio"`
	RateOpsPerS float64 `json:"rate_ops_per_sec,omitempty"`
	LoadPercent float64 `json:"load_percent,omitempty"`
	// EstimatedCapacityOps is the capacity assumed for estimates; the run calibrates the real one.
	EstimatedCapacityOps float64 `json:"estimated_capacity_ops"`
	// EstimatedRateOpsPerS is Rate, or LoadPercent of EstimatedCapacityOps.
	EstimatedRateOpsPerS float64 `json:"estimated_rate_ops_per_sec"`
	Concurrency          int     `json:"concurrency"`
	WriteConsistency     string  `json:"write_consistency"`
	ReadConsistency      string  `json:"read_consistency"`
	Distribution         string  `json:"distribution"`
	// Loaders run the workload (`elasticity stress`, records merged); 0
	// means the runner drives it itself.
	Loaders            int    `json:"loaders,omitempty"`
	LoaderInstanceType string `json:"loader_instance_type,omitempty"`
	// Model is the workload model as resolved (the built-in one too).
	Model *ModelPlan `json:"model,omitempty"`
}

// Phase is one phase of the run in order.
type Phase struct {
	Phase string `json:"phase"` // provision, schema, fill, hold, compactions, calibrate, steady_state, nemesis, final_hold, teardown
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"` // nemesis step kind
	Mode  string `json:"mode,omitempty"`
	// Cycles is how many measured cycles the phase yields (steady state: 1; serial grow: one per node).
	Cycles int `json:"cycles,omitempty"`
	// Seconds is the (scaled) duration: exact for holds, an estimate when Estimated.
	Seconds   float64 `json:"seconds"`
	Estimated bool    `json:"estimated"`
	// StartSeconds is the estimated offset from the start of the run.
	StartSeconds float64 `json:"start_seconds"`
	Detail       string  `json:"detail,omitempty"`
}

// Timeout is one wait's limit.
type Timeout struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Line is one extra line of a plan, added by the backend's registration.
type Line = provision.PlanLine

// Step is one resolved nemesis step: defaults applied, durations
// scaled, a hook's command line split.
type Step struct {
	Name         string
	Kind         results.StepKind
	Mode         string // serial | parallel
	InstanceType string
	CountPerRack int
	Racks        []string
	Nodes        []string
	// Duration is a hold's (scaled) length or a hook's wall-clock timeout.
	Duration time.Duration
	// Estimates are the plan's estimates of each batch's durations (one
	// per serial node or parallel batch, in order), by duration name: what
	// the run records beside the step and the report shows beside the
	// measured durations.
	Estimates     []map[string]float64
	Command       []string
	HookEnv       map[string]string
	IgnoreFailure bool
}

// Data is the schema and how it is written.
type Data struct {
	Keyspace, Table, DC string
	RF                  int
	// Tablets is the keyspace's initial tablets: -1 asks for vnodes (scylla
	// with tablets_initial 0), 0 the database's default.
	Tablets            int
	ValueMin, ValueMax int
	FillConcurrency    int
	FillRate           float64
}

// Load is the workload as the load generator runs it.
type Load struct {
	// ModelSpec is the workload model's spec (stress.Job.Model): "kv" or
	// a form's self-contained spec.
	ModelSpec string
	// MixWrite and MixRead are the scenario's weights (only their ratio
	// matters), or a model's operations' weights by class.
	MixWrite, MixRead float64
	Rate              float64 // fixed ops/s; 0: LoadPercent of the calibrated capacity
	LoadPercent       float64
	Calibration       time.Duration // scaled
	Concurrency       int
	WriteCL, ReadCL   string
	Distribution      string
	// CapacityAfter probes the capacity again after the last topology
	// step: workload.capacity_after, LoadPercent calibrated the rate, and
	// a topology step changes what it would measure (probesCapacityAfter).
	CapacityAfter bool
	// Loaders are separate load generators (Count 0: the runner itself).
	Loaders provision.LoaderSpec
	// LoaderBinary is the elasticity executable copied to remote loaders ("" = this one).
	LoaderBinary string
	// SSHUser and SSHKey reach remote loaders.
	SSHUser, SSHKey string
}

// Validation is the data validation of a run (validate:); it is off
// when it reads nothing.
type Validation struct {
	Sample        int64  `json:"sample"`       // keys read one by one; -1: all
	TokenRanges   int    `json:"token_ranges"` // of results.RingParts; -1: all
	Consistency   string `json:"consistency"`
	AfterEachStep bool   `json:"after_each_step,omitempty"`
}

// Enabled reports whether the validation reads anything.
func (v Validation) Enabled() bool { return v.Sample != 0 || v.TokenRanges != 0 }

// Compactions is the wait for compactions to settle before the
// calibration and the steady state (compactions:, timeouts.compactions).
type Compactions struct {
	Wait bool `json:"wait"`
	// Quiet is how long no compaction may run (scaled; on local at least
	// scenarios.MinLocalCompactionsQuiet); Timeout bounds the wait (wall clock).
	Quiet          time.Duration `json:"-"`
	QuietSeconds   float64       `json:"quiet_seconds"`
	TimeoutSeconds float64       `json:"timeout_seconds"`
}

// Waits bound the run's waits: wall-clock ceilings (never scaled) and
// the figures adaptive timeouts derive from.
type Waits struct {
	NodeReady, DataBalanced, LatencyRecovered, Fill, Step, Teardown, Compactions time.Duration
	// TimeoutBase and StreamBytesPerSec feed the derived wait timeouts.
	TimeoutBase       time.Duration
	StreamBytesPerSec float64
}

// Resolve turns a loaded scenario into its one immutable plan: what
// `elasticity plan` prints and what `elasticity run` executes. The backend
// must be registered (import provision/all). env is the environment the
// backend may read (nil: none); Resolve reads nothing of the process's.
func Resolve(s *scenarios.Scenario, env provision.Env) (*Plan, error) {
	be, err := provision.Lookup(s.Backend)
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	y, err := s.YAML()
	if err != nil {
		return nil, fmt.Errorf("rendering the resolved scenario: %w", err)
	}
	cfg := backendConfig(s)
	cfg.Env = env
	m := be.Model(&cfg)
	p := resolve(s, m, cfg)
	model, mp, err := resolveModel(s, p.Data)
	if err != nil {
		return nil, fmt.Errorf("workload model: %w", err)
	}
	applyModel(p, s, model, mp)
	estimate(p, s, m)
	p.YAML = y
	if be.PlanLines != nil {
		p.Extra = append(p.Extra, be.PlanLines(&p.Provision, p.Facts())...)
	}
	return p, nil
}

// Facts are the plan's figures a backend's plan lines and pre-flight
// checks use.
func (p *Plan) Facts() provision.PlanFacts {
	f := provision.PlanFacts{InstanceCounts: map[string]int{}, EstimatedSeconds: p.EstimatedSeconds}
	for _, fl := range p.Fill {
		f.MaxFillPercent = max(f.MaxFillPercent, fl.TargetPercent)
	}
	for _, n := range p.Nodes {
		f.InstanceCounts[n.InstanceType] += n.Count
		f.DiskBytes += int64(n.DiskBytes) * int64(n.Count)
		if n.AddedBy != "" {
			f.Grown = append(f.Grown, provision.NodeGroup{Rack: n.Rack, InstanceType: n.InstanceType, Count: n.Count})
		}
	}
	return f
}

// Estimated is the estimated wall time as a duration.
func (p *Plan) Estimated() time.Duration {
	return time.Duration(p.EstimatedSeconds * float64(time.Second))
}
