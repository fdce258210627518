package local_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/provision"
	. "github.com/elasticity-dev/elasticity/provision/local"
	"github.com/elasticity-dev/elasticity/results"
)

// (External test package: monitor imports this package. TestMain in
// fakenode_test.go runs the emulated node for ELASTICITY_LOCAL_EMULATOR_NODE=1.)
//
// Integration with the real emulated node: create 3 nodes, wait ready, grow
// by one, read disk usage and logs, decommission the new node, destroy, and
// leave no process behind.
func TestEmulatorClusterLifecycle(t *testing.T) { testClusterLifecycle(t, "127.0.4.160", false) }

// The same with every node in one host process (local.process: shared).
func TestEmulatorClusterLifecycleShared(t *testing.T) { testClusterLifecycle(t, "127.0.5.160", true) }

func testClusterLifecycle(t *testing.T, base string, shared bool) {
	if testing.Short() {
		t.Skip("starts four emulated nodes")
	}
	p, dir := emulatedProvider(t, base, shared)

	var mu sync.Mutex
	var events []results.Event
	emit := func(e results.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	c := cluster.New(p, cluster.Options{NodeReadyTimeout: 60 * time.Second, PollInterval: 200 * time.Millisecond, Logf: t.Logf, Emit: emit,
		Instances: map[string]cluster.Instance{"i4i.large": {VCPUs: 2}, "i4i.xlarge": {VCPUs: 4}}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	start := time.Now()
	err := c.Create(ctx, provision.ClusterSpec{RunID: "it", Dir: dir, ClusterName: "it", Racks: []string{"rack1", "rack2", "rack3"}, NodesPerRack: 1, InstanceType: "i4i.large"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3 nodes ready in %s", time.Since(start).Round(time.Millisecond))
	for _, n := range c.Nodes() {
		if n.HostID == "" || c.State(n) != cluster.StateNormal {
			t.Fatalf("%s: %+v", n.Name, n)
		}
	}

	writeRows(t, c.Hosts(), 3000, 1024)

	// A node is paused, resumed, killed and started again on its data as a
	// user does it to a node process, in either mode.
	n2 := c.Nodes()[1].Node
	if err := p.PauseNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	rc := scyllarest.New(n2.Address, n2.RESTPort)
	rc.Timeout, rc.Attempts = 300*time.Millisecond, 1
	if _, err := rc.OperationMode(ctx); err == nil {
		t.Fatal("a paused node answered")
	}
	if err := p.ResumeNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	waitNormal(t, ctx, n2)
	size := fileSize(t, n2.LogPath)
	if err := p.KillNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-p.Exits():
		if e.Node.Name != n2.Name || !e.Requested || e.Err == nil || !strings.Contains(e.Err.Error(), "killed") {
			t.Fatalf("exit = %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit reported")
	}
	if exited, _ := p.NodeExited(n2.Name); !exited {
		t.Fatal("NodeExited = false after KillNode")
	}
	if _, err := rc.OperationMode(ctx); err == nil {
		t.Fatal("a killed node answered")
	}
	time.Sleep(time.Second)
	if got := fileSize(t, n2.LogPath); got != size {
		t.Errorf("a killed node's log grew from %d to %d bytes", size, got)
	}
	if err := p.StartNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	waitNormal(t, ctx, n2)
	if err := p.CheckIdentity(ctx, n2); err != nil {
		t.Fatal(err)
	}

	// Logs of a real node classify (no database errors at start).
	wctx, wcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, n := range c.Nodes() {
		r, err := p.Logs(wctx, n.Node)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); monitor.Watch(wctx, n.Name, r, emit) }()
	}

	start = time.Now()
	added, err := grow(ctx, c, "grow-1", []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.xlarge"}})
	if err != nil {
		t.Fatal(err)
	}
	n4 := added[0]
	t.Logf("%s (%s) normal in %s", n4.Name, n4.Address, time.Since(start).Round(time.Millisecond))
	if len(c.Hosts()) != 4 || n4.VCPUs != 4 {
		t.Fatalf("hosts %v, node-4 %+v", c.Hosts(), n4)
	}

	dm := monitor.NewDiskMonitor(c.Nodes, nil, time.Second)
	perNode, total, err := dm.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(perNode) != 4 || total.TotalGB <= 0 || total.UsedGB <= 0 {
		t.Fatalf("disk: %+v cluster %+v", perNode, total)
	}
	for _, s := range dm.Latest() { // node_exporter on 9100 of each node's own address
		if s.Source != results.DiskSourceNodeExporter {
			t.Errorf("%s: disk sample from %q, want node_exporter", s.Node, s.Source)
		}
	}
	t.Logf("disk: cluster %.4f GB of %.3f GB (%.2f%%)", total.UsedGB, total.TotalGB, total.UsagePercent)

	if err := c.Admin(c.Nodes()[0]).SetTabletBalancing(ctx, true); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := c.Quiesce(ctx); err != nil {
		t.Fatal(err)
	}
	load, err := c.Admin(n4).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if load <= 0 {
		t.Errorf("node-4 holds no data after quiesce_topology")
	}
	perNode, total, _ = dm.Snapshot(ctx)
	t.Logf("balanced in %s: node-4 load %.0f bytes; disk %+v", time.Since(start).Round(time.Millisecond), load, perNode)
	start = time.Now()
	if err := decommission(ctx, c, n4); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s decommissioned in %s", n4.Name, time.Since(start).Round(time.Millisecond))
	if len(c.Nodes()) != 3 {
		t.Fatalf("nodes after decommission: %d", len(c.Nodes()))
	}
	if _, err := os.Stat(p.NodeDir(n4.Name)); !os.IsNotExist(err) {
		t.Fatal("node-4's data survived")
	}

	var pids []int
	for _, n := range c.Nodes() {
		pid, _ := strconv.Atoi(n.ID)
		pids = append(pids, pid)
	}
	if err := c.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("pid %d alive after Destroy", pid)
		}
	}
	wcancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	states := map[string][]string{}
	for _, e := range events {
		switch e.Type {
		case results.EventNodeState:
			states[e.Node] = append(states[e.Node], e.State)
		case results.EventDBError:
			t.Errorf("database error from %s: %s", e.Node, e.Line)
		}
	}
	if got := states["node-4"]; len(got) != 6 || got[5] != cluster.StateRemoved {
		t.Fatalf("node-4 states %v", got)
	}
}

// waitNormal waits until n's REST API says NORMAL.
func waitNormal(t *testing.T, ctx context.Context, n provision.Node) {
	t.Helper()
	rc := scyllarest.New(n.Address, n.RESTPort)
	rc.Timeout, rc.Attempts = time.Second, 1
	deadline := time.Now().Add(60 * time.Second)
	for {
		mode, err := rc.OperationMode(ctx)
		if err == nil && mode == "NORMAL" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not NORMAL: %q %v", n.Name, mode, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// writeRows writes n rows of size bytes at QUORUM into ks.t (RF 3, tablets).
func writeRows(t *testing.T, hosts []string, n, size int) {
	t.Helper()
	cl := gocql.NewCluster(hosts...)
	cl.Timeout, cl.ConnectTimeout, cl.NumConns = 10*time.Second, 5*time.Second, 1
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("connecting to %v: %v", hosts, err)
	}
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND tablets = {'enabled': true, 'initial': 8}`,
		`CREATE TABLE IF NOT EXISTS ks.t (k bigint PRIMARY KEY, v blob)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	v := make([]byte, size)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < n; k += 8 {
				if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(k), v).Consistency(gocql.Quorum).Exec(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writing: %v", err)
	}
}

// Deaths on real emulated nodes: a kill through the provider is expected, a
// SIGKILL from outside is not (process exit), the others see the dead node
// down (REST), and RemoveDead takes it out of the ring.
func TestEmulatorDeathsAndRemoveDead(t *testing.T) { testDeathsAndRemoveDead(t, "127.0.4.170", false) }

// The same with every node in one host process: the death from outside is
// a kill of one node through the host's control socket.
func TestEmulatorDeathsAndRemoveDeadShared(t *testing.T) {
	testDeathsAndRemoveDead(t, "127.0.5.170", true)
}

func testDeathsAndRemoveDead(t *testing.T, base string, shared bool) {
	if testing.Short() {
		t.Skip("starts four emulated nodes")
	}
	p, dir := emulatedProvider(t, base, shared)
	c := cluster.New(p, cluster.Options{NodeReadyTimeout: 60 * time.Second, PollInterval: 200 * time.Millisecond, Logf: t.Logf})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Create(ctx, provision.ClusterSpec{RunID: "deaths", Dir: dir, Racks: []string{"rack1", "rack2"}, NodesPerRack: 2, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	deaths := monitor.NewDeathMonitor(nil, t.Logf)
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	go deaths.FollowExits(mctx, c, p.Exits())

	nodes := c.Nodes()
	n3, n4 := nodes[2], nodes[3]
	if err := p.KillNode(ctx, n4.Node); err != nil {
		t.Fatal(err)
	}
	c.SetState(n4, cluster.StateDown)
	if shared {
		killThroughSocket(t, p.HostSocket(), n3.Name)
	} else {
		pid3, _ := strconv.Atoi(n3.ID)
		syscall.Kill(pid3, syscall.SIGKILL)
	}
	select {
	case err := <-deaths.Unexpected():
		if !strings.Contains(err.Error(), "node-3") {
			t.Fatalf("unexpected death of the wrong node: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the SIGKILL of node-3 was not reported")
	}
	c.SetState(n3, cluster.StateDown)

	// The survivors see both down.
	deadline := time.Now().Add(30 * time.Second)
	for {
		down, err := c.Admin(nodes[0]).Down(ctx)
		if err == nil && slices.Contains(down, n3.Address) && slices.Contains(down, n4.Address) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node-1 does not see node-3 and node-4 down: %v %v", down, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, n := range []*cluster.Node{n3, n4} {
		if err := c.RemoveDead(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := c.Admin(nodes[1]).HostIDs(ctx)
	if err != nil || len(ids) != 2 || len(c.Nodes()) != 2 {
		t.Fatalf("host ids after removal: %v %v; members %d", ids, err, len(c.Nodes()))
	}
	select {
	case err := <-deaths.Unexpected():
		t.Fatalf("death monitor reported another death: %v", err) // node-4's kill was the provider's
	default:
	}
}

// emulatedProvider is a local provider whose nodes are this test binary
// running the emulated node (TestMain), from base upwards; it is
// destroyed and its node logs' tails shown (of a failed test) at the end.
func emulatedProvider(t *testing.T, base string, shared bool) (*Provider, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Cleanup(func() { logTails(t, dir) })
	p := New(Options{Binary: exe, Env: []string{"ELASTICITY_LOCAL_EMULATOR_NODE=1"}, BaseAddress: base, StopTimeout: 10 * time.Second, Logf: t.Logf, SharedProcess: shared})
	t.Cleanup(func() { p.Destroy(context.Background()) })
	return p, dir
}

// killThroughSocket kills one node of a host process as someone else
// would: a request to its control socket (curl --unix-socket).
func killThroughSocket(t *testing.T, socket, name string) {
	t.Helper()
	cl := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	resp, err := cl.Post("http://host/nodes/"+name+"/kill", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("killing %s through %s: %s", name, socket, resp.Status)
	}
}

// logTails shows the end of every node log of a failed test.
func logTails(t *testing.T, dir string) {
	if !t.Failed() {
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Logf("--- %s (last lines)\n%s", filepath.Base(f), strings.Join(lines[max(0, len(lines)-25):], "\n"))
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
