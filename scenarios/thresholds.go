package scenarios

import (
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// MetricDurationSeconds is the results metric of duration ceilings.
const MetricDurationSeconds = results.MetricDurationSeconds

// resultThresholds converts the scenario's thresholds to the results model:
// one Threshold per limit set. Duration ceilings are real-world durations and
// are scaled like every other scenario duration (the backend's time scale),
// so they compare with what a run measures.
func (s *Scenario) resultThresholds(scale func(Duration) time.Duration) []results.Threshold {
	var out []results.Threshold
	for _, c := range s.Thresholds.Cycles {
		for _, m := range c.metrics() {
			if m.v == 0 {
				continue
			}
			out = append(out, results.Threshold{Cycle: c.Cycle, Metric: m.name, Limit: m.v, Floor: m.floor, RatioToSteady: m.ratio})
		}
	}
	for _, l := range s.Thresholds.Durations {
		out = append(out, results.Threshold{Cycle: l.Name, Metric: MetricDurationSeconds, Limit: scale(l.Max).Seconds()})
	}
	return out
}
