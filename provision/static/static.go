// Package static is the backend for a cluster that already exists: it is
// given by contact points (one per node, with its rack). Create starts
// nothing; adding, removing, stopping and starting nodes run user hook
// commands (like the drain benchmark's BENCH_RESTART_HOOK), so any lab
// (systemd, k8s, a cloud CLI) can be driven; Destroy leaves the cluster alone.
package static

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// ErrUnsupported is wrapped by every operation the static backend cannot do
// (no hook configured for it).
var ErrUnsupported = fmt.Errorf("not supported by the static backend: %w", errors.ErrUnsupported)

// DefaultHookTimeout bounds a hook without its own timeout.
const DefaultHookTimeout = 10 * time.Minute

// Host is one existing node.
type Host struct {
	Address      string
	Rack         string // default: the spec's first rack
	DC           string // default: the spec's DC
	InstanceType string // default: the spec's instance type
	Name         string // default: node-N
}

// Hook is a user command. It runs with the variables RUN_ID, SCENARIO,
// CLUSTER_NAME, DC, NODE_RACK, INSTANCE_TYPE, SEEDS (contact points) and, for
// an existing node, NODE_NAME and NODE_ADDRESS, plus Env.
type Hook struct {
	Command []string // program and arguments; empty = no hook
	Timeout time.Duration
	Env     map[string]string
}

// Options configure the static backend.
type Options struct {
	Hosts []Host
	// Ports of every node (defaults 9042, 10000, 9180).
	CQLPort, RESTPort, MetricsPort int
	// AddHook starts one node; it must print the new node's address as the
	// last line of its standard output (or a line "NODE_ADDRESS=<addr>").
	AddHook Hook
	// RemoveHook releases a node that has left the cluster (optional: without
	// it the machine is left as it is).
	RemoveHook Hook
	// StopHook, KillHook and StartHook stop, kill and start a node's database.
	StopHook, KillHook, StartHook Hook
	// Logf receives what the backend does, including hook output.
	Logf func(format string, args ...any)
}

// Provider is the static backend.
type Provider struct {
	opts Options

	mu    sync.Mutex
	spec  provision.ClusterSpec
	nodes []provision.Node
	next  int
}

var (
	_ provision.Provider  = (*Provider)(nil)
	_ provision.Restarter = (*Provider)(nil)
)

