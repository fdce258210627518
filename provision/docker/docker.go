// Package docker runs clusters as containers through testcontainers-go: one
// user-defined network per run, one container per node with a fixed address
// on it, labels that `elasticity gc --backend docker` can find.
//
// It runs real ScyllaDB images (scylladb/scylla) and, in our own tests, the
// image double built from this repository (Dockerfile.emulator, which
// behaves as the official image of the version it poses as), with the same
// command line: every version-dependent flag follows the image's ScyllaDB
// version (ResolveImage), and the double only gets the emulator's model
// flags on top.
package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	mnetwork "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
	"github.com/elasticity-dev/elasticity/provision"
)

// Labels put on every container and network.
const (
	LabelRunID     = "elasticity.run-id"
	LabelScenario  = "elasticity.scenario"
	LabelNode      = "elasticity.node"
	LabelCreatedAt = "elasticity.created-at"
	LabelKeepUntil = "elasticity.keep-until"
	LabelCreatedBy = "elasticity.created-by"
)

// Ports inside each container; the runner reaches them at the container's
// address on the run's network (no port publishing).
const (
	CQLPort       = 9042
	RESTPort      = 10000
	MetricsPort   = 9180
	InternodePort = 7000
)

// DefaultImage is the ScyllaDB image used when the scenario names none.
const DefaultImage = "scylladb/scylla:" + DefaultVersion

// Options configure the Docker provider.
type Options struct {
	Image string // container image; DefaultImage when empty
	// Version is the image's ScyllaDB version (ResolveImage); zero =
	// DefaultVersion. The entrypoint's flags depend on it.
	Version scyllaversion.Version
	// Emulated says the image is this repository's double (ResolveImage:
	// its elasticity.emulator label): nodes also get the emulator's model
	// of their catalog instance (--instance-type, --vcpus, --memory-gb,
	// --disk-gb), passed through the entrypoint to the emulated scylla.
	Emulated bool
	// StallThresholdMS is --blocked-reactor-notify-ms on images whose
	// entrypoint takes it (2025.4 and later); 0 = 25, ScyllaDB's default.
	StallThresholdMS int
	// SMP and MemoryGB override the instance type's figures (0 = derive,
	// see Resources). With BaseInstanceType set they size a node of that
	// type only, and other types scale by their vCPU and memory ratios, so
	// that a grow with larger instances still gets larger containers.
	SMP              int
	MemoryGB         float64
	BaseInstanceType string
	// HostCPUs and HostMemoryGB bound what a node may ask for; 0 = this host's.
	HostCPUs     int
	HostMemoryGB float64
	// DataMount is what goes at /var/lib/scylla: DataTmpfs
	// (also ""), a tmpfs of the node's scaled disk, or
	// DataNone, the image's volume on the host's disk.
	DataMount string
	// StorageScaleMiBPerGB sizes the tmpfs: catalog disk GB × this many MiB.
	StorageScaleMiBPerGB float64
	// NodeArgs adds per-node arguments (emulator scale factors, fault injection).
	NodeArgs func(n provision.Node, it provision.InstanceType) []string
	// Network is an existing user-defined network to attach the nodes to
	// (docker.network); "" = one network per run. The run picks free
	// addresses in its subnet and leaves the network in place.
	Network string
	Logf    func(format string, args ...any)
	Now     func() time.Time
}

// Provider is the Docker backend.
type Provider struct {
	opts Options

	mu      sync.Mutex
	spec    provision.ClusterSpec
	net     *testcontainers.DockerNetwork // the run's own network (nil with Options.Network)
	netName string
	subnet  netip.Prefix
	nextIP  netip.Addr
	next    int
	nodes   map[string]*member // by node name
	created []testcontainers.Container

	exitMu      sync.Mutex
	exits       chan provision.NodeExit
	exitsClosed bool
}

type member struct {
	idx  int // creation order
	node provision.Node
	c    testcontainers.Container
	logs *logFollower
	// requested: the provider is stopping it (StopNode, KillNode,
	// RemoveNode, Destroy); ended: its scylla ended since it was started
	// (guarded by Provider.mu).
	requested bool
	ended     *processEnd
}

var (
	_ provision.Provider       = (*Provider)(nil)
	_ provision.Pauser         = (*Provider)(nil)
	_ provision.Restarter      = (*Provider)(nil)
	_ provision.ProcessChecker = (*Provider)(nil)
	_ provision.ExitNotifier   = (*Provider)(nil)
)

