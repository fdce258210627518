// Package image is the double of the official scylladb/scylla container
// image (scylladb/scylladb dist/docker/), built from this repository's
// static binary (Dockerfile.emulator) and tagged with the ScyllaDB version
// it poses as. It mirrors, per version:
//
//   - the entrypoint (dist/docker/docker-entrypoint.py): its command-line
//     flags (dist/docker/commandlineparser.py, parsed as argparse's
//     parse_known_args does) and the scylla command line it writes
//     (dist/docker/scyllasetup.py, run by dist/common/supervisor/scylla-server.sh);
//   - ScyllaDB's refusal of a repeated option (Seastar's app_template::run
//     through boost::program_options, src/core/app-template.cc);
//   - supervisord as PID 1 with the image's programs
//     (dist/docker/etc/supervisord.conf.d/*.conf) and supervisord's restart
//     rules (supervisor/process.py, supervisor/options.py defaults);
//   - node_exporter on 9100 as a separate supervised program
//     (scylla-node-exporter.conf).
//
// The node itself is the emulator (package emulator). Nothing here imports
// the framework.
package image

import (
	"fmt"
	"strconv"
	"strings"
)

// VersionEnv names the environment variable the image sets (from its build
// argument) to say which ScyllaDB version it poses as.
const VersionEnv = "ELASTICITY_IMAGE_SCYLLA_VERSION"

// Version is a ScyllaDB release, year.minor[.patch].
type Version struct {
	Year, Minor, Patch int
}

// ParseVersion reads "2025.1", "2025.1.3" or an image label's
// "2025.1.3-0.20250115.abcdef" (version-release, dist/docker/*/build_docker.sh).
func ParseVersion(s string) (Version, error) {
	core := s
	if i := strings.IndexAny(core, "-~"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q: want YEAR.MINOR[.PATCH]", s)
	}
	var nums [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Version{}, fmt.Errorf("version %q: %q is not a number", s, p)
		}
		nums[i] = n
	}
	return Version{nums[0], nums[1], nums[2]}, nil
}

// AtLeast reports whether v is year.minor or later.
func (v Version) AtLeast(year, minor int) bool {
	return v.Year > year || v.Year == year && v.Minor >= minor
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Year, v.Minor, v.Patch) }
