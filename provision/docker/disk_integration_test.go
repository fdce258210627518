package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/results"
)

// TestReadDiskInsideTheContainer: a node's disk read by df in its
// container is its own tmpfs (catalog disk × the storage scale), and with
// docker.data_mount none the host's file system, said by the source.
func TestReadDiskInsideTheContainer(t *testing.T) {
	c, tag := engineWithImage(t)
	for _, tc := range []struct {
		mount  string
		total  float64 // 0: the host's, the same for every node
		source string
	}{
		{docker.DataTmpfs, 234 << 20, results.DiskSourceContainerDF}, // 468 GB × 0.5 MiB
		{docker.DataNone, 0, results.DiskSourceContainerDFHost},
	} {
		t.Run(tc.mount, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			runID := randomID("disk")
			p := docker.New(docker.Options{Image: tag, Emulated: true, HostCPUs: 2, HostMemoryGB: 16, Logf: t.Logf,
				DataMount: tc.mount, StorageScaleMiBPerGB: 0.5})
			t.Cleanup(func() {
				if err := p.Destroy(context.Background()); err != nil {
					t.Errorf("destroy: %v", err)
				}
				checkGone(t, context.Background(), c, runID)
			})
			nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: runID, Scenario: "disk-it", ClusterName: "it", DC: "dc1",
				Racks: []string{"rack1", "rack2"}, NodesPerRack: 1, InstanceType: "i4i.large", Dir: t.TempDir(), TTL: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var first float64
			for _, n := range nodes {
				u, err := p.ReadDisk(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				if u.Source != tc.source || u.TotalBytes <= 0 || u.UsedBytes+u.AvailBytes != u.TotalBytes || (tc.total > 0 && u.TotalBytes != tc.total) ||
					(tc.total == 0 && (u.TotalBytes < 1e9 || first > 0 && u.TotalBytes != first)) {
					t.Errorf("%s: %+v, want %.0f bytes from %s", n.Name, u, tc.total, tc.source)
				}
				first = u.TotalBytes
			}
		})
	}
}