// Ryuk (testcontainers' reaper) is one more image to pull, and it would
// end every container when this process exits: our labels and `elasticity
// gc` clean up instead. Respect an explicit choice. Set before anything
// reads testcontainers' configuration, which it loads once (the plan's
// image lookup comes before New).
func init() {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

// New builds the provider.
func New(opts Options) *Provider {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// testcontainers prints every container step on stderr; the provider
	// reports what matters through Logf.
	tclog.SetDefault(tclog.NewNoopLogger())
	if opts.HostCPUs <= 0 {
		opts.HostCPUs = hostCPUs()
	}
	if opts.HostMemoryGB <= 0 {
		opts.HostMemoryGB = hostMemoryGB()
	}
	return &Provider{opts: opts, nodes: map[string]*member{}, exits: make(chan provision.NodeExit, 64)}
}

// Name implements provision.Provider.
func (p *Provider) Name() string { return "docker" }

func (p *Provider) logf(format string, args ...any) { p.opts.Logf("docker: "+format, args...) }

// Resources maps an instance type to --smp and --memory (and the
// container's CPU and memory limits) within the host's limits:
//
//   - derived (no override): smp = vCPUs, memory = the type's memory;
//   - SMP/MemoryGB set with no BaseInstanceType: those figures for every type;
//   - SMP/MemoryGB set with BaseInstanceType: those figures for the base type
//     and, for another type, scaled by its vCPU (memory) ratio to the base;
//
// then smp is at most the host's CPUs, and a type whose shards were cut
// to the host's CPUs keeps its memory per shard (an i4i.4xlarge's 8 shards
// of 1 GiB become 2 of 1 GiB on 2 CPUs, not 2 of 4 GiB); memory is at most
// a quarter of the host's memory (so that a few nodes fit on one machine),
// and at least 1 CPU and 1 GiB.
func (p *Provider) Resources(it provision.InstanceType) (smp int, memGB float64) {
	smp, memGB = it.VCPUs, it.MemoryGB
	base, baseErr := provision.LookupInstanceType(p.opts.BaseInstanceType)
	scaled := p.opts.BaseInstanceType != "" && baseErr == nil
	if p.opts.SMP > 0 {
		smp = p.opts.SMP
		if scaled && base.VCPUs > 0 {
			smp = int(float64(p.opts.SMP)*float64(it.VCPUs)/float64(base.VCPUs) + 0.5)
		}
	}
	if p.opts.MemoryGB > 0 {
		memGB = p.opts.MemoryGB
		if scaled && base.MemoryGB > 0 {
			memGB = p.opts.MemoryGB * it.MemoryGB / base.MemoryGB
		}
	}
	if smp > p.opts.HostCPUs && p.opts.HostCPUs > 0 {
		memGB = memGB * float64(p.opts.HostCPUs) / float64(smp)
		smp = p.opts.HostCPUs
	}
	if limit := p.opts.HostMemoryGB / 4; limit >= 1 && memGB > limit {
		memGB = limit
	}
	if smp < 1 {
		smp = 1
	}
	if memGB < 1 {
		memGB = 1
	}
	return smp, memGB
}

func (p *Provider) labels(node string) map[string]string {
	ttl := p.spec.TTL
	if ttl <= 0 {
		ttl = 12 * time.Hour
	}
	now := p.opts.Now().UTC()
	l := map[string]string{
		LabelRunID: p.spec.RunID, LabelScenario: p.spec.Scenario, LabelCreatedBy: "elasticity",
		LabelCreatedAt: now.Format(time.RFC3339), LabelKeepUntil: now.Add(ttl).Format(time.RFC3339),
	}
	if node != "" {
		l[LabelNode] = node
	}
	for k, v := range p.spec.Labels {
		l[k] = v
	}
	return l
}

// Request builds the container request of one node. It is pure so that the
// exact flags, network and labels can be checked without a Docker engine.
func (p *Provider) Request(n provision.Node, seeds []string, networkName string) (testcontainers.ContainerRequest, error) {
	it, err := provision.LookupInstanceType(n.InstanceType)
	if err != nil {
		return testcontainers.ContainerRequest{}, fmt.Errorf("docker: %w", err)
	}
	smp, memGB := p.Resources(it)
	ip := n.Address
	cmd, files := p.Command(n, it, seeds)
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return testcontainers.ContainerRequest{}, fmt.Errorf("docker: node %s has no valid address %q", n.Name, ip)
	}
	memBytes := p.memoryLimit(it, memGB)
	var tmpfs map[string]string
	if opts := p.tmpfsOptions(it); opts != "" {
		tmpfs = map[string]string{DataDir: opts}
	}
	return testcontainers.ContainerRequest{
		Tmpfs:          tmpfs,
		Image:          p.opts.Image,
		Name:           containerName(p.spec.RunID, n.Name),
		Cmd:            cmd,
		Labels:         p.labels(n.Name),
		Networks:       []string{networkName},
		NetworkAliases: map[string][]string{networkName: {n.Name}},
		Files:          files,
		// testcontainers publishes every port an image EXPOSEs on all host
		// interfaces unless told which: name ours, on loopback only. The
		// runner talks to the node's own address anyway.
		ExposedPorts: publishedPorts,
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NanoCPUs = int64(smp) * 1e9
			hc.Memory = memBytes
			hc.PortBindings = mnetwork.PortMap{}
			for _, port := range publishedPorts {
				hc.PortBindings[mnetwork.MustParsePort(port)] = []mnetwork.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "0"}}
			}
		},
		EndpointSettingsModifier: func(eps map[string]*mnetwork.EndpointSettings) {
			if es, ok := eps[networkName]; ok && es != nil {
				es.IPAMConfig = &mnetwork.EndpointIPAMConfig{IPv4Address: addr}
			} else {
				eps[networkName] = &mnetwork.EndpointSettings{IPAMConfig: &mnetwork.EndpointIPAMConfig{IPv4Address: addr}, Aliases: []string{n.Name}}
			}
		},
	}, nil
}

