// Package plan is the planner: Resolve turns a loaded scenario
// (package scenarios) into its one immutable Plan, what `elasticity plan`
// prints and the orchestrator (package run) executes. Resolving copies the
// scenario into the plan in the plan's own terms; estimating adds the
// figures and durations computed from the backend's model.
package plan

import (
	"fmt"
	"strings"
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
	// LocalDataDir is where local nodes keep their data (local.data_dir).
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
	// MixWrite and MixRead are the scenario's weights (only their ratio matters).
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
	p := estimate(s, be.Model(&cfg), cfg)
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
	for _, n := range p.Nodes {
		f.InstanceCounts[n.InstanceType] += n.Count
		f.DiskBytes += int64(n.DiskBytes) * int64(n.Count)
		if n.AddedBy != "" {
			f.Grown = append(f.Grown, provision.NodeGroup{Rack: n.Rack, InstanceType: n.InstanceType, Count: n.Count})
		}
	}
	return f
}

// backendConfig maps the scenario's sections to the backend settings: the
// only place that does.
func backendConfig(s *scenarios.Scenario) provision.Config {
	l := s.Local
	c := provision.Config{
		Backend: s.Backend,
		Cluster: provision.ClusterSpec{
			Scenario:     s.Name,
			ClusterName:  s.Cluster.Name,
			Flavour:      s.Cluster.Flavour,
			Version:      s.Cluster.Version,
			Image:        s.Cluster.Image,
			DC:           s.Cluster.DC,
			Racks:        append([]string(nil), s.Cluster.Racks...),
			NodesPerRack: s.Cluster.NodesPerRack,
			InstanceType: s.Cluster.InstanceType,
			ExtraArgs:    s.Cluster.ExtraArgs,
			TTL:          s.AWS.TTL.D(),
		},
		Emulator: provision.EmulatorScale{StorageScaleMiBPerGB: l.StorageScaleMiBPerGB, OpsPerVCPU: l.OpsPerVCPU,
			StreamMiBPerVCPU: l.StreamMiBPerVCPU, TimeScale: l.TimeScale, BlockedReactorNotifyMS: l.BlockedReactorNotifyMS},
		Local: provision.LocalConfig{BaseAddress: l.BaseAddress, DataDir: l.DataDir},
		Docker: provision.DockerConfig{Image: s.Docker.Image, SMP: s.Docker.SMP, MemoryBytes: int64(s.Docker.Memory), Network: s.Docker.Network,
			DataMount: s.Docker.DataMount, StorageScaleMiBPerGB: s.Docker.StorageScaleMiBPerGB, TimeScale: s.Docker.TimeScale},
		AWS: provision.AWSConfig{Region: s.AWS.Region, AvailabilityZones: s.AWS.AvailabilityZones, SubnetIDs: s.AWS.SubnetIDs,
			SecurityGroupIDs: s.AWS.SecurityGroupIDs, AMI: s.AWS.AMI, LoaderAMI: s.AWS.LoaderAMI, LoaderBinary: s.AWS.LoaderBinary,
			KeyPair: s.AWS.KeyPair, RunnerCIDR: s.AWS.RunnerCIDR, Spot: s.AWS.Spot, PrivateIPs: s.AWS.PrivateIPs,
			SSHUser: s.AWS.SSHUser, SSHKey: s.AWS.SSHKey},
	}
	if c.Docker.Image == "" {
		c.Docker.Image = s.Cluster.Image
	}
	switch s.Backend {
	case scenarios.BackendAWS:
		c.Cluster.Labels = s.AWS.Tags
		c.Loaders = provision.LoaderSpec{Count: s.AWS.LoaderCount, InstanceType: s.AWS.LoaderInstanceType}
	case scenarios.BackendLocal:
		c.Loaders = provision.LoaderSpec{Count: s.Local.Loaders}
	}
	st := s.Static
	c.Static.Hosts = st.Hosts
	c.Static.AddNode, c.Static.RemoveNode = command(st.AddNode), command(st.RemoveNode)
	c.Static.StopNode, c.Static.KillNode, c.Static.StartNode = command(st.StopNode), command(st.KillNode), command(st.StartNode)
	return c
}

func command(c *scenarios.Command) *provision.Command {
	if c == nil {
		return nil
	}
	return &provision.Command{Argv: append([]string{c.Command}, c.Args...), Env: c.Env, Timeout: c.Timeout.D()}
}

