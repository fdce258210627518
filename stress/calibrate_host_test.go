package stress

import "testing"

// The host figures of a calibration are those of the levels that decided
// it: the best level and those above it, not the low levels before.
func TestCalibrationHostFiguresAreTheDecidingLevels(t *testing.T) {
	c := Calibration{MaxOpsPerSec: 900, Concurrency: 8, Steps: []CalibrationStep{
		{Concurrency: 2, LoaderLagMSPerS: 50, MachineBusyPct: 99}, // a noisy start
		{Concurrency: 4, LoaderLagMSPerS: 1, MachineBusyPct: 40},
		{Concurrency: 8, LoaderLagMSPerS: 2, MachineBusyPct: 70},
		{Concurrency: 16, LoaderLagMSPerS: 6, MachineBusyPct: 60}, // ended the probe
	}}
	if lag, busy := c.HostFigures(); lag != 6 || busy != 70 {
		t.Errorf("host figures lag %v ms/s, busy %v%%, want 6 and 70", lag, busy)
	}
}
