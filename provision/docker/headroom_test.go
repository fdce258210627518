package docker

import (
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
)

// The real image's node on its tmpfs must hold its commitlog and the data
// at the fill target under critical_disk_utilization_level: at the default
// scale (4 MiB per GB: 1,872 MiB for an i4i.large, a 64 MiB commitlog) a
// 90% fill fits (93.4%); at 0.2 MiB per GB (93 MiB, the same commitlog
// floor) it does not, and the check names the setting and the scale that
// makes room; at 96% no scale does (the commitlog's share is 3.4%).
func TestHeadroomCheckNamesTheStorageScale(t *testing.T) {
	cfg := func(scale float64) *provision.Config {
		s := DefaultSettings
		s.Image, s.StorageScaleMiBPerGB, s.SMP = "scylladb/scylla:2025.4.5", scale, 2
		return &provision.Config{Cluster: provision.ClusterSpec{InstanceType: "i4i.large"}, Options: &s}
	}
	for _, tc := range []struct {
		scale, fill float64
		ok          bool
		want        string
	}{
		{4, 90, true, "64 MiB commitlog (commitlog_total_space_in_mb) and data at 90%: 93.4% of it"},
		{0.2, 90, false, "raise docker.storage_scale_mib_per_gb to 1.7 or more (the commitlog's 64 MiB floor"},
		{4, 96, false, "lower the fill target below 95%"},
	} {
		c := headroomCheck(cfg(tc.scale), provision.PlanFacts{MaxFillPercent: tc.fill})
		if c.OK != tc.ok || !strings.Contains(c.Detail, tc.want) {
			t.Errorf("scale %g, fill %g%%: %+v, want ok %v and %q", tc.scale, tc.fill, c, tc.ok, tc.want)
		}
	}
}
