// Package docker runs the elasticity binary against a real Docker engine
// with the emulator image built from this repository (no registry): the
// smoke scenario on the docker backend, and `elasticity gc` cleaning up after
// a crashed run. Every test checks that nothing labelled by the run is left.
//
// ELASTICITY_EMULATOR_BINARY reuses a static binary built already
// (CGO_ENABLED=0 go build ./cmd/elasticity); ELASTICITY_EMULATOR_IMAGE
// names the image (default elasticity-emulator:test).
package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/provision/docker/dockertest"
	"github.com/elasticity-dev/elasticity/results"
)

var (
	binary    string                // static elasticity binary, also the image's
	image     string                // the double posing as 2025.1
	images    = map[string]string{} // by the ScyllaDB version the double poses as (as given: "2025.4", "2025.4.5")
	skipWhy   string                // why every test skips (no engine)
	setupErr  error
	dockerCli *testcontainers.DockerClient
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		flag.Parse()
		if testing.Short() {
			skipWhy = "needs a Docker engine and an image build (-short)"
			return m.Run()
		}
		c, err := dockertest.Client(context.Background())
		if err != nil {
			skipWhy = fmt.Sprintf("no Docker engine reachable: %v", err)
			return m.Run()
		}
		dockerCli = c
		defer c.Close()
		tmp, err := os.MkdirTemp("", "elasticity-e2e-docker-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		// A cold static build takes minutes on a busy machine.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		versions := append([]string{"2025.1", "2025.4"}, mainVersions...)
		var tags []string
		tags, binary, setupErr = dockertest.EmulatorImages(ctx, c, tmp, versions...)
		cancel()
		if setupErr == nil {
			image = tags[0]
			for i, v := range versions {
				images[v] = tags[i]
			}
		}
		return m.Run()
	}())
}

func need(t *testing.T) {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	if setupErr != nil {
		t.Fatalf("building the emulator image: %v", setupErr)
	}
}

