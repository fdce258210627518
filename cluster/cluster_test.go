package cluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/cluster/fakescylla"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

var ports = fakescylla.Ports{REST: 19100, Metrics: 19180, CQL: 19042}

func newFake(t *testing.T, base int) *fakescylla.Provider {
	p := fakescylla.NewProvider(fmt.Sprintf("127.0.4.%d", base+1), ports, t.TempDir())
	t.Cleanup(p.FC.Close)
	return p
}

type recorder struct {
	mu     sync.Mutex
	events []results.Event
}

func (r *recorder) emit(e results.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) states(node string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type == results.EventNodeState && e.Node == node {
			out = append(out, e.State)
		}
	}
	return out
}

func newCluster(t *testing.T, p provision.Provider, rec *recorder, timeout time.Duration) *cluster.Cluster {
	return cluster.New(p, cluster.Options{NodeReadyTimeout: timeout, PollInterval: 100 * time.Millisecond, Logf: t.Logf, Emit: rec.emit,
		Instances: map[string]cluster.Instance{"i4i.large": {VCPUs: 2, DiskBytes: 468e9}, "i4i.4xlarge": {VCPUs: 16, DiskBytes: 3750e9}}})
}

// grow adds nodes and waits until they are normal, as the nemesis does.
func grow(ctx context.Context, c *cluster.Cluster, step string, specs []provision.NodeSpec) ([]*cluster.Node, error) {
	added, err := c.Add(ctx, step, specs)
	if err != nil {
		return added, err
	}
	return added, c.WaitJoined(ctx, added)
}

// decommission makes n leave and releases it, as a shrink step does.
func decommission(ctx context.Context, c *cluster.Cluster, n *cluster.Node) error {
	if err := c.Leave(ctx, n); err != nil {
		return err
	}
	return c.Drop(ctx, n)
}

var spec3 = provision.ClusterSpec{RunID: "t", Racks: []string{"rack1", "rack2", "rack3"}, NodesPerRack: 1, InstanceType: "i4i.large"}

func TestCreateGrowDecommission(t *testing.T) {
	p := newFake(t, 10)
	p.JoinAfter = 700 * time.Millisecond
	rec := &recorder{}
	c := newCluster(t, p, rec, 10*time.Second)
	ctx := context.Background()
	if err := c.Create(ctx, spec3); err != nil {
		t.Fatal(err)
	}
	nodes := c.Nodes()
	if len(nodes) != 3 {
		t.Fatalf("nodes = %d", len(nodes))
	}
	for _, n := range nodes {
		if n.State != cluster.StateNormal || n.HostID == "" || n.VCPUs != 2 || n.DiskBytes != 468e9 {
			t.Fatalf("%s: %+v", n.Name, n)
		}
	}
	if got := c.Hosts(); !slices.Equal(got, []string{"127.0.4.11", "127.0.4.12", "127.0.4.13"}) {
		t.Fatalf("Hosts = %v", got)
	}

	start := time.Now()
	added, err := grow(ctx, c, "grow-1", []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.4xlarge"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Fatalf("Grow returned after %s, before the node stopped joining", d)
	}
	n4 := added[0]
	if n4.Name != "node-4" || n4.AddedBy != "grow-1" || n4.VCPUs != 16 || c.State(n4) != cluster.StateNormal {
		t.Fatalf("added %+v", n4)
	}
	if got := rec.states("node-4"); !slices.Equal(got, []string{"started", "joining", "normal"}) {
		t.Fatalf("node-4 states = %v", got)
	}

	p.FC.Update(n4.Address, func(f *fakescylla.Node) { f.DecommissionTime = 300 * time.Millisecond })
	if err := decommission(ctx, c, n4); err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes()) != 3 || slices.Contains(p.FC.Members(), n4.Address) || !slices.Equal(p.RemovedNodes(), []string{"node-4"}) {
		t.Fatalf("after decommission: nodes %d, members %v, removed %v", len(c.Nodes()), p.FC.Members(), p.RemovedNodes())
	}
	if got := rec.states("node-4"); !slices.Equal(got, []string{"started", "joining", "normal", "leaving", "left", "removed"}) {
		t.Fatalf("node-4 states = %v", got)
	}

	// Quiesce goes around a node that does not answer.
	n1 := c.Nodes()[0]
	p.FC.Stop(n1.Address)
	if err := c.Quiesce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveDead(t *testing.T) {
	p := newFake(t, 20)
	rec := &recorder{}
	c := newCluster(t, p, rec, 5*time.Second)
	ctx := context.Background()
	if err := c.Create(ctx, spec3); err != nil {
		t.Fatal(err)
	}
	n3 := c.Nodes()[2]
	if err := p.KillNode(ctx, n3.Node); err != nil {
		t.Fatal(err)
	}
	c.SetState(n3, cluster.StateDown)
	if err := c.RemoveDead(ctx, n3); err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes()) != 2 || slices.Contains(p.FC.Members(), n3.Address) {
		t.Fatalf("after remove: %d nodes, members %v", len(c.Nodes()), p.FC.Members())
	}
	found := false
	for _, call := range p.FC.Calls() {
		found = found || strings.HasPrefix(call, "POST /storage_service/remove_node?host_id="+n3.HostID)
	}
	if !found {
		t.Fatalf("no remove_node call with host id %s: %v", n3.HostID, p.FC.Calls())
	}
}

