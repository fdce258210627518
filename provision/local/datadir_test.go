package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// dataDirOf is where the provider put a node's data.
func dataDirOf(p *Provider, name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.procs[name].dataDir
}

// waitFile waits for a file a fake node writes after it starts.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s", path)
}

// deadPid is a pid that is certainly gone: a child that exited and was reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// markedRunData makes a run's data directory d owned by pid in pid namespace ns.
func markedRunData(t *testing.T, d string, pid int, ns string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(d, "node-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(strconv.Itoa(pid)+" "+ns+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDataRootHoldsTheNodesData(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	// A run killed before it could clean up left its data here: this run
	// takes the room back.
	left := markedRunData(t, filepath.Join(root, runDataPrefix+"killed-1"), deadPid(t), pidNamespace())
	p, dir := newTestProvider(t, "127.0.4.150", func(o *Options) { o.DataRoot = root })
	ctx := context.Background()
	_, added := createAndAdd(t, p, provision.ClusterSpec{RunID: "r7", Dir: dir, NodesPerRack: 1, InstanceType: "i4i.large"})
	waitMode(t, added)

	// One directory of the run's under the root, one per node inside it,
	// marked with the runner's pid; nothing in the run directory but logs
	// and the nodes' working directories.
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatal("the killed run's data survived a new run")
	}
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "elasticity-r7-") {
		t.Fatalf("root holds %v (%v)", ents, err)
	}
	base := filepath.Join(root, ents[0].Name())
	if b, _ := os.ReadFile(filepath.Join(base, ownerFile)); !strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+" pid:[") {
		t.Fatalf("owner file holds %q", b)
	}
	for _, n := range []string{"node-1", "node-2"} {
		if d := dataDirOf(p, n); d != filepath.Join(base, n) {
			t.Fatalf("%s's data in %s", n, d)
		}
		waitFile(t, filepath.Join(base, n, "child.pid")) // the node writes in its --data-dir
		if _, err := os.Stat(filepath.Join(p.NodeDir(n), "data")); !os.IsNotExist(err) {
			t.Fatalf("%s has a data directory in the run directory", n)
		}
	}

	// RemoveNode deletes the node's data there; Destroy the run's directory.
	if err := p.RemoveNode(ctx, added); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "node-2")); !os.IsNotExist(err) {
		t.Fatal("node-2's data survived RemoveNode")
	}
	if _, err := os.Stat(filepath.Join(base, "node-1", "child.pid")); err != nil {
		t.Fatal("RemoveNode of node-2 touched node-1's data")
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Fatal("the run's data directory survived Destroy")
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatal("Destroy deleted the data root itself")
	}
}

func TestDataFallsBackToTheRunDirectoryWithoutRoom(t *testing.T) {
	root := t.TempDir()
	var mu sync.Mutex
	var logs []string
	// At 10^7 MiB per catalog GB an i4i.large's emulated disk is larger
	// than any file system here.
	p, dir := newTestProvider(t, "127.0.4.156", func(o *Options) {
		o.DataRoot, o.DataFallback, o.StorageScaleMiBPerGB = root, true, 1e7
		o.Logf = func(f string, a ...any) {
			mu.Lock()
			logs = append(logs, strings.TrimSpace(fmt.Sprintf(f, a...)))
			mu.Unlock()
		}
	})
	nodes, err := p.Create(context.Background(), provision.ClusterSpec{RunID: "r8", Dir: dir, NodesPerRack: 1, InstanceType: "i4i.large"})
	if err != nil {
		t.Fatal(err)
	}
	waitMode(t, nodes[0])
	if d := dataDirOf(p, "node-1"); d != filepath.Join(dir, "nodes", "node-1", "data") {
		t.Fatalf("node-1's data in %s, not the run directory", d)
	}
	waitFile(t, filepath.Join(dir, "nodes", "node-1", "data", "child.pid"))
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, l := range logs {
		found = found || strings.Contains(l, "node-1 keeps its data in the run directory: "+root+" has")
	}
	if !found {
		t.Fatalf("no log line says why: %q", logs)
	}
}

func TestSweepDeletesDataOfRunnersThatAreGone(t *testing.T) {
	root := t.TempDir()
	dead := deadPid(t)
	runID := "gone-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	mk := func(name string, pid int, ns string) string {
		return markedRunData(t, filepath.Join(root, name), pid, ns)
	}
	abandoned := mk(runDataPrefix+runID+"-123", dead, pidNamespace())
	running := mk(runDataPrefix+runID+"-456", os.Getpid(), pidNamespace())
	// A pid of another pid namespace (a container's) says nothing here.
	foreign := mk(runDataPrefix+runID+"-999", dead, "pid:[1]")
	unmarked := filepath.Join(root, runDataPrefix+runID+"-789")
	if err := os.MkdirAll(unmarked, 0o755); err != nil {
		t.Fatal(err)
	}

	gc := New(Options{DataRoot: root})
	ctx := context.Background()
	res, err := gc.SweepRun(ctx, runID, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Kind != "data" || res[0].ID != abandoned || res[0].RunID != runID {
		t.Fatalf("dry run listed %+v", res)
	}
	if _, err := os.Stat(abandoned); err != nil {
		t.Fatal("a dry run deleted data")
	}
	if _, err := gc.SweepRun(ctx, runID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Fatal("abandoned data survived gc")
	}
	for _, d := range []string{running, unmarked, foreign} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("gc deleted %s, whose runner runs or is unknown", d)
		}
	}
}

func TestDataOptions(t *testing.T) {
	if r, fb := DataOptions(DataRun); r != "" || fb {
		t.Fatalf("run: %q %v", r, fb)
	}
	if r, fb := DataOptions("/srv/el"); r != "/srv/el" || fb {
		t.Fatalf("a directory: %q %v", r, fb)
	}
	r, fb := DataOptions(DataMemory)
	if !fb || r != MemoryDataRoot() {
		t.Fatalf("memory: %q %v (memory root %q)", r, fb, MemoryDataRoot())
	}
}
