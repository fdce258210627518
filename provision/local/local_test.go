package local

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
	"github.com/elasticity-dev/elasticity/provision"
)

func TestGuard(t *testing.T) {
	root := t.TempDir()
	inside := filepath.Join(root, "nodes", "node-1")
	os.MkdirAll(inside, 0o755)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(root, "link"))
	for _, p := range []string{root, root + "/", filepath.Join(root, ".."), filepath.Join(root, "nodes", "..", ".."), outside, "/", "", filepath.Join(root, "link"), filepath.Join(root, "link", "keep")} {
		if err := removeWithin(root, p); err == nil {
			t.Errorf("removeWithin(%q) accepted", p)
		}
	}
	if err := removeWithin("/", "/tmp/x"); err == nil {
		t.Error("a run directory of / must guard nothing")
	}
	if err := removeWithin("", "/tmp/x"); err == nil {
		t.Error("an empty run directory must guard nothing")
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Fatal("a file outside the run directory was deleted")
	}
	if err := removeWithin(root, inside); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inside); !os.IsNotExist(err) {
		t.Fatal("inside dir not deleted")
	}
}

var testPorts = struct{ cql, rest, metrics int }{19442, 19400, 19480}

func newTestProvider(t *testing.T, base string, mod func(*Options)) (*Provider, string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: exe, BaseAddress: base, CQLPort: testPorts.cql, RESTPort: testPorts.rest, MetricsPort: testPorts.metrics,
		InternodePort: 19470, Env: []string{fakeNodeEnv + "=1"}, StopTimeout: 3 * time.Second, Logf: t.Logf,
		StorageScaleMiBPerGB: 0.5, OpsPerVCPU: 100}
	if mod != nil {
		mod(&o)
	}
	p := New(o)
	dir := t.TempDir()
	t.Cleanup(func() { p.Destroy(context.Background()) })
	return p, dir
}