// replicaOpsPerOp is what one workload operation costs the cluster in
// replica operations (the unit of ops_per_vcpu): RF for a write, the
// replicas the read consistency level contacts for a read.
func replicaOpsPerOp(s *scenarios.Scenario) float64 {
	rf := max(1, s.Dataset.RF)
	reads := rf/2 + 1
	switch strings.ToUpper(s.Workload.Consistency.Read) {
	case "ONE", "LOCAL_ONE", "ANY":
		reads = 1
	case "TWO":
		reads = min(2, rf)
	case "THREE":
		reads = min(3, rf)
	case "ALL":
		reads = rf
	}
	wf := s.Workload.Mix.WriteFraction()
	return wf*float64(rf) + (1-wf)*float64(reads)
}

// step resolves one nemesis step.
func step(s *scenarios.Scenario, st scenarios.Step, scale func(scenarios.Duration) time.Duration) Step {
	ps := Step{Name: st.Name, Kind: st.ResultKind()}
	switch {
	case st.Grow != nil:
		ps.Mode, ps.InstanceType, ps.CountPerRack, ps.Racks = st.Grow.Mode, st.Grow.InstanceType, st.Grow.CountPerRack, st.Grow.Racks
	case st.Shrink != nil:
		ps.Mode, ps.CountPerRack, ps.Nodes, ps.Racks = st.Shrink.Mode, st.Shrink.CountPerRack, st.Shrink.Nodes, st.Shrink.Racks
	case st.Drain != nil:
		ps.Mode, ps.CountPerRack, ps.Nodes, ps.Racks = st.Drain.Mode, st.Drain.CountPerRack, st.Drain.Nodes, st.Drain.Racks
	case st.Hold != nil:
		ps.Duration = scale(st.Hold.Duration)
	case st.Hook != nil:
		ps.Command = append([]string{st.Hook.Command}, st.Hook.Args...)
		if len(st.Hook.Args) == 0 && strings.ContainsAny(st.Hook.Command, " \t|;&$") {
			ps.Command = []string{"sh", "-c", st.Hook.Command}
		}
		ps.HookEnv = st.Hook.Env
		ps.IgnoreFailure = st.Hook.IgnoreFailure
		ps.Duration = st.Hook.Timeout.D() // wall clock, never scaled
	}
	return ps
}

