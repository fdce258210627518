package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/run"
)

// parseFaults turns --fault NODE=ARGS values into per-node extra arguments
// of local nodes (e.g. --fault 'node-4=--fail-startup=raft timeout').
func parseFaults(specs []string) (func(provision.Node) []string, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	faults := map[string][]string{}
	for _, s := range specs {
		node, args, ok := strings.Cut(s, "=")
		if !ok || node == "" || args == "" {
			return nil, fmt.Errorf("--fault %q: want NODE=ARGS, e.g. node-4=--fail-startup=boom", s)
		}
		faults[node] = append(faults[node], args)
	}
	return func(n provision.Node) []string { return faults[n.Name] }, nil
}

func init() {
	addCommand(func(e *env) *cobra.Command {
		var sets, faults []string
		var out, backend, argusURL, baselineDir, historyDir string
		var force, skipPreflight bool
		c := &cobra.Command{
			Use:   "run SCENARIO [--set k=v ...] [--out DIR] [--backend local|docker|aws|static] [--force] [--skip-preflight] [--argus-url URL]",
			Short: "Run a scenario end to end",
			Long: `run checks that this machine can finish the run (disk, memory, the
backend's tools and credentials; --skip-preflight skips it), then provisions
the scenario's cluster, fills it, applies the workload,
measures the steady state (Cycle #0), runs the nemesis steps (one cycle per
serial node or parallel batch), holds, tears everything down and writes the
results directory: scenario.yaml, events/latency/metrics .jsonl, logs/,
result.json, report.md and report.html.

Ctrl-C stops the load, collects logs, tears every node down and writes what
was measured (status interrupted).

Exit code: 0 passed, 1 thresholds failed, 2 invalid input, 3 run error,
130 interrupted.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				ctx := cmd.Context()
				if backend != "" && !slices.Contains(provision.Names(), backend) {
					return withCode(ExitInvalid, fmt.Errorf("--backend %q: want one of %s", backend, strings.Join(provision.Names(), ", ")))
				}
				if argusURL != "" && checkArgus != nil {
					if err := checkArgus(e, argusURL); err != nil {
						return withCode(ExitInvalid, err)
					}
				}
				faultArgs, err := parseFaults(faults)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				if backend != "" {
					// As a last override, so the backend's defaults (timeouts,
					// zones) and checks apply exactly as if the file said it.
					sets = append(sets, "backend="+backend)
				}
				p, err := loadPlan(e, args[0], sets)
				if err != nil {
					return err
				}
				if out == "" {
					out = run.DefaultOut(p.Scenario, time.Now())
				}
				baseline, err := lookupBaseline(p, baselineDir, historyDir, cmd.Flags().Changed("history"), out)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				if baseline != nil && len(p.BaselineRules) == 0 {
					fmt.Fprintf(e.Stderr, "warning: --baseline %s: the scenario sets no thresholds.baseline rules; the baseline judges nothing\n", baselineDir)
				}
				spec := runSpec{Out: out, Force: force, Preflight: !skipPreflight, FaultArgs: faultArgs, Baseline: baseline}
				if argusURL != "" && submitToArgus != nil {
					spec.After = func(status string) error {
						// The verdict stays the run's; a submission that could not
						// be made fails a run that passed.
						if aerr := submitToArgus(ctx, e, out, argusURL); aerr != nil {
							fmt.Fprintf(e.Stderr, "warning: %v\n", aerr)
							if status == results.StatusPassed {
								return aerr
							}
						}
						return nil
					}
				}
				_, err = runScenario(ctx, e, p, spec)
				return err
			},
		}
		addSetFlag(c, &sets)
		c.Flags().StringVar(&out, "out", "", "results directory (default runs/<scenario>-<timestamp>)")
		c.Flags().StringVar(&backend, "backend", "", "override the scenario's backend: "+strings.Join(provision.Names(), ", "))
		c.Flags().BoolVar(&force, "force", false, "reuse a non-empty results directory")
		c.Flags().StringVar(&argusURL, "argus-url", "", "submit the results to this Argus server at the end (token from $"+EnvArgusToken+"; see `elasticity argus submit`)")
		c.Flags().StringVar(&baselineDir, "baseline", "", "judge thresholds.baseline rules against this previous run's results directory")
		c.Flags().StringVar(&historyDir, "history", run.DefaultRunsDir, "without --baseline, judge thresholds.baseline rules against the best of the previous runs of the scenario in this directory")
		c.Flags().BoolVar(&skipPreflight, "skip-preflight", false, "do not check disk, memory, tools and credentials first")
		c.Flags().StringArrayVar(&faults, "fault", nil, "inject a fault into a local node: NODE=ARGS (testing; repeatable)")
		_ = c.Flags().MarkHidden("fault")
		return c
	})
}

// lookupBaseline finds what the plan's baseline rules are judged against:
// the run in baselineDir, else the previous runs of the scenario in
// historyDir (which must exist when given explicitly). Nothing is looked up
// when there are no rules and no --baseline.
func lookupBaseline(p *plan.Plan, baselineDir, historyDir string, historyGiven bool, out string) (*results.Baseline, error) {
	switch {
	case baselineDir != "":
		return results.LoadBaseline(baselineDir, p.Scenario, p.Backend)
	case len(p.BaselineRules) == 0:
		return nil, nil
	}
	return results.HistoryBaseline(historyDir, p.Scenario, p.Backend, out, historyGiven)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