// New returns a static provider.
func New(opts Options) *Provider {
	if opts.CQLPort == 0 {
		opts.CQLPort = 9042
	}
	if opts.RESTPort == 0 {
		opts.RESTPort = 10000
	}
	if opts.MetricsPort == 0 {
		opts.MetricsPort = 9180
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Provider{opts: opts}
}

// Name is "static".
func (p *Provider) Name() string { return "static" }

// Create returns the given hosts as nodes; it starts nothing.
func (p *Provider) Create(ctx context.Context, spec provision.ClusterSpec) ([]provision.Node, error) {
	if len(p.opts.Hosts) == 0 {
		return nil, errors.New("static: no hosts given")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nodes != nil {
		return nil, errors.New("static: Create called twice on one provider")
	}
	if spec.DC == "" {
		spec.DC = "dc1"
	}
	p.spec = spec
	p.nodes = []provision.Node{}
	for _, h := range p.opts.Hosts {
		if h.Address == "" {
			return nil, errors.New("static: a host has no address")
		}
		p.next++
		n := provision.Node{Name: h.Name, ID: h.Address, DC: or(h.DC, spec.DC), Rack: or(h.Rack, first(spec.Racks)),
			InstanceType: or(h.InstanceType, spec.InstanceType), Address: h.Address,
			CQLPort: p.opts.CQLPort, RESTPort: p.opts.RESTPort, MetricsPort: p.opts.MetricsPort}
		if n.Name == "" {
			n.Name = fmt.Sprintf("node-%d", p.next)
		}
		p.nodes = append(p.nodes, n)
	}
	return append([]provision.Node(nil), p.nodes...), nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func first(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return l[0]
}

// AddNodes runs AddHook once per node, serially, and returns the nodes at the
// addresses the hook printed.
func (p *Provider) AddNodes(ctx context.Context, specs []provision.NodeSpec) ([]provision.Node, error) {
	if len(p.opts.AddHook.Command) == 0 {
		return nil, fmt.Errorf("static: adding nodes needs an add hook: %w", ErrUnsupported)
	}
	var out []provision.Node
	for _, s := range specs {
		p.mu.Lock()
		p.next++
		name := fmt.Sprintf("node-%d", p.next)
		p.mu.Unlock()
		n := provision.Node{Name: name, DC: p.spec.DC, Rack: s.Rack, InstanceType: s.InstanceType,
			CQLPort: p.opts.CQLPort, RESTPort: p.opts.RESTPort, MetricsPort: p.opts.MetricsPort}
		stdout, err := p.run(ctx, "add", p.opts.AddHook, n)
		if err != nil {
			return out, err
		}
		addr := parseAddress(stdout)
		if addr == "" {
			return out, fmt.Errorf("static: add hook for %s (rack %s) printed no node address (want NODE_ADDRESS=<addr> or the address on its last line)", name, s.Rack)
		}
		n.Address, n.ID = addr, addr
		p.mu.Lock()
		p.nodes = append(p.nodes, n)
		p.mu.Unlock()
		out = append(out, n)
	}
	return out, nil
}

// parseAddress finds NODE_ADDRESS=<addr>, else takes the last non-empty line.
func parseAddress(stdout string) string {
	var last string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(l, "NODE_ADDRESS="); ok {
			return strings.TrimSpace(v)
		}
		if l != "" {
			last = l
		}
	}
	if net.ParseIP(last) != nil {
		return last
	}
	if host, _, err := net.SplitHostPort(last); err == nil {
		return host
	}
	if !strings.ContainsAny(last, " \t") && last != "" {
		return last // a host name
	}
	return ""
}

// RemoveNode runs RemoveHook, if any, for a node that has left the cluster.
func (p *Provider) RemoveNode(ctx context.Context, n provision.Node) error {
	if len(p.opts.RemoveHook.Command) > 0 {
		if _, err := p.run(ctx, "remove", p.opts.RemoveHook, n); err != nil {
			return err
		}
	} else {
		p.opts.Logf("static: %s (%s) left the cluster; no remove hook, its machine is left as it is", n.Name, n.Address)
	}
	p.mu.Lock()
	for i, m := range p.nodes {
		if m.Name == n.Name {
			p.nodes = append(p.nodes[:i], p.nodes[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	return nil
}

// StopNode runs StopHook.
func (p *Provider) StopNode(ctx context.Context, n provision.Node) error {
	return p.hookOrUnsupported(ctx, "stop", p.opts.StopHook, n)
}

// KillNode runs KillHook.
func (p *Provider) KillNode(ctx context.Context, n provision.Node) error {
	return p.hookOrUnsupported(ctx, "kill", p.opts.KillHook, n)
}

// StartNode runs StartHook.
func (p *Provider) StartNode(ctx context.Context, n provision.Node) error {
	return p.hookOrUnsupported(ctx, "start", p.opts.StartHook, n)
}

func (p *Provider) hookOrUnsupported(ctx context.Context, what string, h Hook, n provision.Node) error {
	if len(h.Command) == 0 {
		return fmt.Errorf("static: %s %s needs a %s hook: %w", what, n.Name, what, ErrUnsupported)
	}
	_, err := p.run(ctx, what, h, n)
	return err
}

// Logs is not available: the static backend has no access to the nodes' files.
func (p *Provider) Logs(ctx context.Context, n provision.Node) (io.ReadCloser, error) {
	return nil, fmt.Errorf("static: logs of %s: %w", n.Name, ErrUnsupported)
}

// Destroy does nothing to the cluster: it existed before the run and stays.
func (p *Provider) Destroy(ctx context.Context) error { return nil }

// run executes a hook with the node's variables, a timeout (the hook's
// process group is killed when it expires) and its output sent to Logf.
// It returns the hook's standard output.
func (p *Provider) run(ctx context.Context, what string, h Hook, n provision.Node) (string, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	p.mu.Lock()
	spec := p.spec
	var seeds []string
	for _, m := range p.nodes {
		seeds = append(seeds, m.Address)
	}
	p.mu.Unlock()
	env := map[string]string{
		"RUN_ID": spec.RunID, "SCENARIO": spec.Scenario, "CLUSTER_NAME": spec.ClusterName, "DC": or(n.DC, spec.DC),
		"NODE_RACK": n.Rack, "INSTANCE_TYPE": n.InstanceType, "NODE_NAME": n.Name, "NODE_ADDRESS": n.Address,
		"SEEDS": strings.Join(seeds, ","), "RUN_DIR": spec.Dir, "HOOK": what,
		"CQL_PORT": strconv.Itoa(n.CQLPort), "REST_PORT": strconv.Itoa(n.RESTPort),
	}
	for k, v := range h.Env {
		env[k] = v
	}
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	p.opts.Logf("static: %s hook for %s (rack %s): %s", what, n.Name, n.Rack, strings.Join(h.Command, " "))
	err := cmd.Run()
	p.appendHookLog(spec.Dir, what, n.Name, h.Command, stdout.String(), stderr.String(), err)
	for _, l := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
		if l != "" {
			p.opts.Logf("static: %s hook %s | %s", what, n.Name, l)
		}
	}
	for _, l := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
		if l != "" {
			p.opts.Logf("static: %s hook %s ! %s", what, n.Name, l)
		}
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return stdout.String(), fmt.Errorf("static: %s hook for %s timed out after %s (%s)", what, n.Name, timeout, filepath.Base(h.Command[0]))
		}
		return stdout.String(), fmt.Errorf("static: %s hook for %s (%s) failed after %s: %w; stderr: %s", what, n.Name, strings.Join(h.Command, " "), time.Since(start).Round(time.Millisecond), err, lastLine(stderr.String()))
	}
	return stdout.String(), nil
}

// appendHookLog keeps every hook's output in <run dir>/logs/hooks.log.
func (p *Provider) appendHookLog(dir, what, node string, command []string, stdout, stderr string, runErr error) {
	if dir == "" {
		return
	}
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		p.opts.Logf("static: %v", err)
		return
	}
	f, err := os.OpenFile(filepath.Join(logs, "hooks.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.opts.Logf("static: %v", err)
		return
	}
	defer f.Close()
	status := "ok"
	if runErr != nil {
		status = runErr.Error()
	}
	fmt.Fprintf(f, "=== %s %s hook for %s: %s (%s)\n%s", time.Now().UTC().Format(time.RFC3339), what, node, strings.Join(command, " "), status, stdout)
	if stderr != "" {
		fmt.Fprintf(f, "--- stderr\n%s", stderr)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
