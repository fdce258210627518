package scenarios

import (
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// ResultThresholds converts the scenario's thresholds to the results model:
// one Threshold per limit set. Duration ceilings are real-world durations and
// are scaled like every other scenario duration (the backend's time scale),
// so they compare with what a run measures.
func (s *Scenario) ResultThresholds(scale func(Duration) time.Duration) []results.Threshold {
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
		if l.PlanFactor > 0 {
			// The plan's estimates are of the run as it goes: never scaled again.
			out = append(out, results.Threshold{Cycle: l.Name, Metric: results.MetricDurationSeconds, Limit: l.PlanFactor, RatioToPlan: true})
			continue
		}
		out = append(out, results.Threshold{Cycle: l.Name, Metric: results.MetricDurationSeconds, Limit: scale(l.Max).Seconds()})
	}
	return out
}

// ResultBaselineRules converts thresholds.baseline to the results model. The
// absolute parts of a duration rule (best_abs, fixed_limit, in seconds) are
// real-world durations, scaled like thresholds.durations.
func (s *Scenario) ResultBaselineRules(scale func(Duration) time.Duration) []results.BaselineRule {
	var out []results.BaselineRule
	conv := func(cycle, metric string, floor bool, r Rule, secs bool) results.BaselineRule {
		br := results.BaselineRule{Cycle: cycle, Metric: metric, HigherIsBetter: floor, BestPct: r.BestPct, BestAbs: r.BestAbs, FixedLimit: r.FixedLimit}
		if secs {
			sc := func(p *float64) *float64 {
				if p == nil {
					return nil
				}
				v := scale(Duration(*p * float64(time.Second))).Seconds()
				return &v
			}
			br.BestAbs, br.FixedLimit = sc(r.BestAbs), sc(r.FixedLimit)
		}
		return br
	}
	for _, c := range s.Thresholds.Baseline.Cycles {
		for _, m := range c.rules() {
			if m.r != nil {
				out = append(out, conv(c.Cycle, m.name, m.floor, *m.r, false))
			}
		}
	}
	for _, d := range s.Thresholds.Baseline.Durations {
		out = append(out, conv(d.Name, results.MetricDurationSeconds, false, d.Rule, true))
	}
	return out
}
