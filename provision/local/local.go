// Package local is the default backend: emulated nodes (`elasticity
// node`), each on its own loopback address (127.0.0.2, 127.0.0.3, ... as
// ccm does) with the same ports and its own data directory below the run
// directory, all in one host process (local.process: shared, the default:
// Options.SharedProcess) or a process each (per-node) in its own process
// group, so that stopping a node takes its children too.
//
// Linux routes all of 127.0.0.0/8 to lo; on macOS the addresses need
// aliases (sudo ifconfig lo0 alias 127.0.0.N up).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/provision"
)

// Defaults of Options.
const (
	DefaultBaseAddress            = "127.0.0.2"
	DefaultCQLPort                = 9042
	DefaultRESTPort               = 10000
	DefaultMetricsPort            = 9180
	DefaultInternodePort          = 7000
	DefaultBlockedReactorNotifyMS = 25
	DefaultStopTimeout            = 15 * time.Second
	DefaultMaxSeeds               = 1
	killWait                      = 10 * time.Second
)

// nodeStorageScaleMiBPerGB is an `elasticity node`'s own disk scale, used
// when Options leave it to the node (emulator.DefaultStorageScaleMiBPerGB).
const nodeStorageScaleMiBPerGB = 0.2

// Options configure the local backend. Every field is optional.
type Options struct {
	// Binary is the elasticity executable (default: this process's executable).
	Binary string
	// BinaryArgs come before the "node" subcommand (tests re-exec their own binary).
	BinaryArgs []string
	// BaseAddress is node-1's address; node-N gets the Nth address after it.
	// Distinct bases let tests and concurrent runs coexist.
	BaseAddress string
	// Ports, the same on every node (each node has its own address).
	CQLPort, RESTPort, MetricsPort, InternodePort int
	// Scale factors of the emulated capacity (0 = the node's own default).
	StorageScaleMiBPerGB float64
	OpsPerVCPU           float64
	StreamMiBPerVCPU     float64
	// TimeScale multiplies the nodes' own ScyllaDB timers (local.time_scale; 0: the node's default, 1).
	TimeScale float64
	// BlockedReactorNotifyMS is the stall report threshold (default 25).
	BlockedReactorNotifyMS int
	// ExtraArgs are appended to every node's command line (after the spec's ExtraArgs).
	ExtraArgs []string
	// FaultArgs returns extra arguments for one node (fault injection, e.g.
	// --fail-startup "msg" for one grow node). It is called once per node start.
	FaultArgs func(n provision.Node) []string
	// Env is added to the nodes' environment.
	Env []string
	// StopTimeout is how long a SIGTERM'ed node may take before SIGKILL.
	StopTimeout time.Duration
	// StartInterval is a pause between starting two nodes of one call.
	StartInterval time.Duration
	// MaxSeeds is how many of the initial nodes are seeds (default 1: the
	// emulated node joins through the seeds in order, and a seed that is
	// itself still joining must not be asked first).
	MaxSeeds int
	// KeepData keeps the nodes' data directories on Destroy and RemoveNode.
	KeepData bool
	// DataRoot holds the nodes' data directories, in a directory of the
	// run's (<root>/elasticity-<run id>-*/<node>); "" keeps them in the
	// run directory (<run>/nodes/<node>/data). DataOptions maps
	// local.data_dir to it.
	DataRoot string
	// DataFallback puts a node's data in the run directory when DataRoot
	// has no room for its emulated disk (local.data_dir: memory).
	DataFallback bool
	// Logf receives what the provider does.
	Logf func(format string, args ...any)
	// SharedProcess runs every node in one host process (local.process:
	// shared; localcluster.Host), their internode messages in memory: each
	// node keeps its listeners, data, log and lifecycle, and StopNode,
	// KillNode, PauseNode, ResumeNode and StartNode act on it alone
	// through the host's control socket as signals act on a node process.
	SharedProcess bool
}