func TestWaitReadyTimeoutSaysWhy(t *testing.T) {
	p := newFake(t, 30)
	p.InitNode = func(name string, n *fakescylla.Node) {
		if name == "node-2" {
			n.NativeTransport = false
		}
	}
	c := newCluster(t, p, &recorder{}, 1500*time.Millisecond)
	start := time.Now()
	err := c.Create(context.Background(), spec3)
	if err == nil || !strings.Contains(err.Error(), "node-2") || !strings.Contains(err.Error(), "native transport not running") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestGrowFailsFastWhenTheProcessExits(t *testing.T) {
	p := newFake(t, 40)
	p.JoinAfter = time.Hour
	rec := &recorder{}
	c := newCluster(t, p, rec, 30*time.Second)
	ctx := context.Background()
	if err := c.Create(ctx, spec3); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p.Dir, "node-4.log"), []byte("INFO  2026-11-30 12:00:00,123 [shard 0:main] init - starting\nERROR 2026-11-30 12:00:01,000 [shard 0:main] init - Startup failed: injected fault\n"), 0o644)
	p.SetExited("node-4")
	start := time.Now()
	added, err := grow(ctx, c, "grow-1", []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.large"}})
	if err == nil || !strings.Contains(err.Error(), "Startup failed: injected fault") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("did not fail fast")
	}
	if len(added) != 1 || c.State(added[0]) != cluster.StateDown {
		t.Fatalf("added = %v", added)
	}
	if err := c.Drop(ctx, added[0]); err != nil || len(c.Nodes()) != 3 {
		t.Fatalf("Drop: %v, %d nodes", err, len(c.Nodes()))
	}
}

// The runner reaches nodes at one address while they gossip another (an EC2
// instance's public and private IPs): every view is matched by the address
// the node reports for itself, and the DC is the one its snitch names.
func TestIdentityWhenBroadcastDiffersFromReachAddress(t *testing.T) {
	p := newFake(t, 50)
	p.BroadcastBase = netip.MustParseAddr("10.0.0.1") // never reachable from here: nothing may dial it
	p.DC = "us-east"
	p.JoinAfter = 300 * time.Millisecond
	rec := &recorder{}
	c := newCluster(t, p, rec, 10*time.Second)
	ctx := context.Background()
	if _, err := c.DataCenter(); err == nil {
		t.Fatal("DataCenter before any node answered: no error")
	}
	if err := c.Create(ctx, spec3); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Nodes() {
		id := c.Identity(n)
		want := fmt.Sprintf("10.0.0.%d", i+1)
		if id.BroadcastAddress != want || n.Address != fmt.Sprintf("127.0.4.%d", 51+i) || id.HostID == "" || id.DataCenter != "us-east" || id.SnitchRack != n.Rack {
			t.Fatalf("%s: reach %s, identity %+v; want broadcast %s", n.Name, n.Address, id, want)
		}
		if got := c.ByBroadcast(want); got != n {
			t.Fatalf("ByBroadcast(%s) = %v", want, got)
		}
	}
	if dc, err := c.DataCenter(); err != nil || dc != "us-east" {
		t.Fatalf("DataCenter = %q, %v", dc, err)
	}
	if got := c.Hosts(); !slices.Equal(got, []string{"127.0.4.51", "127.0.4.52", "127.0.4.53"}) {
		t.Fatalf("Hosts (CQL contact points) = %v, want the reach addresses", got)
	}
	// A grow waits until the new node is live in every view by its broadcast address.
	added, err := grow(ctx, c, "grow-1", []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.large"}})
	if err != nil {
		t.Fatal(err)
	}
	n4 := added[0]
	if id := c.Identity(n4); id.BroadcastAddress != "10.0.0.4" {
		t.Fatalf("node-4 identity %+v", id)
	}
	// Decommission waits until the others' host id maps and leaving lists
	// no longer hold it: they hold 10.0.0.4, never 127.0.4.54.
	p.FC.Update(n4.Address, func(f *fakescylla.Node) { f.DecommissionTime = 300 * time.Millisecond })
	start := time.Now()
	if err := decommission(ctx, c, n4); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("Decommission returned after %s, before the node left the others' views", d)
	}
	// A dead node is removed by the host id it reported.
	n3 := c.Nodes()[2]
	if err := p.KillNode(ctx, n3.Node); err != nil {
		t.Fatal(err)
	}
	c.SetState(n3, cluster.StateDown)
	if err := c.RemoveDead(ctx, n3); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.FC.Members(), n3.Address) {
		t.Fatalf("node-3 still a member: %v", p.FC.Members())
	}
}

// A node that does not tell its host id is not ready: there is nothing to
// find its own address by, nor to match the others' views with.
func TestNotReadyUntilTheNodeTellsItsIdentity(t *testing.T) {
	p := newFake(t, 60)
	p.InitNode = func(name string, n *fakescylla.Node) {
		if name == "node-2" {
			n.HostID = "" // hostid/local answers "", which no map entry carries
		}
	}
	c := newCluster(t, p, &recorder{}, 1500*time.Millisecond)
	err := c.Create(context.Background(), spec3)
	if err == nil || !strings.Contains(err.Error(), "node-2") || !strings.Contains(err.Error(), "its host id is empty") {
		t.Fatalf("err = %v", err)
	}
}
