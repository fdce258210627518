package local

import (
	"testing"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"
)

// The local backend passes its scale model to every node; a bare
// `elasticity node` uses the emulator's own defaults. Keep them equal so
// both describe the same machine.
func TestDefaultsMatchEmulator(t *testing.T) {
	c := emulator.DefaultConfig()
	d := DefaultSettings
	if d.StorageScaleMiBPerGB != c.StorageScaleMiBPerGB || d.OpsPerVCPU != c.OpsPerVCPU ||
		d.StreamMiBPerVCPU != c.StreamMiBPerVCPU || d.BlockedReactorNotifyMS != c.BlockedReactorNotifyMS {
		t.Errorf("local.DefaultSettings %+v differs from the emulator's defaults (storage %g MiB/GB, %g ops/vCPU, %g MiB/s/vCPU, %d ms)",
			d, c.StorageScaleMiBPerGB, c.OpsPerVCPU, c.StreamMiBPerVCPU, c.BlockedReactorNotifyMS)
	}
	// `elasticity cluster up` and the benchmarks start nodes as the local backend does.
	if localcluster.DefaultTimeScale != d.TimeScale {
		t.Errorf("localcluster.DefaultTimeScale %g, local.time_scale default %g", localcluster.DefaultTimeScale, d.TimeScale)
	}
}
