package matrix

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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

// figureOrder: derived values, durations, then cycle figures by cycle number.
func figureOrder(passes []Pass) []string {
	seen := map[string]bool{}
	for _, p := range passes {
		for k := range p.Figures {
			seen[k] = true
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
	sort.SliceStable(cycles, func(i, j int) bool {
		if a, b := cycleNum(cycles[i]), cycleNum(cycles[j]); a != b {
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

// headline figures of the passes table.
var headline = []struct{ col, fig string }{
	{"scale-out [s]", results.FigScaleOut}, {"nodes normal [s]", results.FigNodesNormal},
	{"data balanced [s]", results.FigDataBalanced}, {"latency recovered [s]", results.FigLatencyRecovered},
	{"op/s per vCPU after", results.FigOpsPerVCPUAfter},
}

// Sections are the matrix's part of the comparison report, built from
// matrix.jsonl alone: the passes (skipped ones as pending with their
// reason), every figure per variant (mean ± sd, median), the outliers and
// the expectations with their chart.
func Sections(passes []Pass, expects []ExpectResult) []reporting.Section {
	var out []reporting.Section
	if len(expects) > 0 {
		out = append(out, expectSection(expects))
	}
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
		row := []reporting.Cell{{Value: strconv.Itoa(p.Index)}, {Value: p.Variant}, {Value: strconv.Itoa(p.Repeat)}, st, {Value: Num(p.ElapsedS)}}
		for _, h := range headline {
			v := "—"
			if x, ok := p.Figures[h.fig]; ok {
				v = Num(x)
			}
			row = append(row, reporting.Cell{Value: v})
		}
		dir := p.Dir
		if p.Status == StatusSkipped {
			dir = "—"
		}
		pt.Rows = append(pt.Rows, append(row, reporting.Cell{Value: dir}))
	}
	out = append(out, reporting.Section{Table: pt})

	groups := groupsOf(passes)
	gt := reporting.Table{ID: "groups", Name: "Figures per variant: mean ± sd, median (n)", Columns: []string{"figure"},
		Note: "Every figure of result.json's derived values, durations (seconds; a duration name alone is the total over the run's steps) and cycles, over the passes that ran to the end (thresholds passed or failed). sd is the sample standard deviation."}
	for _, g := range groups {
		gt.Columns = append(gt.Columns, g.variant)
	}
	var outliers [][]reporting.Cell
	for _, fig := range figureOrder(passes) {
		row := []reporting.Cell{{Value: fig}}
		for _, g := range groups {
			x, from := g.sample(fig)
			switch {
			case len(x) == 0:
				v := "—"
				if why := g.pending(); why != "" {
					v = why
				}
				row = append(row, reporting.Cell{Value: v})
				continue
			case len(x) == 1:
				row = append(row, reporting.Cell{Value: Num(x[0]) + " (n=1)"})
			default:
				row = append(row, reporting.Cell{Value: fmt.Sprintf("%s ± %s, median %s (n=%d)", Num(stats.Mean(x)), Num(stats.SD(x)), Num(stats.Median(x)), len(x))})
			}
			for _, o := range Outliers(x) {
				p := from[o.Index]
				outliers = append(outliers, []reporting.Cell{{Value: fmt.Sprintf("%d (%s)", p.Index, p.Dir)}, {Value: g.variant}, {Value: fig},
					{Value: Num(o.Value)}, {Value: Num(o.RestMean) + " ± " + Num(o.RestSD)}, {Value: fmt.Sprintf("%.1f sd", o.Distance)}})
			}
		}
		gt.Rows = append(gt.Rows, row)
	}
	out = append(out, reporting.Section{Table: gt})
	ot := reporting.Table{ID: "outliers", Name: "Outliers to explain", Columns: []string{"pass", "variant", "figure", "value", "rest of its variant", "distance"}, Rows: outliers,
		Note: fmt.Sprintf("A pass more than %d sd from the mean of the other passes of its variant (needs at least 3 measured passes): explain it before adding rounds.", OutlierSD)}
	if len(outliers) == 0 {
		ot.Note = "None. " + ot.Note
	}
	out = append(out, reporting.Section{Table: ot})
	return out
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
			return fmt.Sprintf("%s ± %s (n=%d)", Num(s.Mean), Num(s.SD), s.N)
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
