package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/spf13/cobra"
)

// With this variable set the test binary is the elasticity binary that
// cluster up starts as its nodes (`<test binary> node ...`).
const clusterTestNodeEnv = "ELASTICITY_CMD_TEST_NODE"

func TestMain(m *testing.M) {
	if os.Getenv(clusterTestNodeEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := runCLI(ctx, &env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Getenv: os.Getenv}, os.Args[1:])
		stop()
		os.Exit(int(code))
	}
	os.Exit(m.Run())
}

var clusterPorts = []int{localcluster.CQLPort, localcluster.RESTPort, localcluster.MetricsPort, localcluster.InternodePort}

// freeBase is a base address whose n addresses nothing listens on, searched
// from a random block so that concurrent tests rarely meet.
func freeBase(t *testing.T, n int) string {
	t.Helper()
	base, err := localcluster.FreeBase(fmt.Sprintf("127.%d.%d.2", 100+rand.IntN(100), rand.IntN(256)), n, clusterPorts)
	if err != nil {
		t.Fatalf("finding a free loopback range: %v", err)
	}
	return base
}

// clusterCLI runs the CLI with the test binary as the node binary.
func clusterCLI(t *testing.T, args ...string) (ExitCode, string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := &env{Stdout: &out, Stderr: &errb, Getenv: os.Getenv, Executable: exe}
	return runCLI(context.Background(), e, args), out.String(), errb.String()
}

// clusterUpOneNode brings a one-node cluster up at base with its state
// in dir, down again at the test's end, and returns what up printed.
func clusterUpOneNode(t *testing.T, dir, base string) string {
	t.Helper()
	code, out, errs := clusterCLI(t, "cluster", "up", "--dir", dir, "--nodes", "1", "--racks", "1", "--base-address", base)
	t.Cleanup(func() { clusterCLI(t, "cluster", "down", "--dir", dir) })
	if code != ExitPassed {
		t.Fatalf("cluster up in %s: exit %d\n%s", dir, code, errs)
	}
	return out
}

// TestClusterUpOnTakenAddress: a second cluster up on a running cluster's
// base address fails, naming what is taken and a free base address, leaves
// no cluster behind and never reports the first cluster's node as its own.
func TestClusterUpOnTakenAddress(t *testing.T) {
	t.Setenv(clusterTestNodeEnv, "1") // the nodes this test starts
	base := freeBase(t, 2)
	first := t.TempDir()
	out := clusterUpOneNode(t, first, base)
	var up struct {
		Hosts []string            `json:"hosts"`
		Nodes []localcluster.Node `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &up); err != nil || len(up.Hosts) != 1 || up.Hosts[0] != base || up.Nodes[0].HostID == "" {
		t.Fatalf("first cluster up printed %q (%v)", out, err)
	}

	second := t.TempDir()
	code, out, errs := clusterCLI(t, "cluster", "up", "--dir", second, "--nodes", "2", "--racks", "1", "--base-address", base)
	if code == ExitPassed || out != "" {
		t.Fatalf("cluster up on a taken base address: exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, base+":") || !strings.Contains(errs, "already in use") || !strings.Contains(errs, "use --base-address 127.") {
		t.Fatalf("stderr does not say what is taken and what to use: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(second, clusterStateFile)); !os.IsNotExist(err) {
		t.Fatalf("a cluster was recorded: %v", err)
	}
	if err := localcluster.CheckServes(up.Nodes[0].Pid, base, localcluster.RESTPort, localcluster.CQLPort); err != nil {
		t.Fatalf("the first cluster's node: %v", err)
	}
}

// TestClusterUpMovesOffTakenDefault: without --base-address, a taken
// default range moves the cluster to a free one, and says so.
func TestClusterUpMovesOffTakenDefault(t *testing.T) {
	t.Setenv(clusterTestNodeEnv, "1")
	base := freeBase(t, 1)
	dir := t.TempDir()
	clusterUpOneNode(t, dir, base)
	for _, given := range []bool{false, true} {
		// A flag whose default is the taken base: given or left to its default.
		cmd := &cobra.Command{Use: "up"}
		cmd.Flags().String("base-address", base, "")
		if given {
			cmd.Flags().Set("base-address", base)
		}
		var stderr bytes.Buffer
		got, err := baseAddress(cmd, base, 3, &env{Stderr: &stderr})
		switch {
		case given && (err == nil || !strings.Contains(err.Error(), "use --base-address")):
			t.Errorf("given base: %q, %v", got, err)
		case !given && (err != nil || got == base || !strings.Contains(stderr.String(), "starting on "+got)):
			t.Errorf("default base: %q, %v, stderr %q", got, err, stderr.String())
		case !given:
			if busy, err := localcluster.Busy(got, 3, clusterPorts); busy != "" || err != nil {
				t.Errorf("moved to %s, which is not free: %q %v", got, busy, err)
			}
		}
	}
}

// TestClusterUpShared: --process shared runs every node in one process,
// each holding its own listeners, and cluster down stops that process.
func TestClusterUpShared(t *testing.T) {
	t.Setenv(clusterTestNodeEnv, "1")
	base := freeBase(t, 2)
	dir := t.TempDir()
	code, out, errs := clusterCLI(t, "cluster", "up", "--dir", dir, "--nodes", "2", "--racks", "1", "--base-address", base, "--process", "shared")
	t.Cleanup(func() { clusterCLI(t, "cluster", "down", "--dir", dir) })
	if code != ExitPassed {
		t.Fatalf("cluster up --process shared: exit %d\n%s", code, errs)
	}
	var up struct {
		Hosts []string            `json:"hosts"`
		Nodes []localcluster.Node `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &up); err != nil || len(up.Nodes) != 2 {
		t.Fatalf("cluster up printed %q (%v)", out, err)
	}
	pid := up.Nodes[0].Pid
	for _, n := range up.Nodes {
		if n.Pid != pid || n.HostID == "" {
			t.Fatalf("node %+v: want the one process %d and a host id", n, pid)
		}
		if err := localcluster.CheckServes(pid, n.Addr, localcluster.RESTPort, localcluster.CQLPort); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := clusterCLI(t, "cluster", "down", "--dir", dir); code != ExitPassed {
		t.Fatalf("cluster down: exit %d\n%s", code, errs)
	}
	// cluster up ran in this process, whose child the host is: once it
	// has exited it is a zombie until reaped.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] != "Z" {
			t.Errorf("the nodes' process %d runs (state %s) after cluster down", pid, f[0])
		}
	}
}