// memoryLimit is a container's memory limit: the database's share, 1 GiB
// for the processes beyond it, and the tmpfs, whose pages are charged to
// the container's memory cgroup as it fills.
func (p *Provider) memoryLimit(it provision.InstanceType, memGB float64) int64 {
	return int64((memGB+1)*(1<<30)) + p.MountBytes(it)
}

// DataDir is ScyllaDB's work directory in the image (scylla.yaml's
// workdir; dist/docker/redhat/build_docker.sh declares it a volume).
const DataDir = "/var/lib/scylla"

// Mounted says whether each node gets a data file system of its own.
func (p *Provider) Mounted() bool { return p.opts.DataMount != DataNone }

// MountBytes is the size of a node's tmpfs at DataDir: the catalog disk ×
// the storage scale, in whole MiB; 0 when nothing is mounted.
func (p *Provider) MountBytes(it provision.InstanceType) int64 {
	if !p.Mounted() || p.opts.StorageScaleMiBPerGB <= 0 {
		return 0
	}
	return int64(it.StorageGB*p.opts.StorageScaleMiBPerGB) << 20
}

// tmpfsOptions are the tmpfs mount options of a node ("" = no mount):
// world-writable with the sticky bit as docker's default, since the image
// runs scylla as user scylla (build_docker.sh: bconfig --user
// scylla:scylla), which creates its directories under it. Seastar opens
// files there without O_DIRECT (reactor.cc open_file_dma: tmpfs does not
// support it), which ScyllaDB's startup check accepts
// (utils/directories.cc disk_sanity → check_direct_io_support).
func (p *Provider) tmpfsOptions(it provision.InstanceType) string {
	b := p.MountBytes(it)
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf("rw,size=%dm,mode=1777", b>>20)
}

// smallDiskArgs configure ScyllaDB for a node's scaled disk; each is a
// db/config.cc option (all present from scylla-2025.1.0 on), which the
// entrypoint passes through to scylla (commandlineparser.py
// parse_known_args). On a real i4i.large the defaults take a few percent
// of 468 GB; on a 1.8 GiB tmpfs they would take a quarter of it:
//
//   - commitlog_segment_size_in_mb 64 → 8 ("8 or 16 MB is reasonable");
//   - commitlog_total_space_in_mb: -1 means the node's memory
//     (db/commitlog/commitlog.cc from_db_config); scaled as the disk is,
//     the catalog memory × the storage scale, at least 4 segments per shard;
//   - schema_commitlog_segment_size_in_mb 128 → 32: the schema commitlog
//     takes two segments (replica/database.cc init_schema_commitlog);
//   - target_tablet_size_in_bytes 5 GiB (service/tablet_allocator_fwd.hh)
//     × the disk's scale, so that tablets split and merge at the same fill
//     as on the real disk.
func (p *Provider) smallDiskArgs(it provision.InstanceType, smp int) []string {
	if p.MountBytes(it) <= 0 {
		return nil
	}
	total := p.commitlogTotalMiB(it, smp)
	diskScale := p.opts.StorageScaleMiBPerGB * (1 << 20) / 1e9
	target := int64(float64(5<<30) * diskScale)
	return []string{
		"--commitlog-segment-size-in-mb", strconv.Itoa(commitlogSegmentMiB),
		"--commitlog-total-space-in-mb", strconv.Itoa(total),
		"--schema-commitlog-segment-size-in-mb", "32",
		"--target-tablet-size-in-bytes", strconv.FormatInt(target, 10),
	}
}

