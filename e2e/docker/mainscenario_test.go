package docker

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/results"
)

// mainVersions are the ScyllaDB versions the main scenario runs against:
// 2025.4.0 (its entrypoint has no --blocked-reactor-notify-ms), 2025.4.5
// (it has) and 2026.3.0 (no node_exporter: disk figures from df in the
// container).
var mainVersions = []string{"2025.4.0", "2025.4.5", "2026.3.0"}

// runElasticity runs the binary with a deadline (SIGINT on expiry, so that
// the run tears down) and returns its exit code and output.
func runElasticity(t *testing.T, d time.Duration, args ...string) (int, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	start := time.Now()
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return code, log.String(), time.Since(start)
}

func readResult(t *testing.T, out string) results.Result {
	t.Helper()
	res, err := results.ReadResult(filepath.Join(out, results.FileResult))
	if err != nil {
		t.Fatalf("result.json: %v", err)
	}
	return *res
}

func readSamples(t *testing.T, out string) []results.NodeSample {
	t.Helper()
	var samples []results.NodeSample
	if err := results.ReadJSONL(filepath.Join(out, results.FileMetrics), func(_ int, s *results.NodeSample) error {
		samples = append(samples, *s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return samples
}

// TestMainScenarioOnDocker is issue 39's acceptance on the docker backend:
// configs/90pct-scaleout.yaml (3 × i4i.large filled to 70% then 90%, one
// i4i.4xlarge added per rack, serially, under load) against the image
// double posing as 2025.4.5 (node_exporter in the image, the stall flag in
// its entrypoint). Every node's disk figure is its own tmpfs's (468 GB ×
// 0.2 MiB = 93 MiB for an i4i.large, 750 MiB for an i4i.4xlarge; the
// double's scale model, local.*, since docker.* are left to the image);
// the Hard Limit snapshot is within 2 points of 90% on the fullest node.
// The scenario runs as written: the double's time scale makes its
// 30-minute holds 4.5 s. Wall times are logged. What differs by version is
// TestMainScenarioVersionsOnDocker's.
func TestMainScenarioOnDocker(t *testing.T) {
	need(t)
	mainScenarioOnDocker(t, "2025.4.5", true)
}

// TestMainScenarioVersionsOnDocker: the same scenario, shortened (no fill,
// one node added), against the double posing as the other main
// versions: 2025.4.0 (no stall flag in its entrypoint) and 2026.3.0 (no
// node_exporter: every disk figure from df in the container). Each node's
// disk is still its tmpfs, read from where that version's image has it.
// (One full run and two short ones instead of three full ones: e2e/docker
// took 660 s of CI's 1,800.)
func TestMainScenarioVersionsOnDocker(t *testing.T) {
	need(t)
	for _, version := range []string{"2025.4.0", "2026.3.0"} {
		t.Run(version, func(t *testing.T) { mainScenarioOnDocker(t, version, false) })
	}
}

func mainScenarioOnDocker(t *testing.T, version string, full bool) {
	image := images[version]
	if image == "" {
		t.Fatalf("no image double built for %s", version)
	}
	out := filepath.Join(t.TempDir(), "90pct")
	args := []string{"run", "../../configs/90pct-scaleout.yaml", "--out", out,
		"--backend", "docker", "--set", "docker.image=" + image,
		// Wall-clock ceilings, so that a broken run fails in minutes.
		"--set", "timeouts.node_ready=3m", "--set", "timeouts.data_balanced=4m",
		// The latency recovery wait as on the local backend (10 s at the
		// double's time scale): on 2 loaded cores P99 may never get back under
		// 10 ms, and each of the 3 joins would wait it out.
		"--set", "timeouts.latency_recovered=15s", "--set", "timeouts.fill=4m"}
	grow := 3
	if !full {
		// No fill: what differs by version is where the disk figures come
		// from, which the samples show on empty nodes too (the fill took
		// about 20 s of each run).
		args = append(args, "--set", "dataset.fill=[]",
			"--set", "nemesis.0.grow_cluster.racks=[rack1]", "--set", "nemesis.0.grow_cluster.name=Add 1 x i4i.4xlarge")
		grow = 1
	}
	code, log, took := runElasticity(t, 12*time.Minute, args...)
	res := readResult(t, out)
	defer checkGone(t, res.Setup.RunID)
	// 1 with thresholds alone failed: a loaded machine may miss the 10 ms
	// P99; the pipeline still ran. Any other reason (a database error
	// event, lost data) fails the test: accepting every exit 1 hid four
	// NO_SPACE_ERROR events at 95-96% disk here for several stops.
	if code != 0 && !(code == 1 && res.Reason == "thresholds failed") {
		t.Fatalf("exit %d after %s\n%s", code, took.Round(time.Second), log)
	}
	t.Logf("%s: 90pct-scaleout (full %v) on docker took %s (exit %d, status %s: %.300s)", version, full, took.Round(time.Second), code, res.Status, res.Reason)

	mount := map[string]float64{"i4i.large": 93 << 20, "i4i.4xlarge": 750 << 20}
	// node_exporter where the image has it; df in the container otherwise,
	// and for a sample taken before a new node's node_exporter answers.
	sources := map[string]int{}
	nodes := map[string]bool{}
	bad := 0
	for _, s := range readSamples(t, out) {
		if s.Error != "" {
			continue
		}
		nodes[s.Node] = true
		sources[s.Source]++
		if s.DiskTotalBytes != mount[s.InstanceType] && bad < 3 {
			bad++
			t.Errorf("%s (%s) at %s: disk %.0f bytes from %s, want its tmpfs's %.0f", s.Node, s.InstanceType, s.Time.Format(time.TimeOnly),
				s.DiskTotalBytes, s.Source, mount[s.InstanceType])
		}
	}
	t.Logf("%s: disk samples by source %v", version, sources)
	withExporter := monitorSourceFor(version) == "node_exporter"
	if len(nodes) != 3+grow || sources[results.DiskSourceRESTLoadFallback] > 0 || sources[results.DiskSourceContainerDFHost] > 0 ||
		withExporter != (sources["node_exporter"] > sources[results.DiskSourceContainerDF]) || !withExporter && sources["node_exporter"] > 0 {
		t.Errorf("disk samples of %d nodes (want %d), by source %v (node_exporter in the image: %v)", len(nodes), 3+grow, sources, withExporter)
	}
	hard := false
	for _, ph := range res.Disk {
		if ph.Phase != "Hard Limit" {
			continue
		}
		hard = true
		top := 0.0
		for _, n := range ph.Nodes {
			top = math.Max(top, n.UsagePercent)
		}
		if math.Abs(top-90) > 2 {
			t.Errorf("Hard Limit snapshot: fullest node at %.1f%%, want 90 ± 2: %+v", top, ph.Nodes)
		}
		t.Logf("%s: Hard Limit snapshot, fullest node %.1f%%", version, top)
	}
	if !hard && full {
		t.Errorf("no Hard Limit disk snapshot in %+v", res.Disk)
	}
	grown := 0
	for _, n := range res.Nodes {
		if n.AddedBy != "" {
			grown++
		}
	}
	if grown != grow {
		t.Errorf("%d nodes grown, want %d", grown, grow)
	}
	if strings.Contains(strings.Join(res.Setup.Limitations, " "), "REST load") {
		t.Errorf("a docker run fell back to REST load: %v", res.Setup.Limitations)
	}
}

// monitorSourceFor is where the double of a version reads its disk: its
// node_exporter up to 2026.2, df in the container from 2026.3
// (supervisord.conf.d/scylla-node-exporter.conf removed in scylla-2026.3.0-rc0).
func monitorSourceFor(version string) string {
	v, err := scyllaversion.Parse(version)
	if err == nil && v.AtLeast(2026, 3, 0) {
		return results.DiskSourceContainerDF
	}
	return "node_exporter"
}

// TestUnmountedDataShowsTheHostsDisk: with docker.data_mount none nothing
// is mounted at /var/lib/scylla, so (as with the real image) every node's
// disk figure is the host's file system, the same for every node; the
// samples' source and the report say so. No fill: it would fill the host.
func TestUnmountedDataShowsTheHostsDisk(t *testing.T) {
	need(t)
	image := images["2026.3.0"]
	out := filepath.Join(t.TempDir(), "unmounted")
	code, log, took := runElasticity(t, 4*time.Minute, "run", "../../configs/smoke.yaml", "--out", out,
		"--backend", "docker", "--set", "docker.image="+image, "--set", "docker.data_mount=none",
		"--set", "dataset.fill=[]", "--set", "nemesis=[]", "--set", "timeouts.node_ready=2m")
	res := readResult(t, out)
	defer checkGone(t, res.Setup.RunID)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d after %s\n%s", code, took.Round(time.Second), log)
	}
	var total float64
	seen := 0
	for _, s := range readSamples(t, out) {
		if s.Error != "" {
			continue
		}
		seen++
		if s.Source != results.DiskSourceContainerDFHost || (total != 0 && s.DiskTotalBytes != total) || s.DiskTotalBytes < 1e9 {
			t.Fatalf("%s: %.0f bytes from %s; want the host's file system (%.0f, the same for every node) from %s",
				s.Node, s.DiskTotalBytes, s.Source, total, results.DiskSourceContainerDFHost)
		}
		total = s.DiskTotalBytes
	}
	if seen == 0 {
		t.Fatal("no disk samples")
	}
	// The engine's volumes live in its root directory, on this host.
	if root := docker.DataRoot(context.Background()); root != "" {
		var st syscall.Statfs_t
		if err := syscall.Statfs(root, &st); err == nil && float64(st.Blocks)*float64(st.Bsize) != total {
			t.Errorf("nodes report %.0f bytes, the host's %s has %d", total, root, st.Blocks*uint64(st.Bsize))
		}
	}
	report, err := os.ReadFile(filepath.Join(out, results.FileReportMD))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(report, []byte("are the host's file system")) || !bytes.Contains(report, []byte("docker.data_mount none")) {
		t.Errorf("the report does not say the figures are the host's:\n%s", report)
	}
}