// proc is one node's process.
type proc struct {
	node      provision.Node
	index     int // N of node-N
	dataDir   string
	dataRoot  string   // the directory dataDir must stay inside (deletion guard)
	diskBytes int64    // the node's emulated disk
	args      []string // the node process's command line after the binary
	flags     []string // its node flags (a host's node is started with these)
	gen       int      // its start in the host (SharedProcess)
	proc      *localcluster.Process
	done      chan struct{} // closed when the process has been reaped and its exit delivered
	err       error         // exit error, valid after done
	requested bool          // the provider asked it to stop
	running   bool
}

// Provider runs emulated nodes as local processes. It implements
// provision.Provider, Pauser, Restarter, LogCollector and Sweeper, and
// reports process exits (Exits, NodeExited).
type Provider struct {
	opts Options

	mu        sync.Mutex
	spec      provision.ClusterSpec
	dir       string
	created   bool
	destroyed bool
	next      int // index of the last node started
	seeds     []string
	procs     map[string]*proc
	dataBase  string // the run's directory under opts.DataRoot, once made
	exits     chan provision.NodeExit
	closed    bool
	// skipFreeCheck starts nodes as if their address had been free when
	// checked (tests of a start that races another for the address).
	skipFreeCheck bool
	// host runs the nodes (Options.SharedProcess), started with the first
	// (under hostMu).
	host   *localcluster.Host
	hostMu sync.Mutex
}

var (
	_ provision.Provider        = (*Provider)(nil)
	_ provision.Pauser          = (*Provider)(nil)
	_ provision.Restarter       = (*Provider)(nil)
	_ provision.LogCollector    = (*Provider)(nil)
	_ provision.ExitNotifier    = (*Provider)(nil)
	_ provision.ProcessChecker  = (*Provider)(nil)
	_ provision.IdentityChecker = (*Provider)(nil)
)

// New returns a local provider.
func New(opts Options) *Provider {
	if opts.Binary == "" {
		if exe, err := os.Executable(); err == nil {
			opts.Binary = exe
		}
	}
	if opts.BaseAddress == "" {
		opts.BaseAddress = DefaultBaseAddress
	}
	setDefault(&opts.CQLPort, DefaultCQLPort)
	setDefault(&opts.RESTPort, DefaultRESTPort)
	setDefault(&opts.MetricsPort, DefaultMetricsPort)
	setDefault(&opts.InternodePort, DefaultInternodePort)
	setDefault(&opts.BlockedReactorNotifyMS, DefaultBlockedReactorNotifyMS)
	setDefault(&opts.MaxSeeds, DefaultMaxSeeds)
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Provider{opts: opts, procs: map[string]*proc{}, exits: make(chan provision.NodeExit, 256)}
}

func setDefault(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

// Name is "local".
func (p *Provider) Name() string { return "local" }

// Exits delivers one provision.NodeExit per process end, requested or not. It is
// closed by Destroy. Exits are dropped if nobody reads and 256 are queued.
func (p *Provider) Exits() <-chan provision.NodeExit { return p.exits }

// NodeExited reports whether the named node's process has ended, with its
// exit error. A node never started or already removed has not exited.
func (p *Provider) NodeExited(name string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, ok := p.procs[name]
	if !ok || pr.proc == nil || pr.running {
		return false, nil
	}
	return true, pr.err
}

// NodeDir is the directory of a node's files (its data directory is <NodeDir>/data).
func (p *Provider) NodeDir(name string) string { return filepath.Join(p.dir, "nodes", name) }

// Create starts the initial nodes: NodesPerRack in every rack, interleaved
// across racks (node-1 in the first rack, node-2 in the second ...).
func (p *Provider) Create(ctx context.Context, spec provision.ClusterSpec) ([]provision.Node, error) {
	if spec.Dir == "" {
		return nil, errors.New("local: the cluster spec has no run directory")
	}
	if len(spec.Racks) == 0 {
		spec.Racks = []string{"rack1"}
	}
	if spec.NodesPerRack <= 0 {
		spec.NodesPerRack = 1
	}
	if spec.DC == "" {
		spec.DC = "dc1"
	}
	if spec.ClusterName == "" {
		spec.ClusterName = "elasticity"
		if spec.RunID != "" {
			spec.ClusterName = "elasticity-" + spec.RunID
		}
	}
	if _, err := provision.LookupInstanceType(spec.InstanceType); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("local: resolving run directory %s: %w", spec.Dir, err)
	}
	for _, d := range []string{filepath.Join(dir, "nodes"), filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("local: creating %s: %w", d, err)
		}
	}
	p.mu.Lock()
	if p.created {
		p.mu.Unlock()
		return nil, errors.New("local: Create called twice on one provider")
	}
	p.created, p.spec, p.dir = true, spec, dir
	total := len(spec.Racks) * spec.NodesPerRack
	for i := 1; i <= min(total, p.opts.MaxSeeds); i++ {
		addr, err := p.address(i)
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		p.seeds = append(p.seeds, addr)
	}
	p.mu.Unlock()

	specs := make([]provision.NodeSpec, 0, total)
	for i := 0; i < spec.NodesPerRack; i++ {
		for _, r := range spec.Racks {
			specs = append(specs, provision.NodeSpec{Rack: r, InstanceType: spec.InstanceType})
		}
	}
	return p.start(ctx, specs, true)
}

