package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// A duration threshold on "Drain node(s)" validates and is judged: after a
// real drain its verdict is in result.json (issue 14). The smoke scenario
// grows rack1 by one node and then drains it again.
func TestDrainDurationThreshold(t *testing.T) {
	needEmulator(t)
	out := filepath.Join(t.TempDir(), "drain")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	args := append(shrink("127.0.5.100"),
		"--set", `nemesis=[{grow_cluster: {name: grow, instance_type: i4i.large, count_per_rack: 1, racks: [rack1]}}, {drain: {name: drain, count_per_rack: 1, racks: [rack1]}}]`,
		"--set", `thresholds.durations={"Drain node(s)": 1h}`)
	cmd, log := start(t, ctx, out, args...)
	err := cmd.Wait()
	defer checkNoNodes(t)
	if code := exitCode(err); code != 0 && code != 1 {
		t.Fatalf("exit %d: %v\n%s", code, err, log)
	}
	res := readResult(t, out)
	var drained bool
	for _, d := range res.Durations {
		drained = drained || (d.Name == results.DurDrainNodes && d.Step == "drain" && d.Seconds > 0)
	}
	if !drained {
		t.Fatalf("no Drain node(s) duration in %+v\n%s", res.Durations, log)
	}
	var verdicts int
	for _, v := range res.Verdicts {
		if v.Threshold.Cycle == results.DurDrainNodes {
			verdicts++
			if !v.Passed || v.Value <= 0 || v.Subject == "" {
				t.Errorf("verdict %+v", v)
			}
			t.Logf("verdict: %s %.1f s ≤ %.0f s", v.Subject, v.Value, v.Threshold.Limit)
		}
	}
	if verdicts != 1 {
		t.Errorf("%d verdicts on Drain node(s), want 1: %+v", verdicts, res.Verdicts)
	}
}
