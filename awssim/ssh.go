package awssim

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// hostKeys: every simulated instance shows the same host key, derived from
// a fixed seed, so that a known_hosts entry written by one rehearsal does not
// turn into "host key changed" at the next one (addresses are reused).
type hostKeys struct {
	host   ssh.Signer
	client ssh.Signer // the key the instances accept, held by the agent
	raw    ed25519.PrivateKey
}

func newHostKeys() (hostKeys, error) {
	seed := sha256.Sum256([]byte("elasticity aws-sim host key"))
	hs, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		return hostKeys{}, fmt.Errorf("aws-sim: host key: %w", err)
	}
	_, ck, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return hostKeys{}, fmt.Errorf("aws-sim: client key: %w", err)
	}
	cs, err := ssh.NewSignerFromKey(ck)
	if err != nil {
		return hostKeys{}, err
	}
	return hostKeys{host: hs, client: cs, raw: ck}, nil
}

// agentServer is an ssh-agent holding the key pair the instances accept
// (the simulated key pair of RunInstances' KeyName), so that both the ssh
// client and the runner's Go SSH client find it through SSH_AUTH_SOCK.
type agentServer struct {
	path string
	ln   net.Listener
	kr   agent.Agent
}

func startAgent(path string) (*agentServer, error) {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("aws-sim: ssh-agent socket %s: %w", path, err)
	}
	a := &agentServer{path: path, ln: ln, kr: agent.NewKeyring()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(a.kr, c) }()
		}
	}()
	return a, nil
}

func (a *agentServer) Close() { a.ln.Close(); _ = os.Remove(a.path) }

// sshServer is one instance's sshd.
type sshServer struct {
	in *instance
	ln net.Listener

	mu    sync.Mutex
	procs map[*exec.Cmd]bool
	conns map[*ssh.ServerConn]bool
}

func startSSH(in *instance, addr string) (*sshServer, error) {
	r := in.region
	if err := r.ensureAgentKey(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sshd on %s: %w", addr, err)
	}
	s := &sshServer{in: in, ln: ln, procs: map[*exec.Cmd]bool{}, conns: map[*ssh.ServerConn]bool{}}
	want := r.host.client.PublicKey().Marshal()
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if string(key.Marshal()) == string(want) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(r.host.host)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c, cfg)
		}
	}()
	return s, nil
}

var agentOnce sync.Mutex

func (r *Region) ensureAgentKey() error {
	agentOnce.Lock()
	defer agentOnce.Unlock()
	keys, err := r.agent.kr.List()
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		return nil
	}
	return r.agent.kr.Add(agent.AddedKey{PrivateKey: r.host.raw, Comment: "aws-sim key pair"})
}

func (s *sshServer) Close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.procs {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	for c := range s.conns {
		c.Close()
	}
}

func (s *sshServer) serve(c net.Conn, cfg *ssh.ServerConfig) {
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

// session serves one channel: `journalctl ...` is answered from the node's
// log; any other command runs with /bin/sh on this machine (the
// instance's shell), in its own process group, killed when the session ends.
func (s *sshServer) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var cmd *exec.Cmd
	exited := make(chan struct{})
	stopJournal := make(chan struct{})
	var stopOnce sync.Once
	defer stopOnce.Do(func() { close(stopJournal) })
	for req := range reqs {
		switch req.Type {
		case "exec":
			var p struct{ Command string }
			if cmd != nil || ssh.Unmarshal(req.Payload, &p) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			if args, ok := journalctlArgs(p.Command); ok {
				_ = req.Reply(true, nil)
				go func() {
					status := s.in.journalctl(args, ch, ch.Stderr(), stopJournal)
					exitStatus(ch, status)
					ch.Close()
				}()
				continue
			}
			cmd = exec.Command("/bin/sh", "-c", p.Command)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			cmd.Dir = s.in.dir()
			cmd.Env = instanceEnv()
			stdin, _ := cmd.StdinPipe()
			cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
			if err := cmd.Start(); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			s.mu.Lock()
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
				exitStatus(ch, status)
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
		default: // pty-req, env, shell ...: not served
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
	if cmd != nil {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// instanceEnv is a login environment without the runner's AWS settings or
// agent: nothing on an instance knows the account's credentials.
func instanceEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "SSH_AUTH_SOCK=") || strings.HasPrefix(kv, "ELASTICITY_AWS_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
