package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/run"
)

// finalizeRun computes result.json and the reports of a run directory
// (reporting.Finalize); set by the reporting wiring so that this file does
// not depend on its internals. When unset, run_end is the only verdict.
var finalizeRun func(dir, status, reason string) (*results.Result, error)

// runSpec is how one resolved plan runs.
type runSpec struct {
	Out       string
	Force     bool
	Preflight bool // check the machine first (matrix checks once for every cell)
	FaultArgs func(n provision.Node) []string
	// Baseline holds the previous runs' best values for baseline rules.
	Baseline *results.Baseline
	// After runs once the run completed (its status known and printed,
	// e.g. to submit it to Argus); its error fails a run that passed.
	After func(status string) error
}

// runScenario runs one resolved plan, for `run` and for every cell of
// `matrix`: the pre-flight checks, the run, and its summary lines. It
// returns the run's status and, unless it passed, the command error that
// carries its exit code.
func runScenario(ctx context.Context, e *env, p *plan.Plan, o runSpec) (string, error) {
	if o.Preflight {
		if err := checkPreflight(ctx, e, p, o.Out); err != nil {
			return results.StatusError, withCode(ExitRunError, err)
		}
	}
	res, err := run.Run(ctx, p, run.RunOptions{
		Out: o.Out, Force: o.Force, Stdout: e.Stdout, Stderr: e.Stderr,
		Binary: e.Executable, FaultArgs: o.FaultArgs, Finalize: finalizeRun, Baseline: o.Baseline,
	})
	var ie *run.InputError
	if errors.As(err, &ie) {
		return results.StatusError, withCode(ExitInvalid, err)
	}
	fmt.Fprintf(e.Stdout, "results: %s\n", o.Out)
	if report := filepath.Join(o.Out, results.FileReportMD); fileExists(report) {
		fmt.Fprintf(e.Stdout, "report:  %s\n", report)
	}
	status := results.StatusPassed
	var re *run.RunError
	switch {
	case errors.As(err, &re):
		status = re.Status
	case err != nil:
		status = results.StatusError
	case res != nil:
		status = res.Status
		switch {
		case status == results.StatusError:
			err = fmt.Errorf("run error: %s", res.Reason)
		case status == results.StatusFailed && res.Reason != "":
			// The reason names what failed (thresholds, database errors).
			err = fmt.Errorf("%s (see the report)", res.Reason)
		}
	}
	fmt.Fprintf(e.Stdout, "status:  %s\n", status)
	if re == nil && o.After != nil {
		if aerr := o.After(status); aerr != nil && status == results.StatusPassed {
			return status, aerr
		}
	}
	return status, statusExit(status, err)
}

// checkPreflight checks that this machine can finish the run (disk for the
// planned data, memory, the backend's tools and credentials) and prints
// every check.
func checkPreflight(ctx context.Context, e *env, p *plan.Plan, out string) error {
	checks, err := preflight.Run(ctx, preflightInput(p, out, e.Executable, e.Getenv))
	for _, ch := range checks {
		mark := "ok  "
		if !ch.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(e.Stderr, "pre-flight %s %-16s %s\n", mark, ch.Name, ch.Detail)
	}
	return err
}

// preflightInput derives the pre-flight input from the plan.
func preflightInput(p *plan.Plan, out, binary string, getenv func(string) string) preflight.Input {
	in := preflight.Input{Backend: p.Backend, OutDir: out, Binary: binary, Getenv: getenv, BaseAddress: p.Provision.Local.BaseAddress}
	if p.Backend == "local" {
		nodes := 0
		for _, n := range p.Nodes {
			in.PlannedDiskBytes += int64(n.DiskBytes) * int64(n.Count)
			nodes += n.Count
		}
		// An emulated node process needs roughly 200 MiB (Pebble caches, buffers).
		in.PlannedMemoryBytes = int64(nodes)*200<<20 + 512<<20
	}
	if p.Backend == "docker" {
		dockerPreflight(p, &in)
	}
	return in
}

// dockerPreflight: the image (present or pullable), the host's AIO slots
// for every ScyllaDB shard, memory for the containers, their tmpfs data and
// the runner (docker.MemoryFit, which names the settings to change), and
// disk in the engine's root when the data is left on the host's disk.
func dockerPreflight(p *plan.Plan, in *preflight.Input) {
	counts := map[string]int{}
	for _, n := range p.Nodes {
		counts[n.InstanceType] += n.Count
	}
	needs := docker.Needs(&p.Provision, counts)
	if !needs.Mounted {
		for _, n := range p.Nodes {
			in.PlannedDiskBytes += int64(n.DiskBytes) * int64(n.Count)
		}
	}
	in.PlannedMemoryBytes = needs.Memory.NeedBytes()
	in.MemoryDetail = needs.Memory.String()
	in.MemorySettings = needs.Memory.Settings
	if !needs.Emulated {
		in.DockerSMPs = needs.SMPs
	}
	cfg := p.Provision
	in.DockerPing = docker.Ping
	in.DockerImage = func(ctx context.Context) error { return docker.CheckImage(ctx, &cfg) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	in.DockerDataDir = docker.DataRoot(ctx)
	cancel()
}
