package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/argus"
	"github.com/elasticity-dev/elasticity/argus/argustest"
	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

// A duration threshold on "Drain node(s)" validates and is judged: after a
// real drain its verdict is in result.json (issue 14). The smoke scenario
// grows rack1 by one node and then drains it again. The run submits itself
// to an Argus double (--argus-url): every argus/*.json validates and the
// double saw the whole lifecycle (issue 20).
func TestDrainDurationThreshold(t *testing.T) {
	const token = "e2e-argus-token"
	srv := argustest.New(token)
	defer srv.Close()
	srv.RegisterTest("elasticity/smoke") // the default job name of configs/smoke.yaml
	t.Setenv("ARGUS_TOKEN", token)
	out := filepath.Join(t.TempDir(), "drain")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	args := append(shrink("127.0.5.100"),
		"--set", `nemesis=[{grow_cluster: {name: grow, instance_type: i4i.large, count_per_rack: 1, racks: [rack1]}}, {drain: {name: drain, count_per_rack: 1, racks: [rack1]}}]`,
		"--set", `thresholds.durations={"Drain node(s)": 1h}`,
		"--argus-url", srv.URL)
	log := runExpect(t, ctx, out, []int{0, 1}, args...)
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

	tables, err := reporting.ReadArgus(out) // validates every file against Argus's format
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tb := range tables {
		names[tb.Meta.Name] = true
	}
	for _, n := range []string{"mixed - Steady State - latencies", "mixed - Steady State - stalls - REACTOR_STALLED",
		"mixed - grow - latencies", "mixed - drain - latencies", "mixed - drain - stalls - REACTOR_STALLED", "Durations", "Disk usage"} {
		if !names[n] {
			t.Errorf("argus/ has no table %q (has %v)", n, names)
		}
	}
	if calls := srv.Calls(); len(calls) != len(tables)+5 {
		t.Errorf("Argus saw %d requests, want %d (run, packages, get, tables, status, finalize)", len(calls), len(tables)+5)
	}
	run := srv.Run(argus.RunIDFor(res))
	if run == nil || !run.Finalized() || run.Status != argus.StatusFor(res, false) && run.Status != argus.StatusFailed {
		t.Errorf("Argus run %+v, result status %s", run, res.Status)
	}
	// The emulator's version, as its nodes reported it at start, is the
	// run's scylla-server package.
	if run != nil && (len(run.Packages) != 1 || run.Packages[0].Name != "scylla-server" || run.Packages[0].Version == "") {
		t.Errorf("Argus run packages %+v", run.Packages)
	}
}
