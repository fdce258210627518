package main

import (
	"context"
	"os"

	"github.com/elasticity-dev/elasticity/emulator/image"
	"github.com/spf13/cobra"
)

// runImageProgram runs and exits when the binary was started as one of the
// image double's programs on its PATH (/usr/bin/df, /usr/bin/scylla, ...:
// symbolic links to the binary, Dockerfile.emulator); otherwise it returns.
func runImageProgram() {
	if prog, ok := image.ProgramFor(os.Args[0]); ok {
		os.Exit(image.Main(context.Background(), append([]string{prog}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
}

// `elasticity image PROGRAM ...` runs a program of the scylladb/scylla image
// double (Dockerfile.emulator): its entrypoint, scylla, node_exporter,
// supervisorctl or df. Hidden: only the image calls it.
func init() {
	addCommand(func(e *env) *cobra.Command {
		return &cobra.Command{
			Use:                "image PROGRAM [ARGS...]",
			Short:              "Run a program of the scylladb/scylla image double (inside the emulator image): entrypoint, scylla, node-exporter, supervisorctl or df",
			Hidden:             true,
			DisableFlagParsing: true,
			SilenceUsage:       true,
			RunE: func(c *cobra.Command, args []string) error {
				if code := image.Main(c.Context(), args, e.Stdout, e.Stderr); code != 0 {
					return withCode(ExitCode(code), nil) // the program printed its own error
				}
				return nil
			},
		}
	})
}