// currentSeeds are the initial seeds while they run; once some are gone
// (decommissioned, removed) the oldest running nodes stand in, so that a
// late node still finds the cluster. Callers hold p.mu.
func (p *Provider) currentSeeds() []string {
	var running []string
	for _, a := range p.seeds {
		for _, pr := range p.procs {
			if pr.node.Address == a && pr.running {
				running = append(running, a)
			}
		}
	}
	if len(running) == len(p.seeds) || len(p.procs) == 0 {
		return p.seeds
	}
	var others []*proc
	for _, pr := range p.procs {
		if pr.running && !slices.Contains(running, pr.node.Address) {
			others = append(others, pr)
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].index < others[j].index })
	for _, pr := range others {
		if len(running) >= len(p.seeds) {
			break
		}
		running = append(running, pr.node.Address)
	}
	if len(running) == 0 {
		return p.seeds
	}
	return running
}

// AddNodes starts new nodes that join the existing cluster through its seeds.
func (p *Provider) AddNodes(ctx context.Context, specs []provision.NodeSpec) ([]provision.Node, error) {
	p.mu.Lock()
	created := p.created
	p.mu.Unlock()
	if !created {
		return nil, errors.New("local: AddNodes before Create")
	}
	for _, s := range specs {
		if _, err := provision.LookupInstanceType(s.InstanceType); err != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
	}
	return p.start(ctx, specs, false)
}

// address is the address of the i-th node (1-based).
func (p *Provider) address(i int) (string, error) {
	base, err := netip.ParseAddr(p.opts.BaseAddress)
	if err != nil || !base.Is4() {
		return "", fmt.Errorf("local: base address %q is not an IPv4 address", p.opts.BaseAddress)
	}
	b := base.As4()
	last := int(b[3]) + i - 1
	if last > 254 {
		return "", fmt.Errorf("local: node %d would need address %d.%d.%d.%d: out of addresses after %s", i, b[0], b[1], b[2], last, p.opts.BaseAddress)
	}
	b[3] = byte(last)
	return netip.AddrFrom4(b).String(), nil
}

