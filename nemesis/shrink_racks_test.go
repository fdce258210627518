package nemesis

import (
	"testing"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

func node(name, rack string, seq int) *cluster.Node {
	return &cluster.Node{Node: provision.Node{Name: name, Rack: rack}, Seq: seq}
}

// Scenarios may restrict a count_per_rack shrink or drain to some racks
// (configs/scale-in-drain.yaml removes one node of rack1, then one of rack2).
func TestShrinkTargetsRestrictedToRacks(t *testing.T) {
	nodes := []*cluster.Node{
		node("node-1", "rack1", 1), node("node-2", "rack2", 2), node("node-3", "rack3", 3),
		node("node-4", "rack1", 4), node("node-5", "rack2", 5), node("node-6", "rack3", 6),
	}
	got, err := ShrinkTargets(Step{CountPerRack: 1, Racks: []string{"rack2"}, Mode: results.ModeSerial}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0]) != 1 || got[0][0].Name != "node-5" {
		t.Fatalf("got %+v, want the newest node of rack2 (node-5)", got)
	}
	if _, err := ShrinkTargets(Step{CountPerRack: 3, Racks: []string{"rack1"}}, nodes); err == nil {
		t.Fatal("removing 3 nodes from a rack of 2 was accepted")
	}
}
