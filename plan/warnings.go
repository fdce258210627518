package plan

import (
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// Warnings lists things in a scenario and its plan that are valid but
// probably not what the author wants (validate prints them; they never fail a command). They carry the
// position of the field concerned when the scenario came from a file.
// env is the environment the plan is resolved in (see Resolve).
func Warnings(s *scenarios.Scenario, env provision.Env) []scenarios.Problem {
	var ws []scenarios.Problem
	warn := func(path, format string, args ...any) {
		ws = append(ws, s.ProblemAt(path, format, args...))
	}
	// Estimate-based warnings need the backend's model (registered by
	// provision/all); without it they are left out.
	p, err := Resolve(s, env)
	if err != nil {
		p = nil
	}
	if p != nil && p.Emulated && s.Workload.Rate > 0 && float64(s.Workload.Rate) > p.Workload.EstimatedCapacityOps {
		warn("workload.rate", "%v is above the emulated cluster's estimated capacity (%.0f ops/s from local.ops_per_vcpu, RF and consistency): the run measures saturation",
			s.Workload.Rate, p.Workload.EstimatedCapacityOps)
	}
	for i, f := range s.Dataset.Fill {
		if f.TargetPercent >= 95 {
			warn(fmt.Sprintf("dataset.fill.%d.target_percent", i), "%v leaves little room: compactions and streaming may fail with \"No space left on device\"", f.TargetPercent)
		}
	}
	if _, field, scaled := s.TimeScaled(); p != nil && scaled && p.Estimated() > time.Hour {
		warn(field, "the run is estimated at %s on the %s backend; lower %s or the durations", secs(p.EstimatedSeconds), s.Backend, field)
	}
	if p != nil {
		unscale := p.TimeScale
		if unscale <= 0 {
			unscale = 1
		}
		for _, c := range ceilingsUnderEstimates(p) {
			warn("thresholds.durations."+c.name, "%s is below the plan's estimate for the slowest batch, %s on the %s backend: the run is likely to fail it",
				secs(c.limit/unscale), secs(c.estimate/unscale), s.Backend)
		}
	}
	if p != nil && !p.Workload.Model.IsBuiltin() {
		for _, g := range p.Workload.Model.GaveWay {
			warn(g, "gives way to %s, whose own setting the run uses", p.Workload.Model.Form)
		}
	}
	if len(s.Nemesis) == 0 {
		warn("nemesis", "no nemesis steps: the run measures the steady state only")
	}
	return ws
}

// ceiling is a fixed duration ceiling and the plan's largest estimate of
// that duration (scaled seconds both).
type ceiling struct {
	name            string
	limit, estimate float64
}

// ceilingsUnderEstimates are the fixed duration ceilings the plan's own
// estimate of some batch passes: a run of this backend's model likely
// fails them ("Nx plan" ceilings follow the estimate and are left out).
func ceilingsUnderEstimates(p *Plan) []ceiling {
	var out []ceiling
	for _, th := range p.Thresholds {
		if th.Metric != results.MetricDurationSeconds || th.RatioToPlan || th.Floor {
			continue
		}
		est := 0.0
		for _, st := range p.Steps {
			for _, e := range st.Estimates {
				est = max(est, e[th.Cycle])
			}
		}
		if est > th.Limit {
			out = append(out, ceiling{th.Cycle, th.Limit, est})
		}
	}
	return out
}
