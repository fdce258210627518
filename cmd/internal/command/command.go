// Package command is what the project's binaries (elasticity and the slim
// elasticity-loader) share around their cobra commands: the exit codes and
// the way a command tree is executed and its error turned into one.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// ExitCode is the process's exit status (documented in the README). Every
// command returns one through WithCode.
type ExitCode int

// Exit codes.
const (
	ExitPassed      ExitCode = 0
	ExitFailed      ExitCode = 1 // thresholds failed
	ExitInvalid     ExitCode = 2 // invalid input or usage
	ExitRunError    ExitCode = 3 // infrastructure or database failure
	ExitInterrupted ExitCode = 130
)

// exitError carries an exit code through cobra.
type exitError struct {
	code ExitCode
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// WithCode wraps err so that the process exits with code.
func WithCode(code ExitCode, err error) error { return &exitError{code: code, err: err} }

// Execute runs root with args and returns the exit code, printing the error
// (prefixed with name) to stderr. Flag errors are usage errors (exit 2).
func Execute(ctx context.Context, name string, root *cobra.Command, args []string, stderr io.Writer) ExitCode {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return WithCode(ExitInvalid, fmt.Errorf("%s: %w", c.CommandPath(), err))
	})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitPassed
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, ee.err)
		}
		return ee.code
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "%s: interrupted: %v\n", name, err)
		return ExitInterrupted
	}
	// Unclassified errors from cobra (unknown command, bad args) are usage errors.
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitInvalid
}

// SignalContext is cancelled by the first SIGINT or SIGTERM, on which it
// prints note to stderr; the default handlers are then restored, so that a
// second Ctrl-C quits at once.
func SignalContext(note string) context.Context {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		fmt.Fprintln(os.Stderr, note)
	}()
	return ctx
}
