// Package dockertest helps tests of the Docker backend: it finds an engine,
// builds the emulator image from this repository with no registry (the image
// is FROM scratch) and lists what runs left behind.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/emulator/image"
	"github.com/elasticity-dev/elasticity/provision/docker"
)

// DefaultRepo is the repository of the emulator images tests build, one tag
// per ScyllaDB version the double poses as; ELASTICITY_EMULATOR_IMAGE
// overrides the repository.
const DefaultRepo = "elasticity-emulator"

// DefaultVersion is the version tests pose as unless they say.
const DefaultVersion = "2025.1"

// Versions are the releases the double is built as where behaviour
// changes (emulator/image): 2025.1.0 (the stall threshold hard-coded by
// scyllasetup.py), 2025.4.0 (--dc/--rack, still the hard-coded threshold),
// 2025.4.5 (--blocked-reactor-notify-ms an entrypoint flag), 2026.1.0 and
// 2026.3.0 (no node_exporter). The Makefile's EMULATOR_VERSIONS lists the same.
var Versions = []string{"2025.1.0", "2025.4.0", "2025.4.5", "2026.1.0", "2026.3.0"}

// Tag is the image name tests use for a ScyllaDB version: "2025.1" (built
// as 2025.1.0) or "2025.4.5".
func Tag(version string) string {
	repo := DefaultRepo
	if r := os.Getenv("ELASTICITY_EMULATOR_IMAGE"); r != "" {
		repo, _, _ = strings.Cut(r, ":")
	}
	return repo + ":" + version
}

func init() {
	// Ryuk (the testcontainers reaper) is an image we cannot pull here; our
	// labels and `elasticity gc` do its job.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

// Client connects to the engine and pings it; a non-nil error means tests
// needing Docker should skip.
func Client(ctx context.Context) (*testcontainers.DockerClient, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to the Docker engine: %w", err)
	}
	if _, err := c.Ping(ctx, client.PingOptions{}); err != nil {
		c.Close()
		return nil, fmt.Errorf("pinging the Docker engine: %w", err)
	}
	return c, nil
}

// RepoRoot finds the module root (the directory holding go.mod) from the
// working directory upwards.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BuildBinary builds a static elasticity binary (CGO off, so it runs in a
// scratch image) into dir and returns its path.
func BuildBinary(ctx context.Context, repoRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "elasticity")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/elasticity")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the static elasticity binary: %w\n%s", err, out)
	}
	return bin, nil
}

// FullVersion is the release a version names: "2025.1" is 2025.1.0.
func FullVersion(version string) string {
	if strings.Count(version, ".") == 1 {
		return version + ".0"
	}
	return version
}

// buildContext is the tar the engine builds Dockerfile.emulator from: the
// Dockerfile, the binary and rootfs/usr/bin/NAME symbolic links to
// /elasticity for the image's PATH programs (image.PathPrograms).
func buildContext(dockerfile, bin []byte, mtime time.Time) (*bytes.Buffer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, dockerfile}, {"elasticity", 0o755, bin}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"rootfs/", "rootfs/usr/", "rootfs/usr/bin/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	for _, p := range image.PathPrograms {
		if err := tw.WriteHeader(&tar.Header{Name: "rootfs/usr/bin/" + p, Typeflag: tar.TypeSymlink, Linkname: "/elasticity", Mode: 0o777, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	return &buf, tw.Close()
}

// BuildImage builds Dockerfile.emulator of repoRoot with the given binary,
// posing as ScyllaDB version (its SCYLLA_VERSION build argument: "2025.4.5",
// or "2025.1" for 2025.1.0), tagged tag. The image says its version as the
// real one does (the org.opencontainers.image.version label and `scylla
// --version`); the tag is only a name.
func BuildImage(ctx context.Context, c *testcontainers.DockerClient, repoRoot, binary, tag, version string) error {
	dockerfile, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile.emulator"))
	if err != nil {
		return fmt.Errorf("reading the emulator Dockerfile: %w", err)
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("reading the binary: %w", err)
	}
	st, err := os.Stat(binary)
	if err != nil {
		return fmt.Errorf("reading the binary: %w", err)
	}
	// A stable modification time lets the engine's cache reuse the image
	// of an unchanged binary instead of piling up copies.
	mtime := st.ModTime()
	buf, err := buildContext(dockerfile, bin, mtime)
	if err != nil {
		return fmt.Errorf("writing the build context: %w", err)
	}
	var oldID string
	if ins, err := c.ImageInspect(ctx, tag); err == nil {
		oldID = ins.ID
	}
	full := FullVersion(version)
	res, err := c.ImageBuild(ctx, buf, client.ImageBuildOptions{Tags: []string{tag}, Dockerfile: "Dockerfile", Remove: true, ForceRemove: true,
		BuildArgs: map[string]*string{"SCYLLA_VERSION": &full},
		Labels:    map[string]string{"elasticity.image": "emulator"}})
	if err != nil {
		return fmt.Errorf("building image %s: %w", tag, err)
	}
	defer res.Body.Close()
	// The engine reports build failures inside the JSON stream, not as an HTTP error.
	dec := json.NewDecoder(res.Body)
	var log strings.Builder
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("reading the build output of %s: %w", tag, err)
		}
		log.WriteString(m.Stream)
		if m.Error != "" || m.ErrorDetail.Message != "" {
			return fmt.Errorf("building image %s: %s %s\n%s", tag, m.Error, m.ErrorDetail.Message, log.String())
		}
	}
	// Drop the image this build replaced under tag (best effort: a
	// container may still use it), so that rebuilds do not pile up.
	if ins, err := c.ImageInspect(ctx, tag); err == nil && oldID != "" && ins.ID != oldID {
		_, _ = c.ImageRemove(ctx, oldID, client.ImageRemoveOptions{PruneChildren: true})
	}
	return nil
}

