package docker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	mnetwork "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/provision/docker/dockertest"
)

// The cluster's waits fail fast on containers that exited.
var _ provision.ProcessChecker = (*docker.Provider)(nil)

func randomID(prefix string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func inspect(t *testing.T, ctx context.Context, c *testcontainers.DockerClient, id string) container.InspectResponse {
	t.Helper()
	res, err := c.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("inspecting %s: %v", id, err)
	}
	return res.Container
}

// waitPorts waits until the host reaches the node's CQL, REST and metrics
// ports at its own address on the run's bridge (no published ports).
func waitPorts(ctx context.Context, n provision.Node, within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, port := range []int{n.CQLPort, n.RESTPort, n.MetricsPort} {
		hp := net.JoinHostPort(n.Address, strconv.Itoa(port))
		for {
			conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", hp)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				b, _ := os.ReadFile(n.LogPath)
				return fmt.Errorf("%s unreachable after %s: %v\nlog:\n%s", hp, within, err, b)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	return nil
}

// waitLog waits until the log has exactly want lines containing substr.
func waitLog(path, substr string, want int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		b, _ := os.ReadFile(path)
		got := strings.Count(string(b), substr)
		if got == want {
			return nil
		}
		if got > want || time.Now().After(deadline) {
			return fmt.Errorf("%s: %d lines with %q, want %d", path, got, substr, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// engineWithImage connects to the Docker engine and builds the emulator
// image, or skips the test in -short mode or without an engine. The
// client stays open until the test's cleanups (teardown checks) are done.
func engineWithImage(t *testing.T) (*testcontainers.DockerClient, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Docker engine and an image build")
	}
	c, err := dockertest.Client(context.Background())
	if err != nil {
		t.Skipf("no Docker engine reachable: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	// The image build has its own budget: a cold static Go build is slow on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tag, _, err := dockertest.EmulatorImage(ctx, c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c, tag
}

func checkGone(t *testing.T, ctx context.Context, c *testcontainers.DockerClient, runID string) {
	t.Helper()
	left, err := dockertest.Leftovers(ctx, c, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("left behind by run %s:\n%s", runID, strings.Join(left, "\n"))
	}
}

// TestProviderAgainstEngine: the emulator image on a real engine: fixed
// addresses reachable from the host, labels, CPU/memory limits per
// instance type, stop/start/kill/pause as faults, removal and teardown.
func TestProviderAgainstEngine(t *testing.T) {
	c, tag := engineWithImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	runID := randomID("it")
	dir := t.TempDir()
	p := docker.New(docker.Options{Image: tag, Emulated: true, SMP: 1, MemoryGB: 1, BaseInstanceType: "i4i.large",
		HostCPUs: 2, HostMemoryGB: 16, Logf: t.Logf,
		NodeArgs: func(provision.Node, provision.InstanceType) []string {
			return []string{"--storage-scale-mib-per-gb", "0.5", "--ops-per-vcpu", "250", "--stream-mib-per-vcpu", "2"}
		}})
	t.Cleanup(func() {
		ctx := context.Background()
		if err := p.Destroy(ctx); err != nil {
			t.Errorf("destroy: %v", err)
		}
		checkGone(t, ctx, c, runID)
		_, _ = p.SweepRun(ctx, runID, false) // belt and braces: never leave anything
	})

	nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: runID, Scenario: "docker-it", ClusterName: "it", DC: "dc1",
		Racks: []string{"rack1"}, NodesPerRack: 1, InstanceType: "i4i.large", Dir: dir, TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	n1 := nodes[0]
	ci := inspect(t, ctx, c, n1.ID)
	for port, bs := range ci.HostConfig.PortBindings {
		for _, b := range bs {
			if !b.HostIP.IsLoopback() {
				t.Errorf("port %v published on %v: only loopback", port, b.HostIP)
			}
		}
	}
	if ci.HostConfig.NanoCPUs != 1e9 || ci.HostConfig.Memory != 2<<30 {
		t.Errorf("i4i.large limits: %d nano-CPUs, %d bytes", ci.HostConfig.NanoCPUs, ci.HostConfig.Memory)
	}
	if ci.Config.Labels[docker.LabelRunID] != runID || ci.Config.Labels[docker.LabelCreatedBy] != "elasticity" || ci.Config.Labels[docker.LabelNode] != "node-1" {
		t.Errorf("labels: %v", ci.Config.Labels)
	}
	if len(ci.NetworkSettings.Networks) != 1 {
		t.Fatalf("networks: %v", ci.NetworkSettings.Networks)
	}
	for name, es := range ci.NetworkSettings.Networks {
		if es.IPAddress.String() != n1.Address || !strings.HasPrefix(n1.Address, "10.213.") {
			t.Errorf("network %s: address %v, node says %s", name, es.IPAddress, n1.Address)
		}
	}
	if !strings.Contains(strings.Join(ci.Config.Cmd, " "), "--vcpus 2 --memory-gb 16 --disk-gb 468") {
		t.Errorf("command: %v", ci.Config.Cmd)
	}
	if err := waitPorts(ctx, n1, time.Minute); err != nil {
		t.Fatal(err)
	}
	// node_exporter, the image's own supervised program, serves the
	// filesystem of the container's /var/lib/scylla on 9100 (statfs, as
	// the real one does); ScyllaDB's 9180 has no node_* series.
	get := func(port int) string {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/metrics", n1.Address, port))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(body)
	}
	if body := get(9100); !strings.Contains(body, `mountpoint="/var/lib/scylla"} `) || !strings.Contains(body, "node_filesystem_size_bytes{") {
		t.Errorf("node_exporter lacks the data filesystem:\n%.2000s", body)
	}
	if body := get(n1.MetricsPort); strings.Contains(body, "node_filesystem") {
		t.Errorf("ScyllaDB's metrics serve node_filesystem_*")
	}

	// A grow with a larger type gets a larger container.
	// Its context ends with the call, as a nemesis step's does: the log must go on.
	stepCtx, stepCancel := context.WithCancel(ctx)
	grown, err := p.AddNodes(stepCtx, []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.xlarge"}})
	stepCancel()
	if err != nil {
		t.Fatal(err)
	}
	n2 := grown[0]
	ci = inspect(t, ctx, c, n2.ID)
	if ci.HostConfig.NanoCPUs != 2e9 || ci.HostConfig.Memory != 3<<30 {
		t.Errorf("i4i.xlarge limits: %d nano-CPUs, %d bytes", ci.HostConfig.NanoCPUs, ci.HostConfig.Memory)
	}
	if cmd := strings.Join(ci.Config.Cmd, " "); !strings.Contains(cmd, "--vcpus 4 --memory-gb 32 --disk-gb 937") || !strings.Contains(cmd, "--seeds "+n1.Address) {
		t.Errorf("grown command: %s", cmd)
	}
	if err := waitPorts(ctx, n2, time.Minute); err != nil {
		t.Fatal(err)
	}

	// Faults: a graceful stop, a restart at the same address, a kill, a pause.
	if err := p.StopNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	if st := inspect(t, ctx, c, n2.ID).State; st.Status != "exited" || st.ExitCode == 137 {
		t.Errorf("after stop: %s, exit %d (SIGTERM should end it gracefully)", st.Status, st.ExitCode)
	}
	if err := p.StartNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	if err := waitPorts(ctx, n2, time.Minute); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	// The restarted node's log has both starts, each once.
	if err := waitLog(n2.LogPath, "starting, host id", 2, 10*time.Second); err != nil {
		t.Error(err)
	}
	if err := p.KillNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	if st := inspect(t, ctx, c, n2.ID).State; st.Status != "exited" || st.ExitCode != 137 {
		t.Errorf("after kill: %s, exit %d", st.Status, st.ExitCode)
	}
	if exited, why := p.NodeExited(n2.Name); !exited || why == nil || !strings.Contains(why.Error(), "137") {
		t.Errorf("NodeExited after kill: %v %v", exited, why)
	}
	if exited, why := p.NodeExited(n1.Name); exited {
		t.Errorf("NodeExited of a running node: %v", why)
	}
	// A killed node starts again too (its data survives in the container).
	if err := p.StartNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	if err := waitPorts(ctx, n2, time.Minute); err != nil {
		t.Fatalf("after kill and start: %v", err)
	}
	if err := p.PauseNode(ctx, n1); err != nil {
		t.Fatal(err)
	}
	if st := inspect(t, ctx, c, n1.ID).State; st.Status != "paused" {
		t.Errorf("after pause: %s", st.Status)
	}
	if err := p.ResumeNode(ctx, n1); err != nil {
		t.Fatal(err)
	}
	if st := inspect(t, ctx, c, n1.ID).State; st.Status != "running" {
		t.Errorf("after resume: %s", st.Status)
	}

	if err := p.RemoveNode(ctx, n2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ContainerInspect(ctx, n2.ID, client.ContainerInspectOptions{}); err == nil {
		t.Errorf("%s still exists after RemoveNode", n2.Name)
	}
	// A container of the run the provider never got back (a start cut short
	// by Ctrl-C): Destroy, in the cleanup, must remove it too.
	if _, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: testcontainers.ContainerRequest{
		Image: tag, Name: "elasticity-" + runID + "-node-9", Cmd: []string{"node", "--help"},
		Labels: map[string]string{docker.LabelCreatedBy: "elasticity", docker.LabelRunID: runID, docker.LabelNode: "node-9"}}}); err != nil {
		t.Fatal(err)
	}
	// Logs come from the container's output into <run>/logs.
	for _, n := range []provision.Node{n1, n2} {
		if b, err := os.ReadFile(filepath.Join(dir, "logs", n.Name+".log")); err != nil || len(b) == 0 {
			t.Errorf("%s log: %v (%d bytes)", n.Name, err, len(b))
		}
	}
}

// TestProviderOnExistingNetwork: with docker.network the nodes join a
// user-defined network that is not the run's: free addresses are picked
// around what is attached already, and the network outlives the run.
func TestProviderOnExistingNetwork(t *testing.T) {
	c, tag := engineWithImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	name := randomID("elasticity-it-net")
	// A random /24, so that concurrent test processes do not overlap.
	var b [1]byte
	_, _ = rand.Read(b[:])
	base := fmt.Sprintf("10.214.%d.", b[0])
	subnet := netip.MustParsePrefix(base + "0/24")
	nres, err := c.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge",
		IPAM: &mnetwork.IPAM{Config: []mnetwork.IPAMConfig{{Subnet: subnet, Gateway: netip.MustParseAddr(base + "1")}}}})
	if err != nil {
		t.Fatalf("creating network %s: %v", name, err)
	}
	t.Cleanup(func() { _, _ = c.NetworkRemove(context.Background(), nres.ID, client.NetworkRemoveOptions{}) })
	// Something else already holds .2.
	other, err := docker.StartContainer(ctx, testcontainers.ContainerRequest{
		Image: tag, Networks: []string{name}, Cmd: []string{"node", "--listen-address", "127.0.0.2", "--data-dir", "/var/lib/scylla"},
		ExposedPorts: []string{"9042/tcp"}, // publish one port (StartContainer), not all the image EXPOSEs
		EndpointSettingsModifier: func(eps map[string]*mnetwork.EndpointSettings) {
			eps[name].IPAMConfig = &mnetwork.EndpointIPAMConfig{IPv4Address: netip.MustParseAddr(base + "2")}
		}}, t.Logf)
	if other != nil {
		t.Cleanup(func() { _ = testcontainers.TerminateContainer(other) })
	}
	if err != nil {
		t.Fatal(err)
	}

	runID := randomID("it-net")
	p := docker.New(docker.Options{Image: tag, Emulated: true, Network: name, HostCPUs: 2, HostMemoryGB: 16, Logf: t.Logf})
	nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: runID, Scenario: "docker-it", ClusterName: "it", DC: "dc1",
		Racks: []string{"rack1"}, NodesPerRack: 1, InstanceType: "i4i.large", Dir: t.TempDir(), TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if nodes[0].Address != base+"3" {
		t.Errorf("first free address: got %s, want %s3", nodes[0].Address, base)
	}
	if err := waitPorts(ctx, nodes[0], time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	checkGone(t, ctx, c, runID)
	if _, err := c.NetworkInspect(ctx, nres.ID, client.NetworkInspectOptions{}); err != nil {
		t.Errorf("the existing network went with the run: %v", err)
	}
}
