package acceptance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/gocql/gocql"
)

// The test binary doubles as the node binary: with nodeEnv set it runs
// emulator.Main instead of the tests.
const nodeEnv = "ELASTICITY_ACCEPTANCE_TEST_NODE"

func TestMain(m *testing.M) {
	if os.Getenv(nodeEnv) == "1" {
		ctx, stop := signalContext()
		code := emulator.Main(ctx, os.Args[1:], os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// nodeSpec is one node to start.
type nodeSpec struct{ Type, Rack string }

// clusterOpts are the emulator's scale factors.
type clusterOpts struct {
	StorageScaleMiBPerGB float64
	OpsPerVCPU           float64
	StreamMiBPerVCPU     float64
}

func (o clusterOpts) args() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []string{"--storage-scale-mib-per-gb", f(o.StorageScaleMiBPerGB), "--ops-per-vcpu", f(o.OpsPerVCPU),
		"--stream-mib-per-vcpu", f(o.StreamMiBPerVCPU), "--blocked-reactor-notify-ms", "25"}
}

// Each cluster of the test binary gets its own block of ten addresses in
// 127.0.8.0/24, so that a node still closing cannot collide with the next.
var nextBlock atomic.Int32

// tcluster adapts emulator/localcluster to the tests: localcluster starts
// the initial (uniform) nodes; nodes of another instance type are spawned
// here with the same flags, because localcluster sizes every node alike.
type tcluster struct {
	t     testing.TB
	opts  clusterOpts
	lc    *localcluster.Cluster
	dir   string
	base  string
	name  string
	mu    sync.Mutex
	Nodes []*tnode
	extra []*exec.Cmd
	done  []chan struct{}
}

const clusterName = "acceptance"

func newCluster(t testing.TB, opts clusterOpts, specs ...nodeSpec) *tcluster {
	t.Helper()
	block := int(nextBlock.Add(1))
	if block > 24 {
		t.Fatal("out of 127.0.8.x address blocks")
	}
	base := fmt.Sprintf("127.0.8.%d", 10*block)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	it, err := provision.LookupInstanceType(specs[0].Type)
	if err != nil {
		t.Fatal(err)
	}
	racks := map[string]bool{}
	for i, s := range specs {
		if s.Type != specs[0].Type {
			t.Fatalf("initial nodes must share one instance type (%s, %s)", specs[0].Type, s.Type)
		}
		if s.Rack != fmt.Sprintf("rack%d", i%3+1) {
			t.Fatalf("initial nodes go round-robin over rack1..rack3; node %d wants %s", i, s.Rack)
		}
		racks[s.Rack] = true
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lc, err := localcluster.Start(ctx, localcluster.Options{
		Binary: exe, Env: []string{nodeEnv + "=1"}, Nodes: len(specs), Racks: len(racks),
		InstanceType: it.Name, VCPUs: it.VCPUs, MemoryGB: it.MemoryGB, DiskGB: it.StorageGB,
		Dir: dir, BaseAddress: base, ClusterName: clusterName, DC: "dc1",
		ExtraNodeArgs: opts.args(), StartTimeout: 45 * time.Second,
	})
	if err != nil {
		t.Fatalf("starting %d × %s: %v", len(specs), it.Name, err)
	}
	c := &tcluster{t: t, opts: opts, lc: lc, dir: dir, base: base}
	for i, n := range lc.Nodes() {
		c.Nodes = append(c.Nodes, newTnode(n.Addr, specs[i].Rack, it.Name, n.LogPath))
	}
	t.Cleanup(c.close)
	return c
}

func newTnode(addr, rack, typ, logPath string) *tnode {
	rest := scyllarest.New(addr, localcluster.RESTPort)
	return &tnode{Addr: addr, Rack: rack, Type: typ, LogPath: logPath, REST: rest,
		MetricsURL:  fmt.Sprintf("http://%s:%d/metrics", addr, localcluster.MetricsPort),
		ExporterURL: fmt.Sprintf("http://%s:%d/metrics", addr, localcluster.NodeExporterPort)}
}

func (c *tcluster) close() {
	// Stalls seen over the test (watchdog and long batches), for the record.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	var stalls []string
	for _, n := range c.Nodes {
		if v, err := n.metric(ctx, "scylla_stall_detector_reported"); err == nil {
			stalls = append(stalls, fmt.Sprintf("%s=%v", n.Addr, v))
		}
		if b, err := os.ReadFile(n.LogPath); err == nil {
			if k := strings.Count(string(b), "No space left on device"); k > 0 {
				u, _ := n.diskUsage(ctx)
				c.t.Logf("%s (%s): %d log lines say No space left on device; disk usage now %.1f%%", n.Addr, n.Type, k, 100*u)
			}
		}
	}
	cancel()
	c.t.Logf("reactor stalls per node: %v", stalls)
	c.mu.Lock()
	extra, done := c.extra, c.done
	c.mu.Unlock()
	var wg sync.WaitGroup
	for i, cmd := range extra {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := localcluster.StopPid(cmd.Process.Pid, 10*time.Second, done[i]); err != nil {
				c.t.Errorf("stopping node: %v", err)
			}
		}()
	}
	if err := c.lc.Close(); err != nil {
		c.t.Errorf("closing cluster: %v", err)
	}
	wg.Wait()
	if c.t.Failed() {
		for _, n := range c.Nodes {
			if b, err := os.ReadFile(n.LogPath); err == nil {
				c.t.Logf("log tail of %s:\n%s", n.Addr, tail(string(b), 12))
			}
		}
	}
}

func tail(s string, n int) string {
	end := len(s)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' && i < len(s)-1 {
			n--
			if n == 0 {
				return s[i+1 : end]
			}
		}
	}
	return s[:end]
}

