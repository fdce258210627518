package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func init() {
	addCommand(func(e *env) *cobra.Command {
		var sets []string
		var asJSON, asYAML bool
		var backend string
		c := &cobra.Command{
			Use:   "plan FILE",
			Short: "Print the resolved plan of a scenario",
			Long: `plan loads a scenario like validate and prints what a run would do: the
nodes per rack and type, the data each fill phase writes, the phases in order
with their durations (scaled by local.time_scale on the local backend),
thresholds, timeouts and an estimate of the total wall time. Nothing is started.`,
			Example: `  elasticity plan configs/90pct-scaleout.yaml
  elasticity plan --json --set nemesis.0.grow_cluster.mode=parallel configs/90pct-scaleout.yaml
  elasticity plan --backend aws configs/90pct-scaleout.yaml
  elasticity plan --yaml configs/smoke.yaml    # every default, resolved`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				all := sets
				if backend != "" {
					// Last, so it wins over the file and earlier overrides.
					all = append(append([]string(nil), sets...), "backend="+backend)
				}
				p, err := loadPlan(e, args[0], all)
				if err != nil {
					return err
				}
				if asYAML {
					_, err = e.Stdout.Write(p.YAML)
					return err
				}
				if asJSON {
					enc := json.NewEncoder(e.Stdout)
					enc.SetIndent("", "  ")
					if err := enc.Encode(p); err != nil {
						return withCode(ExitRunError, fmt.Errorf("plan: writing JSON: %w", err))
					}
					return nil
				}
				if err := p.WriteText(e.Stdout); err != nil {
					return withCode(ExitRunError, fmt.Errorf("plan: writing plan: %w", err))
				}
				return nil
			},
		}
		addSetFlag(c, &sets)
		c.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
		c.Flags().BoolVar(&asYAML, "yaml", false, "print the resolved scenario (every default filled in) as YAML, as a run writes it to scenario.yaml")
		c.MarkFlagsMutuallyExclusive("json", "yaml")
		c.Flags().StringVar(&backend, "backend", "", "plan for another backend (same as --set backend=NAME)")
		return c
	})
}
