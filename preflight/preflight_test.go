package preflight

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiskAndMemoryChecksFailWithReasons(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	_, err := Run(context.Background(), Input{OutDir: dir, PlannedDiskBytes: 1 << 60, PlannedMemoryBytes: 1 << 60})
	var pe *Error
	if !errors.As(err, &pe) || len(pe.Failed) != 2 {
		t.Fatalf("want disk and memory failures, got %v", err)
	}
	if !strings.Contains(err.Error(), "disk:") || !strings.Contains(err.Error(), "needed") || !strings.Contains(err.Error(), "--skip-preflight") {
		t.Fatalf("message: %v", err)
	}
	checks, err := Run(context.Background(), Input{OutDir: dir, PlannedDiskBytes: 1 << 20, PlannedMemoryBytes: 1 << 20})
	if err != nil || len(checks) != 2 {
		t.Fatalf("small plan should pass: %v %v", checks, err)
	}
}

func TestBackendChecks(t *testing.T) {
	exe, _ := os.Executable()
	if _, err := Run(context.Background(), Input{OutDir: t.TempDir(), Checks: []Func{Binary(exe), Loopback("127.0.7.9")}}); err != nil {
		t.Fatalf("local: %v", err)
	}
	_, err := Run(context.Background(), Input{OutDir: t.TempDir(), Checks: []Func{Binary("/nonexistent/elasticity"), Loopback("")}})
	if err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("missing binary: %v", err)
	}
	_, err = Run(context.Background(), Input{OutDir: t.TempDir(), Checks: []Func{Docker(func(context.Context) error { return errors.New("connection refused") })}})
	if err == nil || !strings.Contains(err.Error(), "no Docker engine") {
		t.Fatalf("docker: %v", err)
	}
	empty := func(string) string { return "" }
	_, err = Run(context.Background(), Input{OutDir: t.TempDir(), Checks: []Func{AWSCredentials()}, Getenv: func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return empty(k)
	}})
	if err == nil || !strings.Contains(err.Error(), "no AWS credentials") {
		t.Fatalf("aws without credentials: %v", err)
	}
	_, err = Run(context.Background(), Input{OutDir: t.TempDir(), Checks: []Func{AWSCredentials()}, Getenv: func(k string) string {
		if k == "AWS_ACCESS_KEY_ID" {
			return "AKIAEXAMPLE"
		}
		return ""
	}})
	if err != nil {
		t.Fatalf("aws with env credentials: %v", err)
	}
}

// fs.aio-max-nr headroom (docs/dev/docker-hub.md: aio_max_nr >= aio_nr +
// 51026 * ncpus), for every shard of every container on the host; and an
// image that is neither local nor pullable, named.
func TestDockerAIOAndImageChecks(t *testing.T) {
	val := func(v int64) func() (int64, error) { return func() (int64, error) { return v, nil } }
	aio := func(maxNr, nr int64) Func { return AIO([]int{1, 1, 1, 2}, val(maxNr), val(nr)) }
	in := Input{OutDir: t.TempDir(), Checks: []Func{aio(65536, 0)}}
	_, err := Run(context.Background(), in)
	if err == nil || !strings.Contains(err.Error(), "fs.aio-max-nr is 65536, the run's 5 shards (4 containers, largest --smp 2) need 255130") {
		t.Fatalf("aio: %v", err)
	}
	in.Checks = []Func{aio(1048576, 100)}
	if _, err := Run(context.Background(), in); err != nil {
		t.Fatalf("aio with room: %v", err)
	}
	if checks, _ := Run(context.Background(), Input{OutDir: t.TempDir(), Checks: []Func{AIO(nil, val(0), val(0))}}); len(checks) != 1 {
		t.Errorf("the image double's containers (no --smp) checked for AIO: %+v", checks)
	}
	in.Checks = append(in.Checks, DockerImage(func(context.Context) error {
		return errors.New("docker: image scylladb/scylla:2099.1 is not in the local engine and cannot be pulled: not found")
	}))
	if _, err := Run(context.Background(), in); err == nil || !strings.Contains(err.Error(), "docker-image: docker: image scylladb/scylla:2099.1") {
		t.Fatalf("image: %v", err)
	}
}

// A docker run that does not fit the host's memory fails naming what it
// is made of and the setting to lower.
func TestMemoryCheckNamesTheSetting(t *testing.T) {
	in := Input{OutDir: t.TempDir(), PlannedMemoryBytes: 20 << 30,
		MemoryDetail: "6 containers' --memory 9.0 GiB", MemorySettings: "docker.storage_scale_mib_per_gb or docker.memory",
		MemAvailable: func() (int64, error) { return 16 << 30, nil }}
	_, err := Run(context.Background(), in)
	if err == nil || !strings.Contains(err.Error(), "memory: 16.0 GiB available, 20.0 GiB needed (6 containers' --memory 9.0 GiB): lower docker.storage_scale_mib_per_gb or docker.memory") {
		t.Fatalf("%v", err)
	}
	in.MemAvailable = func() (int64, error) { return 22 << 30, nil }
	if _, err := Run(context.Background(), in); err != nil {
		t.Fatalf("fits: %v", err)
	}
}
