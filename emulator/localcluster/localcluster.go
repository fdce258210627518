// Package localcluster starts and stops a local cluster of emulated nodes,
// each on its own loopback address (the way ccm does): one process per
// node, each in its own process group, or every node in one host process
// (Options.SharedProcess, host.go) that starts, kills, pauses and stops
// them one by one.
//
// It is the one launcher of emulated node processes (process.go: a node's
// flags, NodeFlags, and StartNode): its own Cluster, the framework's local
// backend (provision/local) and the simulated EC2 instances (awssim) start
// their nodes with it. It stays in emulator/ because the emulator's own
// acceptance tests (emulator/acceptance) start clusters with it, and the
// emulator imports nothing from the framework. Its other user is
// `elasticity cluster` (a developer command, cmd/elasticity/cmd_cluster.go).
// Both launchers' address checks are here too (listeners.go: which process
// holds a node's address, whether a range is free, where a free one is).
package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultTimeScale is the nodes' --time-scale: the local backend's default
// local.time_scale (provision/local.DefaultSettings; a test keeps them equal).
const DefaultTimeScale = 0.0025

// Default ports (every node uses the same ports on its own address).
const (
	CQLPort     = 9042
	RESTPort    = 10000
	MetricsPort = 9180
	// NodeExporterPort is node_exporter's (node_filesystem_* of the data dir).
	NodeExporterPort = 9100
	InternodePort    = 7000
	// ShardAwareCQLPort is native_shard_aware_transport_port: CQL
	// connections land on the shard their source port names.
	ShardAwareCQLPort = 19042
)

// Options configure a cluster.
type Options struct {
	// Binary is the executable; BinaryArgs come before the node flags
	// (e.g. ["node"] for the elasticity binary; none for a test binary
	// that runs emulator.Main when Env says so).
	Binary     string
	BinaryArgs []string
	Env        []string // added to the environment of node processes
	Nodes      int
	Racks      int // nodes are spread round-robin over rack1..rackN (default 3, at most Nodes)
	// Instance sizes (numbers; no catalog needed).
	InstanceType string
	VCPUs        int
	MemoryGB     float64
	DiskGB       float64
	Dir          string // data directories and logs go under it
	BaseAddress  string // first node's address, default 127.0.0.2
	ClusterName  string
	DC           string
	// ExtraNodeArgs are appended to every node's flags.
	ExtraNodeArgs []string
	// StartTimeout bounds waiting for a node to be NORMAL (default 60 s).
	StartTimeout time.Duration
	// Detached leaves processes running when this process exits (cluster up):
	// nobody waits for them here.
	Detached bool
	// SharedProcess runs every node of the cluster, those added later
	// too, in one host process (host.go), their internode messages in
	// memory: at a few thousand op/s a node of its own process cost about
	// twice the CPU per operation (BenchmarkNodeCost, issue 45). Each node
	// keeps its listeners, data, log and lifecycle: Kill, Stop, Restart
	// and Signal (SIGKILL, SIGTERM, SIGSTOP, SIGCONT) act on it alone
	// through the host's control socket.
	SharedProcess bool
}

// Node is one node process.
type Node struct {
	Index   int    `json:"index"`
	Addr    string `json:"address"`
	Rack    string `json:"rack"`
	DataDir string `json:"data_dir"`
	LogPath string `json:"log"`
	Pid     int    `json:"pid"`
	// HostID is what the node's own REST API says once its process is
	// known to hold the address (/storage_service/hostid/local).
	HostID string `json:"host_id,omitempty"`

	proc *Process
	// In a host process (Options.SharedProcess): the node's current start
	// and its end (exited closed once exitErr is set).
	gen     int
	exited  chan struct{}
	exitErr error
}

// Cluster is a running local cluster.
type Cluster struct {
	opts  Options
	mu    sync.Mutex
	nodes []*Node
	// host runs every node (Options.SharedProcess).
	host *Host
}

