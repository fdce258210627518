// Command elasticity runs scale-out elasticity tests of ScyllaDB-style clusters.
// This file is thin wiring: each subcommand lives in its own cmd_*.go file and
// registers itself with addCommand, so that owners of subcommands never edit
// the same file.
package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/cmd/internal/command"

	// Every backend registers itself with package provision.
	_ "github.com/elasticity-dev/elasticity/provision/all"
)

// env is the process environment injected into commands (k6 style) so that
// whole-CLI tests run in-process with their own stdout, stderr and variables.
type env struct {
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader
	Getenv func(string) string
	// Executable is the path of the elasticity binary, used to start nodes.
	Executable string
}

type commandFactory func(e *env) *cobra.Command

var factories []commandFactory

// addCommand registers a subcommand; called from init() of each cmd_*.go file.
func addCommand(f commandFactory) { factories = append(factories, f) }

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "elasticity",
		Short: "Scale-out elasticity tests for ScyllaDB-style clusters",
		Long: `elasticity provisions a cluster (emulated nodes by default, Docker or EC2),
fills its disks, applies a fixed-rate mixed workload, grows, shrinks or drains
the cluster, and reports latency, throughput, reactor stalls, disk usage and
phase durations per cycle.

Exit codes: 0 passed, 1 thresholds failed, 2 invalid input or usage,
3 run error, 130 interrupted.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Package node locks the main goroutine to the main thread from an
		// init function, for node processes (emulator/node/bgsched_linux.go);
		// every other command gives the thread back: each wake-up of a locked
		// goroutine hands a P to its thread and back (futex both ways), 8% of
		// the runner's CPU, its load generator included.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			if cmd.Name() != nodeCommand {
				runtime.UnlockOSThread()
			}
		},
	}
	root.SetOut(e.Stdout)
	root.SetErr(e.Stderr)
	root.SetIn(e.Stdin)
	for _, f := range factories {
		root.AddCommand(f(e))
	}
	return root
}

// runCLI executes the CLI and returns the process exit code.
func runCLI(ctx context.Context, e *env, args []string) ExitCode {
	return command.Execute(ctx, "elasticity", newRootCmd(e), args, e.Stderr)
}

// version reports the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			if len(st.Value) > 12 {
				st.Value = st.Value[:12]
			}
			v += " " + st.Value
		case "vcs.modified":
			if st.Value == "true" {
				v += "+dirty"
			}
		}
	}
	return v
}

func main() {
	runImageProgram() // the image double's /usr/bin programs (cmd_image.go)
	exe, _ := os.Executable()
	// The first signal cancels ctx: commands stop the load and tear down.
	ctx := command.SignalContext("elasticity: interrupted; cleaning up (Ctrl-C again to quit at once: local nodes are then killed with the runner)")
	code := runCLI(ctx, &env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Getenv: os.Getenv, Executable: exe}, os.Args[1:])
	os.Exit(int(code))
}
