package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// nemesisCluster adapts the cluster package to the nemesis, as the phase
// runner's liveCluster does.
type nemesisCluster struct{ c *cluster.Cluster }

func (n nemesisCluster) Nodes() []*cluster.Node { return n.c.Nodes() }
func (n nemesisCluster) AddNodes(ctx context.Context, step string, specs []provision.NodeSpec) ([]*cluster.Node, error) {
	return n.c.Add(ctx, step, specs)
}
func (n nemesisCluster) WaitNormal(ctx context.Context, nodes []*cluster.Node) error {
	return n.c.WaitJoined(ctx, nodes)
}
func (n nemesisCluster) Decommission(ctx context.Context, nd *cluster.Node) error {
	return n.c.Leave(ctx, nd)
}
func (n nemesisCluster) Remove(ctx context.Context, nd *cluster.Node) error { return n.c.Drop(ctx, nd) }
func (n nemesisCluster) Quiesce(ctx context.Context) error                  { return n.c.Quiesce(ctx) }
func (n nemesisCluster) Load(ctx context.Context, nd *cluster.Node) (nemesis.Load, error) {
	b, err := n.c.Admin(nd).Load(ctx)
	return nemesis.Load{Bytes: b}, err
}
func (n nemesisCluster) ExpectDeath(*cluster.Node) {}

// measuringCleaner runs the real keyspace_cleanup and records the live disk
// space of each node's vn.t before and after it (REST load also counts the
// commit log and files not yet deleted).
type measuringCleaner struct {
	c             *cluster.Cluster
	mu            sync.Mutex
	before, after map[string]float64
}

func (m *measuringCleaner) Cleanup(ctx context.Context, n *cluster.Node) error {
	a := m.c.Admin(n)
	if err := a.Flush(ctx); err != nil {
		return err
	}
	b, err := liveDiskSpace(ctx, n, "vn:t")
	if err != nil {
		return err
	}
	if err := a.KeyspaceCleanup(ctx, "vn"); err != nil {
		return err
	}
	l, err := liveDiskSpace(ctx, n, "vn:t")
	m.mu.Lock()
	m.before[n.Name], m.after[n.Name] = b, l
	m.mu.Unlock()
	return err
}

// A grow on a vnodes keyspace through the nemesis against real emulated
// nodes: the old node, which kept the ranges the new one took over, is
// cleaned up (SCT's nodetool_cleanup_on_all_nodes_parallel) and its load
// falls; the new node is not cleaned; every row is still read back; the
// cleanup is recorded and becomes the "Cleanup" duration.
func TestEmulatorGrowCleansUpOldNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two emulated nodes")
	}
	p, dir := emulatedProvider(t, "127.0.4.180", false)
	c := cluster.New(p, cluster.Options{NodeReadyTimeout: 60 * time.Second, PollInterval: 200 * time.Millisecond, Logf: t.Logf})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Create(ctx, provision.ClusterSpec{RunID: "cl", Dir: dir, ClusterName: "cl", Racks: []string{"rack1"}, NodesPerRack: 1, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	const rows = 2000
	s := session(t, c.Hosts())
	for _, q := range []string{
		`CREATE KEYSPACE vn WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1} AND tablets = {'enabled': false}`,
		`CREATE TABLE vn.t (k bigint PRIMARY KEY, v blob)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	v := make([]byte, 1024)
	for k := 0; k < rows; k++ {
		if err := s.Query(`INSERT INTO vn.t (k, v) VALUES (?, ?)`, int64(k), v).Exec(); err != nil {
			t.Fatalf("writing: %v", err)
		}
	}
	s.Close()

	var mu sync.Mutex
	var evs []results.Event
	mc := &measuringCleaner{c: c, before: map[string]float64{}, after: map[string]float64{}}
	env := &nemesis.Env{Cluster: nemesisCluster{c}, Cycles: &nemesis.Cycles{}, Logf: t.Logf,
		Emit:     func(e results.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() },
		Timeouts: nemesis.Policy{Base: 90 * time.Second}, Cleanup: nemesis.Cleanup{Cleaner: mc}}
	if err := nemesis.Run(ctx, env, nemesis.Step{Name: "grow", Kind: results.KindGrow, CountPerRack: 1, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	if len(mc.before) != 1 || mc.before["node-1"] == 0 {
		t.Fatalf("cleaned %v, want only the old node-1", mc.before)
	}
	t.Logf("node-1's vn.t live disk space before cleanup %.0f bytes, after %.0f", mc.before["node-1"], mc.after["node-1"])
	if mc.after["node-1"] > 0.8*mc.before["node-1"] {
		t.Errorf("node-1's vn.t live disk space fell from %.0f to only %.0f after cleanup", mc.before["node-1"], mc.after["node-1"])
	}
	if got := countRows(t, c.Hosts()); got != rows {
		t.Errorf("%d rows read back after the cleanup, want %d", got, rows)
	}

	mu.Lock()
	defer mu.Unlock()
	var start, end bool
	for _, e := range evs {
		switch e.Type {
		case results.EventCleanupStart:
			start = len(e.Nodes) == 1 && e.Nodes[0] == "node-1" && e.Step == "grow"
		case results.EventCleanupEnd:
			end = start
		}
	}
	if !start || !end {
		t.Fatalf("no cleanup_start/cleanup_end of node-1 in %+v", evs)
	}
}

func session(t *testing.T, hosts []string) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(hosts...)
	cl.Timeout, cl.ConnectTimeout, cl.NumConns = 10*time.Second, 5*time.Second, 1
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("connecting to %v: %v", hosts, err)
	}
	return s
}

func countRows(t *testing.T, hosts []string) int {
	t.Helper()
	s := session(t, hosts)
	defer s.Close()
	iter := s.Query(`SELECT k FROM vn.t`).PageSize(500).Iter()
	n := 0
	for var_ := int64(0); iter.Scan(&var_); {
		n++
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("reading back: %v", err)
	}
	return n
}

// liveDiskSpace is a table's live sstable bytes on the node (GET
// /column_family/metrics/live_disk_space_used/{ks:table}, api/column_family.cc).
func liveDiskSpace(ctx context.Context, n *cluster.Node, table string) (float64, error) {
	u := fmt.Sprintf("http://%s/column_family/metrics/live_disk_space_used/%s", net.JoinHostPort(n.Address, strconv.Itoa(n.RESTPort)), table)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var v float64
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}
