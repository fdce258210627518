package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/provision"
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

// preflightInput derives the pre-flight input from the plan: the backend's
// registration adds what it needs of this machine and its own checks.
func preflightInput(p *plan.Plan, out, binary string, getenv func(string) string) preflight.Input {
	in := preflight.Input{OutDir: out, Getenv: getenv}
	if be, err := provision.Lookup(p.Backend); err == nil && be.Preflight != nil {
		be.Preflight(&p.Provision, p.Facts(), binary, &in)
	}
	return in
}
