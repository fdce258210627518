// Package awssim is a simulated EC2 region for rehearsing `elasticity run
// --backend aws` on one machine: it serves the EC2 Query API subset
// provision/aws uses, on loopback, through the real aws-sdk-go-v2 and its
// ordinary configuration chain (AWS_ENDPOINT_URL_EC2, AWS_REGION and dummy
// credentials), and its instances behave like ScyllaDB machine-image
// instances where the framework depends on it:
//
//   - each instance has a private address (127.0.1.N), the only one its
//     processes know, and a public address (127.0.2.N) that forwards, like
//     EC2's one-to-one NAT, only the ports its security groups open to the
//     runner; N is the next number whose addresses no other process
//     listens on (addresses.go);
//   - its user-data is applied as scylla-machine-image's scylla_configure.py
//     does (listen and broadcast_rpc on the private address, api_address as
//     given or the packaged 127.0.0.1, seeds, start_scylla_on_first_boot, the
//     snitch's DC and rack from the zone) and ScyllaDB runs as an emulated
//     node (`elasticity node`);
//   - sshd answers on port 22, runs commands on this machine (so
//     `elasticity stress` runs there as a loader) and serves
//     `journalctl -u scylla-server` from the node's log in journald's formats.
//
// It lives outside emulator/ because it imports the framework's instance
// catalog (provision): instance types take their size from it, exactly as
// the local backend sizes its emulated nodes.
package awssim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Dummy credentials the simulator accepts; they open nothing anywhere else.
const (
	AccessKeyID     = "aws-sim"
	SecretAccessKey = "aws-sim-secret"
	// AccountID is the simulated caller's own account (the owner of its
	// reservations and security groups, and "self" in DescribeImages); an
	// example account id, not ScyllaDB's (the images' owners are in images.go).
	AccountID = "123456789012"
)

// RunnerAddress is the source address of the runner's connections on
// loopback (the kernel's choice for 127.0.0.0/8 destinations).
const RunnerAddress = "127.0.0.1"

// Instance states as EC2 names them.
const (
	statePending      = "pending"
	stateRunning      = "running"
	stateShuttingDown = "shutting-down"
	stateTerminated   = "terminated"
	stateStopping     = "stopping"
	stateStopped      = "stopped"
)

// Options configure a simulated region.
type Options struct {
	// Binary is the elasticity executable: instances run `Binary node ...`.
	Binary string
	// NodeArgs are extra `elasticity node` flags for every node (the local
	// backend's scale model: --storage-scale-mib-per-gb, --ops-per-vcpu ...).
	NodeArgs []string
	// Dir holds the instances' disks, logs and the ssh-agent socket.
	Dir string
	// Region is the region's name (default us-east-1); zones are Region+a..f.
	Region string
	// Listen is the API's address (default 127.0.0.1:0).
	Listen string
	// PrivateNet, PublicNet and LoopbackNet are address prefixes: instance N
	// gets PrivateNet+N, PublicNet+N and, standing in for its own 127.0.0.1,
	// LoopbackNet+N (defaults 127.0.1., 127.0.2., 127.0.3.). An N whose
	// addresses another process listens on is skipped.
	PrivateNet, PublicNet, LoopbackNet string
	// FirstAddress is N of the first instance (default 1).
	FirstAddress int
	// MaxInstances is the account's instance limit (default 64).
	MaxInstances int
	// RefuseSpot answers spot launches with InsufficientInstanceCapacity.
	RefuseSpot bool
	// Versions are the ScyllaDB versions with published images (default
	// 2025.1.0), later ones newer: PublishedImages of each.
	Versions []string
	// Images are served besides the published ones (a debug or candidate
	// build, another account's image); an empty ID gets one.
	Images []Image
	Logf   func(format string, args ...any)

	// Test options (hooks.go); `elasticity aws-sim` sets none of them.
	// RecordRequests keeps every request for Requests.
	RecordRequests bool
	// NoScyllaServer boots instances without scylla-server, whatever their
	// user-data says: sshd only, so that a test of the provisioning API
	// gets running instances with passing status checks at once.
	NoScyllaServer bool
}

// Region is a running simulated region.
type Region struct {
	o     Options
	ln    net.Listener
	srv   *http.Server
	agent *agentServer
	host  hostKeys

	mu         sync.Mutex
	instances  map[string]*instance
	order      []string
	sgs        map[string]*secGroup
	images     []Image
	nextID     int
	nextAddr   int
	refuseSpot bool
	calls      []string
	reqs       int
	// Test hooks (hooks.go).
	requests    []Request
	actionCalls map[string]int
	faults      map[string][]fault
	impair      map[int]string
	closed      bool
	wg          sync.WaitGroup
}

type secGroup struct {
	id, name, desc string
	tags           map[string]string
	rules          []sgRule
}

type sgRule struct {
	proto    string
	from, to int
	cidrs    []*net.IPNet
	groups   []string
}

