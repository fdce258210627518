package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/matrix"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

func init() {
	addCommand(func(e *env) *cobra.Command {
		var sets, expects []string
		var repeat int
		var out, emit, backend, beforeEach, afterEach, collect string
		var skipPreflight, force bool
		c := &cobra.Command{
			Use:   "matrix SCENARIO --set path=v1,v2 [--set ...] [--repeat N] [--expect 'METRIC: A / B <= R' ...] --out DIR",
			Short: "Run a matrix of scenario variants and compare them",
			Long: `matrix runs the cartesian product of the --set value lists one pass after
another, each in its own subdirectory of --out, repeats interleaved
(A B A B, not A A B B). Every pass appends one line to matrix.jsonl as it
ends (the cell's values, repeat, status, run dir, figures); the comparison
report (comparison.md, comparison.html, expectations.svg) and matrix.json
are built from it, so an interrupted matrix still reports what it has.

Before each pass the cell's own pre-flight runs (backend, credentials,
image, memory and disk for its sizes); a cell that cannot run here is
skipped and shown as "pending (reason)"; the verdicts stand on the rest.
--before-each / --after-each run a shell command around every pass with
ELASTICITY_CELL, ELASTICITY_VARIANT, ELASTICITY_REPEAT, ELASTICITY_RUN_DIR,
ELASTICITY_SETS and ELASTICITY_SET_<PATH> in the environment; a failing hook
fails its pass (named) and the matrix goes on.

--expect 'METRIC: A / B <= R' (repeatable; also <, >=, >) holds the ratio of
the means of METRIC over the passes of the cells A selects to B's to R, with
Fieller's 95% interval: PASS when the whole interval meets R, FAIL when none
of it does, else INCONCLUSIVE. METRIC is any figure of result.json: a
derived value (scale_out_seconds, ops_per_vcpu_after ...), a duration
("New node(s) ready", the total over the run's steps) or a cycle's metric
("Cycle #1.read_p99_ms"). A and B are key=value[,key=value] over the axes
(the path or its last part: mode=parallel).

--emit github prints a GitHub Actions workflow (a job per cell, then one
that collects the runs with --collect, judges the expectations and uploads
matrix.jsonl and the comparison); --emit github-matrix only the
strategy.matrix JSON. --collect DIR runs nothing: it reads the cells' run
directories from DIR.

Exit code: with --expect, 1 when an expectation FAILs, else 3 when a pass
could not run, else 0 (INCONCLUSIVE too: it is printed). Without, 0 when
every pass passed, 1 when a threshold failed, 3 when a pass could not run.
Skipped cells do not count unless no cell could run (3); 2 is bad input,
before anything runs; 130 interrupted.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				ctx := cmd.Context()
				axes, err := matrix.ParseAxes(sets)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				cells := matrix.Expand(axes, repeat)
				cellSets := func(c matrix.Cell) []string {
					if backend == "" {
						return c.Sets
					}
					// Last, as run --backend does.
					return append(append([]string(nil), c.Sets...), "backend="+backend)
				}
				// Every variant must be a valid scenario before anything runs.
				plans := map[int]*plan.Plan{}
				for _, c := range cells {
					if c.Repeat > 1 {
						continue
					}
					p, err := loadPlan(e, args[0], cellSets(c))
					if err != nil {
						return withCode(ExitInvalid, fmt.Errorf("matrix cell %q: %w", c.Label, err))
					}
					plans[c.Variant] = p
				}
				exps, err := parseExpects(expects, axes, cells, plans)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				first := plans[0]
				switch emit {
				case "":
				case "github":
					return matrix.EmitGitHub(e.Stdout, cells, matrix.Workflow{Scenario: args[0], Sets: sets, Repeat: repeat, Backend: backend, Expects: expects})
				case "github-matrix":
					return matrix.EmitGitHubMatrix(e.Stdout, cells)
				default:
					return withCode(ExitInvalid, fmt.Errorf("matrix: --emit %q: want github or github-matrix", emit))
				}
				if out == "" {
					out = filepath.Join("runs", "matrix-"+first.Scenario+"-"+time.Now().UTC().Format("20060102-150405"))
				}
				o := matrix.Options{Scenario: first.Scenario, Out: out, BeforeEach: beforeEach, AfterEach: afterEach, Expect: exps,
					Figures: runFigures,
					Logf:    func(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }}
				if collect != "" {
					if st, err := os.Stat(collect); err != nil || !st.IsDir() {
						return withCode(ExitInvalid, fmt.Errorf("matrix: --collect %s: not a directory", collect))
					}
					o.Runs, o.Run = collect, collectRun
				} else {
					o.Run = func(ctx context.Context, c matrix.Cell, dir string) (string, error) {
						status, err := runScenario(ctx, e, plans[c.Variant], runSpec{Out: dir, Force: force})
						if err != nil {
							fmt.Fprintf(e.Stderr, "elasticity: %v\n", err)
						}
						if status != results.StatusError {
							err = nil // the status says it all
						}
						return status, err
					}
					if !skipPreflight {
						o.Preflight = func(ctx context.Context, c matrix.Cell, dir string) error {
							err := checkPreflight(ctx, e, plans[c.Variant], dir)
							var pe *preflight.Error
							if errors.As(err, &pe) {
								return errors.New(pe.Checks())
							}
							return err
						}
					}
				}
				fmt.Fprintf(e.Stderr, "matrix: %d pass(es) into %s\n", len(cells), out)
				sum, err := matrix.Run(ctx, cells, o)
				if err != nil {
					return withCode(ExitRunError, err)
				}
				if err := matrix.Report(out, sum); err != nil {
					fmt.Fprintf(e.Stderr, "%v\n", err)
				} else {
					fmt.Fprintf(e.Stdout, "comparison: %s\n", filepath.Join(out, reporting.FileCompareMD))
				}
				return matrixExit(e, sum)
			},
		}
		addSetFlag(c, &sets)
		c.Flags().Lookup("set").Usage = "path=v1,v2,... (repeatable): one axis of the matrix"
		c.Flags().IntVar(&repeat, "repeat", 1, "passes of every variant, interleaved")
		c.Flags().StringArrayVar(&expects, "expect", nil, "'METRIC: A / B <= R' (repeatable): a ratio verdict between cells")
		c.Flags().StringVar(&beforeEach, "before-each", "", "shell command run before every pass (its failure fails the pass)")
		c.Flags().StringVar(&afterEach, "after-each", "", "shell command run after every pass (its failure fails the pass)")
		c.Flags().StringVar(&out, "out", "", "matrix directory (default runs/matrix-<scenario>-<time>)")
		c.Flags().StringVar(&emit, "emit", "", "print instead of running: github (a workflow) or github-matrix (its strategy.matrix)")
		c.Flags().StringVar(&collect, "collect", "", "run nothing: read the cells' run directories from this directory")
		c.Flags().StringVar(&backend, "backend", "", "override the scenario's backend")
		c.Flags().BoolVar(&skipPreflight, "skip-preflight", false, "do not check each cell's disk, memory, tools and credentials first")
		c.Flags().BoolVar(&force, "force", false, "reuse non-empty run directories")
		return c
	})
}

// parseExpects reads and checks every --expect against the matrix: its
// selectors name axes and cells, its metric is a figure every selected
// cell's plan measures.
func parseExpects(specs []string, axes []matrix.Axis, cells []matrix.Cell, plans map[int]*plan.Plan) ([]matrix.Expectation, error) {
	var out []matrix.Expectation
	for _, s := range specs {
		x, err := matrix.ParseExpect(s)
		if err != nil {
			return nil, err
		}
		if err := x.Check(axes, cells); err != nil {
			return nil, err
		}
		for _, c := range cells {
			if c.Repeat > 1 || !x.Selects(c) {
				continue
			}
			if err := plans[c.Variant].CheckFigure(x.Metric); err != nil {
				return nil, fmt.Errorf("--expect %q: cell %q: %w", s, c.Label, err)
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// runFigures reads a finished run's figures.
func runFigures(dir string) (map[string]float64, error) {
	res, err := reporting.Load(dir)
	if err != nil {
		return nil, err
	}
	return results.Figures(res), nil
}

// collectRun is a pass of --collect: the run was made elsewhere.
func collectRun(_ context.Context, _ matrix.Cell, dir string) (string, error) {
	if !fileExists(filepath.Join(dir, results.FileEvents)) && !fileExists(filepath.Join(dir, results.FileResult)) {
		return results.StatusError, fmt.Errorf("no run in %s", dir)
	}
	res, err := reporting.Load(dir)
	if err != nil {
		return results.StatusError, err
	}
	var reason error
	if res.Reason != "" {
		reason = errors.New(res.Reason)
	}
	return res.Status, reason
}

// matrixExit prints the passes, the expectations and the verdict line and
// returns the exit code they make.
func matrixExit(e *env, s *matrix.Summary) error {
	fmt.Fprintf(e.Stdout, "%-4s %-44s %-6s %-12s %s\n", "#", "VARIANT", "REPEAT", "STATUS", "DIR / REASON")
	for _, p := range s.Passes {
		where := p.Dir
		if p.Reason != "" && p.Status != results.StatusPassed && p.Status != results.StatusFailed {
			where = p.Reason
		}
		status := p.Status
		if status == matrix.StatusSkipped {
			status = "pending"
		}
		fmt.Fprintf(e.Stdout, "%-4d %-44s %-6d %-12s %s\n", p.Index, p.Variant, p.Repeat, status, where)
	}
	counts := map[string]int{}
	for _, x := range s.Expectations {
		fmt.Fprintln(e.Stdout, x.Line())
		counts[x.Verdict]++
	}
	fmt.Fprintln(e.Stdout, s.VerdictLine())

	switch {
	case s.Verdict == results.StatusInterrupted:
		return withCode(ExitInterrupted, fmt.Errorf("matrix interrupted after %d of %d passes", len(s.Passes), s.Cells))
	case counts[matrix.ExpectFail] > 0:
		return withCode(ExitFailed, fmt.Errorf("%d expectation(s) failed", counts[matrix.ExpectFail]))
	case s.Skipped == len(s.Passes):
		return withCode(ExitRunError, errors.New("no cell could run here (see the pending reasons)"))
	case s.Errored > 0:
		return withCode(ExitRunError, fmt.Errorf("%d pass(es) could not run", s.Errored))
	case len(s.Expectations) == 0 && s.Failed > 0:
		return withCode(ExitFailed, nil) // the table says which passes
	}
	return nil
}
