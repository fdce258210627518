package docker

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// fakeImages stands in for the engine: the labels of the images it knows.
func fakeImages(t *testing.T, images map[string]ImageInfo) {
	t.Helper()
	old := resolveImage
	resolveImage = func(ctx context.Context, ref, configured string, pull bool) (ImageInfo, error) {
		info, ok := images[ref]
		if !ok {
			return ImageInfo{Ref: ref}, fmt.Errorf("docker: image %s is not in the local engine and cannot be pulled: %w", ref, ErrImageUnavailable)
		}
		info.Ref = ref
		return info, nil
	}
	localMu.Lock()
	localCache = map[string]localImage{}
	localMu.Unlock()
	t.Cleanup(func() {
		resolveImage = old
		localMu.Lock()
		localCache = map[string]localImage{}
		localMu.Unlock()
	})
}

func resolvePlan(t *testing.T, sets ...string) *scenarios.Plan {
	t.Helper()
	sc, err := scenarios.Load("../../configs/smoke.yaml", append([]string{"backend=docker"}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	p, err := scenarios.Resolve(sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func planText(p *scenarios.Plan) string {
	var b strings.Builder
	for _, l := range p.Extra {
		b.WriteString(l.Label + ": " + l.Value + "\n")
	}
	return b.String()
}

// The image double is known by its label, whatever its name: emulated plan
// with the local scale model and time scale; the stall flag follows its
// version (2025.1: none, since scyllasetup.py appends 999999999; 2025.4:
// the entrypoint's --blocked-reactor-notify-ms).
func TestDoubleByLabelVersionFromLabel(t *testing.T) {
	fakeImages(t, map[string]ImageInfo{
		"scylladb/scylla:2025.4": {Present: true, Emulated: true, Version: Version{2025, 1}, VersionFrom: "label"},
		"my/double:x":            {Present: true, Emulated: true, Version: Version{2025, 4}, VersionFrom: "label"},
	})
	p := resolvePlan(t, "docker.image=scylladb/scylla:2025.4", "local.ops_per_vcpu=300")
	if !p.Emulated || p.TimeScale >= 1 || p.SteadyState >= 10*60e9 {
		t.Errorf("double: emulated %v, time scale %v, steady state %v (smoke's is 10m unscaled)", p.Emulated, p.TimeScale, p.SteadyState)
	}
	txt := planText(p)
	if strings.Contains(txt, "--blocked-reactor-notify-ms") || !strings.Contains(txt, "--ops-per-vcpu 300") || strings.Count(txt, "docker run") != 4 {
		t.Errorf("2025.1 double named like 2025.4:\n%s", txt)
	}
	p = resolvePlan(t, "docker.image=my/double:x")
	txt = planText(p)
	if strings.Count(txt, "--blocked-reactor-notify-ms 25") != 4 || !strings.Contains(txt, "--dc dc1 --rack rack2") || strings.Contains(txt, "cassandra-rackdc") {
		t.Errorf("2025.4 double:\n%s", txt)
	}
	be, _ := provision.Lookup("docker")
	prov, err := be.New(context.Background(), &p.Provision, provision.BuildOptions{FaultArgs: func(n provision.Node) []string {
		return []string{"--fail-startup=boom"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := prov.(*Provider).Request(provision.Node{Name: "node-4", DC: "dc1", Rack: "rack1", InstanceType: "i4i.large", Address: "10.213.1.5"}, []string{"10.213.1.2"}, "n")
	if err != nil {
		t.Fatal(err)
	}
	if cmd := strings.Join(req.Cmd, " "); strings.Count(cmd, "--blocked-reactor-notify-ms") != 1 || !strings.HasSuffix(cmd, "--ops-per-vcpu 2000 --stream-mib-per-vcpu 4 --time-scale 0.0025 --fail-startup=boom") {
		t.Errorf("run command: %s", cmd)
	}
}

// cluster.version picks the scylladb/scylla tag; a real image is not
// emulated and keeps real durations; without an engine the version is
// cluster.version's.
func TestClusterVersionPicksTheTag(t *testing.T) {
	fakeImages(t, map[string]ImageInfo{})
	p := resolvePlan(t, "cluster.version=2025.4")
	if p.Emulated || p.TimeScale != 1 {
		t.Errorf("real image: emulated %v, time scale %v", p.Emulated, p.TimeScale)
	}
	txt := planText(p)
	if !strings.Contains(txt, "scylladb/scylla:2025.4 (ScyllaDB 2025.4, from cluster.version)") || strings.Count(txt, "--blocked-reactor-notify-ms 25") != 4 {
		t.Errorf("plan:\n%s", txt)
	}
	p = resolvePlan(t)
	if txt := planText(p); !strings.Contains(txt, "scylladb/scylla:2025.1") || strings.Contains(txt, "--blocked-reactor-notify-ms") {
		t.Errorf("default image:\n%s", txt)
	}
	// An unknown image with no version anywhere: said in the plan, refused at run time.
	p = resolvePlan(t, "docker.image=example/unknown:latest")
	if txt := planText(p); !strings.Contains(txt, "set cluster.version") {
		t.Errorf("unknown version:\n%s", txt)
	}
	be, _ := provision.Lookup("docker")
	if _, err := be.New(context.Background(), &p.Provision, provision.BuildOptions{}); err == nil || !strings.Contains(err.Error(), "example/unknown:latest") {
		t.Errorf("run with an unavailable image: %v", err)
	}
}

// The version label as ScyllaDB's build sets it ("$version-$release").
func TestImageVersionFromLabel(t *testing.T) {
	info := ImageInfo{Ref: "scylladb/scylla:latest"}
	if err := info.setVersion("2025.4.1-0.20251105.0a1b2c3d", "2025.1"); err != nil || info.Version != (Version{2025, 4}) || info.Warning == "" {
		t.Errorf("%+v %v", info, err)
	}
	info = ImageInfo{Ref: "x/y:z"}
	if err := info.setVersion("", ""); err == nil {
		t.Errorf("no label, no cluster.version: %+v", info)
	}
}
