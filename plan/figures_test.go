package plan

import (
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/scenarios"
)

func TestPlanCheckFigure(t *testing.T) {
	for mode, lastCycle := range map[string]string{"serial": "Cycle #3", "parallel": "Cycle #1"} {
		sc, err := scenarios.Load("../configs/smoke.yaml", []string{"nemesis.0.grow_cluster.racks=[rack1,rack2,rack3]", "nemesis.0.grow_cluster.mode=" + mode})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Resolve(sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ok := range []string{"scale_out_seconds", "New node(s) ready", "Soft Limit", "Data balanced", lastCycle + ".read_p99_ms", "Cycle #1.Add new node(s)"} {
			if err := p.CheckFigure(ok); err != nil {
				t.Errorf("%s: %s: %v", mode, ok, err)
			}
		}
		for bad, msg := range map[string]string{
			"scale_out_secs":       `did you mean "scale_out_seconds"`,
			"Remove node(s)":       "not a derived value",
			"Cycle #4.read_p99_ms": "measures Cycle #0 to " + lastCycle,
			"Cycle #1.read_p98_ms": `did you mean "Cycle #1.read_p9`,
		} {
			if err := p.CheckFigure(bad); err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("%s: %s: %v, want %q", mode, bad, err, msg)
			}
		}
	}
}

// A plan accepts the figures of its model's operations, and names the
// operations it has for one it has not.
func TestPlanCheckOpFigure(t *testing.T) {
	sc, err := scenarios.Load("../configs/sensor-readings.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"Cycle #1.op.latest.p99_ms", "Cycle #0.op.insert.ops_per_sec", "Cycle #1.op.slice.errors"} {
		if err := p.CheckFigure(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for bad, msg := range map[string]string{
		"Cycle #1.op.read.p99_ms":    `the workload has no operation "read" (it has insert, latest, slice)`,
		"Cycle #1.op.latest.p98_ms":  `did you mean "Cycle #1.op.latest.p9`,
		"Cycle #99.op.latest.p99_ms": "measures Cycle #0 to",
	} {
		if err := p.CheckFigure(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", bad, err, msg)
		}
	}
	// The built-in model's operations are write and read.
	sc, err = scenarios.Load("../configs/smoke.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = Resolve(sc, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckFigure("Cycle #0.op.write.p99_ms"); err != nil {
		t.Error(err)
	}
}