// start starts nodes; initial nodes all get the initial seeds, later ones the running seeds.
func (p *Provider) start(ctx context.Context, specs []provision.NodeSpec, initial bool) ([]provision.Node, error) {
	var out []provision.Node
	for i, s := range specs {
		if i > 0 && p.opts.StartInterval > 0 {
			select {
			case <-ctx.Done():
				return out, fmt.Errorf("local: starting nodes: %w", ctx.Err())
			case <-time.After(p.opts.StartInterval):
			}
		}
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("local: starting nodes: %w", err)
		}
		n, err := p.startNew(s, initial)
		if err != nil {
			return out, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (p *Provider) startNew(s provision.NodeSpec, initial bool) (provision.Node, error) {
	p.mu.Lock()
	if p.destroyed {
		p.mu.Unlock()
		return provision.Node{}, errors.New("local: provider already destroyed")
	}
	p.next++
	idx := p.next
	spec, dir, seeds := p.spec, p.dir, slices.Clone(p.seeds)
	if !initial {
		seeds = slices.Clone(p.currentSeeds())
	}
	p.mu.Unlock()

	addr, err := p.address(idx)
	if err != nil {
		return provision.Node{}, err
	}
	it, err := provision.LookupInstanceType(s.InstanceType)
	if err != nil {
		return provision.Node{}, fmt.Errorf("local: %w", err)
	}
	rack := s.Rack
	if rack == "" {
		rack = spec.Racks[(idx-1)%len(spec.Racks)]
	}
	name := fmt.Sprintf("node-%d", idx)
	n := provision.Node{
		Name: name, DC: spec.DC, Rack: rack, InstanceType: it.Name, Address: addr,
		CQLPort: p.opts.CQLPort, RESTPort: p.opts.RESTPort, MetricsPort: p.opts.MetricsPort,
		LogPath: filepath.Join(dir, "logs", name+".log"),
	}
	scale := p.opts.StorageScaleMiBPerGB
	if scale <= 0 {
		scale = nodeStorageScaleMiBPerGB
	}
	diskBytes := int64(provision.Model{StorageScaleMiBPerGB: scale}.NodeDiskBytes(it))
	p.mu.Lock()
	dataDir, dataRoot, err := p.placeData(name, diskBytes)
	p.mu.Unlock()
	if err != nil {
		return n, err
	}
	for _, d := range []string{p.NodeDir(name), dataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return n, fmt.Errorf("local: creating %s: %w", d, err)
		}
	}
	if err := p.checkFree(addr); err != nil {
		return n, err
	}
	flags := localcluster.NodeFlags{
		Listen: addr, DataDir: dataDir, LogFile: n.LogPath,
		ClusterName: spec.ClusterName, DC: spec.DC, Rack: rack,
		InstanceType: it.Name, VCPUs: it.VCPUs, MemoryGB: it.MemoryGB, DiskGB: it.StorageGB,
		Seeds:   seeds,
		CQLPort: p.opts.CQLPort, RESTPort: p.opts.RESTPort, MetricsPort: p.opts.MetricsPort,
		InternodePort:          p.opts.InternodePort,
		BlockedReactorNotifyMS: p.opts.BlockedReactorNotifyMS,
		Version:                spec.Version,
		StorageScaleMiBPerGB:   p.opts.StorageScaleMiBPerGB,
		TimeScale:              p.opts.TimeScale,
		OpsPerVCPU:             p.opts.OpsPerVCPU,
		StreamMiBPerVCPU:       p.opts.StreamMiBPerVCPU,
		Extra:                  append(slices.Clone(spec.ExtraArgs), p.opts.ExtraArgs...),
	}.Args()
	if p.opts.FaultArgs != nil {
		flags = append(flags, p.opts.FaultArgs(n)...)
	}
	args := append(append(slices.Clone(p.opts.BinaryArgs), "node"), flags...)
	pr := &proc{node: n, index: idx, dataDir: dataDir, dataRoot: dataRoot, diskBytes: diskBytes, args: args, flags: flags}
	p.mu.Lock()
	p.procs[name] = pr
	p.mu.Unlock()
	if err := p.launch(pr); err != nil {
		return n, err
	}
	p.mu.Lock()
	n = pr.node
	p.mu.Unlock()
	return n, nil
}

// checkFree fails when something already listens on the node's address at
// one of its ports, which would be another run (or a leftover) using the
// same addresses; the error names a free block to use instead.
func (p *Provider) checkFree(addr string) error {
	if p.skipFreeCheck {
		return nil
	}
	ports := p.ports()
	busy, err := localcluster.Busy(addr, 1, ports)
	if err != nil {
		return fmt.Errorf("local: checking that %s is free: %w", addr, err)
	}
	if busy == "" {
		return nil
	}
	msg := fmt.Sprintf("local: %s is already in use (another run or a leftover node?)", busy)
	// A whole /24 block, so that the nodes a run adds later fit too.
	free, err := localcluster.FreeBase(p.opts.BaseAddress, 253, ports)
	if err != nil {
		return fmt.Errorf("%s; choose another local.base_address (no free block found: %v)", msg, err)
	}
	return fmt.Errorf("%s; nothing listens on %s/24: set local.base_address: %s", msg, strings.TrimSuffix(free, ".2")+".0", free)
}

// ports are the ports every node listens on.
func (p *Provider) ports() []int {
	return []int{p.opts.CQLPort, p.opts.RESTPort, p.opts.MetricsPort, p.opts.InternodePort}
}

// CheckIdentity fails unless n's own process holds the listeners that
// answer on n's REST and CQL ports (provision.IdentityChecker): a node
// that could not bind has died, and what answers is another's.
func (p *Provider) CheckIdentity(ctx context.Context, n provision.Node) error {
	pr, err := p.lookup(n)
	if err != nil {
		return err
	}
	p.mu.Lock()
	running, proc, done := pr.running, pr.proc, pr.done
	p.mu.Unlock()
	if !running || proc == nil {
		return fmt.Errorf("local: %s is not running", n.Name)
	}
	err = localcluster.CheckServes(proc.Pid, n.Address, p.opts.RESTPort, p.opts.CQLPort)
	if err == nil {
		return nil
	}
	// A process that lost its address exits: let it be reaped, so that the
	// caller reports the exit and its log rather than the symptom.
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
	return fmt.Errorf("local: %s (pid %d): %w", n.Name, proc.Pid, err)
}

// launch starts pr's process (localcluster.StartNode: its own process
// group, dying with the runner) and delivers its exit.
func (p *Provider) launch(pr *proc) error {
	if p.opts.SharedProcess {
		return p.launchHosted(pr)
	}
	outPath := strings.TrimSuffix(pr.node.LogPath, ".log") + ".out"
	p.mu.Lock()
	mark := p.markEnv(pr)
	p.mu.Unlock()
	proc, err := localcluster.StartNode(localcluster.Launch{
		Binary: p.opts.Binary, Args: pr.args, Env: append(mark, p.opts.Env...),
		Dir: p.NodeDir(pr.node.Name), Out: outPath, DieWithParent: true,
	})
	if err != nil {
		return fmt.Errorf("local: starting %s (%s %s): %w", pr.node.Name, p.opts.Binary, strings.Join(pr.args, " "), err)
	}
	p.started(pr, proc, 0, outPath, func() error {
		<-proc.Done()
		return proc.Err()
	})
	return nil
}

// launchHosted starts pr in the run's host process (started with the
// first node) and delivers its exit.
func (p *Provider) launchHosted(pr *proc) error {
	p.hostMu.Lock()
	h := p.hostOf()
	if h == nil || h.Proc.Exited() {
		// The first node, or the first after the host itself ended (a
		// panic ends every node in it): a new host.
		p.mu.Lock()
		mark := p.markEnv(&proc{node: provision.Node{Name: "host"}})
		p.mu.Unlock()
		var err error
		h, err = localcluster.StartHost(context.Background(), localcluster.Launch{
			Binary: p.opts.Binary, Args: append(slices.Clone(p.opts.BinaryArgs), "node"), Env: append(mark, p.opts.Env...),
			Dir: filepath.Join(p.dir, "nodes"), Out: p.hostOut(), DieWithParent: true,
		}, localcluster.HostSocket(filepath.Join(p.dir, "nodes")))
		if err != nil {
			p.hostMu.Unlock()
			return fmt.Errorf("local: starting the nodes' host process: %w", err)
		}
		p.opts.Logf("started the nodes' host process (pid %d, control socket %s)", h.Proc.Pid, h.Socket)
		p.mu.Lock()
		p.host = h
		p.mu.Unlock()
	}
	p.hostMu.Unlock()
	gen, err := h.Start(context.Background(), pr.node.Name, pr.flags)
	if err != nil {
		return fmt.Errorf("local: starting %s in the host process: %w", pr.node.Name, err)
	}
	p.started(pr, h.Proc, gen, p.hostOut(), func() error { return h.Wait(pr.node.Name, gen) })
	return nil
}

// hostOut is the host process's output (panics, what is not in a node's log).
func (p *Provider) hostOut() string { return filepath.Join(p.dir, "logs", "host.out") }

// started records pr's process (for a node of the host, the host's and
// its start) and delivers its exit, which wait waits for.
func (p *Provider) started(pr *proc, proc *localcluster.Process, gen int, outPath string, wait func() error) {
	done := make(chan struct{})
	p.mu.Lock()
	pr.proc, pr.gen, pr.done, pr.err, pr.requested, pr.running = proc, gen, done, nil, false, true
	pr.node.ID = strconv.Itoa(proc.Pid)
	p.mu.Unlock()
	p.opts.Logf("started %s on %s (pid %d, rack %s, %s)", pr.node.Name, pr.node.Address, proc.Pid, pr.node.Rack, pr.node.InstanceType)
	go func() {
		err := wait()
		p.mu.Lock()
		pr.err, pr.running = err, false
		exit := provision.NodeExit{Node: pr.node, Err: err, Time: time.Now().UTC(), Requested: pr.requested}
		if !p.closed {
			select {
			case p.exits <- exit:
			default:
				p.opts.Logf("exit of %s not delivered: nobody reads Exits", pr.node.Name)
			}
		}
		p.mu.Unlock()
		// Log before done: once done is closed the caller may be gone.
		p.opts.Logf("%s (pid %d) exited: %v (requested: %v)", pr.node.Name, proc.Pid, errOrOK(err), exit.Requested)
		// A process's exit (*exec.ExitError) or a host node's
		// (*localcluster.NodeExitError): both say their exit code.
		var ee interface{ ExitCode() int }
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			// A failure of the node itself (not our signal): a Go panic or
			// a fatal error lands in the output capture, not the log.
			if tail := tailLines(outPath, 15); tail != "" {
				p.opts.Logf("%s output (%s, last lines):\n%s", pr.node.Name, outPath, tail)
			}
		}
		close(done)
	}()
}

