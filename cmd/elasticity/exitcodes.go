package main

import (
	"errors"

	"github.com/elasticity-dev/elasticity/cmd/internal/command"
	"github.com/elasticity-dev/elasticity/results"
)

// ExitCode is the process's exit status (documented in the README), shared
// with elasticity-loader through package command. Every command returns one
// through withCode; run statuses map to codes in exitCodeOf, the one place
// that does.
type ExitCode = command.ExitCode

// Exit codes.
const (
	ExitPassed      = command.ExitPassed
	ExitFailed      = command.ExitFailed
	ExitInvalid     = command.ExitInvalid
	ExitRunError    = command.ExitRunError
	ExitInterrupted = command.ExitInterrupted
)

// withCode wraps err so that the process exits with code.
func withCode(code ExitCode, err error) error { return command.WithCode(code, err) }

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
