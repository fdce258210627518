package main

import (
	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/cmd/internal/stresscmd"
)

// The stress command lives in cmd/internal/stresscmd, shared with the slim
// elasticity-loader binary.
func init() {
	addCommand(func(e *env) *cobra.Command { return stresscmd.New(e.Stdout, e.Stderr) })
}
