package matrix

import (
	"fmt"
	"math"
	"strconv"

	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stats"
)

// FileChart is the expectations' chart in the matrix directory.
const FileChart = "expectations.svg"

// OutlierSD is how far from the rest of its group a pass is flagged.
const OutlierSD = 2

// group is the passes of one variant.
type group struct {
	variant string
	passes  []Pass
}

func groupsOf(passes []Pass) []group {
	var out []group
	idx := map[string]int{}
	for _, p := range passes {
		i, ok := idx[p.Variant]
		if !ok {
			i = len(out)
			idx[p.Variant] = i
			out = append(out, group{variant: p.Variant})
		}
		out[i].passes = append(out[i].passes, p)
	}
	return out
}

func (g group) sample(fig string) (x []float64, from []Pass) {
	for _, p := range g.passes {
		if v, ok := p.Figures[fig]; ok && p.Measured() {
			x = append(x, v)
			from = append(from, p)
		}
	}
	return x, from
}

// pending says why a variant has no measured pass ("" when it has one).
func (g group) pending() string {
	for _, p := range g.passes {
		if p.Measured() {
			return ""
		}
	}
	for _, p := range g.passes {
		if p.Status == StatusSkipped {
			return "pending (" + p.Reason + ")"
		}
	}
	return "no measured pass"
}

// headline figures of the passes table.
var headline = []struct{ col, fig string }{
	{"scale-out [s]", results.FigScaleOut}, {"nodes normal [s]", results.FigNodesNormal},
	{"data balanced [s]", results.FigDataBalanced}, {"latency recovered [s]", results.FigLatencyRecovered},
	{"op/s per vCPU after", results.FigOpsPerVCPUAfter},
}

// CompareOptions are the matrix's part of the comparison report, built
// from matrix.jsonl alone: its verdict line, the expectations with their
// chart and the passes (skipped ones as pending with their reason) after
// the answer tables, every figure per variant in the long tables, and the
// outliers after them.
func CompareOptions(s *Summary) reporting.CompareOptions {
	var secs []reporting.Section
	if len(s.Expectations) > 0 {
		secs = append(secs, expectSection(s.Expectations))
	}
	secs = append(secs, passesSection(s.Passes))
	groups := groupsOf(s.Passes)
	var figs []reporting.VariantFigures
	var outliers [][]reporting.Cell
	for _, g := range groups {
		f := reporting.VariantFigures{Name: g.variant, Pending: g.pending()}
		for _, p := range g.passes {
			if p.Measured() && p.Figures != nil {
				f.Runs = append(f.Runs, p.Figures)
			}
		}
		figs = append(figs, f)
	}
	for _, fig := range figureNames(s.Passes) {
		for _, g := range groups {
			x, from := g.sample(fig)
			for _, o := range Outliers(x) {
				p := from[o.Index]
				outliers = append(outliers, []reporting.Cell{{Value: fmt.Sprintf("%d (%s)", p.Index, p.Dir)}, {Value: g.variant}, {Value: fig},
					{Value: reporting.Num(o.Value)}, {Value: reporting.Num(o.RestMean) + " ± " + reporting.Num(o.RestSD)}, {Value: fmt.Sprintf("%.1f sd", o.Distance)}})
			}
		}
	}
	ot := reporting.Table{ID: "outliers", Name: "Outliers to explain", Columns: []string{"pass", "variant", "figure", "value", "rest of its variant", "distance"}, Rows: outliers,
		Note: fmt.Sprintf("A pass more than %d sd from the mean of the other passes of its variant (needs at least 3 measured passes): explain it before adding rounds.", OutlierSD)}
	if len(outliers) == 0 {
		ot.Note = "None. " + ot.Note
	}
	return reporting.CompareOptions{Verdict: s.VerdictLine(), Sections: secs, Figures: figs, Late: []reporting.Section{{Table: ot}}}
}

// figureNames are the passes' figure names in the long tables' order.
func figureNames(passes []Pass) []string {
	var runs []map[string]float64
	for _, p := range passes {
		runs = append(runs, p.Figures)
	}
	return reporting.FigureNames([]reporting.VariantFigures{{Runs: runs}})
}