// createAndAdd creates spec's cluster of one node, waits until it is
// NORMAL and adds a second i4i.large in rack1, returning both.
func createAndAdd(t *testing.T, p *Provider, spec provision.ClusterSpec) (first, added provision.Node) {
	t.Helper()
	nodes, err := p.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	waitMode(t, nodes[0])
	more, err := p.AddNodes(context.Background(), []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.large"}})
	if err != nil {
		t.Fatal(err)
	}
	return nodes[0], more[0]
}

func waitMode(t *testing.T, n provision.Node) {
	t.Helper()
	c := scyllarest.New(n.Address, n.RESTPort)
	c.Timeout, c.Attempts = time.Second, 1
	// Generous: CI runs this beside docker builds and emulated clusters on
	// two cores, where one exec of the test binary once took over 10 s. A
	// node that never comes up still fails, with what it was doing.
	const wait = 45 * time.Second
	deadline := time.Now().Add(wait)
	for {
		m, err := c.OperationMode(context.Background())
		if err == nil && m == "NORMAL" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not NORMAL after %s: %q %v\n%s", n.Name, wait, m, err, nodeState(n))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nodeState says what a node that did not come up was doing: its
// process's state and kernel wait channel, and its log's last lines.
func nodeState(n provision.Node) string {
	var b strings.Builder
	if stat, err := os.ReadFile("/proc/" + n.ID + "/stat"); err == nil {
		wchan, _ := os.ReadFile("/proc/" + n.ID + "/wchan")
		fmt.Fprintf(&b, "process %s: stat %s wchan %s\n", n.ID, strings.TrimSpace(string(stat)), wchan)
	} else {
		fmt.Fprintf(&b, "process %s: %v\n", n.ID, err)
	}
	log, err := os.ReadFile(n.LogPath)
	if err != nil {
		fmt.Fprintf(&b, "log: %v", err)
		return b.String()
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	fmt.Fprintf(&b, "log %s (last lines):\n%s", n.LogPath, strings.Join(lines[max(0, len(lines)-20):], "\n"))
	return b.String()
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie is dead for our purpose.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// gone waits up to 5 s for every pid to be dead: signals to other
// processes land asynchronously, and this machine may be busy.
func gone(pids ...int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		any := false
		for _, pid := range pids {
			any = any || alive(pid)
		}
		if !any {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func childPid(t *testing.T, p *Provider, name string) int {
	t.Helper()
	path := filepath.Join(p.NodeDir(name), "data", "child.pid")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			pid, _ := strconv.Atoi(string(b))
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s", path)
	return 0
}

func TestLifecycle(t *testing.T) {
	p, dir := newTestProvider(t, "127.0.4.100", nil)
	ctx := context.Background()
	nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: "r1", Dir: dir, Racks: []string{"rack1", "rack2"}, NodesPerRack: 1, InstanceType: "i4i.large", Version: "2026.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].Name != "node-1" || nodes[0].Address != "127.0.4.100" || nodes[1].Address != "127.0.4.101" || nodes[1].Rack != "rack2" {
		t.Fatalf("nodes = %+v", nodes)
	}
	for _, n := range nodes {
		waitMode(t, n)
	}
	if n := nodes[0]; n.LogPath != filepath.Join(dir, "logs", "node-1.log") {
		t.Fatalf("log path %s", n.LogPath)
	}
	log, _ := os.ReadFile(nodes[1].LogPath)
	// cluster.version reaches the node: the version it poses as.
	if !strings.Contains(string(log), "rack rack2 vcpus 2 disk-gb 468 seeds 127.0.4.100 version 2026.1.0") {
		t.Fatalf("node-2 log: %s", log)
	}
	child1 := childPid(t, p, "node-1")
	pid1, _ := strconv.Atoi(nodes[0].ID)

	// Logs follows from the start.
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	rc, err := p.Logs(lctx, nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(rc)
	sawStall := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Reactor stalled for 30 ms") {
			sawStall = true
			break
		}
	}
	lcancel()
	rc.Close()
	if !sawStall {
		t.Fatal("Logs did not deliver the stall line")
	}

	// Pause: the REST API stops answering; resume: it answers again.
	if err := p.PauseNode(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	c := scyllarest.New(nodes[0].Address, nodes[0].RESTPort)
	c.Timeout, c.Attempts = 300*time.Millisecond, 1
	if _, err := c.OperationMode(ctx); err == nil {
		t.Fatal("a paused node answered")
	}
	if err := p.ResumeNode(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	waitMode(t, nodes[0])

	// Kill: reported on Exits as requested; the child goes with the group.
	if err := p.KillNode(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-p.Exits():
		if e.Node.Name != "node-1" || !e.Requested || e.Err == nil {
			t.Fatalf("exit = %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit reported")
	}
	if exited, _ := p.NodeExited("node-1"); !exited {
		t.Fatal("NodeExited = false")
	}
	if !gone(pid1, child1) {
		t.Fatalf("node-1 (%d) or its child (%d) still alive after KillNode", pid1, child1)
	}

	// Restart with the same data and log.
	if err := p.StartNode(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	waitMode(t, nodes[0])
	if err := p.StartNode(ctx, nodes[0]); err == nil {
		t.Fatal("starting a running node succeeded")
	}

	// A death the provider did not cause is not requested.
	added, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.4xlarge"}})
	if err != nil {
		t.Fatal(err)
	}
	n3 := added[0]
	if n3.Name != "node-3" || n3.Address != "127.0.4.102" {
		t.Fatalf("added %+v", n3)
	}
	waitMode(t, n3)
	pid3, _ := strconv.Atoi(n3.ID)
	syscall.Kill(pid3, syscall.SIGKILL)
	select {
	case e := <-p.Exits():
		if e.Node.Name != "node-3" || e.Requested {
			t.Fatalf("exit = %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit reported")
	}
	if err := p.RemoveNode(ctx, n3); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.NodeDir("node-3")); !os.IsNotExist(err) {
		t.Fatal("node-3's directory survived RemoveNode")
	}
	if _, err := os.Stat(n3.LogPath); err != nil {
		t.Fatal("node-3's log was deleted")
	}

	// Destroy: every process and child gone, data gone, logs kept; twice is fine.
	var pids []int
	for _, n := range []string{"node-1", "node-2"} {
		pids = append(pids, childPid(t, p, n))
		p.mu.Lock()
		pids = append(pids, p.procs[n].proc.Pid)
		p.mu.Unlock()
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(pids...) {
		t.Errorf("some of %v alive after Destroy", pids)
	}
	if _, err := os.Stat(filepath.Join(dir, "nodes")); !os.IsNotExist(err) {
		t.Fatal("nodes dir survived Destroy")
	}
	if b, _ := os.ReadFile(nodes[1].LogPath); !strings.Contains(string(b), "shutting down on SIGTERM") {
		t.Fatalf("node-2 was not stopped with SIGTERM: %s", b)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.large"}}); err == nil {
		t.Fatal("AddNodes after Destroy succeeded")
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	p, dir := newTestProvider(t, "127.0.4.110", func(o *Options) {
		o.StopTimeout = 300 * time.Millisecond
		o.Env = append(o.Env, "FAKE_IGNORE_TERM=1")
	})
	ctx := context.Background()
	nodes, err := p.Create(ctx, provision.ClusterSpec{Dir: dir, NodesPerRack: 1, InstanceType: "i4i.large"})
	if err != nil {
		t.Fatal(err)
	}
	waitMode(t, nodes[0])
	child := childPid(t, p, "node-1")
	start := time.Now()
	if err := p.StopNode(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Fatalf("stop took %s", d)
	}
	pid, _ := strconv.Atoi(nodes[0].ID)
	if !gone(pid, child) {
		t.Fatal("process or child alive after StopNode")
	}
}

func TestFaultArgsAndAddressInUse(t *testing.T) {
	p, dir := newTestProvider(t, "127.0.4.120", func(o *Options) {
		o.FaultArgs = func(n provision.Node) []string {
			if n.Name == "node-2" {
				return []string{"--fail-startup", "injected fault"}
			}
			return nil
		}
	})
	_, added := createAndAdd(t, p, provision.ClusterSpec{Dir: dir, NodesPerRack: 1, InstanceType: "i4i.large"})
	select {
	case e := <-p.Exits():
		if e.Node.Name != "node-2" || e.Requested || e.Err == nil {
			t.Fatalf("exit = %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the failing node did not exit")
	}
	b, _ := os.ReadFile(added.LogPath)
	if !strings.Contains(string(b), "init - Startup failed: std::runtime_error (injected fault)") {
		t.Fatalf("log: %s", b)
	}

	// A second provider on the same addresses refuses to start on top of node-1.
	p2, dir2 := newTestProvider(t, "127.0.4.120", nil)
	_, err := p2.Create(context.Background(), provision.ClusterSpec{Dir: dir2, NodesPerRack: 1, InstanceType: "i4i.large"})
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("err = %v", err)
	}
}

func TestCreateValidates(t *testing.T) {
	p := New(Options{BaseAddress: "127.0.4.254"})
	ctx := context.Background()
	if _, err := p.Create(ctx, provision.ClusterSpec{InstanceType: "i4i.large"}); err == nil {
		t.Fatal("no dir accepted")
	}
	if _, err := p.Create(ctx, provision.ClusterSpec{Dir: t.TempDir(), InstanceType: "m5.nope"}); err == nil {
		t.Fatal("unknown instance type accepted")
	}
	_, err := p.Create(ctx, provision.ClusterSpec{Dir: t.TempDir(), NodesPerRack: 2, InstanceType: "i4i.large"})
	if err == nil || !strings.Contains(err.Error(), "out of addresses") {
		t.Fatalf("err = %v", err)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCurrentSeeds(t *testing.T) {
	p := New(Options{})
	p.seeds = []string{"a1", "a2", "a3"}
	if got := p.currentSeeds(); strings.Join(got, ",") != "a1,a2,a3" {
		t.Fatalf("no processes: %v", got)
	}
	for i, a := range []string{"a1", "a2", "a3", "a4", "a5"} {
		p.procs["node-"+strconv.Itoa(i+1)] = &proc{node: provision.Node{Address: a}, index: i + 1, running: a != "a2"}
	}
	delete(p.procs, "node-1") // decommissioned and removed
	if got := p.currentSeeds(); strings.Join(got, ",") != "a3,a4,a5" {
		t.Fatalf("seeds = %v, want the running seed then the oldest running nodes", got)
	}
}

func TestSweep(t *testing.T) {
	p, dir := newTestProvider(t, "127.0.4.130", nil)
	ctx := context.Background()
	runID := "crashed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: runID, Dir: dir, NodesPerRack: 1, InstanceType: "i4i.large", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	waitMode(t, nodes[0])
	pid, _ := strconv.Atoi(nodes[0].ID)
	child := childPid(t, p, "node-1")

	// Its own provider leaves it alone (other runs on the machine may be listed).
	res, err := p.Sweep(ctx, time.Now().Add(2*time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ID == nodes[0].ID {
			t.Fatalf("own node listed: %+v", r)
		}
	}
	// Another provider (elasticity gc) sees it; in two hours it is expired.
	gc := New(Options{})
	res, err = gc.Sweep(ctx, time.Now().Add(2*time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	var found *provision.Resource
	for i := range res {
		if res[i].ID == nodes[0].ID {
			found = &res[i]
		}
	}
	if found == nil || found.RunID != runID || found.Name != "node-1" || !found.Expired || !alive(pid) {
		t.Fatalf("dry run: %+v", res)
	}
	// Removal by run id only, so that the test never touches other runs.
	res, err = gc.SweepRun(ctx, runID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].ID != nodes[0].ID {
		t.Fatalf("SweepRun listed %+v", res)
	}
	if !gone(pid, child) {
		t.Fatalf("swept node survived: %+v", res)
	}
}