// Start serves the API until Close.
func Start(ctx context.Context, o Options) (*Region, error) {
	if o.Binary == "" {
		return nil, errors.New("aws-sim: no elasticity binary to run nodes with")
	}
	if o.Dir == "" {
		return nil, errors.New("aws-sim: no directory for the instances")
	}
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&o.Region, "us-east-1")
	def(&o.Listen, "127.0.0.1:0")
	def(&o.PrivateNet, "127.0.1.")
	def(&o.PublicNet, "127.0.2.")
	def(&o.LoopbackNet, "127.0.3.")
	if o.FirstAddress <= 0 {
		o.FirstAddress = 1
	}
	if o.MaxInstances <= 0 {
		o.MaxInstances = 64
	}
	if len(o.Versions) == 0 {
		o.Versions = []string{"2025.1.0"}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("aws-sim: creating %s: %w", o.Dir, err)
	}
	r := &Region{o: o, instances: map[string]*instance{}, sgs: map[string]*secGroup{}, nextAddr: o.FirstAddress - 1, refuseSpot: o.RefuseSpot}
	for i, v := range o.Versions {
		r.images = append(r.images, PublishedImages(i, v)...)
	}
	for i, im := range o.Images {
		if im.ID == "" {
			im.ID = fmt.Sprintf("ami-5d%015x", i+1)
		}
		r.images = append(r.images, im)
	}
	var err error
	if r.host, err = newHostKeys(); err != nil {
		return nil, err
	}
	if r.agent, err = startAgent(filepath.Join(o.Dir, "ssh-agent.sock")); err != nil {
		return nil, err
	}
	r.ln, err = net.Listen("tcp", o.Listen)
	if err != nil {
		r.agent.Close()
		return nil, fmt.Errorf("aws-sim: listening on %s: %w", o.Listen, err)
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(r.ln)
	r.logf("region %s serving the EC2 API at %s", o.Region, r.Endpoint())
	return r, nil
}

func (r *Region) logf(format string, args ...any) { r.o.Logf("aws-sim: "+format, args...) }

// Endpoint is the API's URL.
func (r *Region) Endpoint() string { return "http://" + r.ln.Addr().String() }

// Env is the environment a run needs, as NAME=value pairs: the SDK's
// standard variables, the ssh-agent holding the key the instances accept,
// and the runner's address for the security group.
func (r *Region) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_EC2=" + r.Endpoint(),
		"AWS_REGION=" + r.o.Region,
		"AWS_ACCESS_KEY_ID=" + AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
		// No instance-metadata probe for credentials or region.
		"AWS_EC2_METADATA_DISABLED=true",
		"SSH_AUTH_SOCK=" + r.agent.path,
		"ELASTICITY_AWS_RUNNER_CIDR=" + RunnerAddress + "/32",
	}
}

// SetRefuseSpot makes spot launches fail (or succeed again).
func (r *Region) SetRefuseSpot(refuse bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuseSpot = refuse
}

// Calls are the API actions served so far, in order.
func (r *Region) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// InstanceInfo describes one instance for tests and the CLI's summary.
type InstanceInfo struct {
	ID, Type, Zone, State string
	Image, UserData       string
	Private, Public       string
	Tags                  map[string]string
	SecurityGroups        []string
	DC, Rack, APIAddress  string
	Seeds                 []string
	// ScyllaStarted: scylla-server started at boot, holding its own addresses.
	ScyllaStarted, Spot bool
	// Impaired: the boot failed (the instance status check fails); Reason says why.
	Impaired bool
	Reason   string
	LogPath  string
}

// Instances lists every instance ever launched, in launch order.
func (r *Region) Instances() []InstanceInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []InstanceInfo
	for _, id := range r.order {
		in := r.instances[id]
		tags := map[string]string{}
		for k, v := range in.tags {
			tags[k] = v
		}
		out = append(out, InstanceInfo{ID: in.id, Type: in.typ.Name, Zone: in.az, State: in.state, Image: in.image.ID, UserData: in.userData, Private: in.private, Public: in.public,
			Tags: tags, SecurityGroups: append([]string(nil), in.sgs...), DC: in.conf.dc, Rack: in.conf.rack, APIAddress: in.conf.apiAddress,
			Seeds: append([]string(nil), in.conf.seeds...), ScyllaStarted: in.scyllaStarted, Spot: in.spot, Impaired: in.impaired, Reason: in.reason,
			LogPath: in.logPath()})
	}
	return out
}

// SecurityGroups lists the groups that exist, by id.
func (r *Region) SecurityGroups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id := range r.sgs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Live counts instances not terminated.
func (r *Region) Live() int {
	n := 0
	for _, in := range r.Instances() {
		if in.State != stateTerminated {
			n++
		}
	}
	return n
}

// Close terminates every instance (a region that goes away takes its
// machines with it) and stops serving.
func (r *Region) Close() error {
	r.mu.Lock()
	r.closed = true
	var ins []*instance
	for _, in := range r.instances {
		ins = append(ins, in)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range ins {
		wg.Add(1)
		go func() { defer wg.Done(); in.shutdown(true, stateTerminated) }()
	}
	wg.Wait()
	r.wg.Wait()
	err := r.srv.Close()
	r.agent.Close()
	return err
}

func (r *Region) image(id string) *Image {
	for i := range r.images {
		if r.images[i].ID == id {
			return &r.images[i]
		}
	}
	return nil
}

// openPorts are the instance ports the security groups open to the runner.
func (r *Region) openPorts(in *instance) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	runner := net.ParseIP(RunnerAddress)
	set := map[int]bool{}
	for _, id := range in.sgs {
		g := r.sgs[id]
		if g == nil {
			continue
		}
		for _, rule := range g.rules {
			covers := false
			for _, c := range rule.cidrs {
				covers = covers || c.Contains(runner)
			}
			if !covers {
				continue
			}
			for _, p := range instancePorts {
				if rule.proto == "-1" || (rule.proto == "tcp" || rule.proto == "6") && p >= rule.from && p <= rule.to {
					set[p] = true
				}
			}
		}
	}
	var out []int
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// instancePorts are the ports something on a machine-image instance may
// listen on: sshd, internode, CQL and its shard-aware port, node_exporter,
// Prometheus, REST.
var instancePorts = []int{22, 7000, 9042, 9100, 9180, 10000, 19042}

func isLoopback(a string) bool {
	ip := net.ParseIP(a)
	return a == "localhost" || (ip != nil && ip.IsLoopback())
}