// tailLines returns the last n lines of a file's last 16 KiB.
func tailLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 16<<10 {
		_, _ = f.Seek(st.Size()-16<<10, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, 16<<10))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func errOrOK(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// lookup returns the running (or stopped) process of n.
func (p *Provider) lookup(n provision.Node) (*proc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, ok := p.procs[n.Name]
	if !ok {
		return nil, fmt.Errorf("local: unknown node %q", n.Name)
	}
	return pr, nil
}

// signal sends sig to the node's process group.
func (p *Provider) signal(pr *proc, sig syscall.Signal) error {
	p.mu.Lock()
	running, proc := pr.running, pr.proc
	p.mu.Unlock()
	if !running || proc == nil {
		return fmt.Errorf("local: %s is not running", pr.node.Name)
	}
	if h := p.hostOf(); h != nil {
		if err := h.Signal(context.Background(), pr.node.Name, sig, p.opts.StopTimeout); err != nil {
			return fmt.Errorf("local: %s: %w", pr.node.Name, err)
		}
		return nil
	}
	if err := proc.Signal(sig); err != nil {
		return fmt.Errorf("local: %s: %w", pr.node.Name, err)
	}
	return nil
}

// stop ends a node's process: SIGTERM (or SIGKILL when hard), then SIGKILL
// after StopTimeout, and waits until it has been reaped. Stopping a node that
// is not running is not an error.
func (p *Provider) stop(ctx context.Context, pr *proc, hard bool) error {
	p.mu.Lock()
	running, proc, done := pr.running, pr.proc, pr.done
	if running {
		pr.requested = true
	}
	p.mu.Unlock()
	if !running || proc == nil {
		return nil
	}
	if h := p.hostOf(); h != nil {
		return p.stopHosted(ctx, h, pr, done, hard)
	}
	pid := proc.Pid
	if !hard {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		_ = syscall.Kill(-pid, syscall.SIGCONT) // a paused node must wake up to see SIGTERM
		t := time.NewTimer(p.opts.StopTimeout)
		select {
		case <-done:
			t.Stop()
			return nil
		case <-ctx.Done():
			// Fall through to SIGKILL: never leave a half-stopped node behind.
		case <-t.C:
			p.opts.Logf("%s (pid %d) did not stop within %s after SIGTERM; sending SIGKILL", pr.node.Name, pid, p.opts.StopTimeout)
		}
		t.Stop()
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("local: %s (pid %d) did not exit %s after SIGKILL", pr.node.Name, pid, killWait)
	}
}

// hostOf is the host process of the nodes (nil: a process each).
func (p *Provider) hostOf() *localcluster.Host {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host
}

// stopHosted is stop for a node of the host: SIGKILL (hard), else SIGTERM
// and SIGKILL after StopTimeout, through the host's control socket.
func (p *Provider) stopHosted(ctx context.Context, h *localcluster.Host, pr *proc, done chan struct{}, hard bool) error {
	var err error
	if hard {
		err = h.Kill(ctx, pr.node.Name)
	} else {
		err = h.Stop(ctx, pr.node.Name, p.opts.StopTimeout)
		if err != nil && ctx.Err() != nil {
			err = h.Kill(context.Background(), pr.node.Name)
		}
	}
	if err != nil && !h.Proc.Exited() {
		return fmt.Errorf("local: stopping %s: %w", pr.node.Name, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("local: %s did not exit %s after being killed in the host process", pr.node.Name, killWait)
	}
}

// StopNode stops a node gracefully: SIGTERM, then SIGKILL after StopTimeout.
func (p *Provider) StopNode(ctx context.Context, n provision.Node) error {
	pr, err := p.lookup(n)
	if err != nil {
		return err
	}
	return p.stop(ctx, pr, false)
}

// KillNode stops a node abruptly (SIGKILL to its process group).
func (p *Provider) KillNode(ctx context.Context, n provision.Node) error {
	pr, err := p.lookup(n)
	if err != nil {
		return err
	}
	return p.stop(ctx, pr, true)
}

// PauseNode freezes a node (SIGSTOP to its process group).
func (p *Provider) PauseNode(ctx context.Context, n provision.Node) error {
	pr, err := p.lookup(n)
	if err != nil {
		return err
	}
	if err := p.signal(pr, syscall.SIGSTOP); err != nil {
		return err
	}
	if p.hostOf() != nil {
		return nil // the host has paused it when it answers
	}
	// SIGSTOP lands asynchronously: return once every thread is stopped, so
	// that "paused" holds when the caller goes on.
	p.mu.Lock()
	pid := pr.proc.Pid
	p.mu.Unlock()
	deadline := time.Now().Add(2 * time.Second)
	for !allStopped(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("local: %s (pid %d) not stopped 2s after SIGSTOP", n.Name, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// allStopped reports whether every thread of pid is stopped (Linux /proc);
// where /proc is missing it trusts the signal.
func allStopped(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return true
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", t.Name(), "stat"))
		if err != nil {
			continue // thread gone
		}
		i := strings.LastIndexByte(string(b), ')')
		if f := strings.Fields(string(b[i+1:])); len(f) > 0 && f[0] != "T" && f[0] != "t" {
			return false
		}
	}
	return true
}

// ResumeNode thaws a paused node (SIGCONT).
func (p *Provider) ResumeNode(ctx context.Context, n provision.Node) error {
	pr, err := p.lookup(n)
	if err != nil {
		return err
	}
	return p.signal(pr, syscall.SIGCONT)
}

// StartNode starts a stopped node again with the same command line and data.
func (p *Provider) StartNode(ctx context.Context, n provision.Node) error {
	pr, err := p.lookup(n)
	if err != nil {
		return err
	}
	p.mu.Lock()
	running, destroyed := pr.running, p.destroyed
	p.mu.Unlock()
	if destroyed {
		return errors.New("local: provider already destroyed")
	}
	if running {
		return fmt.Errorf("local: %s is already running", n.Name)
	}
	if err := p.checkFree(pr.node.Address); err != nil {
		return err
	}
	return p.launch(pr)
}

// RemoveNode stops the node, keeps its log and deletes its data directory.
// Removing an unknown or already removed node is not an error.
func (p *Provider) RemoveNode(ctx context.Context, n provision.Node) error {
	p.mu.Lock()
	pr, ok := p.procs[n.Name]
	dir := p.dir
	p.mu.Unlock()
	if !ok {
		return nil
	}
	if err := p.stop(ctx, pr, false); err != nil {
		return err
	}
	p.mu.Lock()
	delete(p.procs, n.Name)
	p.mu.Unlock()
	if p.opts.KeepData {
		return nil
	}
	if err := removeWithin(pr.dataRoot, pr.dataDir); err != nil {
		return err
	}
	return removeWithin(dir, p.NodeDir(n.Name))
}

// Destroy stops every node (SIGTERM, then SIGKILL after StopTimeout) and
// waits for them, deletes the nodes' data (unless KeepData; logs stay) and
// closes Exits. It is idempotent and safe after a failed Create.
func (p *Provider) Destroy(ctx context.Context) error {
	p.mu.Lock()
	p.destroyed = true
	procs := make([]*proc, 0, len(p.procs))
	for _, pr := range p.procs {
		procs = append(procs, pr)
	}
	dir := p.dir
	p.mu.Unlock()

	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, pr := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.stop(ctx, pr, false)
		}()
	}
	wg.Wait()
	if h := p.hostOf(); h != nil {
		// Its nodes have stopped: the host process ends with its SIGTERM.
		errs = append(errs, localcluster.StopPid(h.Proc.Pid, p.opts.StopTimeout, h.Proc.Done()))
	}
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.exits)
	}
	p.mu.Unlock()
	if dir != "" && !p.opts.KeepData {
		if _, err := os.Stat(filepath.Join(dir, "nodes")); err == nil {
			errs = append(errs, removeWithin(dir, filepath.Join(dir, "nodes")))
		}
		p.mu.Lock()
		errs = append(errs, p.removeDataBase())
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Logs streams a node's log file from its start, following it (like tail -F,
// across truncation or replacement) until ctx ends or the reader is closed.
func (p *Provider) Logs(ctx context.Context, n provision.Node) (io.ReadCloser, error) {
	path := n.LogPath
	if path == "" {
		pr, err := p.lookup(n)
		if err != nil {
			return nil, err
		}
		path = pr.node.LogPath
	}
	return provision.FollowFile(ctx, path, 200*time.Millisecond), nil
}

// CollectLogs copies every node's log (and stdout/stderr capture) into dir.
// Logs already live in <run dir>/logs, so collecting there is a no-op.
func (p *Provider) CollectLogs(ctx context.Context, dir string) error {
	p.mu.Lock()
	runDir := p.dir
	p.mu.Unlock()
	if runDir == "" {
		return nil
	}
	src := filepath.Join(runDir, "logs")
	if same, _ := sameDir(src, dir); same {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("local: creating %s: %w", dir, err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("local: listing %s: %w", src, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || ctx.Err() != nil {
			continue
		}
		errs = append(errs, copyFile(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("local: opening %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("local: creating %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("local: copying %s to %s: %w", src, dst, err)
	}
	return out.Close()
}

// HostSocket is the control socket of the nodes' host process ("" when
// each node has a process of its own, or none started yet).
func (p *Provider) HostSocket() string {
	if h := p.hostOf(); h != nil {
		return h.Socket
	}
	return ""
}
