package runner

import (
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// Plan is a scenario resolved into what the runner executes: durations are
// already scaled (local time_scale), defaults applied.
type Plan struct {
	Name        string
	Description string
	Backend     string
	RunID       string
	Spec        provision.ClusterSpec
	RF          int
	Tablets     int
	Fills       []Fill
	WriteRatio  float64
	ReadRatio   float64
	// Rate is the fixed rate in ops/s; when zero, LoadPercent of the
	// calibrated capacity is used.
	Rate           float64
	LoadPercent    float64
	ValueSizeBytes int
	SteadyState    time.Duration
	Nemesis        []nemesis.Step
	FinalHold      time.Duration
	Thresholds     []results.Threshold
	TimeScale      float64
	Emulated       bool
	Limitations    []string
	// Timeouts derives per-wait timeouts; DataBytes is filled in by the runner.
	Timeouts nemesis.Policy
	// FillTimeout bounds one fill phase (0: derived from the disk size).
	FillTimeout time.Duration
	// YAML is the resolved scenario written to scenario.yaml.
	YAML  []byte
	Extra map[string]string
}

// Fill is one fill phase: write until the cluster's disk usage reaches
// TargetPercent, then hold.
type Fill struct {
	Name          string
	TargetPercent float64
	Hold          time.Duration
}

// Setup is the run_start description of the plan.
func (p *Plan) Setup(nodes []results.NodeInfo) *results.Setup {
	s := &results.Setup{
		Scenario:        p.Name,
		Description:     p.Description,
		RunID:           p.RunID,
		Backend:         p.Backend,
		Emulated:        p.Emulated,
		Flavour:         p.Spec.Flavour,
		InitialNodes:    nodes,
		Racks:           p.Spec.Racks,
		RF:              p.RF,
		Tablets:         p.Tablets,
		WriteRatio:      p.WriteRatio,
		ReadRatio:       p.ReadRatio,
		RateOpsPerSec:   p.Rate,
		LoadPercent:     p.LoadPercent,
		ValueSizeBytes:  p.ValueSizeBytes,
		Thresholds:      p.Thresholds,
		TimeScale:       p.TimeScale,
		Limitations:     p.Limitations,
		Extra:           p.Extra,
		DatabaseVersion: p.Spec.Version,
	}
	if s.Flavour == "" {
		s.Flavour = "scylla"
	}
	for _, f := range p.Fills {
		s.FillTargets = append(s.FillTargets, results.FillTarget{Name: f.Name, TargetPercent: f.TargetPercent, HoldSeconds: f.Hold.Seconds()})
	}
	s.Nemesis = []results.NemesisInfo{}
	for _, st := range p.Nemesis {
		s.Nemesis = append(s.Nemesis, st.Info())
	}
	if s.InitialNodes == nil {
		s.InitialNodes = []results.NodeInfo{}
	}
	return s
}

// PlannedNodes describes the initial nodes before they exist (names are the
// provider's node-1, node-2 ... in rack order).
func (p *Plan) PlannedNodes() []results.NodeInfo {
	it, _ := provision.LookupInstanceType(p.Spec.InstanceType)
	var out []results.NodeInfo
	for i := 0; i < p.Spec.NodesPerRack; i++ {
		for _, r := range p.Spec.Racks {
			out = append(out, results.NodeInfo{
				Name:         fmt.Sprintf("node-%d", len(out)+1),
				Rack:         r,
				InstanceType: p.Spec.InstanceType,
				VCPUs:        it.VCPUs,
				DiskBytes:    it.StorageGB * 1e9,
			})
		}
	}
	return out
}
