package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
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
	// Emulated is true on the local backend: figures are shapes, not ScyllaDB's.
	Emulated bool `json:"emulated"`
	// TimeScale multiplies scenario durations (1 except on local).
	TimeScale float64 `json:"time_scale"`
	// StorageScaleMiBPerGB is set on local: a node's disk is catalog GB × this many MiB.
	StorageScaleMiBPerGB float64  `json:"storage_scale_mib_per_gb,omitempty"`
	Flavour              string   `json:"flavour"`
	Version              string   `json:"version,omitempty"`
	Racks                []string `json:"racks"`
	RF                   int      `json:"rf"`
	TabletsInitial       int      `json:"tablets_initial"`
	Keyspace             string   `json:"keyspace"`
	Table                string   `json:"table"`
	ValueSize            string   `json:"value_size"`
	// Nodes are node groups: the initial nodes and those each grow step adds.
	Nodes []PlanNodes `json:"nodes"`
	// InitialCapacityBytes is the initial cluster's raw disk capacity.
	InitialCapacityBytes float64             `json:"initial_capacity_bytes"`
	Fill                 []PlanFill          `json:"fill"`
	Workload             PlanWorkload        `json:"workload"`
	Phases               []PlanPhase         `json:"phases"`
	Thresholds           []results.Threshold `json:"thresholds"`
	Timeouts             []PlanTimeout       `json:"timeouts"`
	// EstimatedSeconds is the estimated wall time of the whole run.
	EstimatedSeconds float64 `json:"estimated_seconds"`
	// Extra holds lines added by PlanHooks (e.g. cost estimates), grouped by Section.
	Extra []PlanLine `json:"extra,omitempty"`
}

// PlanNodes is a group of nodes of one type in one rack.
type PlanNodes struct {
	Rack         string `json:"rack"`
	InstanceType string `json:"instance_type"`
	Count        int    `json:"count"`
	VCPUs        int    `json:"vcpus"`
	// DiskBytes is one node's disk (scaled on local).
	DiskBytes float64 `json:"disk_bytes"`
	// AddedBy is the nemesis step adding these nodes ("" for the initial cluster).
	AddedBy string `json:"added_by,omitempty"`
}

// PlanFill is one fill phase's data volume.
type PlanFill struct {
	Name          string  `json:"name"`
	TargetPercent float64 `json:"target_percent"`
	// TargetBytes is the data on disk (all replicas) at the target.
	TargetBytes float64 `json:"target_bytes"`
	// WriteBytes is what this phase adds on disk (all replicas); UniqueBytes = WriteBytes / RF.
	WriteBytes  float64 `json:"write_bytes"`
	UniqueBytes float64 `json:"unique_bytes"`
	// Rows is the number of rows this phase writes (UniqueBytes / mean value size).
	Rows             int64   `json:"rows"`
	EstimatedSeconds float64 `json:"estimated_seconds"`
	HoldSeconds      float64 `json:"hold_seconds"`
}

