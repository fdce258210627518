package reporting

import (
	"strings"

	"github.com/elasticity-dev/elasticity/results"
)

// opCompared are the columns of the per-operation tables: an operation's
// figures in a cycle (results.OpFigures).
var opCompared = []struct {
	name   string
	format func(float64) string
	get    func(*results.OpFigures) float64
}{
	{"P50 [ms]", MS, func(o *results.OpFigures) float64 { return o.P50MS }},
	{"P90 [ms]", MS, func(o *results.OpFigures) float64 { return o.P90MS }},
	{"P99 [ms]", MS, func(o *results.OpFigures) float64 { return o.P99MS }},
	{"Throughput [op/s]", Thousands, func(o *results.OpFigures) float64 { return o.OpsPerS }},
	{"errors", Thousands, func(o *results.OpFigures) float64 { return float64(o.Errors) }},
	{"dropped", Thousands, func(o *results.OpFigures) float64 { return float64(o.Dropped) }},
}

// opOf is the cycle's figures of operation name, nil when it has none.
func opOf(c *results.Cycle, name string) *results.OpFigures {
	if c == nil {
		return nil
	}
	for i := range c.Ops {
		if c.Ops[i].Name == name {
			return &c.Ops[i]
		}
	}
	return nil
}

// namedOps are the cycle's operations that at least two runs have, in the
// first run's order, when some operation is not just its class (the
// built-in's write and read are the cycle tables' write and read already).
func namedOps(runs []run, cycle string) []string {
	count := map[string]int{}
	var order []string
	own := false
	for _, r := range runs {
		c := cycleOf(r.res, cycle)
		if c == nil {
			continue
		}
		for _, o := range c.Ops {
			if count[o.Name] == 0 {
				order = append(order, o.Name)
			}
			count[o.Name]++
			own = own || o.Name != o.Class
		}
	}
	var out []string
	for _, n := range order {
		if count[n] >= 2 {
			out = append(out, n)
		}
	}
	if !own {
		return nil
	}
	return out
}

// opTables are the per-operation comparisons: one table per cycle whose
// operations two runs or more have, a row per run and operation, ratios
// to the first run that has the operation.
func opTables(runs []run, cycles []string) []Table {
	var out []Table
	for _, cycle := range cycles {
		ops := namedOps(runs, cycle)
		if len(ops) == 0 {
			continue
		}
		t := Table{ID: "ops-" + strings.TrimPrefix(cycle, "Cycle #"), Name: cycle + " per operation, every run", Columns: []string{"run", "operation"},
			Note: "The workload model's operations, each in the runs that have it; ratios are to the first of them. Their figures are named as `" + results.OpFigure(cycle, ops[0], "p99_ms") + "` for `matrix --expect`."}
		for _, m := range opCompared {
			t.Columns = append(t.Columns, m.name)
		}
		for _, op := range ops {
			var base *results.OpFigures
			for _, r := range runs {
				o := opOf(cycleOf(r.res, cycle), op)
				if o == nil {
					continue
				}
				row := []Cell{{Value: r.name}, {Value: op}}
				for _, m := range opCompared {
					cell := Cell{Value: m.format(m.get(o))}
					if base != nil {
						cell.Value += ratio(m.get(o), m.get(base))
					}
					row = append(row, cell)
				}
				if base == nil {
					base = o
				}
				t.Rows = append(t.Rows, row)
			}
		}
		out = append(out, t)
	}
	return out
}
