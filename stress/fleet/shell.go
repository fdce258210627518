// Package fleet runs `elasticity stress` on several load-generator machines
// at once and merges what they measure into one latency stream, for clusters
// one runner cannot drive. It reaches the machines through a Shell: ssh for
// cloud instances (package sshshell), plain processes for this machine.
package fleet

import (
	"context"
	"io"
)

// Shell runs commands on load-generator hosts.
type Shell interface {
	// Upload copies the local file to remotePath on host, executable.
	Upload(ctx context.Context, host, localPath, remotePath string) error
	// Start runs argv on host with its standard output and error streamed to
	// the writers. The command ends when it exits, when Interrupt is called
	// or when ctx ends (then it is killed).
	Start(ctx context.Context, host string, argv []string, stdout, stderr io.Writer) (Process, error)
}

// Process is a command started by a Shell.
type Process interface {
	// Interrupt asks the command to stop as on Ctrl-C (SIGINT), so that it
	// flushes what it measured; it does not wait.
	Interrupt() error
	// Wait waits for the command to exit and for its output to be copied.
	// An exit status other than 0 is an error that says which.
	Wait() error
}
