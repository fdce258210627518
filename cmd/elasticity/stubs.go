package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// notImplemented builds a placeholder subcommand for work owned by an open
// issue. A real cmd_<name>.go registering the same name replaces it; nobody
// needs to edit this file.
func notImplemented(name, short string) commandFactory {
	return func(e *env) *cobra.Command {
		return &cobra.Command{
			Use:                name,
			Short:              short + " (not implemented yet)",
			DisableFlagParsing: true,
			RunE: func(c *cobra.Command, args []string) error {
				return withCode(ExitInvalid, errors.New(name+": not implemented yet"))
			},
		}
	}
}

var stubNames = map[string]string{
	"run":      "Run a scenario end to end",
	"validate": "Validate scenario files",
	"plan":     "Print the resolved plan of a scenario",
	"report":   "Render reports from results directories",
	"stress":   "Run the load generator against a CQL cluster",
	"node":     "Run one emulated node",
	"cluster":  "Start or stop a local emulated cluster",
	"matrix":   "Run a matrix of scenario variants",
	"gc":       "Remove resources left behind by crashed runs",
}

// addStubs adds a placeholder for every planned subcommand not registered yet.
func addStubs(root *cobra.Command, e *env) {
	have := map[string]bool{}
	for _, c := range root.Commands() {
		have[c.Name()] = true
	}
	for name, short := range stubNames {
		if !have[name] {
			root.AddCommand(notImplemented(name, short)(e))
		}
	}
}