// commitlogSegmentMiB is smallDiskArgs' commitlog_segment_size_in_mb.
const commitlogSegmentMiB = 8

// commitlogTotalMiB is smallDiskArgs' commitlog_total_space_in_mb: the
// catalog memory × the storage scale, at least 4 segments per shard.
func (p *Provider) commitlogTotalMiB(it provision.InstanceType, smp int) int {
	return max(int(it.MemoryGB*p.opts.StorageScaleMiBPerGB), 4*commitlogSegmentMiB*smp)
}

func (p *Provider) version() scyllaversion.Version {
	if p.opts.Version.IsZero() {
		return defaultVersion
	}
	return p.opts.Version
}

// Command is the container's command (the arguments of the image's
// entrypoint, dist/docker/docker-entrypoint.py) for one node, and the files
// copied in before it starts. It depends on the image's version:
//
//   - 2025.4.0 and later: --dc/--rack are entrypoint flags
//     (commandlineparser.py); before, the rack goes into
//     cassandra-rackdc.properties with GossipingPropertyFileSnitch;
//   - 2025.4.4 and later (first released as 2025.4.5): --blocked-reactor-notify-ms is an entrypoint
//     flag; before, none is passed, since scyllasetup.py already appends
//     999999999 and scylla refuses an option given twice.
//
// With a data mount, ScyllaDB is also configured for the small disk
// (smallDiskArgs).
func (p *Provider) Command(n provision.Node, it provision.InstanceType, seeds []string) ([]string, []testcontainers.ContainerFile) {
	smp, memGB := p.Resources(it)
	ip := n.Address
	v := p.version()
	var files []testcontainers.ContainerFile
	cmd := []string{
		"--seeds", strings.Join(seeds, ","),
		"--listen-address", ip, "--rpc-address", ip, "--broadcast-address", ip, "--broadcast-rpc-address", ip,
		// REST binds to localhost by default, unreachable from the runner.
		"--api-address", "0.0.0.0",
		"--smp", strconv.Itoa(smp), "--memory", strconv.Itoa(int(memGB*1024)) + "M",
		"--overprovisioned", "1", "--developer-mode", "1",
	}
	if v.StallFlag() {
		ms := p.opts.StallThresholdMS
		if ms <= 0 {
			ms = 25
		}
		cmd = append(cmd, "--blocked-reactor-notify-ms", strconv.Itoa(ms))
	}
	cmd = append(cmd, p.smallDiskArgs(it, smp)...)
	if v.DCRackFlags() {
		cmd = append(cmd, "--dc", n.DC, "--rack", n.Rack)
	} else {
		cmd = append(cmd, "--endpoint-snitch", "GossipingPropertyFileSnitch")
		files = append(files, testcontainers.ContainerFile{
			Reader:            strings.NewReader(fmt.Sprintf("dc=%s\nrack=%s\nprefer_local=true\n", n.DC, n.Rack)),
			ContainerFilePath: "/etc/scylla/cassandra-rackdc.properties", FileMode: 0o644,
		})
	}
	if p.spec.ClusterName != "" {
		cmd = append(cmd, "--cluster-name", p.spec.ClusterName)
	}
	if p.opts.Emulated {
		// The double models the catalog instance (its capacity comes from
		// vCPUs and disk, as on the local backend); --smp and --memory only
		// bound the container. Unknown to the entrypoint, these reach the
		// emulated scylla as extra arguments.
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		cmd = append(cmd, "--instance-type", it.Name, "--vcpus", strconv.Itoa(it.VCPUs),
			"--memory-gb", f(it.MemoryGB), "--disk-gb", f(it.StorageGB))
	}
	cmd = append(cmd, p.spec.ExtraArgs...)
	if p.opts.NodeArgs != nil {
		cmd = append(cmd, p.opts.NodeArgs(n, it)...)
	}
	return cmd, files
}

var publishedPorts = []string{
	strconv.Itoa(CQLPort) + "/tcp", strconv.Itoa(RESTPort) + "/tcp", strconv.Itoa(MetricsPort) + "/tcp",
}

