package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// LocalShell runs loaders as processes on this machine (the host argument is
// ignored): several stress processes use more cores than one, and the fleet
// path is exercised end to end without a cloud.
type LocalShell struct{}

// Upload is not needed locally: local loaders run the binary in place.
func (LocalShell) Upload(ctx context.Context, host, localPath, remotePath string) error {
	return errors.New("fleet: local loaders run the binary in place; nothing to upload")
}

// Start runs argv in its own process group.
func (LocalShell) Start(ctx context.Context, host string, argv []string, stdout, stderr io.Writer) (Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("fleet: empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own group, so that an interrupt reaches it and not the runner,
	// and Pdeathsig so that it never outlives a runner that crashed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	p := &localProcess{cmd: cmd, name: strings.Join(argv[:min(2, len(argv))], " "), exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	go func() {
		select {
		case <-ctx.Done():
			p.signal(syscall.SIGKILL)
		case <-p.exited:
		}
	}()
	return p, nil
}

type localProcess struct {
	cmd    *exec.Cmd
	name   string
	exited chan struct{}
	err    error
	once   sync.Once
}

func (p *localProcess) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

func (p *localProcess) Interrupt() error {
	p.signal(syscall.SIGINT)
	return nil
}

func (p *localProcess) Wait() error {
	<-p.exited
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return &ExitError{Command: p.name, Status: ee.ExitCode(), Err: p.err}
	}
	if p.err != nil {
		return fmt.Errorf("%s: %w", p.name, p.err)
	}
	return nil
}

// ExitError is a loader command's non-zero exit.
type ExitError struct {
	Command string
	Status  int // -1 when killed by a signal
	Err     error
}

func (e *ExitError) Error() string {
	if e.Status < 0 {
		return fmt.Sprintf("%s: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("%s exited with status %d", e.Command, e.Status)
}
func (e *ExitError) Unwrap() error   { return e.Err }
func (e *ExitError) ExitStatus() int { return e.Status }
