package plan

import (
	"fmt"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// FigureDurations are the named durations a run of the plan measures: one
// per fill phase, the standard ones of its topology steps and one per hook
// step (results.stepDurations computes them from the same kinds).
func (p *Plan) FigureDurations() []string {
	var out []string
	seen := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, f := range p.Fill {
		add(f.Name)
	}
	if p.Compactions.Wait {
		add(results.DurCompactions)
	}
	for _, st := range p.Steps {
		switch st.Kind {
		case results.KindGrow:
			add(results.DurAddNodes, results.DurNodesReady)
		case results.KindShrink:
			add(results.DurRemoveNodes)
		case results.KindDrain:
			add(results.DurDrainNodes)
		case results.KindHook:
			add(results.DurHookPrefix + st.Name)
		}
		if st.Kind.IsTopology() {
			add(results.DurDataBalanced, results.DurLatencyRecov)
		}
	}
	return out
}

// plannedCycles is how many cycles a run of the plan measures at most:
// the steady state and every cycle of its nemesis steps (a hold or hook
// step counted as one, generously).
func (p *Plan) plannedCycles() int {
	n := 0
	for _, ph := range p.Phases {
		switch {
		case ph.Cycles > 0:
			n += ph.Cycles
		case ph.Phase == "nemesis":
			n++
		}
	}
	return n
}

// FigureOps are the operations whose figures a run of the plan measures:
// its workload model's operations with a share of the mix.
func (p *Plan) FigureOps() []string {
	var out []string
	if p.Workload.Model == nil {
		return out
	}
	for _, o := range p.Workload.Model.Ops {
		if o.SharePct > 0 {
			out = append(out, o.Name)
		}
	}
	return out
}

// CheckFigure checks that a run of the plan can measure the figure (see
// results.Figures): a derived value, one of its durations, a metric of
// one of its cycles, or one of its operations' in a cycle. The error names
// the closest figure.
func (p *Plan) CheckFigure(name string) error {
	durs, ops := p.FigureDurations(), p.FigureOps()
	if err := results.CheckFigureSyntax(name, durs, ops); err != nil {
		known := append(append([]string(nil), results.DerivedFigures...), durs...)
		cycle := results.SteadyStateCycle
		if c, _, ok := strings.Cut(name, "."); ok && strings.HasPrefix(c, "Cycle #") {
			cycle = c // suggest a metric of the cycle asked for
		}
		for _, m := range results.CycleFigures() {
			known = append(known, results.CycleFigure(cycle, m))
		}
		for _, o := range ops {
			for _, m := range results.OpFigureMetrics {
				known = append(known, results.OpFigure(cycle, o, m))
			}
		}
		return fmt.Errorf("%w%s", err, scenarios.Suggest(name, known))
	}
	cyc, _, ok := strings.Cut(name, ".")
	if !ok || !strings.HasPrefix(cyc, "Cycle #") {
		return nil
	}
	var n int
	if _, err := fmt.Sscanf(cyc, "Cycle #%d", &n); err != nil || fmt.Sprintf("Cycle #%d", n) != cyc {
		return &results.FigureError{Name: name, Why: fmt.Sprintf("%q is not \"Cycle #N\"", cyc)}
	}
	if last := p.plannedCycles() - 1; n > last {
		return &results.FigureError{Name: name, Why: fmt.Sprintf("scenario %s measures Cycle #0 to Cycle #%d", p.Scenario, last)}
	}
	return nil
}
