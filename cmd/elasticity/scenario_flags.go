package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// addSetFlag registers the repeatable --set path=value override shared by
// every command that reads a scenario (validate, plan, run, matrix).
func addSetFlag(c *cobra.Command, sets *[]string) {
	c.Flags().StringArrayVar(sets, "set", nil, "override a scenario field, e.g. --set workload.load_percent=70 or --set nemesis.0.grow_cluster.mode=parallel (repeatable)")
}

// loadScenario loads a scenario file ("-" reads stdin). A bad scenario is an
// ExitInvalid error whose message lists every problem, one per line.
func loadScenario(e *env, path string, sets []string) (*scenarios.Scenario, error) {
	var s *scenarios.Scenario
	var err error
	if path == "-" {
		data, rerr := io.ReadAll(io.LimitReader(e.Stdin, scenarios.MaxFileSize+1))
		if rerr != nil {
			return nil, withCode(ExitInvalid, fmt.Errorf("reading scenario from stdin: %w", rerr))
		}
		s, err = scenarios.Parse(data, "<stdin>", sets)
	} else {
		s, err = scenarios.Load(path, sets)
	}
	if err != nil {
		return nil, withCode(ExitInvalid, err)
	}
	return s, nil
}

// loadPlan loads a scenario and resolves it into its plan (see loadScenario).
func loadPlan(e *env, path string, sets []string) (*plan.Plan, error) {
	sc, err := loadScenario(e, path, sets)
	if err != nil {
		return nil, err
	}
	p, err := plan.Resolve(sc, e.Getenv)
	if err != nil {
		return nil, withCode(ExitInvalid, fmt.Errorf("%s: %w", path, err))
	}
	return p, nil
}

// printProblems writes each problem of a scenario error on its own line.
func printProblems(w io.Writer, err error) {
	var ve *scenarios.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Fprintln(w, p.String())
		}
		return
	}
	fmt.Fprintln(w, err)
}
