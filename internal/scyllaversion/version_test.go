package scyllaversion

import (
	"strings"
	"testing"
)

// Versions as they reach the framework: cluster.version, the image's
// org.opencontainers.image.version label (version-release), a candidate's
// tag, the emulator's own.
func TestParse(t *testing.T) {
	for s, want := range map[string]Version{
		"2025.1": {2025, 1, 0}, "2025.4.5": {2025, 4, 5}, "2025.4.5-0.20250115.abcdef": {2025, 4, 5},
		"2026.1.0-rc0": {2026, 1, 0}, "2026.1.0~rc0": {2026, 1, 0}, "2025.1.0-emulated": {2025, 1, 0},
	} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "latest", "2025", "2025.1.2.3", "2025.x", "2025.-1"} {
		if v, err := Parse(s); err == nil || !strings.Contains(err.Error(), "ScyllaDB version") {
			t.Errorf("%q: %v, %v; want an error naming the version", s, v, err)
		}
		if _, ok := Known(s); ok {
			t.Errorf("%q: known", s)
		}
	}
}

func TestAtLeastPatchIncluded(t *testing.T) {
	v := Version{2025, 4, 3}
	for _, c := range []struct {
		y, m, p int
		want    bool
	}{{2025, 4, 3, true}, {2025, 4, 4, false}, {2025, 3, 9, true}, {2024, 9, 9, true}, {2025, 5, 0, false}, {2026, 1, 0, false}} {
		if got := v.AtLeast(c.y, c.m, c.p); got != c.want {
			t.Errorf("%v.AtLeast(%d,%d,%d) = %v", v, c.y, c.m, c.p, got)
		}
	}
}

// The features by release tag (see features.go for each source).
func TestFeaturesByRelease(t *testing.T) {
	type f struct{ dcRack, stall, exporter, coredump, parallel bool }
	for s, want := range map[string]f{
		"2025.1.0": {false, false, true, false, false},
		"2025.4.3": {true, false, true, false, false},
		"2025.4.5": {true, true, true, false, false},
		"2026.1.0": {true, true, true, false, true},
		"2026.3.0": {true, true, false, true, true},
	} {
		v, _ := Parse(s)
		got := f{v.DCRackFlags(), v.StallFlag(), v.NodeExporter(), v.CoredumpSetup(), v.ParallelTabletDraining()}
		if got != want {
			t.Errorf("%s: %+v, want %+v", s, got, want)
		}
	}
}
