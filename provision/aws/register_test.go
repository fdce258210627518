package aws

import (
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
)

// The model reads the environment the plan is resolved in, never the
// process's: the same scenario plans a simulated region only when the
// injected environment points the SDK at loopback.
func TestModelReadsTheInjectedEnvironment(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4566") // the process's, which must not count
	scale := provision.EmulatorScale{StorageScaleMiBPerGB: 0.2, OpsPerVCPU: 2000, StreamMiBPerVCPU: 4, TimeScale: 0.0025}
	if m := model(&provision.Config{Emulator: scale}); m.Emulated {
		t.Errorf("no injected environment: model %+v is emulated; want real nodes", m)
	}
	env := map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"}
	m := model(&provision.Config{Emulator: scale, Env: func(k string) string { return env[k] }})
	if !m.Emulated || m.TimeScale != scale.TimeScale {
		t.Errorf("loopback endpoint injected: model %+v; want the emulated scale model", m)
	}
}
