package scenarios

import (
	"testing"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"
)

// The local backend passes its scale model to every node; a bare
// `elasticity node` uses the emulator's own defaults. Keep them equal so
// both describe the same machine.
func TestLocalDefaultsMatchEmulator(t *testing.T) {
	c := emulator.DefaultConfig()
	if DefaultLocal.StorageScaleMiBPerGB != c.StorageScaleMiBPerGB || DefaultLocal.OpsPerVCPU != c.OpsPerVCPU ||
		DefaultLocal.StreamMiBPerVCPU != c.StreamMiBPerVCPU || DefaultLocal.BlockedReactorNotifyMS != c.BlockedReactorNotifyMS {
		t.Errorf("scenarios.DefaultLocal %+v differs from the emulator's defaults (storage %g MiB/GB, %g ops/vCPU, %g MiB/s/vCPU, %d ms)",
			DefaultLocal, c.StorageScaleMiBPerGB, c.OpsPerVCPU, c.StreamMiBPerVCPU, c.BlockedReactorNotifyMS)
	}
	// `elasticity cluster up` and the benchmarks start nodes as the local backend does.
	if localcluster.DefaultTimeScale != DefaultLocal.TimeScale {
		t.Errorf("localcluster.DefaultTimeScale %g, local.time_scale default %g", localcluster.DefaultTimeScale, DefaultLocal.TimeScale)
	}
}
