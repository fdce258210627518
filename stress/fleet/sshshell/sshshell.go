// Package sshshell reaches load-generator machines over SSH
// (golang.org/x/crypto/ssh): it copies the elasticity binary to them and
// runs `elasticity stress` there, streaming its output back. It implements
// fleet.Shell.
package sshshell

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/elasticity-dev/elasticity/stress/fleet"
)

// Options configure a Shell.
type Options struct {
	User string
	// KeyPath is a private key file (PEM or OpenSSH format). Without it (and
	// without Signers) the keys of a running ssh-agent (SSH_AUTH_SOCK) are used.
	KeyPath string
	Signers []ssh.Signer
	Port    int // default 22
	// DialTimeout bounds one connection attempt (default 15 s); DialFor is
	// how long to keep retrying, since a fresh instance refuses ssh for a
	// while after its status checks pass (default 2 min).
	DialTimeout time.Duration
	DialFor     time.Duration
	// KnownHostsPath verifies host keys against an OpenSSH known_hosts file.
	// Without it the first key a host shows is trusted and pinned for the
	// Shell's life: fresh cloud instances have keys nobody knows yet, but a
	// key that changes during a run is refused.
	KnownHostsPath string
	Logf           func(format string, args ...any)
}

// Shell is a fleet.Shell over SSH. One connection per host is kept and
// reused; Close closes them.
type Shell struct {
	o      Options
	auth   []ssh.AuthMethod
	hostCB ssh.HostKeyCallback
	agent  net.Conn // to the ssh-agent, when its keys are used

	mu      sync.Mutex
	clients map[string]*ssh.Client
	pinned  map[string][]byte
}

var _ fleet.Shell = (*Shell)(nil)

// New reads the key and prepares host-key checking.
func New(o Options) (*Shell, error) {
	if o.User == "" {
		return nil, errors.New("ssh: no user")
	}
	if o.Port == 0 {
		o.Port = 22
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 15 * time.Second
	}
	if o.DialFor <= 0 {
		o.DialFor = 2 * time.Minute
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	s := &Shell{o: o, clients: map[string]*ssh.Client{}, pinned: map[string][]byte{}}
	signers := append([]ssh.Signer(nil), o.Signers...)
	if o.KeyPath != "" {
		b, err := os.ReadFile(o.KeyPath)
		if err != nil {
			return nil, fmt.Errorf("ssh: reading the private key %s: %w", o.KeyPath, err)
		}
		k, err := ssh.ParsePrivateKey(b)
		if err != nil {
			// The parser's message never quotes the key; keep it that way.
			return nil, fmt.Errorf("ssh: the private key %s cannot be used: %v", o.KeyPath, err)
		}
		signers = append(signers, k)
	}
	if len(signers) > 0 {
		s.auth = append(s.auth, ssh.PublicKeys(signers...))
	} else if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		// One agent connection for the Shell's life (closed by Close), not
		// one per handshake.
		c, err := net.Dial("unix", sock)
		if err != nil {
			return nil, fmt.Errorf("ssh: no key given and the ssh-agent at SSH_AUTH_SOCK=%s cannot be reached: %w", sock, err)
		}
		s.agent = c
		s.auth = append(s.auth, ssh.PublicKeysCallback(agent.NewClient(c).Signers))
	} else {
		return nil, errors.New("ssh: no key: set aws.ssh_key or run an ssh-agent (SSH_AUTH_SOCK)")
	}
	if o.KnownHostsPath != "" {
		cb, err := knownhosts.New(o.KnownHostsPath)
		if err != nil {
			return nil, fmt.Errorf("ssh: reading known hosts %s: %w", o.KnownHostsPath, err)
		}
		s.hostCB = cb
	} else {
		s.hostCB = s.trustOnFirstUse
	}
	return s, nil
}

func (s *Shell) trustOnFirstUse(hostname string, remote net.Addr, key ssh.PublicKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, ok := s.pinned[hostname]
	if !ok {
		s.pinned[hostname] = key.Marshal()
		return nil
	}
	if !bytes.Equal(seen, key.Marshal()) {
		return fmt.Errorf("the host key of %s changed during the run (now %s %s): refusing to connect", hostname, key.Type(), ssh.FingerprintSHA256(key))
	}
	return nil
}

func (s *Shell) addr(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(s.o.Port))
}

// client returns the cached connection to host, dialling (with retries) when
// there is none.
func (s *Shell) client(ctx context.Context, host string) (*ssh.Client, error) {
	addr := s.addr(host)
	s.mu.Lock()
	c := s.clients[addr]
	s.mu.Unlock()
	if c != nil {
		return c, nil
	}
	cfg := &ssh.ClientConfig{User: s.o.User, Auth: s.auth, HostKeyCallback: s.hostCB, Timeout: s.o.DialTimeout}
	deadline := time.Now().Add(s.o.DialFor)
	for attempt := 1; ; attempt++ {
		c, err := dial(ctx, addr, cfg)
		if err == nil {
			s.mu.Lock()
			if old := s.clients[addr]; old != nil { // lost a race: keep one
				s.mu.Unlock()
				c.Close()
				return old, nil
			}
			s.clients[addr] = c
			s.mu.Unlock()
			// A connection that ends (the machine rebooted, a NAT forgot an
			// idle flow) is forgotten, so that the next call dials again.
			go func() {
				_ = c.Wait()
				s.forget(addr, c)
			}()
			return c, nil
		}
		if permanent(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("ssh to %s@%s: %w", s.o.User, addr, err)
		}
		s.o.Logf("ssh: %s not reachable yet (attempt %d: %v); retrying", addr, attempt, err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ssh to %s@%s: %w (last error: %v)", s.o.User, addr, ctx.Err(), err)
		case <-time.After(3 * time.Second):
		}
	}
}

