package sshshell_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/elasticity-dev/elasticity/stress/fleet"
	"github.com/elasticity-dev/elasticity/stress/fleet/sshshell"
	"github.com/elasticity-dev/elasticity/stress/fleet/sshshell/sshtest"
)

func newShell(t *testing.T, srv *sshtest.Server) *sshshell.Shell {
	t.Helper()
	sh, err := sshshell.New(sshshell.Options{User: "loader", Signers: []ssh.Signer{srv.ClientSigner()}, DialFor: 2 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh
}

// syncBuf is a bytes.Buffer safe to read while the session writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func run(t *testing.T, sh *sshshell.Shell, host string, argv ...string) (string, string, error) {
	t.Helper()
	var out, errb syncBuf
	p, err := sh.Start(context.Background(), host, argv, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	return out.String(), errb.String(), err
}

func TestUploadThenRun(t *testing.T) {
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	dir := t.TempDir()
	src := filepath.Join(dir, "payload")
	data := make([]byte, 3<<20+17)
	_, _ = rand.Read(data)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "it's here", "bin", "elasticity") // a quote and a space in the path
	ctx := context.Background()
	if err := sh.Upload(ctx, srv.Addr(), src, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("uploaded copy: %v, %d bytes of %d, equal %v", err, len(got), len(data), bytes.Equal(got, data))
	}
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v, want 0755", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(dst + ".part*"); len(left) != 0 {
		t.Fatalf("temporary copy left: %v", left)
	}
	// Arguments arrive as the words they were, whatever they contain.
	out, _, err := run(t, sh, srv.Addr(), "/bin/sh", "-c", `printf '%s|' "$@"`, "sh", "a b", "it's", "$HOME", "")
	if err != nil || out != "a b|it's|$HOME||" {
		t.Fatalf("argv round trip: %q, %v", out, err)
	}
	if n := len(srv.Commands()); n != 2 {
		t.Fatalf("server ran %d commands, want 2 (one connection reused)", n)
	}
}

func TestExitStatusAndStreams(t *testing.T) {
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	out, errOut, err := run(t, sh, srv.Addr(), "/bin/sh", "-c", "echo hi; echo err 1>&2; exit 3")
	if out != "hi\n" || errOut != "err\n" {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}
	var st interface{ ExitStatus() int }
	if err == nil || !errors.As(err, &st) || st.ExitStatus() != 3 || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("want exit status 3, got %v", err)
	}
	if _, _, err := run(t, sh, srv.Addr(), "true"); err != nil {
		t.Fatalf("exit 0: %v", err)
	}
}

// A cached connection that died is replaced by a new one.
func TestDeadConnectionRedialled(t *testing.T) {
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	if _, _, err := run(t, sh, srv.Addr(), "true"); err != nil {
		t.Fatal(err)
	}
	srv.DropConnections()
	out, _, err := run(t, sh, srv.Addr(), "echo", "again")
	if err != nil || out != "again\n" {
		t.Fatalf("after the connection dropped: %q, %v", out, err)
	}
	if n := len(srv.Commands()); n != 2 {
		t.Fatalf("server ran %d commands, want 2", n)
	}
}

// Without a key the ssh-agent's keys are used.
func TestAgentKeys(t *testing.T) {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(keyring, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh, err := sshshell.New(sshshell.Options{User: "loader", DialFor: 2 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if _, err := sh.Start(context.Background(), srv.Addr(), []string{"true"}, nil, nil); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("a key the server does not know: %v", err)
	}
	pub, _ := ssh.NewPublicKey(k.Public())
	srv.Authorize(pub)
	if _, _, err := run(t, sh, srv.Addr(), "true"); err != nil {
		t.Fatalf("with the agent's key authorized: %v", err)
	}
}

func TestInterruptAndCancel(t *testing.T) {
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	var out syncBuf
	p, err := sh.Start(context.Background(), srv.Addr(), []string{"/bin/sh", "-c", "trap 'echo got-int; exit 130' INT; echo ready; while :; do sleep 0.05; done"}, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out.String(), "ready") })
	start := time.Now()
	if err := p.Interrupt(); err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	var st interface{ ExitStatus() int }
	if !errors.As(err, &st) || st.ExitStatus() != 130 || !strings.Contains(out.String(), "got-int") {
		t.Fatalf("after Interrupt: %v, output %q", err, out.String())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the interrupted command took %s to stop", took)
	}
	if err := p.Interrupt(); err != nil {
		t.Fatalf("Interrupt after the exit: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out2 syncBuf
	p, err = sh.Start(ctx, srv.Addr(), []string{"/bin/sh", "-c", "trap '' INT; echo ready; sleep 60"}, &out2, &out2)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out2.String(), "ready") })
	start = time.Now()
	cancel()
	if err := p.Wait(); err == nil {
		t.Fatal("a killed command reported success")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("cancel took %s to kill the command", took)
	}
}

