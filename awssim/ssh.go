package awssim

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/elasticity-dev/elasticity/internal/sshexec"
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

// startSSH starts one instance's sshd (internal/sshexec): the key pair the
// instances accept logs in; `journalctl ...` is answered from the node's
// log; any other command runs with /bin/sh on this machine (the instance's
// shell) in the instance's directory and login environment, in its own
// process group, killed when the session ends.
func startSSH(in *instance, addr string) (*sshexec.Server, error) {
	r := in.region
	if err := r.ensureAgentKey(); err != nil {
		return nil, err
	}
	want := string(r.host.client.PublicKey().Marshal())
	return sshexec.Listen(addr, sshexec.Config{
		HostKey: r.host.host,
		Accept:  func(key ssh.PublicKey) bool { return string(key.Marshal()) == want },
		Dir:     in.dir(),
		Env:     instanceEnv(),
		Handle: func(command string) (sshexec.Handler, bool) {
			args, ok := journalctlArgs(command)
			if !ok {
				return nil, false
			}
			return func(stdout, stderr io.Writer, stop <-chan struct{}) uint32 {
				return in.journalctl(args, stdout, stderr, stop)
			}, true
		},
	})
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