// forget drops c from the cache if it is still the connection to addr.
func (s *Shell) forget(addr string, c *ssh.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients[addr] == c {
		delete(s.clients, addr)
	}
}

// session opens a session on the connection to host. A cached connection
// can be dead before its end is noticed; then it is dropped and one fresh
// connection is tried.
func (s *Shell) session(ctx context.Context, host string) (*ssh.Session, error) {
	c, err := s.client(ctx, host)
	if err != nil {
		return nil, err
	}
	sess, err := c.NewSession()
	if err == nil {
		return sess, nil
	}
	c.Close()
	s.forget(s.addr(host), c)
	if c, err = s.client(ctx, host); err != nil {
		return nil, err
	}
	if sess, err = c.NewSession(); err != nil {
		return nil, fmt.Errorf("ssh to %s: opening a session: %w", host, err)
	}
	return sess, nil
}

func dial(ctx context.Context, addr string, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	d := net.Dialer{Timeout: cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// The handshake must not hang on a half-started sshd either.
	_ = conn.SetDeadline(time.Now().Add(cfg.Timeout))
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), nil
}

// permanent errors are not worth retrying: wrong key, changed host key.
func permanent(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unable to authenticate") || strings.Contains(msg, "host key") || strings.Contains(msg, "knownhosts")
}

// quote makes s one word for sh.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Upload implements fleet.Shell: the file goes through cat on stdin into a
// temporary name, then is renamed, so a half-copied binary is never run.
func (s *Shell) Upload(ctx context.Context, host, localPath, remotePath string) error {
	f, err := os.Open(localPath)
	if err != nil {
		return fmt.Errorf("uploading to %s: %w", host, err)
	}
	defer f.Close()
	sess, err := s.session(ctx, host)
	if err != nil {
		return fmt.Errorf("uploading %s to %s: %w", localPath, host, err)
	}
	defer sess.Close()
	// A unique temporary name: two uploads to one host never mix.
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := remotePath + ".part-" + hex.EncodeToString(rnd[:])
	var stderr bytes.Buffer
	sess.Stdin, sess.Stderr = f, &stderr
	cmd := fmt.Sprintf("mkdir -p %s && cat > %s && chmod 755 %s && mv -f %s %s",
		quote(path.Dir(remotePath)), quote(tmp), quote(tmp), quote(tmp), quote(remotePath))
	done := make(chan error, 1)
	go func() { done <- sess.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		sess.Close()
		return fmt.Errorf("uploading %s to %s:%s: %w", localPath, host, remotePath, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("uploading %s to %s:%s: %v: %s", localPath, host, remotePath, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Start implements fleet.Shell.
func (s *Shell) Start(ctx context.Context, host string, argv []string, stdout, stderr io.Writer) (fleet.Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("ssh: empty command")
	}
	sess, err := s.session(ctx, host)
	if err != nil {
		return nil, err
	}
	sess.Stdout, sess.Stderr = stdout, stderr
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = quote(a)
	}
	// exec: the signal reaches the program, not a shell around it.
	if err := sess.Start("exec " + strings.Join(words, " ")); err != nil {
		sess.Close()
		return nil, fmt.Errorf("ssh to %s: starting %s: %w", host, argv[0], err)
	}
	p := &process{sess: sess, host: host, name: argv[0], exited: make(chan struct{})}
	go func() {
		p.err = sess.Wait()
		close(p.exited)
	}()
	go func() {
		select {
		case <-ctx.Done():
			// Some sshd builds ignore signal requests; closing the session
			// hangs up on the command as well.
			_ = sess.Signal(ssh.SIGKILL)
			sess.Close()
		case <-p.exited:
		}
	}()
	return p, nil
}

type process struct {
	sess   *ssh.Session
	host   string
	name   string
	exited chan struct{}
	err    error
}

// Interrupt sends SIGINT; it is harmless after the command ended.
func (p *process) Interrupt() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.sess.Signal(ssh.SIGINT); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("interrupting %s on %s: %w", p.name, p.host, err)
	}
	return nil
}

func (p *process) Wait() error {
	<-p.exited
	if p.err == nil {
		return nil
	}
	var ee *ssh.ExitError
	if errors.As(p.err, &ee) {
		return &fleet.ExitError{Command: p.name + " on " + p.host, Status: ee.ExitStatus(), Err: p.err}
	}
	var missing *ssh.ExitMissingError
	if errors.As(p.err, &missing) {
		return &fleet.ExitError{Command: p.name + " on " + p.host, Status: -1, Err: errors.New("the connection ended without an exit status (killed, or the session was closed)")}
	}
	return fmt.Errorf("%s on %s: %w", p.name, p.host, p.err)
}

// Close closes every connection.
func (s *Shell) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for a, c := range s.clients {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
		delete(s.clients, a)
	}
	if s.agent != nil {
		s.agent.Close()
	}
	return errors.Join(errs...)
}
