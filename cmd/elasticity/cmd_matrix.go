package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/matrix"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// compareRuns writes the comparison report of a matrix; set by the reporting
// wiring (cmd_report.go) so that this file does not depend on its internals.
var compareRuns func(dirs []string, out string) error

func init() {
	addCommand(func(e *env) *cobra.Command {
		var sets []string
		var repeat int
		var out, emit, backend string
		var skipPreflight, force bool
		c := &cobra.Command{
			Use:   "matrix SCENARIO --set path=v1,v2 [--set ...] [--repeat N] --out DIR",
			Short: "Run a matrix of scenario variants and compare them",
			Long: `matrix runs the cartesian product of the --set value lists one run after
another, each in its own subdirectory of --out, repeats interleaved
(A B A B, not A A B B), then writes a comparison report of all runs and
matrix.json with every cell's status. --emit github prints the cells as a
GitHub Actions strategy.matrix instead of running them.

Exit code: 0 when every cell passed, 1 when a threshold failed in any cell,
3 when a cell could not run, 130 when interrupted.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				ctx := cmd.Context()
				axes, err := matrix.ParseAxes(sets)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				cells := matrix.Expand(axes, repeat)
				// Every variant must be a valid scenario before anything runs.
				cellSets := func(c matrix.Cell) []string {
					if backend == "" {
						return c.Sets
					}
					// Last, as run --backend does.
					return append(append([]string(nil), c.Sets...), "backend="+backend)
				}
				var first *scenarios.Plan
				for _, c := range cells {
					if c.Repeat > 1 {
						continue
					}
					p, err := loadPlan(e, args[0], cellSets(c))
					if err != nil {
						return withCode(ExitInvalid, fmt.Errorf("matrix cell %q: %w", c.Label, err))
					}
					if first == nil {
						first = p
					}
				}
				switch emit {
				case "":
				case "github":
					return matrix.EmitGitHub(e.Stdout, cells)
				default:
					return withCode(ExitInvalid, fmt.Errorf("matrix: --emit %q: only github is known", emit))
				}
				if out == "" {
					out = filepath.Join("runs", "matrix-"+first.Scenario+"-"+time.Now().UTC().Format("20060102-150405"))
				}
				if !skipPreflight {
					// Once for the matrix: the cells run one after another.
					if err := checkPreflight(ctx, e, first, out); err != nil {
						return withCode(ExitRunError, err)
					}
				}
				fmt.Fprintf(e.Stderr, "matrix: %d cell(s) into %s\n", len(cells), out)
				runCell := func(ctx context.Context, c matrix.Cell, dir string) (string, error) {
					p, err := loadPlan(e, args[0], cellSets(c))
					if err != nil {
						return results.StatusError, err
					}
					status, err := runScenario(ctx, e, p, runSpec{Out: dir, Force: force})
					if err != nil {
						fmt.Fprintf(e.Stderr, "elasticity: %v\n", err)
					}
					if status != results.StatusError {
						err = nil // the status says it all
					}
					return status, err
				}
				logf := func(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }
				sum, err := matrix.Run(ctx, first.Scenario, cells, out, runCell, logf)
				if err != nil {
					return withCode(ExitRunError, err)
				}
				var dirs []string
				for _, o := range sum.Outcomes {
					dirs = append(dirs, filepath.Join(out, o.Dir))
				}
				if compareRuns != nil && len(dirs) > 0 {
					if err := compareRuns(dirs, out); err != nil {
						fmt.Fprintf(e.Stderr, "matrix: writing the comparison report: %v\n", err)
					}
				}
				printMatrix(e, sum)
				// The verdict is a run status of the whole matrix.
				var why error
				switch exitCodeOf(sum.Verdict) {
				case ExitPassed:
					return nil
				case ExitFailed:
					return withCode(ExitFailed, nil) // the table says which cells
				case ExitInterrupted:
					why = fmt.Errorf("matrix interrupted after %d of %d cells", len(sum.Outcomes), len(cells))
				default:
					why = fmt.Errorf("%d cell(s) could not run", sum.Errored)
				}
				return statusExit(sum.Verdict, why)
			},
		}
		c.Flags().StringArrayVar(&sets, "set", nil, "path=v1,v2,... (repeatable): one axis of the matrix")
		c.Flags().IntVar(&repeat, "repeat", 1, "runs of every variant, interleaved")
		c.Flags().StringVar(&out, "out", "", "matrix directory (default runs/matrix-<scenario>-<time>)")
		c.Flags().StringVar(&emit, "emit", "", "print the cells instead of running them: github")
		c.Flags().StringVar(&backend, "backend", "", "override the scenario's backend")
		c.Flags().BoolVar(&skipPreflight, "skip-preflight", false, "do not check disk, memory, tools and credentials first")
		c.Flags().BoolVar(&force, "force", false, "reuse non-empty run directories")
		return c
	})
}

func printMatrix(e *env, s *matrix.Summary) {
	fmt.Fprintf(e.Stdout, "%-4s %-48s %-6s %-12s %s\n", "#", "VARIANT", "REPEAT", "STATUS", "DIR")
	for _, o := range s.Outcomes {
		fmt.Fprintf(e.Stdout, "%-4d %-48s %-6d %-12s %s\n", o.Cell.Index+1, o.Cell.Label, o.Cell.Repeat, o.Status, o.Dir)
	}
	fmt.Fprintf(e.Stdout, "matrix verdict: %s (%d passed, %d failed thresholds, %d errors)\n", strings.ToUpper(s.Verdict), s.Passed, s.Failed, s.Errored)
}
