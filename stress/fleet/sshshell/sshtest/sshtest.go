// Package sshtest is an in-process SSH server for tests: it runs every exec
// request with /bin/sh on this machine, so that code which drives remote
// machines over SSH is tested against a real SSH protocol peer on loopback.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Server is a running test SSH server.
type Server struct {
	ln      net.Listener
	client  ssh.Signer
	hostKey ssh.Signer

	mu       sync.Mutex
	commands []string
	procs    map[*exec.Cmd]bool
	conns    map[*ssh.ServerConn]bool
	// authorized are keys accepted besides ClientSigner's.
	authorized map[string]bool
	wg         sync.WaitGroup
}

// Start listens on addr ("127.0.0.1:0" for any port) until the test ends.
// Only ClientSigner's key (and keys given to Authorize) may log in.
func Start(t testing.TB, addr string) *Server {
	t.Helper()
	s := &Server{procs: map[*exec.Cmd]bool{}, conns: map[*ssh.ServerConn]bool{}, authorized: map[string]bool{}, hostKey: newSigner(t), client: newSigner(t)}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("sshtest: listening on %s: %v", addr, err)
	}
	s.ln = ln
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if string(key.Marshal()) == string(s.client.PublicKey().Marshal()) || s.authorized[string(key.Marshal())] {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(s.hostKey)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c, cfg) }()
		}
	}()
	t.Cleanup(s.Close)
	return s
}

func newSigner(t testing.TB) ssh.Signer {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// ClientSigner is the key the server accepts.
func (s *Server) ClientSigner() ssh.Signer { return s.client }

// Authorize lets key log in too.
func (s *Server) Authorize(key ssh.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorized[string(key.Marshal())] = true
}

// HostKey is the server's public host key.
func (s *Server) HostKey() ssh.PublicKey { return s.hostKey.PublicKey() }

// Commands are the exec requests served so far.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// Close stops listening and kills every command still running.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.procs {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	s.mu.Unlock()
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

// session serves one channel: an exec request runs a command; signal
// requests reach its process group; the exit status goes back.
func (s *Server) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var cmd *exec.Cmd
	exited := make(chan struct{})
	for req := range reqs {
		switch req.Type {
		case "exec":
			if cmd != nil {
				_ = req.Reply(false, nil)
				continue
			}
			var p struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &p); err != nil {
				_ = req.Reply(false, nil)
				continue
			}
			cmd = exec.Command("/bin/sh", "-c", p.Command)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdin, _ := cmd.StdinPipe()
			cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
			if err := cmd.Start(); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			s.mu.Lock()
			s.commands = append(s.commands, p.Command)
			s.procs[cmd] = true
			s.mu.Unlock()
			_ = req.Reply(true, nil)
			go func() { _, _ = io.Copy(stdin, ch); stdin.Close() }()
			go func(cmd *exec.Cmd) {
				err := cmd.Wait()
				s.mu.Lock()
				delete(s.procs, cmd)
				s.mu.Unlock()
				status := uint32(0)
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						status = 128 + uint32(ws.Signal())
					} else {
						status = uint32(ee.ExitCode())
					}
				}
				var b [4]byte
				binary.BigEndian.PutUint32(b[:], status)
				_, _ = ch.SendRequest("exit-status", false, b[:])
				close(exited)
				ch.Close()
			}(cmd)
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
		default:
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
