// Package scyllaversion is the one reader of ScyllaDB release numbers
// ("2025.1", "2025.4.5", an image label's "2025.4.5-0.20250115.abc", a
// candidate's "2026.1.0-rc0") and the one list of what each release first
// has, for every side that needs it: the emulated node and its image double,
// the docker backend and the planner and reports. It is a leaf (standard
// library only), so the emulator, which imports nothing from the framework,
// may import it as it does internal/schedlag.
package scyllaversion

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a ScyllaDB release, year.minor[.patch]. A version given
// without a patch ("2025.4", a floating tag) counts as its .0.
type Version struct{ Year, Minor, Patch int }

// Parse reads YEAR.MINOR[.PATCH], ignoring a "-release" or "~rc" suffix
// (version-release of dist/docker/*/build_docker.sh's image label).
func Parse(s string) (Version, error) {
	core := s
	if i := strings.IndexAny(core, "-~"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("ScyllaDB version %q: want YEAR.MINOR[.PATCH], e.g. 2025.4.5", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("ScyllaDB version %q: %q is not a number", s, p)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// Known is the version s names, and false when s is not a version (unset,
// "latest"): callers that must say "unknown" rather than fail.
func Known(s string) (Version, bool) {
	v, err := Parse(s)
	return v, err == nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Year, v.Minor, v.Patch) }

// IsZero: no version known.
func (v Version) IsZero() bool { return v == Version{} }

// AtLeast reports whether v is year.minor.patch or later: patch releases
// of a branch change the image too (2025.4.4 made
// --blocked-reactor-notify-ms an entrypoint flag).
func (v Version) AtLeast(year, minor, patch int) bool {
	if v.Year != year {
		return v.Year > year
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}