// add starts nodes in parallel and waits until they are NORMAL.
func (c *tcluster) add(ctx context.Context, specs ...nodeSpec) ([]*tnode, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var nodes []*tnode
	var dones []chan struct{}
	for _, s := range specs {
		it, err := provision.LookupInstanceType(s.Type)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		i := len(c.Nodes)
		c.mu.Unlock()
		addr, err := localcluster.Address(c.base, i)
		if err != nil {
			return nil, err
		}
		dataDir := filepath.Join(c.dir, fmt.Sprintf("node%d", i+1))
		logPath := filepath.Join(c.dir, fmt.Sprintf("node%d.log", i+1))
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		args := []string{"--listen-address", addr, "--data-dir", dataDir, "--cluster-name", clusterName,
			"--dc", "dc1", "--rack", s.Rack, "--instance-type", it.Name,
			"--vcpus", strconv.Itoa(it.VCPUs), "--memory-gb", f(it.MemoryGB), "--disk-gb", f(it.StorageGB),
			"--seeds", c.Nodes[0].Addr, "--log-file", logPath,
			"--cql-port", strconv.Itoa(localcluster.CQLPort), "--rest-port", strconv.Itoa(localcluster.RESTPort),
			"--metrics-port", strconv.Itoa(localcluster.MetricsPort), "--node-exporter-port", strconv.Itoa(localcluster.NodeExporterPort),
			"--internode-port", strconv.Itoa(localcluster.InternodePort)}
		args = append(args, c.opts.args()...)
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), nodeEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := os.Create(logPath + ".out")
		if err != nil {
			return nil, fmt.Errorf("creating output of node %s: %w", addr, err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			out.Close()
			return nil, fmt.Errorf("starting node %s: %w", addr, err)
		}
		out.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		n := newTnode(addr, s.Rack, it.Name, logPath)
		c.mu.Lock()
		c.Nodes = append(c.Nodes, n)
		c.extra = append(c.extra, cmd)
		c.done = append(c.done, done)
		c.mu.Unlock()
		nodes = append(nodes, n)
		dones = append(dones, done)
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := localcluster.WaitNormal(ctx, n.Addr, localcluster.RESTPort, func() bool {
				select {
				case <-dones[i]:
					return true
				default:
					return false
				}
			})
			if err != nil {
				b, _ := os.ReadFile(n.LogPath)
				errs[i] = fmt.Errorf("node %s (%s): %w; log tail:\n%s", n.Addr, n.Type, err, tail(string(b), 8))
			}
		}()
	}
	wg.Wait()
	return nodes, errors.Join(errs...)
}

func (c *tcluster) session(t testing.TB) *gocql.Session {
	t.Helper()
	var hosts []string
	for _, n := range c.Nodes {
		hosts = append(hosts, n.Addr)
	}
	cl := gocql.NewCluster(hosts...)
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cl.Timeout = 10 * time.Second
	cl.ConnectTimeout = 5 * time.Second
	cl.NumConns = 1
	cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("connecting to %v: %v", hosts, err)
	}
	t.Cleanup(s.Close)
	return s
}

func vcpusOf(instanceType string) int {
	it, err := provision.LookupInstanceType(instanceType)
	if err != nil {
		return 1
	}
	return it.VCPUs
}

// predictedStreamTime is how long moving bytes to the joining node takes at
// the configured bandwidth: a migration runs at the slower end's bandwidth
// (stream MiB/s per vCPU × vCPUs); the senders are the initial nodes.
func predictedStreamTime(c *tcluster, to *tnode, bytes float64) time.Duration {
	vcpus := vcpusOf(to.Type)
	for _, n := range c.Nodes {
		if n != to {
			vcpus = min(vcpus, vcpusOf(n.Type))
		}
	}
	bw := c.opts.StreamMiBPerVCPU * (1 << 20) * float64(vcpus)
	return time.Duration(bytes / bw * float64(time.Second))
}
