package main

import (
	"errors"
	"fmt"
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
		var socket string
		cmd := &cobra.Command{
			Use:   nodeCommand,
			Short: "Run one emulated ScyllaDB-like node",
			Long: `node runs one emulated ScyllaDB-like node: CQL, REST API, Prometheus metrics and
internode RPC, all on --listen-address. SIGTERM flushes and stops it.

Capacity model defaults: disk = --disk-gb × 0.2 MiB (i4i.large → 93.6 MiB),
2,000 replica operations/s per vCPU, streaming 4 MiB/s per vCPU.

With --control-socket PATH (and no other flag) the process is a host of
nodes instead: its launcher starts, kills, pauses, resumes and stops nodes
in it through the control endpoint on PATH (see ARCHITECTURE.md, "Nodes in
one process").`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				if socket != "" {
					if c.Flags().NFlag() > 1 {
						return withCode(ExitInvalid, errors.New("node: --control-socket takes no node flags (nodes are started through the socket)"))
					}
					emulator.NodeProcess()
					if code := emulator.RunHost(c.Context(), socket, e.Stderr); code != 0 {
						return withCode(ExitCode(code), fmt.Errorf("node host on %s ended with status %d", socket, code))
					}
					return nil
				}
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
		cmd.Flags().StringVar(&socket, "control-socket", "", "run as the host of nodes that its launcher starts through the control endpoint on this unix socket")
		return cmd
	})
}
