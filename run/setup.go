package run

import (
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/results"
)

// setup is the run_start description of the plan.
func setup(p *plan.Plan, runID string, nodes []results.NodeInfo, baseline *results.Baseline) *results.Setup {
	spec := p.Provision.Cluster
	s := &results.Setup{
		Scenario:        p.Scenario,
		Description:     p.Description,
		RunID:           runID,
		Backend:         p.Backend,
		Emulated:        p.Emulated,
		Flavour:         spec.Flavour,
		InitialNodes:    nodes,
		Racks:           spec.Racks,
		RF:              p.RF,
		Tablets:         p.TabletsInitial,
		WriteRatio:      p.Load.MixWrite,
		ReadRatio:       p.Load.MixRead,
		RateOpsPerSec:   p.Load.Rate,
		LoadPercent:     p.Load.LoadPercent,
		ValueSizeBytes:  (p.Data.ValueMin + p.Data.ValueMax) / 2,
		Thresholds:      p.Thresholds,
		TimeScale:       p.TimeScale,
		Limitations:     p.Limitations,
		DatabaseVersion: spec.Version,
		DashboardURL:    p.DashboardURL,
		ExpectedErrors:  p.ExpectedErrors,
		Severities:      p.Severities,
		BaselineRules:   p.BaselineRules,
		Baseline:        baseline,
		// RecoveryIntervals: the offline reduction judges recovery as the live watcher did.
		RecoveryIntervals: p.RecoveryIntervals,
		RackBalance:       &p.RackBalance,
	}
	if s.Flavour == "" {
		s.Flavour = "scylla"
	}
	if m := p.Workload.Model; !m.IsBuiltin() {
		s.Model = &results.WorkloadModel{Form: m.Form, Kind: m.Kind, Keyspace: m.Keyspace, Table: m.Table, Regenerable: m.Regenerable, Notes: m.Notes,
			KeyUnit: m.Unit(), KeyBytes: m.KeyBytes}
		s.ValueSizeBytes = 0 // dataset.value_size gave way to the model's sizes
		for _, o := range m.Ops {
			s.Model.Ops = append(s.Model.Ops, results.WorkloadOp{Name: o.Name, Class: o.Class, SharePct: o.SharePct})
		}
	}
	for _, f := range p.Fill {
		s.FillTargets = append(s.FillTargets, results.FillTarget{Name: f.Name, TargetPercent: f.TargetPercent, HoldSeconds: f.Hold.Seconds()})
	}
	s.Nemesis = []results.NemesisInfo{}
	for _, st := range nemesisSteps(p) {
		info := st.Info()
		for _, g := range p.Nodes {
			if g.AddedBy == st.Name {
				info.VCPUs = g.VCPUs
			}
		}
		s.Nemesis = append(s.Nemesis, info)
	}
	if s.InitialNodes == nil {
		s.InitialNodes = []results.NodeInfo{}
	}
	return s
}

// plannedNodes are the initial nodes as the plan's node records describe
// them (rack, instance type, vCPUs, disk), in the order the backends start
// them (interleaved across racks). They have no name or address until
// provisioned: the "provisioned" event carries the cluster's own records.
func plannedNodes(p *plan.Plan) []results.NodeInfo {
	var initial []plan.Nodes
	most := 0
	for _, g := range p.Nodes {
		if g.AddedBy == "" {
			initial = append(initial, g)
			most = max(most, g.Count)
		}
	}
	var out []results.NodeInfo
	for i := 0; i < most; i++ {
		for _, g := range initial {
			if i < g.Count {
				out = append(out, results.NodeInfo{Rack: g.Rack, InstanceType: g.InstanceType, VCPUs: g.VCPUs, DiskBytes: g.DiskBytes})
			}
		}
	}
	return out
}

// instances are the plan's facts of each instance type it starts, for the
// cluster's node records.
func instances(p *plan.Plan) map[string]cluster.Instance {
	out := map[string]cluster.Instance{}
	for _, g := range p.Nodes {
		out[g.InstanceType] = cluster.Instance{VCPUs: g.VCPUs, DiskBytes: g.DiskBytes}
	}
	return out
}

// nemesisSteps are the plan's steps as the nemesis package takes them: the
// one place they are built.
func nemesisSteps(p *plan.Plan) []nemesis.Step {
	out := make([]nemesis.Step, 0, len(p.Steps))
	for _, st := range p.Steps {
		out = append(out, nemesis.Step{Name: st.Name, Kind: st.Kind, Mode: st.Mode, InstanceType: st.InstanceType,
			CountPerRack: st.CountPerRack, Racks: st.Racks, Nodes: st.Nodes, Duration: st.Duration,
			Command: st.Command, HookEnv: st.HookEnv, IgnoreFailure: st.IgnoreFailure, Plan: st.Estimates})
	}
	return out
}

// policy derives the waits' timeouts from streaming bandwidth and data
// volume, capped by the plan's timeouts (the backend's defaults unless set).
func policy(p *plan.Plan) nemesis.Policy {
	w := p.Waits
	return nemesis.Policy{
		Base:              w.TimeoutBase,
		StreamBytesPerSec: w.StreamBytesPerSec,
		Ceilings: map[string]time.Duration{
			nemesis.WaitStart:    w.NodeReady,
			nemesis.WaitJoin:     w.NodeReady,
			nemesis.WaitBalance:  w.DataBalanced,
			nemesis.WaitRecovery: w.LatencyRecovered,
			nemesis.WaitLeave:    w.Step,
		},
	}
}
