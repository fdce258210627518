package plan

import (
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// backendConfig is the backend's part of the plan: the cluster, and what
// each backend's own section gives (provision.Options.Configure: every
// section the settings it shares, the running backend's its own run's).
func backendConfig(s *scenarios.Scenario) provision.Config {
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
		},
		Options: s.Backends[s.Backend],
	}
	for _, name := range s.SectionNames() {
		s.Backends[name].Configure(&c, name == s.Backend)
	}
	return c
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

// scaler scales scenario durations by the backend's time scale.
func scaler(timeScale float64) func(scenarios.Duration) time.Duration {
	return func(d scenarios.Duration) time.Duration {
		if timeScale <= 0 || timeScale == 1 {
			return d.D()
		}
		return time.Duration(float64(d) * timeScale)
	}
}

// resolve copies the scenario into the plan in the plan's terms: names,
// the backend's part, durations scaled by the model's time scale, the
// verdict rules, the schema, the workload, the steps and the waits.
// Nothing here is an estimate: estimate adds those.
func resolve(s *scenarios.Scenario, m provision.Model, cfg provision.Config) *Plan {
	scale := scaler(m.TimeScale)
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
		// JSON readers get lists, never null.
		Thresholds: []results.Threshold{},
		Fill:       []Fill{},
	}
	for _, f := range s.ExpectedErrors {
		p.ExpectedErrors = append(p.ExpectedErrors, results.ErrorFilter{Type: f.Type, Regex: f.Regex, During: f.During, MaxCount: f.MaxCount})
	}
	if m.Emulated || m.StorageScaleMiBPerGB > 0 {
		p.StorageScaleMiBPerGB = m.StorageScaleMiBPerGB
	}
	p.LocalDataDir = cfg.NodeData
	p.Thresholds = append(p.Thresholds, s.ResultThresholds(scale)...)
	p.BaselineRules = s.ResultBaselineRules(scale)
	p.RecoveryIntervals = s.Thresholds.Recovery.Intervals
	p.RackBalance = results.RackBalanceSpec{EverySeconds: scale(s.Report.DiskBalanceEvery).Seconds(),
		MaxSpreadPct: float64(s.Thresholds.RackBalance.MaxSpread), Fail: s.Thresholds.RackBalance.Action == scenarios.RackBalanceFail}
	p.Validate = Validation{Sample: int64(s.Validate.Sample), TokenRanges: int(s.Validate.TokenRanges),
		Consistency: strings.ToUpper(s.Validate.Consistency), AfterEachStep: s.Validate.AfterEachStep}
	for _, f := range s.Dataset.Fill {
		hold := scale(f.Hold)
		p.Fill = append(p.Fill, Fill{Name: f.Name, By: f.By, TargetPercent: float64(f.TargetPercent), HoldSeconds: hold.Seconds(), Hold: hold})
	}
	p.Compactions = resolveCompactions(s, scale)
	for _, st := range s.Nemesis {
		p.Steps = append(p.Steps, step(s, st, scale))
	}
	p.SteadyState, p.FinalHold = scale(s.SteadyState), scale(s.FinalHold)
	p.Data = resolveData(s)
	p.Workload, p.Load = resolveWorkload(s, cfg, scale)
	p.Timeouts, p.Waits = resolveTimeouts(s.Timeouts, m, s.Cluster.InstanceType)
	return p
}

// resolveCompactions is the wait for compactions: its quiet period scaled,
// on a backend whose section scales the scenario's time (local) at least
// MinLocalCompactionsQuiet.
func resolveCompactions(s *scenarios.Scenario, scale func(scenarios.Duration) time.Duration) Compactions {
	if !s.Compactions.Wait {
		return Compactions{}
	}
	q := scale(s.Compactions.Quiet)
	if _, _, scaled := s.TimeScaled(); scaled {
		q = max(q, scenarios.MinLocalCompactionsQuiet)
	}
	return Compactions{Wait: true, Quiet: q, QuietSeconds: q.Seconds(), TimeoutSeconds: s.Timeouts.Compactions.D().Seconds()}
}

// resolveData is the schema and how the fills write it.
func resolveData(s *scenarios.Scenario) Data {
	ds := s.Dataset
	d := Data{Keyspace: ds.Keyspace, Table: ds.Table, DC: s.Cluster.DC, RF: ds.RF, Tablets: s.Cluster.TabletsInitial,
		ValueMin: int(ds.ValueSize.Min), ValueMax: int(ds.ValueSize.Max), FillConcurrency: ds.FillConcurrency, FillRate: float64(ds.FillRate)}
	if d.Tablets == 0 && s.Cluster.Flavour == scenarios.FlavourScylla {
		d.Tablets = -1 // the scenario asks for vnodes
	}
	return d
}

// resolveWorkload is the workload as the plan shows it (its estimated
// rates are estimate's) and as the load generator runs it.
func resolveWorkload(s *scenarios.Scenario, cfg provision.Config, scale func(scenarios.Duration) time.Duration) (Workload, Load) {
	w := s.Workload
	wl := Workload{
		WriteRatio: w.Mix.WriteFraction(), ReadRatio: 1 - w.Mix.WriteFraction(),
		RateOpsPerS: float64(w.Rate), LoadPercent: float64(w.LoadPercent),
		Concurrency:      w.Concurrency,
		WriteConsistency: w.Consistency.Write, ReadConsistency: w.Consistency.Read,
		Distribution: w.Distribution,
		Loaders:      cfg.Loaders.Count, LoaderInstanceType: cfg.Loaders.InstanceType,
	}
	l := Load{MixWrite: w.Mix.Write, MixRead: w.Mix.Read, Rate: float64(w.Rate), LoadPercent: float64(w.LoadPercent),
		Calibration: scale(w.Calibration), Concurrency: w.Concurrency, WriteCL: w.Consistency.Write, ReadCL: w.Consistency.Read,
		Distribution: w.Distribution, CapacityAfter: probesCapacityAfter(s), Loaders: cfg.Loaders, LoaderBinary: cfg.RemoteLoaders.Binary, SSHUser: cfg.RemoteLoaders.SSHUser, SSHKey: cfg.RemoteLoaders.SSHKey}
	return wl, l
}

// resolveTimeouts lists the waits' limits and bounds the run's waits:
// adaptive timeouts count on the initial instance type's streaming
// bandwidth (the model's share of it), capped by the scenario's timeouts.
func resolveTimeouts(to scenarios.Timeouts, m provision.Model, instanceType string) ([]Timeout, Waits) {
	var ts []Timeout
	for _, x := range []struct {
		n string
		d scenarios.Duration
	}{{"node_ready", to.NodeReady}, {"data_balanced", to.DataBalanced}, {"latency_recovered", to.LatencyRecovered},
		{"fill", to.Fill}, {"step", to.Step}, {"teardown", to.Teardown}, {"compactions", to.Compactions}} {
		ts = append(ts, Timeout{Name: x.n, Seconds: x.d.D().Seconds()})
	}
	it0, _ := provision.LookupInstanceType(instanceType)
	return ts, Waits{NodeReady: to.NodeReady.D(), DataBalanced: to.DataBalanced.D(), LatencyRecovered: to.LatencyRecovered.D(),
		Fill: to.Fill.D(), Step: to.Step.D(), Teardown: to.Teardown.D(), Compactions: to.Compactions.D(), TimeoutBase: m.TimeoutBase,
		StreamBytesPerSec: m.StreamMiBPerVCPU * (1 << 20) * float64(max(it0.VCPUs, 1)) * m.TimeoutStreamShare}
}
