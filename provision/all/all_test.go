package all_test

import (
	"context"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
	_ "github.com/elasticity-dev/elasticity/provision/all"
	"github.com/elasticity-dev/elasticity/provision/aws"
	"github.com/elasticity-dev/elasticity/provision/docker"
)

// Every backend registers itself with the facts the rest of the framework
// asks of it.
func TestBackendsRegistered(t *testing.T) {
	if got := strings.Join(provision.Names(), ","); got != "aws,docker,local,static" {
		t.Fatalf("registered backends %s", got)
	}
	scale := provision.EmulatorScale{StorageScaleMiBPerGB: 0.5, OpsPerVCPU: 2000, StreamMiBPerVCPU: 4, TimeScale: 0.01}
	for _, c := range []struct {
		backend, image string
		emulated       bool
		timeScale      float64
		sweeper        bool
		// storageScale: real ScyllaDB in containers gets scaled disks (a
		// tmpfs per node) and durations, and says so in every report.
		storageScale float64
	}{
		{"local", "", true, 0.01, true, 0.5},
		{"docker", "scylladb/scylla:2025.1", false, docker.DefaultTimeScale, true, docker.DefaultStorageScaleMiBPerGB},
		// Emulated only by the image double's label (provision/docker's
		// tests): a name alone, for an image not built here, is not.
		{"docker", "elasticity-emulator:not-built-here", false, docker.DefaultTimeScale, true, docker.DefaultStorageScaleMiBPerGB},
		{"aws", "", false, 1, true, 0},
		{"static", "", false, 1, false, 0},
	} {
		be, err := provision.Lookup(c.backend)
		if err != nil {
			t.Fatal(err)
		}
		m := be.Model(&provision.Config{Backend: c.backend, Emulator: scale, Options: &docker.Settings{Image: c.image}})
		if m.Emulated != c.emulated || m.TimeScale != c.timeScale || (be.Sweeper != nil) != c.sweeper {
			t.Errorf("%s %s: emulated %v, time scale %v, sweeper %v", c.backend, c.image, m.Emulated, m.TimeScale, be.Sweeper != nil)
		}
		if (m.Emulated || c.storageScale > 0) != (len(m.Limitations) > 0) {
			t.Errorf("%s %s: emulated %v but limitations %q", c.backend, c.image, m.Emulated, m.Limitations)
		}
		if !m.Emulated && (m.StreamMiBPerVCPU != provision.RealStreamMiBPerVCPU || m.StorageScaleMiBPerGB != c.storageScale) {
			t.Errorf("%s: real nodes with model %+v", c.backend, m)
		}
	}
	if _, err := provision.Lookup("gce"); err == nil || !strings.Contains(err.Error(), "have: aws, docker, local, static") {
		t.Errorf("unknown backend: %v", err)
	}
	awsBackend, _ := provision.Lookup("aws")
	lines := awsBackend.PlanLines(&provision.Config{Loaders: provision.LoaderSpec{Count: 1, InstanceType: "c6i.2xlarge"}, Options: &aws.Settings{AMI: "ami-1"}},
		provision.PlanFacts{InstanceCounts: map[string]int{"i4i.large": 3}, EstimatedSeconds: 3600})
	var text []string
	for _, l := range lines {
		text = append(text, l.Label+": "+l.Value)
	}
	if s := strings.Join(text, "\n"); !strings.Contains(s, "3 × i4i.large") || !strings.Contains(s, "1 × c6i.2xlarge") || !strings.Contains(s, "image: ami-1") {
		t.Errorf("aws plan lines:\n%s", s)
	}
}

func TestRegisterRejectsDuplicates(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a second registration of local was accepted")
		}
	}()
	provision.Register(provision.Backend{Name: "local", Model: func(*provision.Config) provision.Model { return provision.Model{} },
		New: func(context.Context, *provision.Config, provision.BuildOptions) (provision.Provider, error) {
			return nil, nil
		}})
}
