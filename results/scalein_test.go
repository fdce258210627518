package results

import (
	"strings"
	"testing"
)

// Scale-in follows the version: PARALLEL_TABLET_DRAINING is in the
// scylladb/scylladb tags from scylla-2026.1.0-rc0 on and in no 2025.x tag.
func TestScaleInByVersion(t *testing.T) {
	for v, want := range map[string]string{
		"2025.1": ScaleInQueued, "2025.4.10": ScaleInQueued, "2025.1.0-emulated": ScaleInQueued,
		"2026.1.0-rc0": ScaleInParallel, "2026.1": ScaleInParallel, "2026.3.0": ScaleInParallel, "2027.1": ScaleInParallel,
		"": "", "latest": "",
	} {
		if got := ScaleIn(v); got != want {
			t.Errorf("%q: %q, want %q", v, got, want)
		}
	}
	if n := ScaleInNote(""); !strings.Contains(n, "not recorded") || !strings.Contains(n, "Before ScyllaDB 2026.1") || !strings.Contains(n, "From ScyllaDB 2026.1") {
		t.Errorf("unknown version: %q", n)
	}
	if n := ScaleInNote("2026.1.0"); strings.Contains(n, "Before") || !strings.Contains(n, "in parallel") {
		t.Errorf("2026.1: %q", n)
	}
}
