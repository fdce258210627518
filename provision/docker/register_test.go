package docker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/provision"
	// The image double runs the local section's scale model: a scenario
	// has that section when the local backend is registered.
	_ "github.com/elasticity-dev/elasticity/provision/local"
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

func resolvePlan(t *testing.T, sets ...string) *plan.Plan {
	t.Helper()
	sc, err := scenarios.Load("../../configs/smoke.yaml", append([]string{"backend=docker"}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func planText(p *plan.Plan) string {
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
		"scylladb/scylla:2025.4": {Present: true, Emulated: true, Version: scyllaversion.Version{Year: 2025, Minor: 1}, VersionFrom: "label"},
		"my/double:x":            {Present: true, Emulated: true, Version: scyllaversion.Version{Year: 2025, Minor: 4, Patch: 5}, VersionFrom: "label"},
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
		t.Errorf("2025.4.5 double:\n%s", txt)
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
// emulated and runs on the docker time scale; without an engine the
// version is cluster.version's, and the stall flag follows its exact
// patch: 2025.4.0 has none (its scyllasetup.py appends 999999999 and its
// commandlineparser.py has no such option), 2025.4.5 and 2026.3.0 take it.
func TestClusterVersionPicksTheTag(t *testing.T) {
	fakeImages(t, map[string]ImageInfo{})
	for _, tc := range []struct {
		version, shown string
		stall          bool
	}{
		{"2025.4", "ScyllaDB 2025.4.0", false},
		{"2025.4.0", "ScyllaDB 2025.4.0", false},
		{"2025.4.3", "ScyllaDB 2025.4.3", false},
		// Never released; its candidate's entrypoint already has the flag.
		{"2025.4.4", "ScyllaDB 2025.4.4", true},
		{"2025.4.5", "ScyllaDB 2025.4.5", true},
		{"2026.1.0", "ScyllaDB 2026.1.0", true},
		{"2026.3.0", "ScyllaDB 2026.3.0", true},
	} {
		p := resolvePlan(t, "cluster.version="+tc.version)
		if p.Emulated || p.TimeScale != DefaultTimeScale {
			t.Errorf("%s: real image: emulated %v, time scale %v", tc.version, p.Emulated, p.TimeScale)
		}
		txt := planText(p)
		want := 0
		if tc.stall {
			want = 4
		}
		if !strings.Contains(txt, "scylladb/scylla:"+tc.version+" ("+tc.shown+", from cluster.version)") || strings.Count(txt, "--blocked-reactor-notify-ms 25") != want ||
			strings.Count(txt, "--blocked-reactor-notify-ms") != want || strings.Count(txt, "--dc dc1") != 4 {
			t.Errorf("%s: plan:\n%s", tc.version, txt)
		}
	}
	p := resolvePlan(t)
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

// A floating tag resolves to what the image's label says, patch included:
// scylladb/scylla:2025.4 labelled 2025.4.5 gets the stall flag, labelled
// 2025.4.3 does not, whatever cluster.version says.
func TestFloatingTagFollowsTheLabel(t *testing.T) {
	for label, stall := range map[string]bool{"2025.4.5-0.20260110.abc": true, "2025.4.3-0.20251201.def": false} {
		info := ImageInfo{Ref: "scylladb/scylla:2025.4", Present: true}
		if err := info.setVersion(label, "2025.4"); err != nil {
			t.Fatal(err)
		}
		fakeImages(t, map[string]ImageInfo{"scylladb/scylla:2025.4": info})
		txt := planText(resolvePlan(t, "cluster.version=2025.4"))
		if strings.Contains(txt, "--blocked-reactor-notify-ms") != stall {
			t.Errorf("label %s: stall flag %v, want %v:\n%s", label, !stall, stall, txt)
		}
	}
}

// The version label as ScyllaDB's build sets it ("$version-$release").
func TestImageVersionFromLabel(t *testing.T) {
	info := ImageInfo{Ref: "scylladb/scylla:latest"}
	if err := info.setVersion("2025.4.1-0.20251105.0a1b2c3d", "2025.1"); err != nil || info.Version != (scyllaversion.Version{Year: 2025, Minor: 4, Patch: 1}) || info.Warning == "" {
		t.Errorf("%+v %v", info, err)
	}
	info = ImageInfo{Ref: "x/y:z"}
	if err := info.setVersion("", ""); err == nil {
		t.Errorf("no label, no cluster.version: %+v", info)
	}
}

// poseAsHost makes the sizing see a host of cpus CPUs and memGB GiB.
func poseAsHost(t *testing.T, cpus int, memGB float64) {
	oc, om := hostCPUs, hostMemoryGB
	hostCPUs, hostMemoryGB = func() int { return cpus }, func() float64 { return memGB }
	t.Cleanup(func() { hostCPUs, hostMemoryGB = oc, om })
}

// The main scenario with the real default image on a 2-core, 24 GiB
// machine (issue 39): at most 64 GiB to write (it was 1.15 TiB), an
// estimate under 45 minutes (it was ≈ 5 h 48 min), every node's mount in
// the plan, and the memory it all takes within the host's.
func TestMainScenarioFitsOneMachine(t *testing.T) {
	fakeImages(t, map[string]ImageInfo{})
	poseAsHost(t, 2, 24)
	sc, err := scenarios.Load("../../configs/90pct-scaleout.yaml", []string{"backend=docker"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var write float64
	for _, f := range p.Fill {
		write += f.WriteBytes
	}
	if p.Emulated || write > 64<<30 || p.Estimated() > 45*time.Minute || p.Estimated() < 15*time.Minute {
		t.Errorf("emulated %v, to write %.1f GiB, estimate %s", p.Emulated, write/(1<<30), p.Estimated())
	}
	txt := planText(p)
	if strings.Count(txt, "--tmpfs /var/lib/scylla:rw,size=1872m,mode=1777") != 3 || strings.Count(txt, "--tmpfs /var/lib/scylla:rw,size=15000m,mode=1777") != 3 {
		t.Errorf("mounts:\n%s", txt)
	}
	fit := MemoryFitFor(&p.Provision, ImageInfo{Ref: DefaultImage, Version: scyllaversion.Version{Year: 2025, Minor: 1}}, map[string]int{"i4i.large": 3, "i4i.4xlarge": 3})
	// 3 × 1 GiB + 3 × 2 GiB (2 shards), 6 × 512 MiB, 1.25 × 3 × 1872 MiB, 512 MiB.
	if fit.DatabaseBytes != 9<<30 || fit.OverheadBytes != 3<<30 || fit.DataBytes != int64(1.25*3*1872*(1<<20)) || fit.NeedBytes() > 20<<30 || !strings.Contains(txt, "memory: at most 19.4 GiB of this host's 24.0 GiB") {
		t.Errorf("fit %+v = %d:\n%s", fit, fit.NeedBytes(), txt)
	}
	// Larger disks do not fit: the pre-flight's hint names the setting.
	sc, err = scenarios.Load("../../configs/90pct-scaleout.yaml", []string{"backend=docker", "docker.storage_scale_mib_per_gb=8"})
	if err != nil {
		t.Fatal(err)
	}
	p, err = plan.Resolve(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	needs := Needs(&p.Provision, map[string]int{"i4i.large": 3, "i4i.4xlarge": 3})
	if needs.Memory.NeedBytes() < 24<<30 || !strings.Contains(needs.Memory.Settings, "docker.storage_scale_mib_per_gb") || !needs.Mounted {
		t.Errorf("scale 8: %+v", needs)
	}
}
