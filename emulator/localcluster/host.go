package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A host is one process that runs the nodes of a cluster (`elasticity
// node --control-socket PATH`, emulator/host.go), their internode messages
// in memory; its control endpoint starts, kills, pauses, resumes and stops
// one node of it as signals do one node process. Host is its launcher's
// side: Cluster with Options.SharedProcess, and provision/local with
// local.process: shared, start every node of a cluster in one.

// ControlSocketFlag is emulator.ControlSocketFlag (this package cannot
// import emulator; a test keeps them equal).
const ControlSocketFlag = "--control-socket"

// Host is a started host process.
type Host struct {
	Proc   *Process
	Socket string
	client *http.Client
}

// NodeExitError is how a node of a host ended, as a node process's exit
// would say it (exec.ExitError's text): "signal: killed", "exit status 1:
// <its reason>".
type NodeExitError struct {
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
	Reason string `json:"error,omitempty"`
}

func (e *NodeExitError) Error() string {
	if e.Signal != "" {
		return "signal: " + e.Signal
	}
	s := "exit status " + strconv.Itoa(e.Code)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// ExitCode is the exit status (-1 when a signal ended the node).
func (e *NodeExitError) ExitCode() int { return e.Code }

// err is the exit as a process's Wait would give it: nil for status 0.
func (e *NodeExitError) err() error {
	if e.Code == 0 && e.Signal == "" {
		return nil
	}
	return e
}

var socketSeq atomic.Int64

// HostSocket is where a host of a cluster in dir listens: in dir when the
// path fits a unix socket's (108 bytes), else in the temporary directory.
func HostSocket(dir string) string {
	p := filepath.Join(dir, "nodes.sock")
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if len(p) < 100 {
		return p
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("elasticity-%d-%d.sock", os.Getpid(), socketSeq.Add(1)))
}

// StartHost starts a host process (l.Args are what comes before the node
// flags, e.g. "node") listening on socket, and waits until it answers.
func StartHost(ctx context.Context, l Launch, socket string) (*Host, error) {
	l.Args = append(append([]string(nil), l.Args...), ControlSocketFlag, socket)
	os.Remove(socket)
	proc, err := StartNode(l)
	if err != nil {
		return nil, err
	}
	h := &Host{Proc: proc, Socket: socket, client: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 16,
	}}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://host/nodes", nil)
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return h, nil
			}
		}
		if proc.Exited() {
			return nil, fmt.Errorf("the node host process %d exited before serving its control socket %s%s", proc.Pid, socket, logTail(l.Out))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			proc.Signal(9)
			return nil, fmt.Errorf("the node host process %d does not answer on %s: %v", proc.Pid, socket, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// do makes a control request and decodes its JSON answer into out.
func (h *Host) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://host"+path, rd)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("node host (pid %d): %s %s: %w", h.Proc.Pid, method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &statusError{code: resp.StatusCode, msg: fmt.Sprintf("node host (pid %d): %s %s: %s: %s", h.Proc.Pid, method, path, resp.Status, strings.TrimSpace(string(b)))}
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// Start starts a node named name with its flags; its start number is
// what Wait waits for.
func (h *Host) Start(ctx context.Context, name string, args []string) (int, error) {
	var r struct {
		Gen int `json:"gen"`
	}
	err := h.do(ctx, http.MethodPost, "/nodes/"+url.PathEscape(name)+"/start", map[string]any{"args": args}, &r)
	return r.Gen, err
}

// Kill kills one node (SIGKILL): its listeners and connections close at once.
func (h *Host) Kill(ctx context.Context, name string) error {
	return h.do(ctx, http.MethodPost, "/nodes/"+url.PathEscape(name)+"/kill", nil, nil)
}

// Stop stops one node gracefully (SIGTERM), killing it after grace.
func (h *Host) Stop(ctx context.Context, name string, grace time.Duration) error {
	return h.do(ctx, http.MethodPost, "/nodes/"+url.PathEscape(name)+"/stop?grace="+grace.String(), nil, nil)
}

// Pause freezes one node (SIGSTOP); Resume thaws it (SIGCONT).
func (h *Host) Pause(ctx context.Context, name string) error {
	return h.do(ctx, http.MethodPost, "/nodes/"+url.PathEscape(name)+"/pause", nil, nil)
}

// Resume thaws a paused node (SIGCONT).
func (h *Host) Resume(ctx context.Context, name string) error {
	return h.do(ctx, http.MethodPost, "/nodes/"+url.PathEscape(name)+"/resume", nil, nil)
}

// Signal does to one node what sig does to a node process: SIGKILL kills
// it, SIGTERM stops it (without waiting: grace, then killed), SIGSTOP
// pauses and SIGCONT resumes it; other signals cannot reach one node.
func (h *Host) Signal(ctx context.Context, name string, sig syscall.Signal, grace time.Duration) error {
	switch sig {
	case syscall.SIGKILL:
		return h.Kill(ctx, name)
	case syscall.SIGTERM:
		go h.Stop(ctx, name, grace)
		return nil
	case syscall.SIGSTOP:
		return h.Pause(ctx, name)
	case syscall.SIGCONT:
		return h.Resume(ctx, name)
	}
	return fmt.Errorf("%v cannot be sent to one node of the host process", sig)
}

// Wait waits until start gen of the node ends and returns how it ended as
// a node process's Wait would (nil for status 0, a *NodeExitError else).
// When the host process itself ends, every node in it has ended with it:
// the process's exit error.
func (h *Host) Wait(name string, gen int) error {
	for {
		var e NodeExitError
		err := h.do(context.Background(), http.MethodGet, "/nodes/"+url.PathEscape(name)+"/wait?gen="+strconv.Itoa(gen), nil, &e)
		if err == nil {
			return e.err()
		}
		var se *statusError
		if errors.As(err, &se) {
			// The host no longer knows this start (the node was started
			// again): it ended long ago.
			return err
		}
		if h.Proc.Exited() || waitExit(h.Proc, 2*time.Second) {
			<-h.Proc.Done()
			perr := h.Proc.Err()
			if perr == nil {
				perr = errors.New("exit status 0")
			}
			return fmt.Errorf("its host process %d ended: %w", h.Proc.Pid, perr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// statusError is a control request the host refused.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// waitExit waits up to d for p to exit.
func waitExit(p *Process, d time.Duration) bool {
	select {
	case <-p.Done():
		return true
	case <-time.After(d):
		return false
	}
}