func (o *Options) defaults() error {
	if o.Binary == "" {
		return errors.New("localcluster: Binary is required")
	}
	if o.Dir == "" {
		return errors.New("localcluster: Dir is required")
	}
	if o.Nodes < 1 {
		o.Nodes = 3
	}
	if o.Racks < 1 {
		o.Racks = min(3, o.Nodes)
	}
	if o.BaseAddress == "" {
		o.BaseAddress = "127.0.0.2"
	}
	if net.ParseIP(o.BaseAddress).To4() == nil {
		return fmt.Errorf("localcluster: base address %q is not IPv4", o.BaseAddress)
	}
	if o.InstanceType == "" {
		o.InstanceType = "i4i.large"
	}
	if o.VCPUs < 1 {
		o.VCPUs = 2
	}
	if o.MemoryGB <= 0 {
		o.MemoryGB = 16
	}
	if o.DiskGB <= 0 {
		o.DiskGB = 468
	}
	if o.ClusterName == "" {
		o.ClusterName = "elasticity-local"
	}
	if o.DC == "" {
		o.DC = "dc1"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	return nil
}

// Address returns the i-th address after base (base + i in the last octet).
func Address(base string, i int) (string, error) {
	ip := net.ParseIP(base).To4()
	if ip == nil {
		return "", fmt.Errorf("address %q is not IPv4", base)
	}
	v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	v += uint32(i)
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).String(), nil
}

