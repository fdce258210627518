package docker

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
)

// Image labels the backend reads.
const (
	// LabelImageVersion is set by ScyllaDB's image build
	// (dist/docker/*/build_docker.sh: bconfig --label
	// org.opencontainers.image.version="$version-$release").
	LabelImageVersion = "org.opencontainers.image.version"
	// LabelEmulator marks this repository's image double (Dockerfile.emulator).
	LabelEmulator = "elasticity.emulator"
)

// DefaultVersion is the ScyllaDB version of DefaultImage.
const DefaultVersion = "2025.1"

// defaultVersion is DefaultVersion parsed.
var defaultVersion = scyllaversion.Version{Year: 2025, Minor: 1}

// ImageFor is the image of a docker run: docker.image, else cluster.image,
// else scylladb/scylla tagged with cluster.version, else DefaultImage.
func ImageFor(dockerImage, clusterImage, clusterVersion string) string {
	switch {
	case dockerImage != "":
		return dockerImage
	case clusterImage != "":
		return clusterImage
	case clusterVersion != "":
		return "scylladb/scylla:" + clusterVersion
	}
	return DefaultImage
}

// ImageInfo is what the backend knows of an image before starting it.
type ImageInfo struct {
	Ref      string
	Present  bool // in the local engine
	Pulled   bool // pulled by ResolveImage
	Emulated bool // the image double (LabelEmulator)
	Version  scyllaversion.Version
	// VersionFrom says where Version came from: the image's label,
	// cluster.version, or the default image's known version.
	VersionFrom string
	// Warning is set when cluster.version and the image's label disagree
	// (the label wins).
	Warning string
}

// ErrImageUnavailable: the image is neither in the local engine nor pullable.
var ErrImageUnavailable = errors.New("image not available")

// ResolveImage finds ref in the local engine (pulling it when pull is set and
// it is absent) and reads its version label and emulator mark. The version
// is the label's; without one, configured (cluster.version); without that,
// DefaultVersion for DefaultImage. It is never guessed from the image's
// name.
func ResolveImage(ctx context.Context, ref, configured string, pull bool) (ImageInfo, error) {
	info := ImageInfo{Ref: ref}
	tclog.SetDefault(tclog.NewNoopLogger()) // testcontainers' banner is noise on a plan
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return info, fmt.Errorf("docker: connecting to the engine: %w", err)
	}
	defer cli.Close()
	ins, err := cli.ImageInspect(ctx, ref)
	if err != nil && errdefs.IsNotFound(err) && pull {
		rc, perr := cli.ImagePull(ctx, ref, client.ImagePullOptions{})
		if perr != nil {
			return info, fmt.Errorf("docker: image %s is not in the local engine and cannot be pulled: %v: %w", ref, perr, ErrImageUnavailable)
		}
		_, perr = io.Copy(io.Discard, rc)
		rc.Close()
		if perr != nil {
			return info, fmt.Errorf("docker: pulling image %s: %v: %w", ref, perr, ErrImageUnavailable)
		}
		info.Pulled = true
		ins, err = cli.ImageInspect(ctx, ref)
	}
	if err != nil {
		if errdefs.IsNotFound(err) {
			return info, fmt.Errorf("docker: image %s is not in the local engine: %w", ref, ErrImageUnavailable)
		}
		return info, fmt.Errorf("docker: inspecting image %s: %w", ref, err)
	}
	info.Present = true
	var labels map[string]string
	if ins.Config != nil {
		labels = ins.Config.Labels
	}
	info.Emulated = labels[LabelEmulator] == "true"
	return info, info.setVersion(labels[LabelImageVersion], configured)
}

func (info *ImageInfo) setVersion(label, configured string) error {
	if label != "" {
		v, err := scyllaversion.Parse(label)
		if err != nil {
			return fmt.Errorf("docker: image %s: label %s: %w", info.Ref, LabelImageVersion, err)
		}
		info.Version, info.VersionFrom = v, "image label "+LabelImageVersion+"="+label
		if configured != "" {
			if cv, err := scyllaversion.Parse(configured); err == nil && cv != v {
				info.Warning = fmt.Sprintf("cluster.version %s but image %s is ScyllaDB %s (its %s label): the image's flags are used", configured, info.Ref, v, LabelImageVersion)
			}
		}
		return nil
	}
	return info.fallbackVersion(configured)
}

// fallbackVersion: cluster.version, or DefaultVersion for DefaultImage.
func (info *ImageInfo) fallbackVersion(configured string) error {
	switch {
	case configured != "":
		v, err := scyllaversion.Parse(configured)
		if err != nil {
			return fmt.Errorf("cluster.version: %w", err)
		}
		info.Version, info.VersionFrom = v, "cluster.version"
	case info.Ref == DefaultImage:
		info.Version, info.VersionFrom = defaultVersion, "the default image's version"
	default:
		return fmt.Errorf("docker: cannot tell the ScyllaDB version of image %s (no %s label): set cluster.version", info.Ref, LabelImageVersion)
	}
	return nil
}

// OfflineImageInfo is what can be said without an engine (e.g. for a plan
// when the engine is unreachable): the version from cluster.version or the
// default image, not emulated.
func OfflineImageInfo(ref, configured string) (ImageInfo, error) {
	info := ImageInfo{Ref: ref}
	return info, info.fallbackVersion(configured)
}
