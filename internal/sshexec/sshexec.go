// Package sshexec is the one in-process SSH server of the repository: it
// serves exec requests on a loopback address by running each command with
// /bin/sh on this machine, in its own process group, and answers "signal"
// requests and the exit status (OpenSSH session.c: session_exec_req,
// session_signal_req, session_exit_message). One difference: a command
// killed by a signal is reported as exit-status 128+signal, as a shell
// reports it, where sshd sends exit-signal. The simulated EC2 instances'
// sshd (awssim) and the test server of the loader fleet
// (stress/fleet/sshshell/sshtest) are both this server.
package sshexec

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
)

// Handler answers a command in place of /bin/sh (e.g. awssim's journalctl):
// it writes to stdout and stderr and returns the exit status; stop is
// closed when the session ends.
type Handler func(stdout, stderr io.Writer, stop <-chan struct{}) uint32

// Config configures a Server.
type Config struct {
	HostKey ssh.Signer
	// Accept says whether key may log in.
	Accept func(key ssh.PublicKey) bool
	// Dir is the commands' working directory ("" = this process's).
	Dir string
	// Env is the commands' environment (nil = this process's).
	Env []string
	// Handle, when set, may take a command itself.
	Handle func(command string) (Handler, bool)
}

// NewKey makes a fresh ed25519 key (a host or client key of a test or a
// simulated key pair).
func NewKey() (ssh.Signer, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating an ed25519 key: %w", err)
	}
	return ssh.NewSignerFromKey(k)
}

// Server is a listening SSH server.
type Server struct {
	cfg Config
	ln  net.Listener

	mu       sync.Mutex
	commands []string
	procs    map[*exec.Cmd]bool
	conns    map[*ssh.ServerConn]bool
}

// Listen serves SSH on addr ("127.0.0.1:0" for any port) until Close.
func Listen(addr string, cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sshd on %s: %w", addr, err)
	}
	s := &Server{cfg: cfg, ln: ln, procs: map[*exec.Cmd]bool{}, conns: map[*ssh.ServerConn]bool{}}
	sc := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if cfg.Accept != nil && cfg.Accept(key) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	sc.AddHostKey(cfg.HostKey)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c, sc)
		}
	}()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Commands are the exec requests served so far.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// Close stops listening, kills every command still running and cuts every
// connection.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.procs {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.DropConnections()
}

// DropConnections cuts every client connection, as a network failure
// would; the server keeps listening.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

func (s *Server) serve(c net.Conn, cfg *ssh.ServerConfig) {
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		c.Close()
		return
	}
	s.mu.Lock()
	s.conns[conn] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		conn.Close()
	}()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go s.session(ch, creqs)
	}
}

var signals = map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP}

func exitStatus(ch ssh.Channel, status uint32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], status)
	_, _ = ch.SendRequest("exit-status", false, b[:])
}

// session serves one channel: an exec request runs a command (or the
// Handler that takes it); signal requests reach its process group; the
// exit status goes back. Nothing outlives its session.
func (s *Server) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var cmd *exec.Cmd
	exited := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	for req := range reqs {
		switch req.Type {
		case "exec":
			var p struct{ Command string }
			if cmd != nil || ssh.Unmarshal(req.Payload, &p) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			s.mu.Lock()
			s.commands = append(s.commands, p.Command)
			s.mu.Unlock()
			if s.cfg.Handle != nil {
				if h, ok := s.cfg.Handle(p.Command); ok {
					_ = req.Reply(true, nil)
					go func() {
						exitStatus(ch, h(ch, ch.Stderr(), stop))
						ch.Close()
					}()
					continue
				}
			}
			if cmd = s.start(ch, p.Command, exited); cmd == nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
		case "signal":
			var p struct{ Signal string }
			if ssh.Unmarshal(req.Payload, &p) == nil && cmd != nil {
				if sig, ok := signals[p.Signal]; ok {
					_ = syscall.Kill(-cmd.Process.Pid, sig)
				}
			}
			if req.WantReply {
				_ = req.Reply(true, nil)
			}
		default: // pty-req, env, shell ...: not served
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
	// The client went away: nothing may outlive its session.
	if cmd != nil {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// start runs command with /bin/sh in its own process group (dying with
// this process), its stdin from the channel, and sends its exit status
// when it ends; nil when it could not start.
func (s *Server) start(ch ssh.Channel, command string, exited chan struct{}) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Dir, cmd.Env = s.cfg.Dir, s.cfg.Env
	stdin, _ := cmd.StdinPipe()
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	if err := cmd.Start(); err != nil {
		return nil
	}
	s.mu.Lock()
	s.procs[cmd] = true
	s.mu.Unlock()
	go func() { _, _ = io.Copy(stdin, ch); stdin.Close() }()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		delete(s.procs, cmd)
		s.mu.Unlock()
		exitStatus(ch, status(err))
		close(exited)
		ch.Close()
	}()
	return cmd
}

// status is a command's exit status as sshd reports it: a signal's death
// as 128+signal.
func status(err error) uint32 {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + uint32(ws.Signal())
	}
	return uint32(ee.ExitCode())
}