func randomID(prefix string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func checkGone(t *testing.T, runID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, err := dockertest.Leftovers(context.Background(), dockerCli, runID)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind by run %q:\n%s", runID, strings.Join(left, "\n"))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// seen is what a watcher saw of one container while the run went on.
type seen struct {
	Name     string
	RunID    string
	NanoCPUs int64
	Memory   int64
	Cmd      string
	Address  string
}

// watch records the containers of the run writing into out (by its run-id
// label, read from run_start: other runs may share the engine) until ctx
// ends: their limits and commands can only be inspected while they exist.
func watch(ctx context.Context, out string) func() map[string]seen {
	var mu sync.Mutex
	got := map[string]seen{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runID := ""
		for ctx.Err() == nil && runID == "" {
			_ = results.ReadJSONL(filepath.Join(out, results.FileEvents), func(_ int, e *results.Event) error {
				if e.Type == results.EventRunStart && e.Setup != nil {
					runID = e.Setup.RunID
				}
				return nil
			})
			if runID == "" {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		f := client.Filters{}.Add("label", docker.LabelCreatedBy+"=elasticity").Add("label", docker.LabelRunID+"="+runID)
		for ctx.Err() == nil {
			cs, err := dockerCli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
			if err == nil {
				for _, s := range cs.Items {
					node := s.Labels[docker.LabelNode]
					mu.Lock()
					_, ok := got[node]
					mu.Unlock()
					if ok || s.State != "running" { // created but not started: no address yet
						continue
					}
					res, err := dockerCli.ContainerInspect(ctx, s.ID, client.ContainerInspectOptions{})
					if err != nil {
						continue
					}
					ci := res.Container
					s := seen{Name: node, RunID: s.Labels[docker.LabelRunID], Cmd: strings.Join(ci.Config.Cmd, " ")}
					if ci.HostConfig != nil {
						s.NanoCPUs, s.Memory = ci.HostConfig.NanoCPUs, ci.HostConfig.Memory
					}
					for _, es := range ci.NetworkSettings.Networks {
						s.Address = es.IPAddress.String()
					}
					mu.Lock()
					got[node] = s
					mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() map[string]seen {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// TestSmokeOnDocker is the acceptance of the docker backend:
// configs/smoke.yaml on three containers of the image double posing as
// ScyllaDB 2025.1 and as 2025.4, a grow by one larger node (i4i.xlarge: a
// larger container), a report, and nothing left afterwards. The double is
// emulated, so local.time_scale applies as on the local backend.
func TestSmokeOnDocker(t *testing.T) {
	need(t)
	for _, version := range []string{"2025.1", "2025.4"} {
		t.Run(version, func(t *testing.T) { smokeOnDocker(t, version) })
	}
}

func smokeOnDocker(t *testing.T, version string) {
	out := filepath.Join(t.TempDir(), "smoke-docker")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	wctx, wcancel := context.WithCancel(ctx)
	containers := watch(wctx, out)

	cmd := exec.CommandContext(ctx, binary, "run", "../../configs/smoke.yaml", "--out", out,
		"--backend", "docker",
		"--set", "docker.image="+images[version],
		"--set", "nemesis.0.grow_cluster.instance_type=i4i.xlarge",
		"--set", "nemesis.0.grow_cluster.name=Add 1 x i4i.xlarge",
		// Wall-clock ceilings, so that a broken run fails in minutes.
		"--set", "timeouts.node_ready=2m",
		"--set", "timeouts.data_balanced=2m",
		"--set", "timeouts.latency_recovered=1m",
		"--set", "timeouts.fill=2m",
	)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) } // lets the run tear down
	cmd.WaitDelay = time.Minute
	start := time.Now()
	err := cmd.Run()
	wcancel()
	seenBy := containers()
	runID := ""
	for _, s := range seenBy {
		runID = s.RunID
	}
	if runID != "" {
		defer checkGone(t, runID)
	}
	code := -1
	if err == nil {
		code = 0
	} else if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	// 1 = thresholds failed: a loaded machine may miss the 100 ms P99; the pipeline still ran.
	if code != 0 && code != 1 {
		t.Fatalf("exit %d after %s: %v\n%s", code, time.Since(start).Round(time.Second), err, log.String())
	}
	t.Logf("run %s took %s, exit %d", runID, time.Since(start).Round(time.Second), code)

	// Three initial containers and one grown, the grown one larger.
	if len(seenBy) != 4 {
		t.Fatalf("containers seen: %+v\n%s", seenBy, log.String())
	}
	for name, s := range seenBy {
		// docker.memory 1 GiB + 1 GiB + the tmpfs (468 GB × 0.2 MiB; the
		// grown i4i.xlarge twice the memory, 937 GB × 0.2 MiB).
		wantCPU, wantMem, wantVCPUs := int64(1e9), int64(2<<30+93<<20), "--vcpus 2 "
		if name == "node-4" {
			wantCPU, wantMem, wantVCPUs = 2e9, 3<<30+187<<20, "--vcpus 4 "
		}
		if s.NanoCPUs != wantCPU || s.Memory != wantMem || !strings.Contains(s.Cmd, wantVCPUs) {
			t.Errorf("%s: %d nano-CPUs, %d bytes, command %s; want %d, %d, %s", name, s.NanoCPUs, s.Memory, s.Cmd, wantCPU, wantMem, wantVCPUs)
		}
		// The local scale model travels with the image double.
		if !strings.Contains(s.Cmd, "--storage-scale-mib-per-gb 0.2") {
			t.Errorf("%s: no scale factors in %s", name, s.Cmd)
		}
		// dist/docker/commandlineparser.py: only 2025.4.5's entrypoint and
		// later take the stall threshold; before (2025.4.0 here),
		// scyllasetup.py hard-codes it.
		if n, want := strings.Count(s.Cmd, "--blocked-reactor-notify-ms"), map[string]int{"2025.1": 0, "2025.4": 0}[version]; n != want {
			t.Errorf("%s: %d × --blocked-reactor-notify-ms in %s, want %d", name, n, s.Cmd, want)
		}
		if !strings.HasPrefix(s.Address, "10.213.") {
			t.Errorf("%s: address %s", name, s.Address)
		}
	}

	for _, f := range []string{results.FileScenario, results.FileEvents, results.FileLatency, results.FileMetrics, results.FileResult, results.FileReportMD} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	for i := 1; i <= 4; i++ {
		b, err := os.ReadFile(filepath.Join(out, results.DirLogs, fmt.Sprintf("node-%d.log", i)))
		if err != nil || len(b) == 0 {
			t.Errorf("node-%d log: %v (%d bytes)", i, err, len(b))
		}
		// The container's log: supervisord's and node_exporter's lines beside ScyllaDB's.
		for _, want := range []string{"INFO spawned: 'scylla' with pid", "msg=\"Starting node_exporter\"", "Scylla version " + version + ".0 initialization completed"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("node-%d log lacks %q", i, want)
			}
		}
	}
	res := readResult(t, out)
	if res.Status != results.StatusPassed && res.Status != results.StatusFailed {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, log.String())
	}
	if !res.Setup.Emulated {
		t.Errorf("a run of the image double must say it is emulated: %+v", res.Setup)
	}
	var steady, grow int
	for _, c := range res.Cycles {
		if c.WriteOpsPerS <= 0 || c.ReadOpsPerS <= 0 {
			t.Errorf("%s has no throughput: %+v", c.Name, c)
		}
		if c.Name == "Cycle #0" {
			steady++
		} else {
			grow++
		}
		t.Logf("%s: write %.0f/s P99 %.1f ms, read %.0f/s P99 %.1f ms", c.Name, c.WriteOpsPerS, c.WriteP99MS, c.ReadOpsPerS, c.ReadP99MS)
	}
	if steady != 1 || grow < 1 {
		t.Errorf("cycles: %+v", res.Cycles)
	}
	if len(res.Disk) < 3 {
		t.Errorf("disk usage at %d phases, want 3 or more", len(res.Disk))
	}
	if version == "2025.1" {
		// --blocked-reactor-notify-ms 999999999: no stall is ever reported.
		stalls := 0
		_ = results.ReadJSONL(filepath.Join(out, results.FileEvents), func(_ int, e *results.Event) error {
			if e.Type == results.EventStall {
				stalls++
			}
			return nil
		})
		if stalls != 0 {
			t.Errorf("%d stall events from an image that reports none", stalls)
		}
	}
}

// TestNodeKilledInContainerMidGrow: ScyllaDB killed inside its container
// while a node joins. The image's supervisor restarts it and the container
// stays up, so no container exit is ever seen: the run must still fail
// within 60 s, naming the node, from supervisord's "exited: scylla" line
// and the node's CQL no longer answering.
func TestNodeKilledInContainerMidGrow(t *testing.T) {
	need(t)
	out := filepath.Join(t.TempDir(), "kill-docker")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, log := runUntil(t, ctx, out, func(e results.Event) bool { return e.Type == results.EventStepRequested })
	runID := runIDOf(t, out)
	defer checkGone(t, runID)
	killed := time.Now()
	// supervisorctl signal KILL scylla, as one would in the real image.
	kill := exec.CommandContext(ctx, "docker", "exec", "elasticity-"+runID+"-node-2", "/elasticity", "image", "supervisorctl", "signal", "KILL", "scylla")
	if b, err := kill.CombinedOutput(); err != nil || !strings.Contains(string(b), "scylla: signalled") {
		t.Fatalf("killing scylla in node-2: %v\n%s", err, b)
	}
	err := cmd.Wait()
	took := time.Since(killed)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() == 0 || ee.ExitCode() == 1 {
		t.Fatalf("want a failed run, got %v after %s\n%s", err, took.Round(time.Second), log.String())
	}
	if took > 60*time.Second {
		t.Errorf("the run took %s after the kill to fail", took.Round(time.Second))
	}
	var runEnd results.Event
	_ = results.ReadJSONL(filepath.Join(out, results.FileEvents), func(_ int, e *results.Event) error {
		if e.Type == results.EventRunEnd {
			runEnd = *e
		}
		return nil
	})
	if !strings.Contains(runEnd.Message, "node-2") || !strings.Contains(runEnd.Message, "terminated by SIGKILL") {
		t.Errorf("run_end does not name the killed node and how: %+v\n%s", runEnd, log.String())
	}
	t.Logf("failed %s after the kill: %s", took.Round(100*time.Millisecond), runEnd.Message)
}

// TestPlanOnDocker: `elasticity plan --backend docker` shows each node's
// image, data mount and container command; the stall flag follows the
// image's version (its label, patch included), not its name: none up to
// 2025.4.3, on every node from 2025.4.5.
func TestPlanOnDocker(t *testing.T) {
	need(t)
	for version, want := range map[string]int{"2025.1": 0, "2025.4": 0, "2025.4.0": 0, "2025.4.5": 4, "2026.3.0": 4} {
		out, err := exec.Command(binary, "plan", "../../configs/smoke.yaml", "--backend", "docker", "--set", "docker.image="+images[version]).CombinedOutput()
		if err != nil {
			t.Fatalf("plan: %v\n%s", err, out)
		}
		txt := string(out)
		if n := strings.Count(txt, "docker run --network"); n != 4 {
			t.Errorf("%s: %d node command lines, want 4:\n%s", version, n, txt)
		}
		if n := strings.Count(txt, "--blocked-reactor-notify-ms"); n != want {
			t.Errorf("%s: %d × --blocked-reactor-notify-ms, want %d:\n%s", version, n, want, txt)
		}
		if n := strings.Count(txt, "--tmpfs /var/lib/scylla:rw,size=93m,mode=1777"); n != 4 {
			t.Errorf("%s: %d nodes with their own 93 MiB tmpfs, want 4:\n%s", version, n, txt)
		}
		if !strings.Contains(txt, "image double (emulated ScyllaDB) "+version) {
			t.Errorf("%s: the image line:\n%s", version, txt)
		}
	}
}

// TestGrowStartupFailureOnDocker: a node that fails its startup during a
// grow ends the run with a run error naming it, its "Startup failed" line
// reaches the events (the container's log is followed), and the run still
// tears everything down.
func TestGrowStartupFailureOnDocker(t *testing.T) {
	need(t)
	out := filepath.Join(t.TempDir(), "fail-docker")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wctx, wcancel := context.WithCancel(ctx)
	containers := watch(wctx, out)
	cmd := exec.CommandContext(ctx, binary, "run", "../../configs/smoke.yaml", "--out", out,
		"--backend", "docker", "--set", "docker.image="+image,
		"--set", "steady_state=10s", "--set", "dataset.fill.0.hold=2s", "--set", "final_hold=5s",
		"--set", "timeouts.node_ready=2m",
		// One word: scylla-server.sh splits $SCYLLA_DOCKER_ARGS on blanks.
		"--fault", "node-4=--fail-startup=raft_operation_read_barrier_timed_out")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	start := time.Now()
	err := cmd.Run()
	wcancel()
	for _, s := range containers() {
		defer checkGone(t, s.RunID)
		break
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("want exit 3 (run error), got %v after %s\n%s", err, time.Since(start).Round(time.Second), log.String())
	}
	// Waits fail fast on supervisord's "exited: scylla" (the container stays up) rather than at node_ready.
	if d := time.Since(start); d > 100*time.Second {
		t.Errorf("the run took %s to notice the failed node", d.Round(time.Second))
	}
	var runEnd results.Event
	startupFailed := false
	if err := results.ReadJSONL(filepath.Join(out, results.FileEvents), func(_ int, e *results.Event) error {
		if e.Type == results.EventRunEnd {
			runEnd = *e
		}
		if e.Type == results.EventDBError && strings.Contains(e.Line, "Startup failed") {
			startupFailed = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if runEnd.Status != results.StatusError || !strings.Contains(runEnd.Message, "node-4") {
		t.Errorf("run_end %+v", runEnd)
	}
	if !startupFailed {
		t.Errorf("no database_error with the Startup failed line\n%s", log.String())
	}
}

// runUntil starts a smoke run on docker and returns once an event matches.
func runUntil(t *testing.T, ctx context.Context, out string, match func(results.Event) bool) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, "run", "../../configs/smoke.yaml", "--out", out,
		"--backend", "docker", "--set", "docker.image="+image,
		// Scaled by local.time_scale (0.0025): a 12 s steady state, a 30 s final hold.
		"--set", "steady_state=80m", "--set", "dataset.fill.0.hold=4s", "--set", "final_hold=200m")
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGINT)
			_ = cmd.Wait()
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		found := false
		_ = results.ReadJSONL(filepath.Join(out, results.FileEvents), func(_ int, e *results.Event) error {
			if match(*e) {
				found = true
			}
			return nil
		})
		if found {
			return cmd, log
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("event not seen within 90s\n%s", log.String())
	return nil, nil
}

// runIDOf reads the run id from the run_start event.
func runIDOf(t *testing.T, out string) string {
	t.Helper()
	var id string
	_ = results.ReadJSONL(filepath.Join(out, results.FileEvents), func(_ int, e *results.Event) error {
		if e.Type == results.EventRunStart && e.Setup != nil {
			id = e.Setup.RunID
		}
		return nil
	})
	if id == "" {
		t.Fatal("no run id in the events")
	}
	return id
}

// TestInterruptDuringGrowOnDocker: Ctrl-C while a node joins tears the
// whole cluster down (exit 130) and leaves no container or network.
func TestInterruptDuringGrowOnDocker(t *testing.T) {
	need(t)
	out := filepath.Join(t.TempDir(), "int-docker")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, log := runUntil(t, ctx, out, func(e results.Event) bool { return e.Type == results.EventStepRequested })
	runID := runIDOf(t, out)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v\n%s", err, log.String())
	}
	checkGone(t, runID)
}

// TestGCAfterAKilledRun: a run killed outright (no teardown) leaves its
// containers running; `elasticity gc --backend docker --yes --run-id`
// removes them and the network.
func TestGCAfterAKilledRun(t *testing.T) {
	need(t)
	out := filepath.Join(t.TempDir(), "killed-docker")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, _ := runUntil(t, ctx, out, func(e results.Event) bool { return e.Type == results.EventPhaseStart && e.Phase == "steady_state" })
	runID := runIDOf(t, out)
	t.Cleanup(func() { _, _ = docker.New(docker.Options{}).SweepRun(context.Background(), runID, false) })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	left, err := dockertest.Leftovers(ctx, dockerCli, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 4 { // three nodes and the network
		t.Fatalf("a killed run should leave its 3 containers and network: %v", left)
	}
	gcOut, err := exec.CommandContext(ctx, binary, "gc", "--backend", "docker", "--yes", "--run-id", runID).CombinedOutput()
	if err != nil {
		t.Fatalf("gc: %v\n%s", err, gcOut)
	}
	if !strings.Contains(string(gcOut), "4 resource(s) found, 4 expired removed") {
		t.Errorf("gc output:\n%s", gcOut)
	}
	checkGone(t, runID)
}

// TestGCRemovesACrashedRun: a container and a network labelled by a run
// whose keep-until has passed are what a crashed run leaves; `elasticity gc
// --backend docker` lists them (dry run), --yes removes them, and a fresh
// run's network is kept until --run-id names it.
func TestGCRemovesACrashedRun(t *testing.T) {
	need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	crashed, fresh := randomID("gc-crashed"), randomID("gc-fresh")
	t.Cleanup(func() {
		p := docker.New(docker.Options{})
		for _, id := range []string{crashed, fresh} {
			_, _ = p.SweepRun(context.Background(), id, false)
		}
	})
	now := time.Now().UTC()
	labels := func(runID string, keepUntil time.Time) map[string]string {
		return map[string]string{docker.LabelCreatedBy: "elasticity", docker.LabelRunID: runID, docker.LabelScenario: "gc-test",
			docker.LabelCreatedAt: now.Add(-2 * time.Hour).Format(time.RFC3339), docker.LabelKeepUntil: keepUntil.Format(time.RFC3339)}
	}

	// The crashed run: a network and a running emulated node on it.
	old := labels(crashed, now.Add(-time.Hour))
	netID := createNetwork(t, ctx, "elasticity-"+crashed, old)
	nodeLabels := map[string]string{docker.LabelNode: "node-1"}
	for k, v := range old {
		nodeLabels[k] = v
	}
	c, err := docker.StartContainer(ctx, testcontainers.ContainerRequest{
		Image: image, Name: "elasticity-" + crashed + "-node-1", Labels: nodeLabels, Networks: []string{"elasticity-" + crashed},
		ExposedPorts: []string{"9042/tcp"}, // publish one port (docker.StartContainer)
		Cmd:          []string{"node", "--listen-address", "127.0.0.2", "--data-dir", "/var/lib/scylla"},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NanoCPUs, hc.Memory = 1e9, 1<<30
		},
	}, t.Logf)
	if err != nil {
		t.Fatalf("starting the crashed run's node: %v", err)
	}
	id := c.GetContainerID()
	// The fresh run: a network that must survive gc without --run-id.
	createNetwork(t, ctx, "elasticity-"+fresh, labels(fresh, now.Add(time.Hour)))

	gc := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, binary, append([]string{"gc", "--backend", "docker"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("gc %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	out := gc()
	for _, want := range []string{"elasticity-" + crashed + "-node-1", "elasticity-" + crashed, "would remove", "elasticity-" + fresh} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := dockerCli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err != nil {
		t.Fatalf("the dry run removed the container: %v", err)
	}

	out = gc("--yes")
	if !strings.Contains(out, "removed") {
		t.Errorf("--yes output:\n%s", out)
	}
	checkGone(t, crashed)
	if _, err := dockerCli.NetworkInspect(ctx, netID, client.NetworkInspectOptions{}); err == nil {
		t.Errorf("network of the crashed run still exists")
	}
	if left, _ := dockertest.Leftovers(ctx, dockerCli, fresh); len(left) != 1 {
		t.Errorf("the fresh run's network should be kept: %v", left)
	}

	gc("--yes", "--run-id", fresh)
	checkGone(t, fresh)
}

func createNetwork(t *testing.T, ctx context.Context, name string, labels map[string]string) string {
	t.Helper()
	res, err := dockerCli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: labels})
	if err != nil {
		t.Fatalf("creating network %s: %v", name, err)
	}
	return res.ID
}