func containerName(runID, node string) string {
	return "elasticity-" + sanitize(runID) + "-" + node
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Create implements provision.Provider: a network with its own /24 and the
// initial nodes, the first of which is the seed.
func (p *Provider) Create(ctx context.Context, spec provision.ClusterSpec) (nodes []provision.Node, err error) {
	if len(spec.Racks) == 0 || spec.NodesPerRack <= 0 {
		return nil, errors.New("docker: cluster spec needs racks and nodes_per_rack > 0")
	}
	p.mu.Lock()
	p.spec = spec
	p.mu.Unlock()
	defer func() {
		if err != nil {
			if derr := p.Destroy(context.WithoutCancel(ctx)); derr != nil {
				err = errors.Join(err, fmt.Errorf("tearing down after the failure: %w", derr))
			}
		}
	}()
	if err := p.createNetwork(ctx); err != nil {
		return nil, err
	}
	var specs []provision.NodeSpec
	for i := 0; i < spec.NodesPerRack; i++ {
		for _, r := range spec.Racks {
			specs = append(specs, provision.NodeSpec{Rack: r, InstanceType: spec.InstanceType})
		}
	}
	return p.AddNodes(ctx, specs)
}

func (p *Provider) createNetwork(ctx context.Context) error {
	if p.opts.Network != "" {
		return p.useNetwork(ctx)
	}
	var lastErr error
	// A random /24 in 10.213.0.0/16; retried when the engine says it overlaps.
	for attempt := 0; attempt < 8; attempt++ {
		third := 1 + rand.IntN(250)
		subnet := netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", third))
		gw := netip.MustParseAddr(fmt.Sprintf("10.213.%d.1", third))
		nw, err := network.New(ctx,
			network.WithLabels(p.labels("")),
			network.WithIPAM(&mnetwork.IPAM{Driver: "default", Config: []mnetwork.IPAMConfig{{Subnet: subnet, Gateway: gw}}}),
		)
		if err == nil {
			p.mu.Lock()
			p.net, p.netName, p.subnet, p.nextIP = nw, nw.Name, subnet, gw.Next()
			p.mu.Unlock()
			p.logf("network %s on %s", nw.Name, subnet)
			return nil
		}
		lastErr = err
	}
	return fmt.Errorf("docker: creating the run's network: %w", lastErr)
}

// useNetwork attaches the run to an existing network: its IPv4 subnet
// gives the addresses (fixed addresses need a user-defined network).
func (p *Provider) useNetwork(ctx context.Context) error {
	return p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		res, err := c.NetworkInspect(ctx, p.opts.Network, client.NetworkInspectOptions{})
		if err != nil {
			return fmt.Errorf("docker: inspecting network %s (docker.network): %w", p.opts.Network, err)
		}
		for _, cfg := range res.Network.IPAM.Config {
			if cfg.Subnet.IsValid() && cfg.Subnet.Addr().Is4() {
				p.mu.Lock()
				p.netName, p.subnet, p.nextIP = res.Network.Name, cfg.Subnet.Masked(), cfg.Subnet.Masked().Addr().Next()
				p.mu.Unlock()
				p.logf("using network %s on %s", res.Network.Name, cfg.Subnet)
				return nil
			}
		}
		return fmt.Errorf("docker: network %s has no IPv4 subnet of its own: nodes need fixed addresses (use a user-defined network, or leave docker.network empty)", p.opts.Network)
	})
}

// usedAddresses: what an existing network already gives out (gateway and
// attached containers), so that our nodes do not collide with them.
func (p *Provider) usedAddresses(ctx context.Context) (map[netip.Addr]bool, error) {
	used := map[netip.Addr]bool{}
	if p.opts.Network == "" {
		return used, nil // our own /24: the provider hands out every address
	}
	err := p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		res, err := c.NetworkInspect(ctx, p.opts.Network, client.NetworkInspectOptions{})
		if err != nil {
			return fmt.Errorf("docker: inspecting network %s: %w", p.opts.Network, err)
		}
		for _, cfg := range res.Network.IPAM.Config {
			if cfg.Gateway.IsValid() {
				used[cfg.Gateway] = true
			}
			for _, a := range cfg.AuxAddress {
				used[a] = true
			}
		}
		for _, e := range res.Network.Containers {
			used[e.IPv4Address.Addr()] = true
		}
		return nil
	})
	return used, err
}

