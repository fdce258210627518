package nemesis

import "testing"

// Scenarios may restrict a count_per_rack shrink or drain to some racks
// (configs/scale-in-drain.yaml removes one node of rack1, then one of rack2).
func TestShrinkTargetsRestrictedToRacks(t *testing.T) {
	nodes := []Node{
		{Name: "node-1", Rack: "rack1", Seq: 1}, {Name: "node-2", Rack: "rack2", Seq: 2}, {Name: "node-3", Rack: "rack3", Seq: 3},
		{Name: "node-4", Rack: "rack1", Seq: 4}, {Name: "node-5", Rack: "rack2", Seq: 5}, {Name: "node-6", Rack: "rack3", Seq: 6},
	}
	got, err := ShrinkTargets(Step{CountPerRack: 1, Racks: []string{"rack2"}, Mode: ModeSerial}, nodes)
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
