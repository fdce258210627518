package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// growReady is each batch's "New node(s) ready" estimate of a config's
// first grow step.
func growReady(t *testing.T, path string) []float64 {
	t.Helper()
	for _, st := range loadPlan(t, path).Steps {
		if len(st.Estimates) == 0 {
			continue
		}
		var ready []float64
		for _, e := range st.Estimates {
			ready = append(ready, e[results.DurNodesReady])
		}
		return ready
	}
	t.Fatalf("%s: no step with estimates", path)
	return nil
}

// Adding one i4i.4xlarge (16 shards) to each rack of 3 × i4i.large (2)
// moves 16/18 of that rack's data each time, through the old node's two
// shards: the three serial cycles take alike, and adding the three at
// once takes one cycle's time, the racks streaming side by side. Counting
// nodes instead (1/N of the data to each new node) planned the cycles
// shrinking by a quarter, a fifth and a sixth, and the parallel add at
// about half the time the emulator takes.
func TestGrowMovesTheNewNodesShardShareOfTheirRack(t *testing.T) {
	serial := growReady(t, "../configs/90pct-scaleout.yaml")
	if len(serial) != 3 || serial[0] <= 0 {
		t.Fatalf("serial estimates %v, want 3 cycles", serial)
	}
	for _, s := range serial[1:] {
		if math.Abs(s-serial[0]) > 1e-6*serial[0] {
			t.Errorf("serial cycles' estimates %v: want them alike", serial)
		}
	}
	parallel := growReady(t, "../configs/90pct-scaleout-parallel.yaml")
	if len(parallel) != 1 || math.Abs(parallel[0]-serial[0]) > 1e-6*serial[0] {
		t.Errorf("parallel estimate %v, want one serial cycle's %.2f s", parallel, serial[0])
	}
}

// The rack's data goes where the shards are: what a join and a leave move
// and the side that bounds them.
func TestRackMoves(t *testing.T) {
	small, big := node{"r1", instance(2)}, node{"r1", instance(16)}
	got := joinMoves(map[string]int{"r1": 2}, []node{big}, 90)
	if len(got) != 1 || got[0] != (rackMove{bytes: 80, from: 2, to: 16}) {
		t.Errorf("join: %+v, want 80 bytes from 2 shards to 16", got)
	}
	if s := got[0].seconds(10); s != 4 {
		t.Errorf("join takes %v s, want 4 (80 bytes through 2 shards at 10 a shard)", s)
	}
	got = leaveMoves(map[string]int{"r1": 18, "r2": 2}, []node{big}, 90)
	if len(got) != 1 || got[0] != (rackMove{bytes: 80, from: 16, to: 2}) {
		t.Errorf("leave: %+v, want 80 bytes from 16 shards to 2", got)
	}
	// The last node of a rack hands its data to the rest of the cluster.
	got = leaveMoves(map[string]int{"r1": 2, "r2": 4}, []node{small}, 90)
	if len(got) != 1 || got[0] != (rackMove{bytes: 90, from: 2, to: 4}) {
		t.Errorf("leave of a rack's last node: %+v, want 90 bytes from 2 shards to 4", got)
	}
}

func instance(vcpus int) provision.InstanceType { return provision.InstanceType{VCPUs: vcpus} }

// A fixed duration ceiling that the plan's own estimate passes is warned
// of, at its line: the parallel add's "New node(s) ready: 1h" against the
// estimate of balancing three racks at the emulated pace (about 1h2m); a
// ceiling above the estimate is not.
func TestWarnsOfADurationCeilingUnderTheEstimate(t *testing.T) {
	warnings := func(set ...string) string {
		t.Helper()
		s, err := scenarios.Load("../configs/90pct-scaleout-parallel.yaml", set)
		if err != nil {
			t.Fatal(err)
		}
		return (&scenarios.ValidationError{Problems: Warnings(s, nil)}).Error()
	}
	want := `90pct-scaleout-parallel.yaml:50: thresholds.durations.New node(s) ready: 1h is below the plan's estimate for the slowest batch, 1h2m24s on the local backend`
	if w := warnings(); !strings.Contains(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
	if w := warnings(`thresholds.durations={"New node(s) ready": 2h}`); strings.Contains(w, "below the plan's estimate") {
		t.Errorf("a 2h ceiling warned of: %q", w)
	}
}