// AddNodes implements provision.Provider. Containers start in parallel; the
// seeds are the oldest nodes still in the cluster.
func (p *Provider) AddNodes(ctx context.Context, specs []provision.NodeSpec) ([]provision.Node, error) {
	used, err := p.usedAddresses(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.netName == "" {
		p.mu.Unlock()
		return nil, errors.New("docker: AddNodes before Create")
	}
	netName := p.netName
	var todo []provision.Node
	var idx []int
	for _, s := range specs {
		for used[p.nextIP] && p.subnet.Contains(p.nextIP) {
			p.nextIP = p.nextIP.Next()
		}
		if !p.subnet.Contains(p.nextIP.Next()) { // the last address is the broadcast
			p.mu.Unlock()
			return nil, fmt.Errorf("docker: no free address left in %s for %d more node(s)", p.subnet, len(specs)-len(todo))
		}
		p.next++
		idx = append(idx, p.next)
		ip := p.nextIP
		p.nextIP = p.nextIP.Next()
		n := provision.Node{Name: fmt.Sprintf("node-%d", p.next), DC: p.spec.DC, Rack: s.Rack, InstanceType: s.InstanceType,
			Address: ip.String(), CQLPort: CQLPort, RESTPort: RESTPort, MetricsPort: MetricsPort,
			LogPath: filepath.Join(p.spec.Dir, "logs", fmt.Sprintf("node-%d.log", p.next))}
		todo = append(todo, n)
	}
	seeds := p.seedsLocked()
	if len(seeds) == 0 && len(todo) > 0 {
		seeds = []string{todo[0].Address} // the first node of a new cluster seeds itself
	}
	p.mu.Unlock()

	var wg sync.WaitGroup
	errs := make([]error, len(todo))
	for i := range todo {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = p.start(ctx, &todo[i], idx[i], seeds, netName)
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return todo, nil
}

// StartContainer creates and starts a container. The host ports of its
// published ports are chosen here, from the kernel's free ports, rather
// than by the engine: the engine takes the next ports of its range without
// checking they are free, and a host busy with loopback connections (a
// driver's shard-aware dialing binds source ports there) holds runs of
// them in TIME-WAIT, so the start failed with "driver failed programming
// external connectivity … address already in use". A port taken between
// the choice and the start is retried. Only the ports the request names
// (ExposedPorts with their bindings) are chosen here: name them, or the
// engine publishes every port the image EXPOSEs as it likes.
func StartContainer(ctx context.Context, req testcontainers.ContainerRequest, logf func(string, ...any)) (testcontainers.Container, error) {
	const attempts = 3
	modify := req.HostConfigModifier
	req.HostConfigModifier = func(hc *container.HostConfig) {
		if modify != nil {
			modify(hc)
		}
		if hc.PortBindings == nil {
			hc.PortBindings = mnetwork.PortMap{}
		}
		for _, port := range req.ExposedPorts {
			p := mnetwork.MustParsePort(port)
			if len(hc.PortBindings[p]) == 0 {
				hc.PortBindings[p] = []mnetwork.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1")}}
			}
		}
		for _, bs := range hc.PortBindings {
			for i := range bs {
				if bs[i].HostPort == "" || bs[i].HostPort == "0" {
					bs[i].HostPort = freeHostPort(bs[i].HostIP)
				}
			}
		}
	}
	for attempt := 1; ; attempt++ {
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
		if err == nil || c == nil || attempt == attempts || !strings.Contains(err.Error(), "address already in use") {
			return c, err
		}
		logf("docker: %s: a published port's host port was taken (%v); starting it again (attempt %d of %d)", req.Name, err, attempt+1, attempts)
		_ = c.Terminate(context.WithoutCancel(ctx))
	}
}

// freeHostPort is a port the kernel says is free on ip (all addresses when
// ip is unset), or "" to leave the choice to the engine.
func freeHostPort(ip netip.Addr) string {
	host := ""
	if ip.IsValid() && !ip.IsUnspecified() {
		host = ip.String()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return ""
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func (p *Provider) start(ctx context.Context, n *provision.Node, idx int, seeds []string, netName string) error {
	req, err := p.Request(*n, seeds, netName)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(n.LogPath), 0o755); err != nil {
		return fmt.Errorf("docker: creating the log dir: %w", err)
	}
	lf, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("docker: opening %s: %w", n.LogPath, err)
	}
	logs := newLogFollower(lf)
	m := &member{idx: idx, logs: logs}
	logs.onLine = func(line string) { p.watchLine(m, line) }
	logs.onEnd = func() { p.containerEnded(m) }
	p.mu.Lock()
	m.node = *n
	p.mu.Unlock()
	p.logf("starting %s (%s, rack %s) at %s from %s", n.Name, n.InstanceType, n.Rack, n.Address, p.opts.Image)
	c, err := StartContainer(ctx, req, p.logf)
	if c != nil {
		p.mu.Lock()
		p.created = append(p.created, c)
		p.mu.Unlock()
		// From the beginning, so that a node failing at startup still leaves its log;
		// detached from ctx, which may be a nemesis step's.
		logs.start(context.WithoutCancel(ctx), c.GetContainerID(), time.Time{}, p.opts.Logf)
	}
	if err != nil {
		logs.close(2 * time.Second)
		if c == nil {
			// Creation cut short (e.g. Ctrl-C): the engine may have made the
			// container anyway; its name is ours, so remove it by name.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			_ = p.withClient(rctx, func(dc *testcontainers.DockerClient) error {
				_, err := dc.ContainerRemove(rctx, req.Name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
				return err
			})
			cancel()
		}
		return fmt.Errorf("docker: starting %s: %w", n.Name, err)
	}
	n.ID = c.GetContainerID()
	p.mu.Lock()
	m.node, m.c = *n, c
	p.nodes[n.Name] = m
	p.mu.Unlock()
	return nil
}

// seedsLocked: the three oldest nodes still in the cluster, so that nodes
// added after the first node was removed still find the cluster.
func (p *Provider) seedsLocked() []string {
	ms := make([]*member, 0, len(p.nodes))
	for _, m := range p.nodes {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].idx < ms[j].idx })
	var seeds []string
	for _, m := range ms {
		if len(seeds) == 3 {
			break
		}
		seeds = append(seeds, m.node.Address)
	}
	return seeds
}