// passesSection is one row per line of matrix.jsonl.
func passesSection(passes []Pass) reporting.Section {
	pt := reporting.Table{ID: "passes", Name: "Passes (matrix.jsonl)", Columns: []string{"#", "variant", "repeat", "status", "elapsed [s]"},
		Note: "One line of matrix.jsonl per pass, in run order. A pass whose cell's pre-flight failed is pending with the reason; a failed hook fails its pass and is named."}
	for _, h := range headline {
		pt.Columns = append(pt.Columns, h.col)
	}
	pt.Columns = append(pt.Columns, "dir")
	for _, p := range passes {
		st := reporting.Cell{Value: p.Status}
		switch p.Status {
		case "passed":
			st.Status = reporting.CellPassed
		case StatusSkipped:
			st.Value = "pending (" + p.Reason + ")"
		case "failed", "error":
			st.Status = reporting.CellFailed
			if p.Reason != "" {
				st.Value += ": " + p.Reason
			}
		}
		row := []reporting.Cell{{Value: strconv.Itoa(p.Index)}, {Value: p.Variant}, {Value: strconv.Itoa(p.Repeat)}, st, {Value: reporting.Num(p.ElapsedS)}}
		for _, h := range headline {
			v := "—"
			if x, ok := p.Figures[h.fig]; ok {
				v = reporting.Num(x)
			}
			row = append(row, reporting.Cell{Value: v})
		}
		dir := p.Dir
		if p.Status == StatusSkipped {
			dir = "—"
		}
		pt.Rows = append(pt.Rows, append(row, reporting.Cell{Value: dir}))
	}
	return reporting.Section{Table: pt}
}

// Outlier is a value far from the rest of its sample.
type Outlier struct {
	Index            int
	Value            float64
	RestMean, RestSD float64
	Distance         float64 // in RestSD
}

// Outliers flags the values more than OutlierSD standard deviations from
// the mean of the others. Leave-one-out because an outlier inflates its
// own group's sd: with the value included no point of a sample below 6
// can ever be 2 sd away.
func Outliers(x []float64) []Outlier {
	if len(x) < 3 {
		return nil
	}
	var out []Outlier
	for i, v := range x {
		rest := append(append([]float64(nil), x[:i]...), x[i+1:]...)
		m, sd := stats.Mean(rest), stats.SD(rest)
		d := math.Abs(v - m)
		switch {
		case sd > 0 && d > OutlierSD*sd:
			out = append(out, Outlier{Index: i, Value: v, RestMean: m, RestSD: sd, Distance: d / sd})
		case sd == 0 && d > 0 && d > 1e-9*math.Abs(m):
			out = append(out, Outlier{Index: i, Value: v, RestMean: m, RestSD: 0, Distance: math.Inf(1)})
		}
	}
	return out
}

func expectSection(rs []ExpectResult) reporting.Section {
	t := reporting.Table{ID: "expectations", Name: "Expectations", Columns: []string{"expectation", "A: mean ± sd (n)", "B: mean ± sd (n)", "ratio A/B", "95% interval", "verdict", "why"},
		Note: "The ratio of the means of the figure over A's and B's measured passes, with Fieller's 95% confidence interval (t with Welch–Satterthwaite degrees of freedom). PASS: the whole interval meets the limit; FAIL: none of it does; INCONCLUSIVE: the interval straddles the limit, is unbounded, or a side has fewer than 2 measured passes."}
	var items []reporting.RatioItem
	for _, r := range rs {
		side := func(s Side) string {
			if s.N == 0 {
				if s.Pending > 0 {
					return "pending"
				}
				return "—"
			}
			return fmt.Sprintf("%s ± %s (n=%d)", reporting.Num(s.Mean), reporting.Num(s.SD), s.N)
		}
		v := reporting.Cell{Value: r.Verdict}
		switch r.Verdict {
		case ExpectPass:
			v.Status = reporting.CellPassed
		case ExpectFail:
			v.Status = reporting.CellFailed
		}
		ratio := "—"
		if r.HasRatio {
			ratio = fmt.Sprintf("%.3f", r.CI.Ratio)
		}
		t.Rows = append(t.Rows, []reporting.Cell{{Value: r.Text}, {Value: side(r.SideA)}, {Value: side(r.SideB)}, {Value: ratio}, {Value: r.Interval()}, v, {Value: r.Why}})
		if r.HasRatio {
			items = append(items, reporting.RatioItem{Label: r.Metric + ": " + SideLabel(r.A) + " / " + SideLabel(r.B), Ratio: r.CI.Ratio, Lo: r.CI.Lo, Hi: r.CI.Hi,
				HasCI: r.SideA.N >= 2 && r.SideB.N >= 2, Limit: r.Limit, Op: r.Op, Verdict: r.Verdict})
		}
	}
	sec := reporting.Section{Table: t}
	if len(items) > 0 {
		sec.SVG, sec.File = reporting.RatioChart(items), FileChart
	}
	return sec
}
