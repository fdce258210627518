package main

import (
	"errors"
	"fmt"

	"github.com/elasticity-dev/elasticity/results"
)

// ExitCode is the process's exit status (documented in the README). Every
// command returns one through withCode; run statuses map to codes in
// exitCodeOf, the one place that does.
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

// withCode wraps err so that the process exits with code.
func withCode(code ExitCode, err error) error { return &exitError{code: code, err: err} }

// exitCodeOf is the exit code of a run that ended with status.
func exitCodeOf(status string) ExitCode {
	switch status {
	case results.StatusPassed:
		return ExitPassed
	case results.StatusFailed:
		return ExitFailed
	case results.StatusInterrupted:
		return ExitInterrupted
	}
	return ExitRunError
}

// statusExit is the command error of a run that ended with status (nil
// when it passed); err says why when there is more to say.
func statusExit(status string, err error) error {
	code := exitCodeOf(status)
	if code == ExitPassed {
		return nil
	}
	if err == nil {
		switch status {
		case results.StatusFailed:
			err = errors.New("thresholds failed (see the report)")
		case results.StatusInterrupted:
			err = errors.New("interrupted")
		default:
			err = errors.New("run error")
		}
	}
	return withCode(code, err)
}
