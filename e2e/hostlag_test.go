package e2e

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// hogPerCPU busy loops per CPU keep every runqueue long, so each node's
// watchdog wake-up waits behind them. On a 2-core machine 4 per CPU gave
// 30-406 ms/s of host lag per cycle over 5 runs (threshold 10); once the
// nodes used less CPU (issue 17's storage work) they woke ahead of 4 and
// lagged 5.5-15.7 ms/s, one run of 4 under the threshold. 16 per CPU gave
// 27-54 ms/s in 4 of 4 runs. Without the hog, 5-7 ms/s. The run takes
// about 17-27 s under the hog.
const hogPerCPU = 16

// startCPUHog spins hogPerCPU goroutines per CPU until the test ends.
// GOMAXPROCS is raised for the test so that each one is its own OS thread
// competing with the nodes' threads (same session, so same autogroup).
func startCPUHog(t *testing.T) {
	n := hogPerCPU * runtime.NumCPU()
	prev := runtime.GOMAXPROCS(n + runtime.NumCPU())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
	})
}

// On a deliberately loaded machine (a CPU hog the test starts) the run's
// cycles are marked host-bound in result.json, in their latency table and
// in the report's limitations (issue 17). No idle-machine control: a shared
// CI box may well be loaded, so "not host-bound" would be flaky.
func TestHostBoundUnderCPUHog(t *testing.T) {
	startCPUHog(t)
	out := filepath.Join(t.TempDir(), "hog")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	// No fill and a short final hold: only the lag matters here. Latency
	// thresholds may fail under the hog (exit 1).
	args := append(shrink("127.0.5.140"), "--set", "dataset.fill=[]", "--set", "final_hold=2m")
	log := runExpect(t, ctx, out, []int{0, 1}, args...)
	res := readResult(t, out)
	var bound []string
	for _, c := range res.Cycles {
		t.Logf("%s: host lag %.1f ms/s, load generator lag %.1f ms/s, CPU steal %.1f%%, lagged seconds %+v, host-bound %v", c.Name, c.HostLagMSPerS, c.LoaderLagMSPerS, c.CPUStealPct, c.LoaderLagged, c.HostBound)
		burst := c.LoaderLagged != nil && c.LoaderLagged.SetP99
		if c.HostBound != (c.HostLagMSPerS+c.LoaderLagMSPerS+10*c.CPUStealPct >= results.HostBoundLagMSPerS || burst) {
			t.Errorf("%s: host lag %.1f + load generator lag %.1f ms/s + CPU steal %.1f%%, lagged seconds %+v, but host_bound %v", c.Name, c.HostLagMSPerS, c.LoaderLagMSPerS, c.CPUStealPct, c.LoaderLagged, c.HostBound)
		}
		if c.HostBound {
			bound = append(bound, c.Name)
		}
	}
	if len(bound) == 0 {
		t.Fatalf("no cycle host-bound under a CPU hog: %+v\n%s", res.Cycles, log)
	}
	b, err := os.ReadFile(filepath.Join(out, results.FileReportMD))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	_, lim, ok := strings.Cut(md, "## Limitations\n")
	if !ok {
		t.Fatalf("report.md has no Limitations:\n%s", md)
	}
	for _, want := range append([]string{"Host lag (", "Load generator lag (", "Host-bound (the nodes' and the load generator's lag and the CPU steal, 1% = 10 ms/s, together ≥ "}, bound...) {
		if !strings.Contains(lim, want) {
			t.Errorf("report.md's limitations do not mention %q:\n%s", want, lim)
		}
	}
	// The latency table marks the same cycles (its note, before Limitations).
	for _, name := range bound {
		if !strings.Contains(strings.TrimSuffix(md, lim), name+" (host lag ") {
			t.Errorf("report.md's latency table does not mark %s host-bound", name)
		}
	}
}