// estimate computes the plan with the backend's model.
func estimate(s *scenarios.Scenario, m provision.Model, cfg provision.Config) *Plan {
	p := &Plan{
		Scenario:       s.Name,
		Description:    s.Description,
		Source:         s.Source(),
		Backend:        s.Backend,
		Emulated:       m.Emulated,
		TimeScale:      m.TimeScale,
		Flavour:        s.Cluster.Flavour,
		Version:        s.Cluster.Version,
		Racks:          append([]string(nil), s.Cluster.Racks...),
		RF:             s.Dataset.RF,
		TabletsInitial: s.Cluster.TabletsInitial,
		Keyspace:       s.Dataset.Keyspace,
		Table:          s.Dataset.Table,
		ValueSize:      s.Dataset.ValueSize.String(),
		Provision:      cfg,
		Model:          m,
		Limitations:    m.Limitations,
		DashboardURL:   s.Report.DashboardURL,
		Severities:     s.Severities,
	}
	for _, f := range s.ExpectedErrors {
		p.ExpectedErrors = append(p.ExpectedErrors, results.ErrorFilter{Type: f.Type, Regex: f.Regex, During: f.During, MaxCount: f.MaxCount})
	}
	if m.Emulated || m.StorageScaleMiBPerGB > 0 {
		p.StorageScaleMiBPerGB = m.StorageScaleMiBPerGB
	}
	if s.Backend == scenarios.BackendLocal {
		p.LocalDataDir = s.Local.DataDir
	}
	scaleD := func(d scenarios.Duration) time.Duration {
		if m.TimeScale <= 0 || m.TimeScale == 1 {
			return d.D()
		}
		return time.Duration(float64(d) * m.TimeScale)
	}
	scaled := func(d scenarios.Duration) float64 { return scaleD(d).Seconds() }
	p.Thresholds = s.ResultThresholds(scaleD)
	p.BaselineRules = s.ResultBaselineRules(scaleD)
	p.RecoveryIntervals = s.Thresholds.Recovery.Intervals
	streamBytesPerVCPU := m.StreamMiBPerVCPU * (1 << 20)

	// Node inventory, tracked through the nemesis for capacity and vCPUs.
	type node struct {
		rack string
		it   provision.InstanceType
	}
	var nodes []node
	it0, _ := provision.LookupInstanceType(s.Cluster.InstanceType)
	for _, r := range s.Cluster.Racks {
		p.Nodes = append(p.Nodes, Nodes{Rack: r, InstanceType: it0.Name, Count: s.Cluster.NodesPerRack, VCPUs: it0.VCPUs, DiskBytes: m.NodeDiskBytes(it0)})
		for i := 0; i < s.Cluster.NodesPerRack; i++ {
			nodes = append(nodes, node{r, it0})
		}
	}
	capacity := func() (bytes float64, vcpus int) {
		for _, n := range nodes {
			bytes += m.NodeDiskBytes(n.it)
			vcpus += n.it.VCPUs
		}
		return
	}
	minVCPUs := func() int {
		m := 0
		for i, n := range nodes {
			if i == 0 || n.it.VCPUs < m {
				m = n.it.VCPUs
			}
		}
		return m
	}
	capBytes, vcpus := capacity()
	p.InitialCapacityBytes = capBytes

	w := s.Workload
	p.Workload = Workload{
		WriteRatio: w.Mix.WriteFraction(), ReadRatio: 1 - w.Mix.WriteFraction(),
		RateOpsPerS: float64(w.Rate), LoadPercent: float64(w.LoadPercent),
		EstimatedCapacityOps: m.OpsPerVCPU * float64(vcpus) / replicaOpsPerOp(s),
		Concurrency:          w.Concurrency,
		WriteConsistency:     w.Consistency.Write, ReadConsistency: w.Consistency.Read,
		Distribution: w.Distribution,
	}
	p.Workload.Loaders, p.Workload.LoaderInstanceType = cfg.Loaders.Count, cfg.Loaders.InstanceType
	if w.Rate > 0 {
		p.Workload.EstimatedRateOpsPerS = float64(w.Rate)
	} else {
		p.Workload.EstimatedRateOpsPerS = w.LoadPercent.Fraction() * p.Workload.EstimatedCapacityOps
	}

	var t float64
	add := func(ph Phase) {
		ph.StartSeconds = t
		t += ph.Seconds
		p.Phases = append(p.Phases, ph)
	}
	add(Phase{Phase: "provision", Name: fmt.Sprintf("start %d × %s", len(nodes), it0.Name), Seconds: m.SetupSeconds, Estimated: true})
	add(Phase{Phase: "schema", Name: fmt.Sprintf("%s.%s RF=%d", s.Dataset.Keyspace, s.Dataset.Table, s.Dataset.RF), Seconds: 1, Estimated: true})

	// Fill: the workload is not running yet, so fill gets the cluster's capacity
	// (or fill_rate); each write lands on RF replicas.
	rf := float64(s.Dataset.RF)
	mean := s.Dataset.ValueSize.Mean()
	// Each fill write is RF replica writes.
	fillOps := m.OpsPerVCPU * float64(vcpus) / float64(max(1, s.Dataset.RF))
	if m.FillMiBPerVCPU > 0 && mean > 0 {
		// Real nodes take bulk writes far more cheaply than the mixed workload:
		// estimate from on-disk bandwidth instead.
		fillOps = m.FillMiBPerVCPU * (1 << 20) * float64(vcpus) / (mean * rf)
	}
	if s.Dataset.FillRate > 0 {
		fillOps = min(fillOps, float64(s.Dataset.FillRate))
	}
	var onDisk float64
	for _, f := range s.Dataset.Fill {
		target := f.TargetPercent.Fraction() * capBytes
		pf := Fill{Name: f.Name, By: f.By, TargetPercent: float64(f.TargetPercent), TargetBytes: target, WriteBytes: max(0, target-onDisk)}
		pf.UniqueBytes = pf.WriteBytes / rf
		if mean > 0 {
			pf.Rows = int64(pf.UniqueBytes / mean)
		}
		if fillOps > 0 {
			pf.EstimatedSeconds = float64(pf.Rows) / fillOps
		}
		pf.HoldSeconds = scaled(f.Hold)
		p.Fill = append(p.Fill, pf)
		onDisk = max(onDisk, target)
		add(Phase{Phase: "fill", Name: f.Name, Seconds: pf.EstimatedSeconds, Estimated: true,
			Detail: fmt.Sprintf("write %s (%s unique) to reach %v", scenarios.HumanBytes(pf.WriteBytes), scenarios.HumanBytes(pf.UniqueBytes), f.TargetPercent)})
		if f.Hold > 0 {
			add(Phase{Phase: "hold", Name: f.Name, Seconds: pf.HoldSeconds, Detail: "let compactions settle"})
		}
	}

	if s.Compactions.Wait {
		q := scaleD(s.Compactions.Quiet)
		if s.Backend == scenarios.BackendLocal {
			q = max(q, scenarios.MinLocalCompactionsQuiet)
		}
		p.Compactions = Compactions{Wait: true, Quiet: q, QuietSeconds: q.Seconds(), TimeoutSeconds: s.Timeouts.Compactions.D().Seconds()}
		add(Phase{Phase: string(results.PhaseCompactions), Name: results.DurCompactions, Seconds: q.Seconds(), Estimated: true,
			Detail: fmt.Sprintf("until no compaction has run for %s (up to %s)", q.Round(100*time.Millisecond), s.Timeouts.Compactions)})
	}
	calStep, calibration := CalibrationSchedule(scaleD(w.Calibration))
	if w.Rate == 0 {
		add(Phase{Phase: "calibrate", Name: "measure capacity", Seconds: calibration.Seconds(), Estimated: true,
			Detail: fmt.Sprintf("then run at %v of it", w.LoadPercent)})
	}
	add(Phase{Phase: "steady_state", Name: "Cycle #0", Cycles: 1, Seconds: scaled(s.SteadyState)})

	estimates := make([][]map[string]float64, len(s.Nemesis))
	for si, st := range s.Nemesis {
		ph := Phase{Phase: "nemesis", Name: st.Name, Kind: st.Kind(), Estimated: true}
		capBytes, vcpus = capacity()
		switch {
		case st.Grow != nil:
			g := st.Grow
			it, _ := provision.LookupInstanceType(g.InstanceType)
			racks := g.Racks
			if len(racks) == 0 {
				racks = s.Cluster.Racks
			}
			n := len(racks) * g.CountPerRack
			for _, r := range racks {
				p.Nodes = append(p.Nodes, Nodes{Rack: r, InstanceType: it.Name, Count: g.CountPerRack, VCPUs: it.VCPUs, DiskBytes: m.NodeDiskBytes(it), AddedBy: st.Name})
			}
			// Tablets are balanced by count, so each new node ends up with about
			// 1/N of the data; it streams from the old nodes, whose smaller vCPU
			// count bounds each migration. Batches (one node serially, all in
			// parallel) also wait for balance and latency recovery.
			batch := n
			if g.Mode != scenarios.ModeParallel {
				batch = 1
			}
			var moved float64
			for added := 0; added < n; added += batch {
				for i := 0; i < batch; i++ {
					nodes = append(nodes, node{racks[(added+i)%len(racks)], it})
				}
				mv := onDisk * float64(batch) / float64(len(nodes))
				moved += mv
				slow := float64(max(1, minVCPUs()))
				stream := mv / (streamBytesPerVCPU * slow * float64(batch))
				ph.Seconds += m.SetupSeconds + m.RecoverySeconds + stream
				ph.Cycles++
				estimates[si] = append(estimates[si], map[string]float64{
					results.DurAddNodes: m.SetupSeconds, results.DurNodesReady: stream,
					results.DurDataBalanced: m.SetupSeconds + stream, results.DurLatencyRecov: m.SetupSeconds + stream + m.RecoverySeconds,
				})
			}
			ph.Mode = g.Mode
			ph.Detail = fmt.Sprintf("add %d × %s (%d per rack, %s); ≈%s to move", n, it.Name, g.CountPerRack, g.Mode, scenarios.HumanBytes(moved))
		case st.Shrink != nil, st.Drain != nil:
			var count int
			var racks []string
			detail := ""
			if st.Shrink != nil {
				ph.Mode = st.Shrink.Mode
				racks = st.Shrink.Racks
				count = len(st.Shrink.Nodes)
				if count == 0 {
					if len(racks) == 0 {
						racks = s.Cluster.Racks
					}
					count = st.Shrink.CountPerRack * len(racks)
				}
				detail = fmt.Sprintf("decommission %d node(s), newest first", count)
			} else {
				ph.Mode = st.Drain.Mode
				racks = st.Drain.Racks
				count = len(st.Drain.Nodes)
				if count == 0 {
					if len(racks) == 0 {
						racks = s.Cluster.Racks
					}
					count = st.Drain.CountPerRack * len(racks)
				}
				detail = fmt.Sprintf("drain %d node(s), %s", count, st.Drain.Mode)
			}
			// Remove the newest nodes (best effort for named nodes); each holds
			// about 1/N of the data (tablets balanced by count), which it streams
			// out at its own bandwidth. Serially, one node per cycle. Requested
			// together, the coordinator drains them one after another before
			// 2026.1 and all at once from 2026.1 (results.ScaleIn; an unknown
			// version is planned as the longer, queued way).
			before := len(nodes)
			share := 0.0
			if before > 0 {
				share = onDisk / float64(before)
			}
			var perNode []float64 // each removed node's streaming time
			for i := 0; i < count && len(nodes) > 0; i++ {
				perNode = append(perNode, share/(streamBytesPerVCPU*float64(max(1, nodes[len(nodes)-1].it.VCPUs))))
				nodes = nodes[:len(nodes)-1]
			}
			moved := share * float64(len(perNode))
			ph.Cycles = 1
			if ph.Mode == scenarios.ModeSerial && count > 1 {
				ph.Cycles = count
			}
			stream := 0.0
			for _, t := range perNode {
				if ph.Mode == scenarios.ModeParallel && results.ScaleIn(s.Cluster.Version) == results.ScaleInParallel {
					stream = max(stream, t)
				} else {
					stream += t
				}
			}
			ph.Seconds = float64(ph.Cycles)*m.RecoverySeconds + stream
			leave := results.DurRemoveNodes
			if st.Drain != nil {
				leave = results.DurDrainNodes
			}
			for c := 0; c < ph.Cycles; c++ {
				per := stream
				if ph.Cycles > 1 && c < len(perNode) {
					per = perNode[c]
				}
				estimates[si] = append(estimates[si], map[string]float64{leave: per, results.DurDataBalanced: per, results.DurLatencyRecov: per + m.RecoverySeconds})
			}
			if ph.Mode == scenarios.ModeParallel && count > 1 {
				switch results.ScaleIn(s.Cluster.Version) {
				case results.ScaleInParallel:
					detail += ", drained all at once (ScyllaDB 2026.1+)"
				case results.ScaleInQueued:
					detail += ", drained one after another (ScyllaDB before 2026.1)"
				default:
					detail += ", planned as drained one after another (before 2026.1; from 2026.1 all at once)"
				}
			}
			ph.Detail = fmt.Sprintf("%s; ≈%s to move", detail, scenarios.HumanBytes(moved))
		case st.Hold != nil:
			ph.Seconds = scaled(st.Hold.Duration)
			ph.Estimated = false
			ph.Detail = "workload running"
		case st.Hook != nil:
			ph.Detail = fmt.Sprintf("run %s (up to %s)", st.Hook.Command, st.Hook.Timeout)
		}
		add(ph)
	}
	if s.FinalHold > 0 {
		add(Phase{Phase: "final_hold", Name: "final hold", Seconds: scaled(s.FinalHold), Detail: "workload running"})
	}
	if probesCapacityAfter(s) {
		// It starts at the concurrency where the first probe peaked: that
		// level, and usually one or two above it.
		add(Phase{Phase: "calibrate", Name: "after", Seconds: min(calibration, warmCalibrationLevels*calStep).Seconds(), Estimated: true,
			Detail: "capacity after the last topology step, workload stopped, from the first probe's best concurrency"})
	}
	add(Phase{Phase: "teardown", Name: "destroy cluster", Seconds: m.SetupSeconds / 2, Estimated: true})
	p.EstimatedSeconds = t

	to := s.Timeouts
	for _, x := range []struct {
		n string
		d scenarios.Duration
	}{{"node_ready", to.NodeReady}, {"data_balanced", to.DataBalanced}, {"latency_recovered", to.LatencyRecovered},
		{"fill", to.Fill}, {"step", to.Step}, {"teardown", to.Teardown}, {"compactions", to.Compactions}} {
		p.Timeouts = append(p.Timeouts, Timeout{Name: x.n, Seconds: x.d.D().Seconds()})
	}

	// JSON readers get lists, never null.
	if p.Thresholds == nil {
		p.Thresholds = []results.Threshold{}
	}
	if p.Fill == nil {
		p.Fill = []Fill{}
	}

	// What the run executes besides the estimate.
	for i, f := range s.Dataset.Fill {
		p.Fill[i].Hold = scaleD(f.Hold)
	}
	for i, st := range s.Nemesis {
		ps := step(s, st, scaleD)
		ps.Estimates = estimates[i]
		p.Steps = append(p.Steps, ps)
	}
	p.SteadyState, p.FinalHold = scaleD(s.SteadyState), scaleD(s.FinalHold)
	p.RackBalance = results.RackBalanceSpec{EverySeconds: scaleD(s.Report.DiskBalanceEvery).Seconds(),
		MaxSpreadPct: float64(s.Thresholds.RackBalance.MaxSpread), Fail: s.Thresholds.RackBalance.Action == scenarios.RackBalanceFail}
	p.Validate = Validation{Sample: int64(s.Validate.Sample), TokenRanges: int(s.Validate.TokenRanges),
		Consistency: strings.ToUpper(s.Validate.Consistency), AfterEachStep: s.Validate.AfterEachStep}
	ds := s.Dataset
	p.Data = Data{Keyspace: ds.Keyspace, Table: ds.Table, DC: s.Cluster.DC, RF: ds.RF, Tablets: s.Cluster.TabletsInitial,
		ValueMin: int(ds.ValueSize.Min), ValueMax: int(ds.ValueSize.Max), FillConcurrency: ds.FillConcurrency, FillRate: float64(ds.FillRate)}
	if p.Data.Tablets == 0 && s.Cluster.Flavour == scenarios.FlavourScylla {
		p.Data.Tablets = -1 // the scenario asks for vnodes
	}
	p.Load = Load{MixWrite: w.Mix.Write, MixRead: w.Mix.Read, Rate: float64(w.Rate), LoadPercent: float64(w.LoadPercent),
		Calibration: scaleD(w.Calibration), Concurrency: w.Concurrency, WriteCL: w.Consistency.Write, ReadCL: w.Consistency.Read,
		Distribution: w.Distribution, CapacityAfter: probesCapacityAfter(s), Loaders: cfg.Loaders, LoaderBinary: s.AWS.LoaderBinary, SSHUser: s.AWS.SSHUser, SSHKey: s.AWS.SSHKey}
	// Adaptive timeouts count on the initial instance type's streaming
	// bandwidth (the model's share of it), capped by the scenario's timeouts.
	p.Waits = Waits{NodeReady: to.NodeReady.D(), DataBalanced: to.DataBalanced.D(), LatencyRecovered: to.LatencyRecovered.D(),
		Fill: to.Fill.D(), Step: to.Step.D(), Teardown: to.Teardown.D(), Compactions: to.Compactions.D(), TimeoutBase: m.TimeoutBase,
		StreamBytesPerSec: streamBytesPerVCPU * float64(max(it0.VCPUs, 1)) * m.TimeoutStreamShare}
	return p
}

// Estimated is the estimated wall time as a duration.
func (p *Plan) Estimated() time.Duration {
	return time.Duration(p.EstimatedSeconds * float64(time.Second))
}

// CalibrationSchedule is how a capacity probe of a (scaled) calibration
// time runs: levels of step each, a few of which fit the time, and levels
// shorter than a few seconds measure bursts, not a sustainable rate; the
// budget is at least five levels (concurrency 1 to 16).
func CalibrationSchedule(total time.Duration) (step, budget time.Duration) {
	step = max(total/4, 3*time.Second)
	return step, max(total, 5*step)
}

// warmCalibrationLevels is how many levels a probe that starts at a known
// knee usually measures (the plan's estimate).
const warmCalibrationLevels = 3

// probesCapacityAfter says whether the run probes the capacity again after
// its last topology step: the plan's phase and the runner both follow it.
func probesCapacityAfter(s *scenarios.Scenario) bool {
	w := s.Workload
	if !w.CapacityAfter || w.Rate > 0 || w.LoadPercent <= 0 {
		return false
	}
	for _, st := range s.Nemesis {
		if st.ResultKind().IsTopology() {
			return true
		}
	}
	return false
}