// requestStop marks a node as being stopped by the provider: its death is
// not reported on Exits.
func (p *Provider) requestStop(n provision.Node) (*member, error) {
	m, err := p.member(n)
	if err == nil {
		p.mu.Lock()
		m.requested = true
		p.mu.Unlock()
	}
	return m, err
}

func (p *Provider) member(n provision.Node) (*member, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.nodes[n.Name]
	if !ok {
		return nil, fmt.Errorf("docker: unknown node %s", n.Name)
	}
	return m, nil
}

// StopNode implements provision.Provider (SIGTERM, then SIGKILL after 30 s).
func (p *Provider) StopNode(ctx context.Context, n provision.Node) error {
	m, err := p.requestStop(n)
	if err != nil {
		return err
	}
	t := stopGrace
	if err := m.c.Stop(ctx, &t); err != nil {
		return fmt.Errorf("docker: stopping %s: %w", n.Name, err)
	}
	return nil
}

// KillNode implements provision.Provider.
func (p *Provider) KillNode(ctx context.Context, n provision.Node) error {
	m, err := p.requestStop(n)
	if err != nil {
		return err
	}
	// SIGKILL itself: a stop with no grace sends SIGTERM first, and a node
	// quick to exit on it would not be killed at all.
	return p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		id := m.c.GetContainerID()
		if _, err := c.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
			return fmt.Errorf("docker: killing %s: %w", n.Name, err)
		}
		// Return once it is down, as a stop does.
		for {
			res, err := c.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
			if err != nil {
				return fmt.Errorf("docker: inspecting %s after the kill: %w", n.Name, err)
			}
			if st := res.Container.State; st == nil || !st.Running {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("docker: waiting for %s to die: %w", n.Name, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// StartNode implements provision.Restarter.
func (p *Provider) StartNode(ctx context.Context, n provision.Node) error {
	m, err := p.member(n)
	if err != nil {
		return err
	}
	since := time.Now()
	p.mu.Lock()
	m.requested, m.ended = false, nil
	p.mu.Unlock()
	if err := m.c.Start(ctx); err != nil {
		return fmt.Errorf("docker: starting %s again: %w", n.Name, err)
	}
	// The previous follower ended with the container; the new one appends
	// only what this start prints.
	m.logs.start(context.WithoutCancel(ctx), m.c.GetContainerID(), since, p.opts.Logf)
	return nil
}

// NodeExited tells whether a node's container has stopped (the cluster's
// waits then fail at once with the node's last log error instead of timing
// out). It implements provision.ProcessChecker.
func (p *Provider) NodeExited(name string) (bool, error) {
	p.mu.Lock()
	m, ok := p.nodes[name]
	p.mu.Unlock()
	if !ok {
		return false, nil
	}
	p.mu.Lock()
	ended := m.ended
	p.mu.Unlock()
	if ended != nil {
		// The image's supervisor keeps the container up after scylla ends.
		return true, fmt.Errorf("supervisord: %s", ended.line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var exited bool
	var why error
	err := p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		res, err := c.ContainerInspect(ctx, m.c.GetContainerID(), client.ContainerInspectOptions{})
		if err != nil {
			return err
		}
		st := res.Container.State
		if st == nil || (st.Status != "exited" && st.Status != "dead") {
			return nil
		}
		exited = true
		switch {
		case st.OOMKilled:
			why = fmt.Errorf("container killed out of memory (limit %d MiB)", res.Container.HostConfig.Memory>>20)
		case st.ExitCode != 0:
			why = fmt.Errorf("container exited with status %d", st.ExitCode)
		}
		return nil
	})
	if err != nil {
		return false, nil // unknown: let the wait go on and time out if need be
	}
	return exited, why
}

// PauseNode implements provision.Pauser (docker pause freezes the cgroup).
func (p *Provider) PauseNode(ctx context.Context, n provision.Node) error {
	return p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		m, err := p.member(n)
		if err != nil {
			return err
		}
		_, err = c.ContainerPause(ctx, m.c.GetContainerID(), clientPauseOptions())
		return err
	})
}

// ResumeNode implements provision.Pauser.
func (p *Provider) ResumeNode(ctx context.Context, n provision.Node) error {
	return p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		m, err := p.member(n)
		if err != nil {
			return err
		}
		_, err = c.ContainerUnpause(ctx, m.c.GetContainerID(), clientUnpauseOptions())
		return err
	})
}

