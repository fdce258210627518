package reporting

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stats"
)

// VariantFigures are one variant's figures (results.Figures), one map per
// measured run, for the comparison's long tables. Pending says why a
// variant has no measured run ("" when it has one).
type VariantFigures struct {
	Name    string
	Runs    []map[string]float64
	Pending string
}

// Sample is the variant's values of a figure over its runs that have it.
func (v VariantFigures) Sample(fig string) []float64 {
	var x []float64
	for _, r := range v.Runs {
		if f, ok := r[fig]; ok {
			x = append(x, f)
		}
	}
	return x
}

// figureGroup is one of the long tables: the figures it holds.
type figureGroup struct {
	id, name string
	holds    func(fig string) bool
}

// cycleMetricIn: a "Cycle #N.<metric>" figure with one of the metrics.
func cycleMetricIn(metrics ...string) func(string) bool {
	return func(fig string) bool {
		c, m, ok := strings.Cut(fig, ".")
		if !ok || !strings.HasPrefix(c, "Cycle #") {
			return false
		}
		for _, x := range metrics {
			if m == x {
				return true
			}
		}
		return false
	}
}

// figureGroups are the long tables in order; a figure lands in the first
// group that holds it, the durations take every name left.
var figureGroups = []figureGroup{
	{"fig-latency", "Latency per variant [ms]", cycleMetricIn(results.MetricWriteP90, results.MetricReadP90, results.MetricWriteP99, results.MetricReadP99)},
	{"fig-throughput", "Throughput per variant [op/s]", func(f string) bool {
		switch f {
		case results.FigOpsPerVCPUBefore, results.FigOpsPerVCPUAfter, results.FigVCPUsBefore, results.FigVCPUsAfter:
			return true
		}
		return cycleMetricIn(results.MetricWriteOps, results.MetricReadOps, results.MetricTotalOps)(f)
	}},
	{"fig-host", "Host, compaction, stalls and errors per variant", cycleMetricIn(results.FigCycleHostLag, results.FigCycleLoadLag, results.FigCycleSteal,
		results.FigCycleBacklog, results.FigCycleSaturated, results.FigCycleStalls, results.FigCycleErrors, results.FigCycleDropped)},
	{"fig-ops", "Per operation per variant", func(f string) bool { _, ok := opOfFigure(f); return ok }},
	{"fig-durations", "Durations per variant [s]", func(string) bool { return true }},
}

// opOfFigure is the operation of a "Cycle #N.op.<operation>.<metric>" figure.
func opOfFigure(fig string) (string, bool) {
	c, m, ok := strings.Cut(fig, ".")
	if !ok || !strings.HasPrefix(c, "Cycle #") {
		return "", false
	}
	op, _, ok := results.SplitOpFigure(m)
	return op, ok
}

// FigureTables are the comparison's long tables: every figure of the
// variants, grouped (latency, throughput, host and compaction, the
// model's operations, durations), as mean ± sd, median over the measured
// runs. The run count n is in the column's header when every figure of the
// column has it, else in the cells. Operations named write and read (the
// built-in's, a command line's) are left out: they are the cycle's write
// and read figures, in the latency and throughput tables already.
func FigureTables(vs []VariantFigures) []Table {
	byGroup := make([][]string, len(figureGroups))
	for _, fig := range FigureNames(vs) {
		if op, ok := opOfFigure(fig); ok && (op == results.OpWrite || op == results.OpRead) {
			continue
		}
		for i, g := range figureGroups {
			if g.holds(fig) {
				byGroup[i] = append(byGroup[i], fig)
				break
			}
		}
	}
	var out []Table
	for i, g := range figureGroups {
		if len(byGroup[i]) == 0 {
			continue
		}
		out = append(out, figureTable(g, byGroup[i], vs))
	}
	return out
}

// figureNotes say what a long table's figures are.
var figureNotes = map[string]string{
	"fig-latency":    "Response times per cycle (write_p99_ms: P99 of writes).",
	"fig-throughput": "Successful operations per second per cycle, and per vCPU in the steady state (before) and the last cycle (after).",
	"fig-host":       "Per cycle: the most-lagged node's scheduling lag and the load generator's (ms per second), the worst CPU steal (%), the normalized compaction backlog at the cycle's end of the node whose backlog grew most, reactor stalls, failed and dropped operations.",
	"fig-ops":        "The workload model's operations per cycle (Cycle #N.op.<operation>.<metric>): response times in ms, successful operations per second, failed and dropped operations.",
	"fig-durations":  "Seconds. Derived values (*_seconds) are from the first topology request; a duration name alone is the total over the run's steps, \"Cycle #N.<name>\" one batch's.",
}