// Start starts opts.Nodes nodes and waits until every one is NORMAL. On
// failure every started process is stopped.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating cluster dir: %w", err)
	}
	if err := CheckRange(opts.BaseAddress, opts.Nodes); err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts}
	var nodes []*Node
	if opts.SharedProcess {
		h, err := StartHost(ctx, Launch{Binary: opts.Binary, Args: opts.BinaryArgs, Env: opts.Env,
			Out: filepath.Join(opts.Dir, "host.out"), Detached: opts.Detached}, HostSocket(opts.Dir))
		if err != nil {
			return nil, fmt.Errorf("starting the node host: %w", err)
		}
		c.host = h
	}
	for i := len(nodes); i < opts.Nodes; i++ {
		n, err := c.spawn(i, fmt.Sprintf("rack%d", i%opts.Racks+1))
		if err != nil {
			c.Close()
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if err := c.waitNormal(ctx, nodes); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// AddNodes starts k more nodes in parallel (joining through the seed) and
// waits until they are NORMAL. rack "" spreads them round-robin.
func (c *Cluster) AddNodes(ctx context.Context, k int, rack string) ([]*Node, error) {
	var nodes []*Node
	for j := 0; j < k; j++ {
		c.mu.Lock()
		i := len(c.nodes)
		c.mu.Unlock()
		r := rack
		if r == "" {
			r = fmt.Sprintf("rack%d", i%c.opts.Racks+1)
		}
		n, err := c.spawn(i, r)
		if err != nil {
			return nodes, err
		}
		nodes = append(nodes, n)
	}
	return nodes, c.waitNormal(ctx, nodes)
}

// AddNode starts one node in rack ("" = round-robin) and waits until NORMAL.
func (c *Cluster) AddNode(ctx context.Context, rack string) (*Node, error) {
	ns, err := c.AddNodes(ctx, 1, rack)
	if len(ns) == 0 {
		return nil, err
	}
	return ns[0], err
}

func (c *Cluster) spawn(i int, rack string) (*Node, error) {
	n, err := c.newNode(i, rack)
	if err != nil {
		return nil, err
	}
	if err := c.launch(n); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	return n, nil
}

// newNode is node i's address and files.
func (c *Cluster) newNode(i int, rack string) (*Node, error) {
	o := c.opts
	addr, err := Address(o.BaseAddress, i)
	if err != nil {
		return nil, err
	}
	return &Node{Index: i, Addr: addr, Rack: rack, DataDir: filepath.Join(o.Dir, fmt.Sprintf("node%d", i+1)),
		LogPath: filepath.Join(o.Dir, fmt.Sprintf("node%d.log", i+1))}, nil
}

// andNode is emulator.AndNode, which separates the flags of nodes that one
// process runs (this package cannot import emulator, whose tests import it;
// a test keeps them equal).
const andNode = "--and-node"

// launch starts one process running nodes (several: andNode between their
// flags; the process's output goes next to the first one's log), or, in a
// host, the node.
func (c *Cluster) launch(nodes ...*Node) error {
	o := c.opts
	if c.host != nil {
		return c.launchHosted(nodes[0])
	}
	args := append([]string(nil), o.BinaryArgs...)
	for i, n := range nodes {
		if i > 0 {
			args = append(args, andNode)
		}
		args = append(args, c.nodeFlags(n).Args()...)
	}
	first := nodes[0]
	proc, err := StartNode(Launch{Binary: o.Binary, Args: args, Env: o.Env, Out: first.LogPath + ".out", Detached: o.Detached})
	if err != nil {
		return fmt.Errorf("starting node %d (%s): %w", first.Index+1, first.Addr, err)
	}
	c.mu.Lock()
	for _, n := range nodes {
		n.proc, n.Pid = proc, proc.Pid
	}
	c.mu.Unlock()
	return nil
}

// launchHosted starts n in the cluster's host and follows its end.
func (c *Cluster) launchHosted(n *Node) error {
	gen, err := c.host.Start(context.Background(), hostedName(n), c.nodeFlags(n).Args())
	if err != nil {
		return fmt.Errorf("starting node %d (%s): %w", n.Index+1, n.Addr, err)
	}
	exited := make(chan struct{})
	c.mu.Lock()
	n.proc, n.Pid, n.gen, n.exited, n.exitErr = c.host.Proc, c.host.Proc.Pid, gen, exited, nil
	c.mu.Unlock()
	go func() {
		err := c.host.Wait(hostedName(n), gen)
		c.mu.Lock()
		n.exitErr = err
		c.mu.Unlock()
		close(exited)
	}()
	return nil
}

// hostedName names node n in its host.
func hostedName(n *Node) string { return fmt.Sprintf("node%d", n.Index+1) }

// hostedEnd is n's current start's end channel (nil when not hosted).
func (c *Cluster) hostedEnd(n *Node) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.exited
}

// nodeFlags are n's flags.
func (c *Cluster) nodeFlags(n *Node) NodeFlags {
	o := c.opts
	seed, _ := Address(o.BaseAddress, 0)
	if n.Index == 0 && len(c.nodes) > 1 {
		// A restarted first node rejoins through the second.
		seed, _ = Address(o.BaseAddress, 1)
	}
	return NodeFlags{
		Listen: n.Addr, DataDir: n.DataDir, LogFile: n.LogPath,
		ClusterName: o.ClusterName, DC: o.DC, Rack: n.Rack,
		InstanceType: o.InstanceType, VCPUs: o.VCPUs, MemoryGB: o.MemoryGB, DiskGB: o.DiskGB,
		Seeds:   []string{seed},
		CQLPort: CQLPort, RESTPort: RESTPort, MetricsPort: MetricsPort,
		NodeExporterPort: NodeExporterPort, InternodePort: InternodePort,
		// ScyllaDB's own timers (the 60 s tablet load stats refresh) at the
		// local backend's default local.time_scale; ExtraNodeArgs may say otherwise.
		TimeScale: DefaultTimeScale,
		Extra:     o.ExtraNodeArgs,
	}
}

// procOf and pidOf read a node's process, which Restart replaces.
func (c *Cluster) procOf(n *Node) *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.proc
}

func (c *Cluster) pidOf(n *Node) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.Pid
}

