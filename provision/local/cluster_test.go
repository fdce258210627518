package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/provision"
)

// The cluster package over the local provider: a one-node cluster of fake
// nodes becomes ready, and a grow node that fails its startup fails the
// grow at once with the node's own reason.
func TestClusterOverLocalProvider(t *testing.T) {
	p, dir := newTestProvider(t, "127.0.4.140", func(o *Options) {
		o.FaultArgs = func(n provision.Node) []string {
			if n.Name == "node-2" {
				return []string{"--fail-startup", "injected grow fault"}
			}
			return nil
		}
	})
	c := cluster.New(p, cluster.Options{NodeReadyTimeout: 20 * time.Second, PollInterval: 100 * time.Millisecond, Logf: t.Logf})
	ctx := context.Background()
	if err := c.Create(ctx, provision.ClusterSpec{RunID: "c1", Dir: dir, NodesPerRack: 1, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	if hosts := c.Hosts(); len(hosts) != 1 || hosts[0] != "127.0.4.140" {
		t.Fatalf("hosts = %v", hosts)
	}
	start := time.Now()
	added, err := grow(ctx, c, "grow-1", []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.large"}})
	if err == nil || !strings.Contains(err.Error(), "init - Startup failed: std::runtime_error (injected grow fault)") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failure took %s", d)
	}
	if err := c.Drop(ctx, added[0]); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if exited, _ := p.NodeExited("node-1"); !exited {
		t.Fatal("node-1 still running after Destroy")
	}
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

// freeTestBase is the base of a /24 block where nothing listens on the test
// nodes' ports, searched from a random block so that concurrent tests
// rarely meet.
func freeTestBase(t *testing.T) string {
	t.Helper()
	ports := []int{testPorts.cql, testPorts.rest, testPorts.metrics, 19470}
	base, err := localcluster.FreeBase(fmt.Sprintf("127.%d.%d.2", 100+rand.IntN(100), rand.IntN(256)), 253, ports)
	if err != nil {
		t.Fatalf("finding a free loopback range: %v", err)
	}
	return base
}

// TestClusterOnTakenAddress: a second run on the addresses of a running
// one fails: before starting (naming a free block), or, when its node
// started anyway and died on the taken address, when the node that answers
// turns out to be the other run's. It never reports that node as its own.
func TestClusterOnTakenAddress(t *testing.T) {
	base := freeTestBase(t)
	ctx := context.Background()
	pa, dira := newTestProvider(t, base, nil)
	ca := cluster.New(pa, cluster.Options{NodeReadyTimeout: 20 * time.Second, PollInterval: 100 * time.Millisecond, Logf: t.Logf})
	if err := ca.Create(ctx, provision.ClusterSpec{RunID: "a", Dir: dira, NodesPerRack: 1, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	if err := pa.CheckIdentity(ctx, ca.Nodes()[0].Node); err != nil {
		t.Fatalf("the first run's own node: %v", err)
	}

	pb, dirb := newTestProvider(t, base, nil)
	cb := cluster.New(pb, cluster.Options{NodeReadyTimeout: 20 * time.Second, PollInterval: 100 * time.Millisecond, Logf: t.Logf})
	err := cb.Create(ctx, provision.ClusterSpec{RunID: "b", Dir: dirb, NodesPerRack: 1, InstanceType: "i4i.large"})
	if err == nil || !strings.Contains(err.Error(), base+":") || !strings.Contains(err.Error(), "already in use") || !strings.Contains(err.Error(), "set local.base_address: 127.") {
		t.Fatalf("second run on a taken base: %v", err)
	}
	if len(cb.Hosts()) != 0 {
		t.Fatalf("the second run reports hosts %v", cb.Hosts())
	}

	// Past the check, as when two runs start at once.
	pc, dirc := newTestProvider(t, base, nil)
	pc.skipFreeCheck = true
	cc := cluster.New(pc, cluster.Options{NodeReadyTimeout: 20 * time.Second, PollInterval: 100 * time.Millisecond, Logf: t.Logf})
	err = cc.Create(ctx, provision.ClusterSpec{RunID: "c", Dir: dirc, NodesPerRack: 1, InstanceType: "i4i.large"})
	if err == nil {
		t.Fatalf("a node that could not bind was reported ready (hosts %v): the first run's node answered for it", cc.Hosts())
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("the error does not carry the node's own: %v", err)
	}
	t.Logf("racing start: %v", err)
}
