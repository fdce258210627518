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

// AtLeastRelease reports whether v is year.minor.patch or later: patch
// releases of a branch change the image too (2025.4.4 made
// --blocked-reactor-notify-ms an entrypoint flag).
func (v Version) AtLeastRelease(year, minor, patch int) bool {
	if v.Year != year || v.Minor != minor {
		return v.AtLeast(year, minor)
	}
	return v.Patch >= patch
}

// The image's features by the first release that has them, each from
// scylladb/scylladb at the release tags (git show TAG:path).

// HasDCRackFlags: --dc and --rack of dist/docker/commandlineparser.py,
// written to cassandra-rackdc.properties by scyllasetup.py
// write_rackdc_properties: from scylla-2025.4.0 (absent @scylla-2025.3.8).
func (v Version) HasDCRackFlags() bool { return v.AtLeast(2025, 4) }

// HasStallFlag: --blocked-reactor-notify-ms (default '25') of
// commandlineparser.py, passed on by scyllasetup.py arguments(): from
// 2025.4.4 (commit 793e2fa7f2 "dist/docker: add configurable
// blocked-reactor-notify-ms parameter", first in
// scylla-2025.4.4-candidate-20260223090100, first released as
// scylla-2025.4.5; present @scylla-2026.1.0-rc0). scylla-2025.1.0 to
// scylla-2025.4.3 hard-code "--blocked-reactor-notify-ms 999999999" in
// scyllasetup.py arguments() and have no such option.
func (v Version) HasStallFlag() bool { return v.AtLeastRelease(2025, 4, 4) }

// HasNodeExporter: dist/docker/etc/supervisord.conf.d/scylla-node-exporter.conf
// (and the scylla-node-exporter package in redhat/build_docker.sh) up to
// 2026.2; removed first in scylla-2026.3.0-rc0.
func (v Version) HasNodeExporter() bool { return !v.AtLeast(2026, 3) }

// HasCoredumpSetup: docker-entrypoint.py calls scyllasetup.py
// coredumpSetup(), which creates <workdir>/coredump: from scylla-2026.3.0-rc0.
func (v Version) HasCoredumpSetup() bool { return v.AtLeast(2026, 3) }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Year, v.Minor, v.Patch) }
