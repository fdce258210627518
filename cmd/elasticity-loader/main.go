// Command elasticity-loader is the load generator alone: `elasticity-loader
// stress ...` takes the same flags, prints the same output and exits with the
// same codes as `elasticity stress ...`, so a fleet runs either one.
//
// Why a second binary: elasticity links the emulator, the AWS SDK and the
// Docker client (an ~85 MB executable), and a process touches pages all over
// it while ~300 package initialisers run; the kernel maps an executable's
// page cache in folios of up to 2 MiB, so those touches alone made
// `elasticity stress` ~45 MiB of file-backed resident memory plus ~5 MiB of
// initialisers' heap. This binary links only the stress command, gocql and
// the results format (~12 MB), which is what a loader machine needs.
package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/cmd/internal/command"
	"github.com/elasticity-dev/elasticity/cmd/internal/stresscmd"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "elasticity-loader",
		Short: "The elasticity load generator alone (for loader machines)",
		Long: `elasticity-loader runs the load generator of elasticity: its one command,
stress, is elasticity's (same flags, output and exit codes), without the rest of
elasticity linked in, so that it uses less memory on loader machines.

Exit codes: 0 done, 2 invalid input or usage, 3 run error, 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(stresscmd.New(stdout, stderr))
	return root
}

func run(ctx context.Context, stdout, stderr io.Writer, args []string) command.ExitCode {
	return command.Execute(ctx, "elasticity-loader", newRootCmd(stdout, stderr), args, stderr)
}

func main() {
	ctx := command.SignalContext("elasticity-loader: interrupted; stopping the load (Ctrl-C again to quit at once)")
	os.Exit(int(run(ctx, os.Stdout, os.Stderr, os.Args[1:])))
}
