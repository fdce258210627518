package local

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
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