// Restart starts node i again (after Stop or Kill) on its data directory
// and waits until it is NORMAL.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	n, err := c.node(i)
	if err != nil {
		return err
	}
	if c.host != nil {
		if !c.exited(n) {
			return fmt.Errorf("node %d is still running (in its host, pid %d)", i+1, c.pidOf(n))
		}
	} else if syscall.Kill(c.pidOf(n), 0) == nil && !isZombie(c.pidOf(n)) {
		return fmt.Errorf("node %d (pid %d) is still running", i+1, c.pidOf(n))
	}
	if err := c.launch(n); err != nil {
		return err
	}
	return c.waitNormal(ctx, []*Node{n})
}

func (c *Cluster) waitNormal(ctx context.Context, nodes []*Node) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() {
			exited := func() bool { return c.exited(n) }
			err := WaitNormal(ctx, n.Addr, RESTPort, exited)
			if err == nil {
				err = c.checkOurs(n)
			}
			if err == nil {
				err = c.learnHostID(ctx, n)
			}
			if err != nil {
				err = fmt.Errorf("node %d (%s): %w%s", n.Index+1, n.Addr, err, logTail(n.LogPath))
			}
			errs <- err
		}()
	}
	var all []error
	for range nodes {
		if err := <-errs; err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// exited reports whether n's process (in a host: n) has ended.
func (c *Cluster) exited(n *Node) bool {
	if ch := c.hostedEnd(n); ch != nil {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	return c.procOf(n).Exited()
}

// ExitErr is how node i's last start ended (nil while it runs, or when
// it ended with status 0): a host's node's *NodeExitError or its host's end.
func (c *Cluster) ExitErr(i int) error {
	n, err := c.node(i)
	if err != nil {
		return err
	}
	if !c.exited(n) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.exited != nil {
		return n.exitErr
	}
	return n.proc.Err()
}

// checkOurs fails unless what answered NORMAL on n's address is n's own
// process, holding n's REST and CQL listeners: a node that could not bind
// has died, and the answer came from whoever holds the address.
func (c *Cluster) checkOurs(n *Node) error {
	err := CheckServes(c.pidOf(n), n.Addr, RESTPort, CQLPort)
	if err == nil {
		return nil
	}
	// A node whose address another process holds cannot bind and exits
	// with its own error ("address already in use"), but it may still be
	// on its way out when the holder answers NORMAL: give it a moment, so
	// the error carries the node's own reason (its log tail) rather than
	// only the holder's.
	for wait := time.Now().Add(notOursGrace); !c.exited(n) && time.Now().Before(wait); {
		time.Sleep(50 * time.Millisecond)
	}
	if c.exited(n) {
		return fmt.Errorf("process %d exited before becoming NORMAL, and another process answers on its address", c.pidOf(n))
	}
	return err
}

// notOursGrace is how long checkOurs waits for a node that is not the one
// answering on its address to exit with its own error.
const notOursGrace = 5 * time.Second

// learnHostID records the host id n's own REST API reports (asked after
// checkOurs, so the answer is n's).
func (c *Cluster) learnHostID(ctx context.Context, n *Node) error {
	url := "http://" + net.JoinHostPort(n.Addr, strconv.Itoa(RESTPort)) + "/storage_service/hostid/local"
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("reading its host id: %w", err)
	}
	defer resp.Body.Close()
	var id string
	if err := json.NewDecoder(resp.Body).Decode(&id); err != nil || id == "" {
		return fmt.Errorf("reading its host id: %s: %q, %v", resp.Status, id, err)
	}
	c.mu.Lock()
	n.HostID = id
	c.mu.Unlock()
	return nil
}

// nodePorts are the ports a node cannot start without.
var nodePorts = []int{CQLPort, RESTPort, MetricsPort, InternodePort, ShardAwareCQLPort}

// AddressTakenError says that a cluster's address range is in use, and
// where a free one starts.
type AddressTakenError struct {
	Base  string // the requested base address
	Nodes int
	Busy  string // the first taken "address:port"
	Free  string // a free base address for the same nodes, or ""
	// FreeErr says why no free range was found.
	FreeErr error
}

func (e *AddressTakenError) Error() string {
	msg := fmt.Sprintf("base address %s: %s is already in use (another cluster or a leftover node?)", e.Base, e.Busy)
	if e.Free != "" {
		free := e.Free
		if e.Nodes > 1 {
			last, _ := Address(e.Free, e.Nodes-1)
			free += "-" + last
		}
		return msg + fmt.Sprintf("; %s is free", free)
	}
	return msg + fmt.Sprintf("; no free range found: %v", e.FreeErr)
}

// CheckRange fails with an AddressTakenError when something listens on
// a node port of one of the n addresses from base (Start checks it; a
// caller free to move the cluster may take the error's Free instead).
func CheckRange(base string, n int) error {
	busy, err := Busy(base, n, nodePorts)
	if err != nil {
		return fmt.Errorf("checking that %s and the %d addresses after it are free: %w", base, n-1, err)
	}
	if busy == "" {
		return nil
	}
	e := &AddressTakenError{Base: base, Nodes: n, Busy: busy}
	e.Free, e.FreeErr = FreeBase(base, n, nodePorts)
	return e
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "; log tail:\n" + strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// WaitNormal polls a node's REST operation_mode until NORMAL. exited (may be
// nil) reports that the process has died.
func WaitNormal(ctx context.Context, addr string, restPort int, exited func() bool) error {
	url := "http://" + net.JoinHostPort(addr, strconv.Itoa(restPort)) + "/storage_service/operation_mode"
	client := &http.Client{Timeout: 2 * time.Second}
	last := "no answer"
	for {
		if exited != nil && exited() {
			return errors.New("process exited before becoming NORMAL")
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			var mode string
			err := json.NewDecoder(resp.Body).Decode(&mode)
			resp.Body.Close()
			if err == nil {
				if mode == "NORMAL" {
					return nil
				}
				last = mode
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not NORMAL (last mode %s): %w", last, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// HostSocket is the control socket of the cluster's host process ("" when
// each node has a process of its own).
func (c *Cluster) HostSocket() string {
	if c.host == nil {
		return ""
	}
	return c.host.Socket
}

// Nodes returns the started nodes (including stopped ones).
func (c *Cluster) Nodes() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Node(nil), c.nodes...)
}

// Hosts returns the node addresses.
func (c *Cluster) Hosts() []string {
	var out []string
	for _, n := range c.Nodes() {
		out = append(out, n.Addr)
	}
	return out
}

func (c *Cluster) node(i int) (*Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.nodes) {
		return nil, fmt.Errorf("no node %d (cluster has %d)", i, len(c.nodes))
	}
	return c.nodes[i], nil
}

// Signal sends sig to node i's process group; to a node in a host, what
// the signal does to a node process: SIGKILL kills it, SIGTERM stops it
// (without waiting), SIGSTOP pauses and SIGCONT resumes it.
func (c *Cluster) Signal(i int, sig syscall.Signal) error {
	n, err := c.node(i)
	if err != nil {
		return err
	}
	if c.host == nil {
		return syscall.Kill(-c.pidOf(n), sig)
	}
	if err := c.host.Signal(context.Background(), hostedName(n), sig, 15*time.Second); err != nil {
		return fmt.Errorf("node %d (Options.SharedProcess): %w", i+1, err)
	}
	return nil
}

// Kill SIGKILLs node i and waits for it to exit.
func (c *Cluster) Kill(i int) error {
	n, err := c.node(i)
	if err != nil {
		return err
	}
	var done <-chan struct{}
	if c.host != nil {
		if err := c.host.Kill(context.Background(), hostedName(n)); err != nil {
			return err
		}
		done = c.hostedEnd(n)
	} else {
		syscall.Kill(-c.pidOf(n), syscall.SIGKILL)
		done = c.procOf(n).Done()
	}
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("node %d (pid %d) did not exit after SIGKILL", n.Index+1, n.Pid)
	}
}

// Stop SIGTERMs node i (SIGKILL after 15 s) and waits for it to exit.
func (c *Cluster) Stop(i int) error {
	n, err := c.node(i)
	if err != nil {
		return err
	}
	if c.host != nil {
		if err := c.host.Stop(context.Background(), hostedName(n), 15*time.Second); err != nil {
			return err
		}
		<-c.hostedEnd(n)
		return nil
	}
	return StopPid(c.pidOf(n), 15*time.Second, c.procOf(n).Done())
}

// StopPid SIGTERMs a process group, waits up to grace (for done when given,
// else by polling), then SIGKILLs it.
func StopPid(pid int, grace time.Duration, done <-chan struct{}) error {
	if syscall.Kill(-pid, syscall.SIGTERM) != nil {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	alive := func() bool {
		if done != nil {
			select {
			case <-done:
				return false
			default:
				return true
			}
		}
		return syscall.Kill(pid, 0) == nil && !isZombie(pid)
	}
	deadline := time.Now().Add(grace)
	for alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive() {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
		deadline = time.Now().Add(5 * time.Second)
		for alive() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive() {
			return fmt.Errorf("process %d survived SIGKILL", pid)
		}
	}
	return nil
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// Close stops every node (SIGTERM, then SIGKILL) and leaves no process.
func (c *Cluster) Close() error {
	if c.host != nil {
		// The host's SIGTERM stops every node in it gracefully.
		var done <-chan struct{}
		if !c.opts.Detached {
			done = c.host.Proc.Done()
		}
		return StopPid(c.host.Proc.Pid, 10*time.Second, done)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(c.Nodes()))
	stopping := map[int]bool{} // a shared process once
	for _, n := range c.Nodes() {
		if pid := c.pidOf(n); stopping[pid] {
			continue
		} else {
			stopping[pid] = true
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var done <-chan struct{}
			if !c.opts.Detached {
				done = c.procOf(n).Done()
			}
			if err := StopPid(c.pidOf(n), 10*time.Second, done); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for e := range errs {
		all = append(all, e)
	}
	return errors.Join(all...)
}

// NodeGODEBUG are the runtime settings of a node process, which the runtime
// reads only at start, so the launchers add them (NodeEnv; the image
// double's Dockerfile sets the same):
//
//   - gcshrinkstackoff=1: the node's request workers are long-lived so that
//     their stacks, grown deep through Pebble, stay grown; the GC would
//     otherwise shrink them at every cycle and they grew again by copying
//     (copystack: a twentieth of a node's CPU under BenchmarkNodeCost,
//     issue 17).
//   - schedtrace=2147483647: keeps the runtime's monitor thread (sysmon)
//     out of its deep sleep. A node goes idle between requests at a few
//     thousand op/s; sysmon then sleeps until woken by the next system call
//     (every request makes one) and, woken so, polls every 20 µs for as long
//     as the node is busy: a third of a node's thread switches and 30% of
//     its CPU at 2,000 op/s (issue 45: 260 → 185 µs per operation). With a
//     trace period set, sysmon never deep-sleeps and backs off to one
//     wake-up per 10 ms (runtime/proc.go sysmon). The period is the largest
//     the runtime takes (about 24.8 days of the monotonic clock): the trace
//     line itself appears on the process's stderr at most once per period,
//     and only on a machine up longer than that.
var NodeGODEBUG = []string{"gcshrinkstackoff=1", "schedtrace=2147483647"}

// NodeEnv returns env (a process environment) for a node process: GODEBUG
// gains each of NodeGODEBUG whose name it does not set already.
func NodeEnv(env []string) []string {
	out := append([]string(nil), env...)
	at, cur := -1, ""
	for i := len(out) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(out[i], "GODEBUG="); ok {
			at, cur = i, v
			break
		}
	}
	v := cur
	for _, opt := range NodeGODEBUG {
		name, _, _ := strings.Cut(opt, "=")
		if strings.Contains(","+cur, ","+name+"=") {
			continue
		}
		if v != "" {
			v += ","
		}
		v += opt
	}
	if at < 0 {
		return append(out, "GODEBUG="+v)
	}
	out[at] = "GODEBUG=" + v
	return out
}