// probeBeyondHost is a scenario whose modelled capacity (i4i.16xlarge
// nodes, 64 vCPUs each, with tablets on every shard) no machine this runs
// on reaches: its capacity probes measure the host, never the model. With
// fewer tablets than shards it would not be so: 8 tablets (4 a node after
// the grow) put all the load on 8 of 128 shards, which saturate at about
// 15,000 op/s, the model's own limit (measured: busiest shard 100%, mean
// over shards 5-11%). The model's vCPUs also serve ten times the default
// operations (local.ops_per_vcpu): each request costs its coordinator's
// shard as well as its replica's (capacity.CoordinatorUnits), and at the
// default an idle fast host (2026-12-07) probed 31,068 op/s with the
// busiest shard 62% busy, too close to the model's limit to be sure the
// host ended the probe.
const probeBeyondHost = `name: probe-beyond-host
description: capacity probes far beyond what this host can do
backend: local
cluster:
  racks: [rack1]
  nodes_per_rack: 1
  instance_type: i4i.16xlarge
  tablets_initial: 128
dataset:
  rf: 1
  value_size: 1KiB
  fill: []
workload:
  mix: "1:1"
  load_percent: 10%
  calibration: 20s
  concurrency: 64
steady_state: 20m
nemesis:
  - grow_cluster:
      name: Add 1 x i4i.16xlarge
      instance_type: i4i.16xlarge
      count_per_rack: 1
      mode: serial
final_hold: 20m
local:
  ops_per_vcpu: 20000
`

// A capacity probe the host bounded is a lower bound (issue 45): in
// result.json (the probe and the derived answer) and in the Answers, where
// the capacity per vCPU after says "at least", why, and that a smaller
// figure is not a drop. The model is far beyond this host, so the nodes'
// busiest shards stay well under saturation, which marks the probe on a
// quiet machine (there it stopped with the machine ~85% busy and little
// lag, which the host-bound rule alone does not catch). The host-bound
// rule itself, on lags a CPU hog really caused, is TestHostBoundUnderCPUHog's
// (cycles); on a probe's figures results' compute tests cover it, and the
// Answers' wording for a host-bound probe reporting's
// TestCapacityPerVCPUBeforeAndAfter. A second full run of this scenario
// under a hog cost CI about a minute for those.
func TestCapacityProbeBeyondTheHostIsALowerBound(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "probe.yaml")
	if err := os.WriteFile(scenario, []byte(probeBeyondHost), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	log := runScenarioExpect(t, ctx, scenario, out, []int{0}, "--set", "local.base_address=127.0.5.160")
	res := readResult(t, out)
	after := res.Probe(results.ProbeAfter)
	if after == nil || res.Derived == nil || after.ReactorUtilizationPct == nil {
		t.Fatalf("no capacity probe after the last step, or no reactor utilization in it: %+v\n%s", res.CapacityProbes, log)
	}
	t.Logf("probe after: %.0f op/s, machine %.0f%% busy, node lag %.1f ms/s, load generator lag %.1f ms/s, CPU steal %.1f%%, busiest shard %.0f%%",
		after.CapacityOps, after.MachineBusyPct, after.HostLagMSPerS, after.LoaderLagMSPerS, after.CPUStealPct, *after.ReactorUtilizationPct)
	if after.CapacityOps <= 0 || *after.ReactorUtilizationPct >= results.ProbeReactorSaturatedPct {
		t.Fatalf("probe after measured %.0f op/s with a shard %.0f%% busy: this host drives the model too close to its limit for the test", after.CapacityOps, *after.ReactorUtilizationPct)
	}
	if !after.ReactorsUnsaturated || !after.LowerBound || !res.Derived.CapacityAfterLowerBound {
		t.Fatalf("a probe of %.0f op/s against a model far beyond it not marked a lower bound: %+v, derived %+v\n%s", after.CapacityOps, after, res.Derived, log)
	}
	b, err := os.ReadFile(filepath.Join(out, results.FileReportMD))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "- Capacity per vCPU:") {
			line = l
		}
	}
	want := []string{" at least ", " after (probed after the last step: ", ", a lower bound as ", "the nodes' reactors were at most "}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("the Answers' capacity line does not say %q: %q", w, line)
		}
	}
}