func TestHostKeyPinnedAndBadKey(t *testing.T) {
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	addr := srv.Addr()
	if _, _, err := run(t, sh, addr, "true"); err != nil {
		t.Fatal(err)
	}
	// Another server, another host key, the same address.
	srv.Close()
	sh.Close() // drop the cached connection so that the next call dials again
	var other *sshtest.Server
	for i := 0; i < 50; i++ {
		if other = tryStart(t, addr); other != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if other == nil {
		t.Skip("could not listen on the same port again")
	}
	_, err := sh.Start(context.Background(), addr, []string{"true"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "host key") {
		t.Fatalf("a changed host key was accepted: %v", err)
	}

	// A key the server does not know is refused at once, not retried for DialFor.
	stranger, err := sshshell.New(sshshell.Options{User: "x", Signers: []ssh.Signer{otherSigner(t)}, DialFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	start := time.Now()
	_, err = stranger.Start(context.Background(), other.Addr(), []string{"true"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") || time.Since(start) > 10*time.Second {
		t.Fatalf("unknown client key: %v after %s", err, time.Since(start))
	}
}

// tryStart starts a server on addr, or returns nil when the port is still taken.
func tryStart(t *testing.T, addr string) (s *sshtest.Server) {
	defer func() {
		if recover() != nil {
			s = nil
		}
	}()
	ft := &fatalTB{TB: t}
	return sshtest.Start(ft, addr)
}

// fatalTB turns Fatalf into a panic that tryStart recovers.
type fatalTB struct{ testing.TB }

func (f *fatalTB) Fatalf(format string, args ...any) { panic("fatal") }
func (f *fatalTB) Helper()                           {}

func otherSigner(t *testing.T) ssh.Signer {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeyFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := sshshell.New(sshshell.Options{User: "u", KeyPath: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing key file: %v", err)
	}
	secret := "-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5IHNlY3JldC12YWx1ZQ==\n-----END OPENSSH PRIVATE KEY-----\n"
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte(secret), 0o600)
	_, err := sshshell.New(sshshell.Options{User: "u", KeyPath: bad})
	if err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "bm90IGEga2V5") {
		t.Fatalf("bad key file: %v", err)
	}
	// A good PKCS#8 key file is accepted.
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	good := filepath.Join(dir, "good")
	_ = os.WriteFile(good, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	if _, err := sshshell.New(sshshell.Options{User: "u", KeyPath: good}); err != nil {
		t.Fatal(err)
	}
	// Upload of a missing local file names it.
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	err = sh.Upload(context.Background(), srv.Addr(), filepath.Join(dir, "no-binary"), "/tmp/x")
	if err == nil || !strings.Contains(err.Error(), "no-binary") {
		t.Fatalf("missing local file: %v", err)
	}
}

// The fleet runs through the ssh shell exactly as through local processes.
var _ fleet.Shell = (*sshshell.Shell)(nil)

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A workload model's spec reaches the loader as one argument, byte for
// byte, whatever it holds (a cassandra-stress line's quotes and
// parentheses, a profile's lines, shell metacharacters): Start quotes every
// word for sh.
func TestArgumentsPassVerbatim(t *testing.T) {
	srv := sshtest.Start(t, "127.0.0.1:0")
	sh := newShell(t, srv)
	spec := "--model=cs:cassandra-stress mixed 'ratio(write=1,read=2)' cl=QUORUM -rate \"threads=50 fixed=150/s\"\n" +
		"keyspace: ks\n  table_definition: |\n    CREATE TABLE t (k int PRIMARY KEY) -- it's $HOME `id` ; echo x > /tmp/y & \\ *"
	out, errOut, err := run(t, sh, srv.Addr(), "printf", "%s", spec)
	if err != nil || out != spec {
		t.Fatalf("got %q (stderr %q, %v), want %q", out, errOut, err, spec)
	}
}
