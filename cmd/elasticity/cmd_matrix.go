package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/matrix"
	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// compareRuns writes the comparison report of a matrix; set by the reporting
// wiring (cmd_report.go) so that this file does not depend on its internals.
var compareRuns func(dirs []string, out string) error

// statusOfExit maps `elasticity run` exit codes to run statuses.
func statusOfExit(code int) string {
	switch code {
	case ExitPassed:
		return "passed"
	case ExitFailed:
		return "failed"
	case ExitInterrupted:
		return "interrupted"
	}
	return "error"
}

// planPreflight derives the pre-flight input from the scenario's plan.
func planPreflight(p *scenarios.Plan, out, binary string, getenv func(string) string) preflight.Input {
	in := preflight.Input{Backend: p.Backend, OutDir: out, Binary: binary, Getenv: getenv}
	if p.Backend == "local" {
		nodes := 0
		for _, n := range p.Nodes {
			in.PlannedDiskBytes += int64(n.DiskBytes) * int64(n.Count)
			nodes += n.Count
		}
		// An emulated node process needs roughly 200 MiB (Pebble caches, buffers).
		in.PlannedMemoryBytes = int64(nodes)*200<<20 + 512<<20
	}
	return in
}

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
				var first *scenarios.Plan
				for _, c := range cells {
					if c.Repeat > 1 {
						continue
					}
					sets := c.Sets
					if backend != "" {
						sets = append(append([]string(nil), sets...), "backend="+backend)
					}
					p, err := loadPlan(e, args[0], sets)
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
					checks, err := preflight.Run(ctx, planPreflight(first, out, e.Executable, e.Getenv))
					for _, ch := range checks {
						mark := "ok  "
						if !ch.OK {
							mark = "FAIL"
						}
						fmt.Fprintf(e.Stderr, "pre-flight %s %-16s %s\n", mark, ch.Name, ch.Detail)
					}
					if err != nil {
						return withCode(ExitRunError, err)
					}
				}
				fmt.Fprintf(e.Stderr, "matrix: %d cell(s) into %s\n", len(cells), out)
				runCell := func(ctx context.Context, c matrix.Cell, dir string) (string, error) {
					a := []string{"run", args[0], "--out", dir}
					for _, s := range c.Sets {
						a = append(a, "--set", s)
					}
					if backend != "" {
						a = append(a, "--backend", backend)
					}
					if force {
						a = append(a, "--force")
					}
					code := run(ctx, e, a)
					if code == ExitInvalid {
						return "error", fmt.Errorf("run refused its input (exit 2)")
					}
					return statusOfExit(code), nil
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
				switch sum.Verdict {
				case "passed":
					return nil
				case "failed":
					return withCode(ExitFailed, nil)
				case "interrupted":
					return withCode(ExitInterrupted, fmt.Errorf("matrix interrupted after %d of %d cells", len(sum.Outcomes), len(cells)))
				}
				return withCode(ExitRunError, fmt.Errorf("%d cell(s) could not run", sum.Errored))
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
