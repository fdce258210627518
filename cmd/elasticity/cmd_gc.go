package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/provision"
)

// sweeperFor builds the Sweeper of a backend from its registration. A
// variable so tests can swap it.
var sweeperFor = func(ctx context.Context, backend, region string) (provision.Sweeper, error) {
	be, err := provision.Lookup(backend)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	if be.Sweeper == nil {
		return nil, fmt.Errorf("gc: backend %q has nothing to collect (%s)", backend, strings.Join(sweepable(), ", "))
	}
	return be.Sweeper(ctx, provision.SweepOptions{Region: region})
}

// sweepable lists the backends with a sweeper.
func sweepable() []string {
	var out []string
	for _, n := range provision.Names() {
		if be, _ := provision.Lookup(n); be.Sweeper != nil {
			out = append(out, n)
		}
	}
	return out
}

func init() {
	addCommand(func(e *env) *cobra.Command {
		var backend, region, runID string
		var yes bool
		c := &cobra.Command{
			Use:   "gc --backend local|docker|aws [--yes]",
			Short: "Remove resources left behind by crashed runs",
			Long: `gc finds what earlier runs created (containers and networks labelled
elasticity.created-by=elasticity; EC2 instances and security groups tagged
CreatedBy=elasticity) whose keep-until time has passed. It is a dry run by
default: it lists what it would remove. On the local backend it finds
emulated node processes of crashed runs (marked in their environment). --yes removes it. --run-id removes
everything of one run whatever its keep-until.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if backend == "" {
					return withCode(ExitInvalid, fmt.Errorf("gc: --backend is required (%s)", strings.Join(sweepable(), ", ")))
				}
				ctx := cmd.Context()
				sw, err := sweeperFor(ctx, backend, region)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				var res []provision.Resource
				if rs, ok := sw.(provision.RunSweeper); ok && runID != "" {
					res, err = rs.SweepRun(ctx, runID, !yes)
				} else if runID != "" {
					return withCode(ExitInvalid, fmt.Errorf("gc: --run-id is not supported for backend %s", backend))
				} else {
					res, err = sw.Sweep(ctx, time.Now(), !yes)
				}
				printResources(e, res, yes)
				if err != nil {
					return withCode(ExitRunError, err)
				}
				return nil
			},
		}
		c.Flags().StringVar(&backend, "backend", "", "local, docker or aws")
		c.Flags().StringVar(&region, "region", "", "AWS region (default: the standard AWS configuration)")
		c.Flags().StringVar(&runID, "run-id", "", "remove every resource of this run, whatever its keep-until (local, docker)")
		c.Flags().BoolVar(&yes, "yes", false, "remove what was found (default: dry run)")
		return c
	})
}

func printResources(e *env, res []provision.Resource, acted bool) {
	expired := 0
	t := tablewriter.NewWriter(e.Stdout)
	t.Header("KIND", "ID", "NAME", "RUN", "KEEP UNTIL", "ACTION")
	for _, r := range res {
		action := "keep"
		if r.Expired {
			expired++
			action = "would remove"
			if acted {
				action = "removed"
			}
		}
		ku := "-"
		if !r.KeepUntil.IsZero() {
			ku = r.KeepUntil.UTC().Format(time.RFC3339)
		}
		_ = t.Append(r.Kind, r.ID, r.Name, r.RunID, ku, action)
	}
	if len(res) > 0 {
		_ = t.Render()
	}
	verb := "would be removed (dry run; --yes to remove)"
	if acted {
		verb = "removed"
	}
	fmt.Fprintf(e.Stdout, "%d resource(s) found, %d expired %s\n", len(res), expired, verb)
}