// RemoveNode implements provision.Provider: the container goes, its log stays.
func (p *Provider) RemoveNode(ctx context.Context, n provision.Node) error {
	m, err := p.requestStop(n)
	if err != nil {
		return err
	}
	err = terminate(ctx, m.c)
	m.logs.close(2 * time.Second)
	p.mu.Lock()
	for i, c := range p.created {
		if c == m.c {
			p.created = append(p.created[:i], p.created[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("docker: removing %s: %w", n.Name, err)
	}
	p.mu.Lock()
	delete(p.nodes, n.Name)
	p.mu.Unlock()
	return nil
}

// stopGrace is how long a container gets to stop on SIGTERM before SIGKILL.
const stopGrace = 30 * time.Second

// terminate stops (gracefully) and removes a container with its volumes.
func terminate(ctx context.Context, c testcontainers.Container) error {
	return testcontainers.TerminateContainer(c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(stopGrace))
}

// Logs implements provision.Provider by following the node's log file, which
// the container's log follower writes.
func (p *Provider) Logs(ctx context.Context, n provision.Node) (io.ReadCloser, error) {
	return provision.FollowFile(ctx, n.LogPath, 200*time.Millisecond), nil
}

// Destroy implements provision.Provider: every container and the network.
func (p *Provider) Destroy(ctx context.Context) error {
	p.mu.Lock()
	created := p.created
	p.created = nil
	members := p.nodes
	p.nodes = map[string]*member{}
	for _, m := range members {
		m.requested = true
	}
	nw := p.net // nil when the network was not ours (docker.network): it stays
	p.net, p.netName = nil, ""
	runID := p.spec.RunID
	p.mu.Unlock()
	// In parallel: each stop lets the node flush (up to stopGrace).
	errs := make([]error, len(created))
	var wg sync.WaitGroup
	for i, c := range created {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := terminate(ctx, c); err != nil {
				errs[i] = fmt.Errorf("docker: removing container %s: %w", c.GetContainerID(), err)
			}
		}()
	}
	wg.Wait()
	for _, m := range members {
		m.logs.close(2 * time.Second) // the last lines, printed while stopping
	}
	p.exitMu.Lock()
	if !p.exitsClosed {
		p.exitsClosed = true
		close(p.exits)
	}
	p.exitMu.Unlock()
	// Whatever else carries the run's label goes too: a container whose
	// creation was interrupted (Ctrl-C during a grow) exists without ever
	// having been returned to us. This also removes the run's own network.
	swept := map[string]bool{}
	if runID != "" {
		res, err := p.sweep(ctx, time.Time{}, false, runID)
		if err != nil {
			errs = append(errs, err)
		}
		for _, r := range res {
			swept[r.ID] = true
			if r.Kind == "container" {
				p.logf("removed %s, left by an interrupted start", r.Name)
			}
		}
	}
	if nw != nil && !swept[nw.ID] {
		if err := nw.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("docker: removing network %s: %w", nw.Name, err))
		}
	}
	return errors.Join(errs...)
}

// This host's CPUs and memory; variables so that tests can pose as another host.
var (
	hostCPUs     = runtime.NumCPU
	hostMemoryGB = readHostMemoryGB
)

func readHostMemoryGB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 8
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / (1 << 20)
			}
		}
	}
	return 8
}
