package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
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

// Version is a ScyllaDB release: the image's flags depend on it, patch
// included (2025.4.5's entrypoint takes a flag 2025.4.3's does not). A
// version given without a patch ("2025.4", a floating tag's
// cluster.version) counts as its .0 until the image says otherwise.
type Version struct{ Year, Minor, Patch int }

// ParseVersion reads "2025.1", "2025.4.5" or a label's "2025.4.5-0.20250115.abc".
func ParseVersion(s string) (Version, error) {
	core := s
	if i := strings.IndexAny(core, "-~"); i >= 0 {
		core = core[:i]
	}
	bad := fmt.Errorf("ScyllaDB version %q: want YEAR.MINOR[.PATCH], e.g. 2025.4.5", s)
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, bad
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, bad
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Year, v.Minor, v.Patch) }

// IsZero: no version known.
func (v Version) IsZero() bool { return v == Version{} }

// AtLeast compares with year.minor.patch.
func (v Version) AtLeast(y, m, p int) bool {
	if v.Year != y {
		return v.Year > y
	}
	if v.Minor != m {
		return v.Minor > m
	}
	return v.Patch >= p
}

// StallFlag: the entrypoint takes --blocked-reactor-notify-ms from
// 2025.4.4 (dist/docker/commandlineparser.py at
// scylla-2025.4.4-candidate-20260223090100; 2025.4.4 was never released,
// so the first release with it is 2025.4.5; 2025.4.0 to 2025.4.3 have no
// such option) and in every 2026 release. Before, scyllasetup.py
// hard-codes --blocked-reactor-notify-ms 999999999 and a second one makes
// scylla refuse to start ("option '--blocked-reactor-notify-ms' cannot be
// specified more than once").
func (v Version) StallFlag() bool { return v.AtLeast(2025, 4, 4) }

// DCRackFlags: the entrypoint takes --dc and --rack (from scylla-2025.4.0:
// commandlineparser.py, written to cassandra-rackdc.properties by
// scyllasetup.py's write_rackdc_properties). Before, they would reach scylla,
// which does not know them.
func (v Version) DCRackFlags() bool { return v.AtLeast(2025, 4, 0) }

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
	Version  Version
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
		v, err := ParseVersion(label)
		if err != nil {
			return fmt.Errorf("docker: image %s: label %s: %w", info.Ref, LabelImageVersion, err)
		}
		info.Version, info.VersionFrom = v, "image label "+LabelImageVersion+"="+label
		if configured != "" {
			if cv, err := ParseVersion(configured); err == nil && cv != v {
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
		v, err := ParseVersion(configured)
		if err != nil {
			return fmt.Errorf("cluster.version: %w", err)
		}
		info.Version, info.VersionFrom = v, "cluster.version"
	case info.Ref == DefaultImage:
		info.Version, info.VersionFrom = Version{2025, 1, 0}, "the default image's version"
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
