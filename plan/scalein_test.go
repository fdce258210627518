package plan

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// A parallel drain of three nodes is planned by the version: before 2026.1
// the coordinator drains them one after another (the three serial drains'
// time), from 2026.1 all at once (the slowest one's), and an unknown version is
// planned the longer way (results.ScaleIn, from scylladb/scylladb
// service/topology_coordinator.cc and PARALLEL_TABLET_DRAINING).
func TestPlanParallelDrainByVersion(t *testing.T) {
	drain := func(mode, version string) (Phase, []float64) {
		t.Helper()
		set := []string{"cluster.nodes_per_rack=3", "nemesis.2.drain.mode=" + mode, "nemesis.2.drain.racks=[rack1,rack2,rack3]"}
		if version != "" {
			set = append(set, "cluster.version="+version)
		}
		s, err := scenarios.Load("../configs/scale-in-drain.yaml", set)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Resolve(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var est []float64
		for _, e := range p.Steps[2].Estimates {
			est = append(est, e[results.DurDrainNodes])
		}
		for _, ph := range p.Phases {
			if ph.Phase == "nemesis" && ph.Kind == "drain" {
				return ph, est
			}
		}
		t.Fatalf("no drain phase in %+v", p.Phases)
		return Phase{}, nil
	}
	_, serial := drain("serial", "2025.4.0")
	if len(serial) != 3 || slices.Min(serial) <= 0 {
		t.Fatalf("serial drain estimates %v, want 3 cycles", serial)
	}
	// Newest first, as the nemesis removes them: rack3's, rack2's, then
	// rack1's, which lost a node to the decommission before, so its drained
	// node holds half the rack's data, the others a third of theirs
	// (placement.go).
	if serial[2] <= serial[0] || math.Abs(serial[0]-serial[1]) > 1e-6*serial[0] {
		t.Errorf("serial drain estimates %v: want rack3's and rack2's alike, rack1's last and longest", serial)
	}
	queued, slowest := serial[0]+serial[1]+serial[2], slices.Max(serial)
	for _, tc := range []struct {
		version string
		want    float64
		detail  string
	}{
		{"2025.4.0", queued, "one after another (ScyllaDB before 2026.1)"},
		{"2026.1.0", slowest, "all at once (ScyllaDB 2026.1+)"},
		{"", queued, "planned as drained one after another"},
	} {
		ph, est := drain("parallel", tc.version)
		if len(est) != 1 || math.Abs(est[0]-tc.want) > 1e-6*tc.want {
			t.Errorf("%q: parallel drain estimate %v, want [%.1f] (serial drains: %v)", tc.version, est, tc.want, serial)
		}
		if !strings.Contains(ph.Detail, tc.detail) {
			t.Errorf("%q: detail %q, want %q", tc.version, ph.Detail, tc.detail)
		}
	}
}
