package main

import (
	"errors"
	"os"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/spf13/cobra"
)

// nodeCommand runs a node: the one command that keeps the main thread
// locked (see newRootCmd).
const nodeCommand = "node"

func init() {
	addCommand(func(e *env) *cobra.Command {
		cfg := emulator.DefaultConfig()
		cmd := &cobra.Command{
			Use:   nodeCommand,
			Short: "Run one emulated ScyllaDB-like node",
			Long: `node runs one emulated ScyllaDB-like node: CQL, REST API, Prometheus metrics and
internode RPC, all on --listen-address. SIGTERM flushes and stops it.

Capacity model defaults: disk = --disk-gb × 0.2 MiB (i4i.large → 93.6 MiB),
2,000 replica operations/s per vCPU, streaming 4 MiB/s per vCPU.`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				cfg.Stderr = e.Stderr
				cfg.CommandLine = strings.Join(os.Args, " ") // printed as ScyllaDB prints its "command used"
				emulator.NodeProcess()
				if err := emulator.Run(c.Context(), cfg); err != nil {
					if errors.Is(err, emulator.ErrInvalidConfig) {
						return withCode(ExitInvalid, err)
					}
					if errors.Is(err, emulator.ErrStartupFailed) {
						return withCode(ExitFailed, err)
					}
					return withCode(ExitRunError, err)
				}
				return nil
			},
		}
		cmd.Flags().AddFlagSet(emulator.Flags(&cfg))
		return cmd
	})
}
