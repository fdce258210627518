package run

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/fakescylla"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// TestLiveClusterGrowShrink drives the nemesis through the real cluster
// package against fake ScyllaDB nodes (REST, metrics, CQL port) that gossip
// other addresses than the ones the runner reaches them at and name their
// DC as Ec2Snitch does, whatever the spec said.
func TestLiveClusterGrowShrink(t *testing.T) {
	p := fakescylla.NewProvider("127.0.5.200", fakescylla.Ports{REST: 19310, Metrics: 19380, CQL: 19342}, t.TempDir())
	p.BroadcastBase = netip.MustParseAddr("10.2.0.1")
	p.DC = "us-east"
	var mu sync.Mutex
	var evs []results.Event
	var failed error
	env := &Env{
		Plan: &plan.Plan{},
		Emit: func(e results.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() },
		Logf: func(string, ...any) {},
		Fail: func(err error) { mu.Lock(); failed = err; mu.Unlock() },
	}
	spec := provision.ClusterSpec{RunID: "t", DC: "dc1", Racks: []string{"r1", "r2", "r3"}, NodesPerRack: 1, InstanceType: "i4i.large"}
	lc := newLiveCluster(p, spec, env, 20*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer lc.Destroy(context.Background())
	if err := lc.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(lc.Nodes()); got != 3 {
		t.Fatalf("%d nodes after create", got)
	}
	if dc, err := lc.DataCenter(); err != nil || dc != "us-east" {
		t.Fatalf("DataCenter = %q, %v; want the DC the nodes report", dc, err)
	}
	nenv := &nemesis.Env{Cluster: lc, Emit: env.Emit, Logf: env.Logf, Cycles: &nemesis.Cycles{}, Timeouts: nemesis.Policy{Base: 10 * time.Second}}
	if err := nemesis.Run(ctx, nenv, nemesis.Step{Name: "grow", Kind: results.KindGrow, Mode: results.ModeParallel, InstanceType: "i4i.xlarge", CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	nodes := lc.Nodes()
	if len(nodes) != 6 || nodes[5].Seq != 6 || nodes[5].InstanceType != "i4i.xlarge" {
		t.Fatalf("after grow: %+v", nodes)
	}
	if err := nemesis.Run(ctx, nenv, nemesis.Step{Name: "shrink", Kind: results.KindShrink, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if got := len(lc.Nodes()); got != 5 {
		t.Fatalf("%d nodes after shrink", got)
	}
	if got := strings.Join(p.RemovedNodes(), ","); got != "node-6" {
		t.Fatalf("removed %s, want the newest", got)
	}
	if len(lc.Info()) != 6 {
		t.Fatalf("info %+v", lc.Info())
	}
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		t.Fatalf("run failed: %v", failed)
	}
	var normal int
	for _, e := range evs {
		if e.Type == results.EventNodeState && e.State == "normal" {
			normal++
		}
	}
	if normal != 6 {
		t.Fatalf("normal node_state events %d, want 6", normal)
	}
}
