package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// The docker backend with the emulator image: emulated plan, the local
// scale model on every node's command line, larger containers for larger
// grow instances; with a ScyllaDB image none of that.
func TestDockerBackendEmulatorImage(t *testing.T) {
	p := resolve(t, "../../configs/smoke.yaml", "backend=docker", "docker.image=elasticity-emulator:test", "local.ops_per_vcpu=300", "local.stream_mib_per_vcpu=3")
	if !p.Emulated || len(p.Limitations) == 0 || !strings.Contains(p.Limitations[0], "elasticity-emulator:test") {
		t.Fatalf("emulated %v, limitations %q", p.Emulated, p.Limitations)
	}
	// The estimate uses the same model as the run: emulated disks, real durations.
	if p.TimeScale != 1 || p.StorageScaleMiBPerGB != 0.5 || p.Workload.EstimatedCapacityOps >= 3000 {
		t.Fatalf("docker emulator plan: time scale %v, storage scale %v, capacity %v", p.TimeScale, p.StorageScaleMiBPerGB, p.Workload.EstimatedCapacityOps)
	}
	be, err := provision.Lookup(scenarios.BackendDocker)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := be.New(context.Background(), &p.Provision, provision.BuildOptions{FaultArgs: func(n provision.Node) []string {
		if n.Name == "node-4" {
			return []string{"--fail-startup=boom"}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	dp := prov.(*docker.Provider)
	req, err := dp.Request(provision.Node{Name: "node-4", DC: "dc1", Rack: "rack1", InstanceType: "i4i.large", Address: "10.213.1.5"}, []string{"10.213.1.2"}, "n")
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Join(req.Cmd, " ")
	for _, want := range []string{"--storage-scale-mib-per-gb 0.5", "--ops-per-vcpu 300", "--stream-mib-per-vcpu 3", "--blocked-reactor-notify-ms 25", "--fail-startup=boom"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command lacks %q: %s", want, cmd)
		}
	}
	// docker.smp/memory (defaults 1 and 2 GiB) size cluster.instance_type; i4i.xlarge doubles them.
	large, _ := provision.LookupInstanceType("i4i.large")
	xlarge, _ := provision.LookupInstanceType("i4i.xlarge")
	s1, m1 := dp.Resources(large)
	s2, m2 := dp.Resources(xlarge)
	if s1 != 1 || m1 != 2 || (s2 != 2 && s2 != s1) || m2 != 4 {
		t.Errorf("resources: i4i.large %d/%v, i4i.xlarge %d/%v", s1, m1, s2, m2)
	}

	if p := resolve(t, "../../configs/smoke.yaml", "backend=docker", "docker.image=scylladb/scylla:2025.1"); p.Emulated || len(p.Limitations) != 0 {
		t.Fatalf("a ScyllaDB image is not emulated: %v %q", p.Emulated, p.Limitations)
	}
}