// EmulatorImage builds the binary and the image posing as DefaultVersion in
// one go (tmp holds the binary). ELASTICITY_EMULATOR_BINARY names a static
// binary built already (CGO_ENABLED=0), which skips the Go build: on a
// loaded machine a cold static build takes minutes.
func EmulatorImage(ctx context.Context, c *testcontainers.DockerClient, tmp string) (tag, binary string, err error) {
	tags, binary, err := EmulatorImages(ctx, c, tmp, DefaultVersion)
	if err != nil {
		return "", "", err
	}
	return tags[0], binary, nil
}

// EmulatorImages builds the binary once and one image per version (the
// binary's layers are shared; each version adds only its metadata),
// returning the tags (Tag(version)) in order. A version is "2025.4.5", or
// "2025.4" for 2025.4.0 tagged 2025.4.
func EmulatorImages(ctx context.Context, c *testcontainers.DockerClient, tmp string, versions ...string) (tags []string, binary string, err error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, "", err
	}
	if binary = os.Getenv("ELASTICITY_EMULATOR_BINARY"); binary == "" {
		binary, err = BuildBinary(ctx, root, tmp)
		if err != nil {
			return nil, "", err
		}
	}
	for _, v := range versions {
		tag := Tag(v)
		if err := BuildImage(ctx, c, root, binary, tag, v); err != nil {
			return nil, "", err
		}
		tags = append(tags, tag)
	}
	return tags, binary, nil
}

// TagAlias gives the image tagged tag another name, alias (a floating tag
// such as scylladb/scylla:2025.4 for a 2025.4.5 double): the backend must
// then read the version from the image, not from the name.
func TagAlias(ctx context.Context, c *testcontainers.DockerClient, tag, alias string) error {
	if _, err := c.ImageTag(ctx, client.ImageTagOptions{Source: tag, Target: alias}); err != nil {
		return fmt.Errorf("tagging image %s as %s: %w", tag, alias, err)
	}
	return nil
}

// Leftovers lists containers and networks labelled as ours (optionally of
// one run only), as "container name" / "network name" lines.
func Leftovers(ctx context.Context, c *testcontainers.DockerClient, runID string) ([]string, error) {
	f := client.Filters{}.Add("label", docker.LabelCreatedBy+"=elasticity")
	if runID != "" {
		f = f.Add("label", docker.LabelRunID+"="+runID)
	}
	cs, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	var out []string
	for _, s := range cs.Items {
		out = append(out, fmt.Sprintf("container %v (%s, run %s)", s.Names, s.State, s.Labels[docker.LabelRunID]))
	}
	ns, err := c.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	for _, n := range ns.Items {
		out = append(out, fmt.Sprintf("network %s (run %s)", n.Name, n.Labels[docker.LabelRunID]))
	}
	return out, nil
}
