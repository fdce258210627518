// Package sshtest is an in-process SSH server for tests (internal/sshexec,
// the server the simulated EC2 instances run too): it runs every exec
// request with /bin/sh on this machine, so that code which drives remote
// machines over SSH is tested against a real SSH protocol peer on loopback.
package sshtest

import (
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/elasticity-dev/elasticity/internal/sshexec"
)

// Server is a running test SSH server.
type Server struct {
	*sshexec.Server
	client  ssh.Signer
	hostKey ssh.Signer

	mu sync.Mutex
	// authorized are keys accepted besides ClientSigner's.
	authorized map[string]bool
}

// Start listens on addr ("127.0.0.1:0" for any port) until the test ends.
// Only ClientSigner's key (and keys given to Authorize) may log in.
func Start(t testing.TB, addr string) *Server {
	t.Helper()
	s := &Server{authorized: map[string]bool{}, hostKey: newSigner(t), client: newSigner(t)}
	srv, err := sshexec.Listen(addr, sshexec.Config{HostKey: s.hostKey, Accept: s.accepts})
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	s.Server = srv
	t.Cleanup(s.Close)
	return s
}

func (s *Server) accepts(key ssh.PublicKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(key.Marshal()) == string(s.client.PublicKey().Marshal()) || s.authorized[string(key.Marshal())]
}

func newSigner(t testing.TB) ssh.Signer {
	s, err := sshexec.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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
