package localcluster

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A zero port, version or factor leaves the node's default; extras come
// last, so that they win.
func TestNodeFlagsArgs(t *testing.T) {
	got := NodeFlags{Listen: "127.0.0.2", DataDir: "d", LogFile: "l", ClusterName: "c", DC: "dc1", Rack: "r1",
		InstanceType: "i4i.large", VCPUs: 2, MemoryGB: 16, DiskGB: 468.5, Seeds: []string{"127.0.0.2", "127.0.0.3"},
		RESTPort: 10000, TimeScale: 0.0025, Extra: []string{"--time-scale", "1"}}.Args()
	want := []string{"--listen-address", "127.0.0.2", "--data-dir", "d", "--cluster-name", "c", "--dc", "dc1", "--rack", "r1",
		"--instance-type", "i4i.large", "--vcpus", "2", "--memory-gb", "16", "--disk-gb", "468.5",
		"--seeds", "127.0.0.2,127.0.0.3", "--log-file", "l", "--rest-port", "10000", "--time-scale", "0.0025", "--time-scale", "1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}

// StartNode reaps the process, keeps its exit status and output, gives it
// the node runtime settings, and kills what it left in its process group.
func TestStartNodeReapsItsGroup(t *testing.T) {
	out := filepath.Join(t.TempDir(), "node.out")
	p, err := StartNode(Launch{Binary: "/bin/sh", Args: []string{"-c", `sleep 100 & echo "$!"; echo "$GODEBUG"; exit 3`}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not reaped 10 s after exiting")
	}
	var ee *exec.ExitError
	if !errors.As(p.Err(), &ee) || ee.ExitCode() != 3 || !p.Exited() {
		t.Fatalf("exit: %v", p.Err())
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], NodeGODEBUG[0]) {
		t.Fatalf("output %q: want the child's pid and GODEBUG with %s", b, NodeGODEBUG[0])
	}
	child, _ := strconv.Atoi(lines[0])
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil && !isZombie(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the node's child %d outlived it", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
