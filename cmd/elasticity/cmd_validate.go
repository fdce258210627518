package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/plan"
)

func init() {
	addCommand(func(e *env) *cobra.Command {
		var sets []string
		c := &cobra.Command{
			Use:   "validate FILE|DIR...",
			Short: "Validate scenario files",
			Long: `validate loads each scenario strictly (unknown keys are errors), applies
--set overrides and defaults, and checks every field. It prints one OK line
per valid file and every problem of an invalid one as file:line: field: message.
A directory stands for the *.yaml and *.yml files in it.
Warnings (valid but probably unintended, e.g. a rate above the emulated
capacity) go to stderr and do not change the exit code: 0 when all files are
valid, 2 otherwise.`,
			Example: `  elasticity validate configs/*.yaml
  elasticity validate --set workload.load_percent=70 configs/90pct-scaleout.yaml`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				paths, err := expandDirs(args)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				bad := 0
				for _, path := range paths {
					s, err := loadScenario(e, path, sets)
					if err != nil {
						bad++
						printProblems(e.Stderr, err)
						continue
					}
					fmt.Fprintf(e.Stdout, "OK %s (%s: %d × %s in %d rack(s), %d fill phase(s), %d nemesis step(s), backend %s)\n",
						path, s.Name, len(s.Cluster.Racks)*s.Cluster.NodesPerRack, s.Cluster.InstanceType, len(s.Cluster.Racks),
						len(s.Dataset.Fill), len(s.Nemesis), s.Backend)
					for _, w := range plan.Warnings(s, e.Getenv) {
						fmt.Fprintf(e.Stderr, "warning: %s\n", w)
					}
				}
				if bad > 0 {
					return withCode(ExitInvalid, fmt.Errorf("validate: %d of %d scenario file(s) invalid", bad, len(paths)))
				}
				return nil
			},
		}
		addSetFlag(c, &sets)
		return c
	})
}

// expandDirs replaces each directory argument by the YAML files in it.
func expandDirs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a) // Load reports a missing file with its name
			continue
		}
		var found []string
		for _, pat := range []string{"*.yaml", "*.yml"} {
			m, err := filepath.Glob(filepath.Join(a, pat))
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", a, err)
			}
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no *.yaml or *.yml files", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