func figureTable(g figureGroup, figs []string, vs []VariantFigures) Table {
	t := Table{ID: g.id, Name: g.name, Columns: []string{"figure"},
		Note: figureNotes[g.id] + " Each cell: mean ± sd, median over the measured runs (sd: sample standard deviation); the names are those `elasticity matrix --expect` takes."}
	// n once per column when it is the same for every figure.
	sameN := make([]int, len(vs))
	for i, v := range vs {
		sameN[i] = -1
		for _, fig := range figs {
			n := len(v.Sample(fig))
			if n == 0 {
				continue
			}
			if sameN[i] == -1 {
				sameN[i] = n
			} else if sameN[i] != n {
				sameN[i] = 0
			}
		}
		col := v.Name
		if sameN[i] > 0 {
			col += fmt.Sprintf(" (n=%d)", sameN[i])
		}
		t.Columns = append(t.Columns, col)
	}
	for _, fig := range figs {
		row := []Cell{{Value: fig}}
		for i, v := range vs {
			x := v.Sample(fig)
			cell := "—"
			switch {
			case len(x) == 0 && v.Pending != "":
				cell = v.Pending
			case len(x) == 1:
				cell = Num(x[0])
			case len(x) > 1:
				cell = fmt.Sprintf("%s ± %s, median %s", Num(stats.Mean(x)), Num(stats.SD(x)), Num(stats.Median(x)))
			}
			if len(x) > 0 && sameN[i] <= 0 {
				cell += fmt.Sprintf(" (n=%d)", len(x))
			}
			row = append(row, Cell{Value: cell})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// FigureNames are the variants' figure names in the long tables' order: derived
// values, durations, then cycle figures by cycle number.
func FigureNames(vs []VariantFigures) []string {
	seen := map[string]bool{}
	for _, v := range vs {
		for _, r := range v.Runs {
			for k := range r {
				seen[k] = true
			}
		}
	}
	var derived, durs, cycles []string
	for _, n := range results.DerivedFigures {
		if seen[n] {
			derived = append(derived, n)
			delete(seen, n)
		}
	}
	for k := range seen {
		if strings.HasPrefix(k, "Cycle #") {
			cycles = append(cycles, k)
		} else {
			durs = append(durs, k)
		}
	}
	sort.Strings(durs)
	cycleNum := func(s string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(s, ".", 2)[0], "Cycle #"))
		return n
	}
	// Within a cycle: its metrics in the vocabulary's order (P90 write,
	// P90 read, P99 write ... as the latency tables), then its durations.
	rank := map[string]int{}
	for i, m := range results.CycleFigures() {
		rank[m] = i + 1
	}
	metricRank := func(s string) int {
		_, m, _ := strings.Cut(s, ".")
		if r, ok := rank[m]; ok {
			return r
		}
		if _, om, ok := results.SplitOpFigure(m); ok { // after the cycle's own metrics, before its durations
			return len(rank) + 1 + slices.Index(results.OpFigureMetrics, om)
		}
		return len(rank) + 1 + len(results.OpFigureMetrics)
	}
	opName := func(s string) string {
		_, m, _ := strings.Cut(s, ".")
		op, _, _ := results.SplitOpFigure(m)
		return op
	}
	sort.SliceStable(cycles, func(i, j int) bool {
		if a, b := cycleNum(cycles[i]), cycleNum(cycles[j]); a != b {
			return a < b
		}
		if a, b := opName(cycles[i]), opName(cycles[j]); a != b && a != "" && b != "" {
			return a < b // one operation's figures together
		}
		if a, b := metricRank(cycles[i]), metricRank(cycles[j]); a != b {
			return a < b
		}
		return cycles[i] < cycles[j]
	})
	return append(append(derived, durs...), cycles...)
}

// Num prints a figure: whole numbers from 1000 up, one decimal from 10.
func Num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