// PlanWorkload is the resolved workload.
type PlanWorkload struct {
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

// PlanPhase is one phase of the run in order.
type PlanPhase struct {
	Phase string `json:"phase"` // provision, schema, fill, hold, calibrate, steady_state, nemesis, final_hold, teardown
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

// PlanTimeout is one wait's limit.
type PlanTimeout struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// PlanLine is one extra line of a plan, added by a hook.
type PlanLine struct {
	Section string `json:"section"`
	Label   string `json:"label"`
	Value   string `json:"value"`
}

// PlanHooks run at the end of Plan and may add lines (e.g. a cost estimate
// for the aws backend). Register them from an init function.
var PlanHooks []func(s *Scenario, p *Plan)

// Rough rates used only for estimates on backends other than local.
const (
	realOpsPerVCPU       = 3000 // replica ops: ≈ 7,500 client ops/s for 3 × i4i.large at RF=3, QUORUM 1:1 (reference run)
	realStreamMiBPerVCPU = 75   // the reference moved ≈1 TiB off 3 × i4i.large in ≈35 min (parallel grow)
	// ≈ 200 MB/s on disk for 3 × i4i.large: the reference's 70% fill took 1h21m.
	realFillMiBPerVCPU = 32
)

// NodeDiskBytes is the disk of one node of the given type: catalog storage,
// scaled on the local backend.
func (s *Scenario) NodeDiskBytes(it provision.InstanceType) float64 {
	if s.Backend == BackendLocal {
		return it.StorageGB * s.Local.StorageScaleMiBPerGB * (1 << 20)
	}
	return it.StorageGB * 1e9
}

func (s *Scenario) opsPerVCPU() float64 {
	if s.Backend == BackendLocal {
		return s.Local.OpsPerVCPU
	}
	return realOpsPerVCPU
}

// replicaOpsPerOp is what one workload operation costs the cluster in
// replica operations (the unit of ops_per_vcpu): RF for a write, the
// replicas the read consistency level contacts for a read.
func (s *Scenario) replicaOpsPerOp() float64 {
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

func (s *Scenario) streamBytesPerVCPU() float64 {
	if s.Backend == BackendLocal {
		return s.Local.StreamMiBPerVCPU * (1 << 20)
	}
	return realStreamMiBPerVCPU * (1 << 20)
}

// recoverySeconds estimates the wait for latency to recover after a topology batch.
func (s *Scenario) recoverySeconds() float64 {
	if s.Backend == BackendLocal {
		return 15
	}
	return 300
}

// setupSeconds estimates the wall time to start one batch of nodes.
func (s *Scenario) setupSeconds() float64 {
	switch s.Backend {
	case BackendLocal:
		return 5
	case BackendDocker:
		return 60
	case BackendAWS:
		return 600
	}
	return 0
}

// Plan computes the plan. It never fails: the scenario is already valid.
func (s *Scenario) Plan() *Plan {
	p := &Plan{
		Scenario:       s.Name,
		Description:    s.Description,
		Source:         s.source,
		Backend:        s.Backend,
		Emulated:       s.Backend == BackendLocal,
		TimeScale:      1,
		Flavour:        s.Cluster.Flavour,
		Version:        s.Cluster.Version,
		Racks:          append([]string(nil), s.Cluster.Racks...),
		RF:             s.Dataset.RF,
		TabletsInitial: s.Cluster.TabletsInitial,
		Keyspace:       s.Dataset.Keyspace,
		Table:          s.Dataset.Table,
		ValueSize:      s.Dataset.ValueSize.String(),
		Thresholds:     s.ResultThresholds(),
	}
	if s.Backend == BackendLocal {
		p.TimeScale = s.Local.TimeScale
		p.StorageScaleMiBPerGB = s.Local.StorageScaleMiBPerGB
	}
	scaled := func(d Duration) float64 { return s.Scaled(d.D()).Seconds() }

	// Node inventory, tracked through the nemesis for capacity and vCPUs.
	type node struct {
		rack string
		it   provision.InstanceType
	}
	var nodes []node
	it0, _ := provision.LookupInstanceType(s.Cluster.InstanceType)
	for _, r := range s.Cluster.Racks {
		p.Nodes = append(p.Nodes, PlanNodes{Rack: r, InstanceType: it0.Name, Count: s.Cluster.NodesPerRack, VCPUs: it0.VCPUs, DiskBytes: s.NodeDiskBytes(it0)})
		for i := 0; i < s.Cluster.NodesPerRack; i++ {
			nodes = append(nodes, node{r, it0})
		}
	}
	capacity := func() (bytes float64, vcpus int) {
		for _, n := range nodes {
			bytes += s.NodeDiskBytes(n.it)
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
	p.Workload = PlanWorkload{
		WriteRatio: w.Mix.WriteFraction(), ReadRatio: 1 - w.Mix.WriteFraction(),
		RateOpsPerS: float64(w.Rate), LoadPercent: float64(w.LoadPercent),
		EstimatedCapacityOps: s.opsPerVCPU() * float64(vcpus) / s.replicaOpsPerOp(),
		Concurrency:          w.Concurrency,
		WriteConsistency:     w.Consistency.Write, ReadConsistency: w.Consistency.Read,
		Distribution: w.Distribution,
	}
	switch s.Backend {
	case BackendAWS:
		p.Workload.Loaders, p.Workload.LoaderInstanceType = s.AWS.LoaderCount, s.AWS.LoaderInstanceType
	case BackendLocal:
		p.Workload.Loaders = s.Local.Loaders
	}
	if w.Rate > 0 {
		p.Workload.EstimatedRateOpsPerS = float64(w.Rate)
	} else {
		p.Workload.EstimatedRateOpsPerS = w.LoadPercent.Fraction() * p.Workload.EstimatedCapacityOps
	}

	var t float64
	add := func(ph PlanPhase) {
		ph.StartSeconds = t
		t += ph.Seconds
		p.Phases = append(p.Phases, ph)
	}
	add(PlanPhase{Phase: "provision", Name: fmt.Sprintf("start %d × %s", len(nodes), it0.Name), Seconds: s.setupSeconds(), Estimated: true})
	add(PlanPhase{Phase: "schema", Name: fmt.Sprintf("%s.%s RF=%d", s.Dataset.Keyspace, s.Dataset.Table, s.Dataset.RF), Seconds: 1, Estimated: true})

	// Fill: the workload is not running yet, so fill gets the cluster's capacity
	// (or fill_rate); each write lands on RF replicas.
	rf := float64(s.Dataset.RF)
	mean := s.Dataset.ValueSize.Mean()
	// Each fill write is RF replica writes.
	fillOps := s.opsPerVCPU() * float64(vcpus) / float64(max(1, s.Dataset.RF))
	if s.Backend != BackendLocal && mean > 0 {
		// Real nodes take bulk writes far more cheaply than the mixed workload:
		// estimate from on-disk bandwidth instead.
		fillOps = realFillMiBPerVCPU * (1 << 20) * float64(vcpus) / (mean * rf)
	}
	if s.Dataset.FillRate > 0 {
		fillOps = min(fillOps, float64(s.Dataset.FillRate))
	}
	var onDisk float64
	for _, f := range s.Dataset.Fill {
		target := f.TargetPercent.Fraction() * capBytes
		pf := PlanFill{Name: f.Name, TargetPercent: float64(f.TargetPercent), TargetBytes: target, WriteBytes: max(0, target-onDisk)}
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
		add(PlanPhase{Phase: "fill", Name: f.Name, Seconds: pf.EstimatedSeconds, Estimated: true,
			Detail: fmt.Sprintf("write %s (%s unique) to reach %v", HumanBytes(pf.WriteBytes), HumanBytes(pf.UniqueBytes), f.TargetPercent)})
		if f.Hold > 0 {
			add(PlanPhase{Phase: "hold", Name: f.Name, Seconds: pf.HoldSeconds, Detail: "let compactions settle"})
		}
	}

	if w.Rate == 0 {
		add(PlanPhase{Phase: "calibrate", Name: "measure capacity", Seconds: scaled(w.Calibration),
			Detail: fmt.Sprintf("then run at %v of it", w.LoadPercent)})
	}
	add(PlanPhase{Phase: "steady_state", Name: "Cycle #0", Cycles: 1, Seconds: scaled(s.SteadyState)})

	for _, st := range s.Nemesis {
		ph := PlanPhase{Phase: "nemesis", Name: st.Name, Kind: st.Kind(), Estimated: true}
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
				p.Nodes = append(p.Nodes, PlanNodes{Rack: r, InstanceType: it.Name, Count: g.CountPerRack, VCPUs: it.VCPUs, DiskBytes: s.NodeDiskBytes(it), AddedBy: st.Name})
			}
			// Tablets are balanced by count, so each new node ends up with about
			// 1/N of the data; it streams from the old nodes, whose smaller vCPU
			// count bounds each migration. Batches (one node serially, all in
			// parallel) also wait for balance and latency recovery.
			batch := n
			if g.Mode != ModeParallel {
				batch = 1
			}
			var moved float64
			for added := 0; added < n; added += batch {
				for i := 0; i < batch; i++ {
					nodes = append(nodes, node{racks[(added+i)%len(racks)], it})
				}
				m := onDisk * float64(batch) / float64(len(nodes))
				moved += m
				slow := float64(max(1, minVCPUs()))
				ph.Seconds += s.setupSeconds() + s.recoverySeconds() + m/(s.streamBytesPerVCPU()*slow*float64(batch))
				ph.Cycles++
			}
			ph.Mode = g.Mode
			ph.Detail = fmt.Sprintf("add %d × %s (%d per rack, %s); ≈%s to move", n, it.Name, g.CountPerRack, g.Mode, HumanBytes(moved))
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
				racks = st.Drain.Racks
				count = len(st.Drain.Nodes)
				if count == 0 {
					if len(racks) == 0 {
						racks = s.Cluster.Racks
					}
					count = st.Drain.CountPerRack * len(racks)
				}
				detail = fmt.Sprintf("drain %d node(s) with %d worker(s)", count, st.Drain.Workers)
			}
			// Remove the newest nodes (best effort for named nodes); each holds
			// about 1/N of the data (tablets balanced by count), which it streams
			// out at its own bandwidth (times the drain workers).
			before := len(nodes)
			var removedCPU int
			for i := 0; i < count && len(nodes) > 0; i++ {
				removedCPU += nodes[len(nodes)-1].it.VCPUs
				nodes = nodes[:len(nodes)-1]
			}
			moved := 0.0
			if before > 0 {
				moved = onDisk * float64(before-len(nodes)) / float64(before)
			}
			workers := 1.0
			if st.Drain != nil {
				workers = float64(st.Drain.Workers)
			}
			ph.Cycles = 1
			if ph.Mode == ModeSerial && count > 1 {
				ph.Cycles = count
			}
			ph.Seconds = float64(ph.Cycles)*s.recoverySeconds() + moved/(s.streamBytesPerVCPU()*float64(max(1, removedCPU))*workers)
			ph.Detail = fmt.Sprintf("%s; ≈%s to move", detail, HumanBytes(moved))
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
		add(PlanPhase{Phase: "final_hold", Name: "final hold", Seconds: scaled(s.FinalHold), Detail: "workload running"})
	}
	add(PlanPhase{Phase: "teardown", Name: "destroy cluster", Seconds: s.setupSeconds() / 2, Estimated: true})
	p.EstimatedSeconds = t

	to := s.Timeouts
	for _, x := range []struct {
		n string
		d Duration
	}{{"node_ready", to.NodeReady}, {"data_balanced", to.DataBalanced}, {"latency_recovered", to.LatencyRecovered},
		{"fill", to.Fill}, {"step", to.Step}, {"teardown", to.Teardown}} {
		p.Timeouts = append(p.Timeouts, PlanTimeout{Name: x.n, Seconds: x.d.D().Seconds()})
	}

	// JSON readers get lists, never null.
	if p.Thresholds == nil {
		p.Thresholds = []results.Threshold{}
	}
	if p.Fill == nil {
		p.Fill = []PlanFill{}
	}
	for _, h := range PlanHooks {
		h(s, p)
	}
	return p
}

// Estimated is the estimated wall time as a duration.
func (p *Plan) Estimated() time.Duration {
	return time.Duration(p.EstimatedSeconds * float64(time.Second))
}
