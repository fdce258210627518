package reporting

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stats"
)

// The comparison answers first: P99 per cycle per variant with the ratio
// to the variant's own Cycle #0, the scale-out durations per variant, and
// whether compaction kept up and any cycle was host-bound, per variant.

// variant is the runs of one scenario variant (repeats together).
type variant struct {
	name  string // VariantOf the runs' directories
	label string // shown: the name without the matrix's "NN-" order prefix
	runs  []run
}

var orderPrefix = regexp.MustCompile(`^[0-9]+-`)

// variantsOf groups the runs by variant, in the order they first ran.
func variantsOf(runs []run) []variant {
	var out []variant
	idx := map[string]int{}
	for _, r := range runs {
		i, ok := idx[r.variant]
		if !ok {
			i = len(out)
			idx[r.variant] = i
			out = append(out, variant{name: r.variant})
		}
		out[i].runs = append(out[i].runs, r)
	}
	// "01-load_percent=50" reads as "load_percent=50" unless two variants
	// differ only in their prefix.
	labels := map[string]bool{}
	for i := range out {
		out[i].label = orderPrefix.ReplaceAllString(out[i].name, "")
		labels[out[i].label] = true
	}
	if len(labels) < len(out) {
		for i := range out {
			out[i].label = out[i].name
		}
	}
	return out
}

// head is the variant's column-group title: its label, and n when repeated.
func (v variant) head() string {
	if len(v.runs) > 1 {
		return fmt.Sprintf("%s (n=%d)", v.label, len(v.runs))
	}
	return v.label
}

// cycleNames are the cycles of the runs, in cycle order.
func cycleNames(runs []run) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, c := range r.res.Cycles {
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return nodeOrder(names[i], names[j]) })
	return names
}

// cycleValues are the variant's values of a cycle metric over its runs that have the cycle.
func (v variant) cycleValues(cycle string, get func(*results.Cycle) float64) []float64 {
	var x []float64
	for _, r := range v.runs {
		if c := cycleOf(r.res, cycle); c != nil {
			x = append(x, get(c))
		}
	}
	return x
}

// verdictOver colours a value by the verdicts of all the variant's runs on
// (subject, metrics): failed when any run failed, passed when some judged
// it and none failed; the threshold text is the first run's.
func (v variant) verdictOver(value, subject string, metrics ...string) Cell {
	out := Cell{Value: value}
	for _, r := range v.runs {
		c := verdictCell(r.res, value, subject, metrics...)
		switch {
		case c.Status == CellFailed:
			out.Status = CellFailed
		case c.Status == CellPassed && out.Status == "":
			out.Status = CellPassed
		}
		if out.Threshold == "" {
			out.Threshold = c.Threshold
		}
	}
	return out
}

// ratioText is a value's ratio to its baseline, to three digits: ×1.27, ×12.7, ×328.
func ratioText(v, base float64) string {
	if base <= 0 || math.IsNaN(v) {
		return ""
	}
	r := v / base
	switch {
	case r >= 100:
		return "×" + strconv.FormatFloat(r, 'f', 0, 64)
	case r >= 10:
		return "×" + strconv.FormatFloat(r, 'f', 1, 64)
	}
	return "×" + strconv.FormatFloat(r, 'f', 2, 64)
}

// answerCell is a coloured value with a suffix left out of the colour (the
// ratio), so that the markdown's $${\color{..}}$$ holds the number alone.
type answerCell struct {
	Cell
	suffix string
}

// answerTable is a table of answerCells, rendered for HTML (the suffix in
// the value) and for markdown (the value coloured, the suffix after it).
type answerTable struct {
	t     Table
	cells [][]answerCell
}

func (a *answerTable) add(row []answerCell) { a.cells = append(a.cells, row) }

func (a *answerTable) section(groups []ColumnGroup) Section {
	html, md := a.t, a.t
	html.Rows, md.Rows = nil, nil
	for _, r := range a.cells {
		hr, mr := make([]Cell, len(r)), make([]Cell, len(r))
		for i, c := range r {
			hr[i], mr[i] = c.Cell, c.Cell
			if c.suffix != "" {
				hr[i].Value += " " + c.suffix
				mr[i] = Cell{Value: colour(c.Cell, MarkdownOptions{}) + " " + c.suffix}
			}
		}
		html.Rows, md.Rows = append(html.Rows, hr), append(md.Rows, mr)
	}
	return Section{Table: html, Markdown: &md, Groups: groups}
}

// p99Section: rows the cycles, a column group per variant (P99 write and
// read), each value the mean over the variant's runs with its ratio to the
// variant's own Cycle #0 and its threshold colour.
func p99Section(vs []variant, runs []run) Section {
	a := answerTable{t: Table{ID: "p99", Name: "P99 per cycle and variant [ms], × the variant's own Cycle #0", Columns: []string{"cycle"},
		Note: "Response times in ms, lower is better; with repeats the mean over them. ×: the ratio to the same variant's Cycle #0 (steady state). Green: within the scenario's thresholds, red: past one (in any repeat)."}}
	var groups []ColumnGroup
	metrics := []struct {
		col, metric string
		get         func(*results.Cycle) float64
	}{
		{"P99 write [ms]", results.MetricWriteP99, func(c *results.Cycle) float64 { return c.WriteP99MS }},
		{"P99 read [ms]", results.MetricReadP99, func(c *results.Cycle) float64 { return c.ReadP99MS }},
	}
	for _, v := range vs {
		for _, m := range metrics {
			a.t.Columns = append(a.t.Columns, v.head()+" "+m.col)
		}
		groups = append(groups, ColumnGroup{Name: v.head(), Span: len(metrics)})
	}
	for _, name := range cycleNames(runs) {
		row := []answerCell{{Cell: Cell{Value: name}}}
		for _, v := range vs {
			for _, m := range metrics {
				x := v.cycleValues(name, m.get)
				if len(x) == 0 {
					row = append(row, answerCell{Cell: Cell{Value: "—"}})
					continue
				}
				c := answerCell{Cell: v.verdictOver(MS(stats.Mean(x)), name, m.metric)}
				if name != results.SteadyStateCycle {
					c.suffix = ratioText(stats.Mean(x), stats.Mean(v.cycleValues(results.SteadyStateCycle, m.get)))
				}
				row = append(row, c)
			}
		}
		a.add(row)
	}
	return a.section(groups)
}

// scaleOutDuration is one column of the durations per variant.
type scaleOutDuration struct {
	col     string
	name    string // the duration's name, whose verdicts colour it
	derived bool   // from the first request (Derived), else the total over the steps
}

var scaleOutDurations = []scaleOutDuration{
	{"Add new node(s)", results.DurAddNodes, false},
	{"New node(s) ready", results.DurNodesReady, false},
	{"Remove node(s)", results.DurRemoveNodes, false},
	{"Drain node(s)", results.DurDrainNodes, false},
	{"data balanced", results.DurDataBalanced, true},
	{"latency recovered", results.DurLatencyRecov, true},
}

// value of a duration in a run (false: not measured).
func (d scaleOutDuration) value(res *results.Result) (float64, bool) {
	if d.derived {
		if res.Derived == nil {
			return 0, false
		}
		v := res.Derived.DataBalancedSeconds
		if d.name == results.DurLatencyRecov {
			v = res.Derived.LatencyRecoveredSeconds
		}
		return v, v > 0
	}
	var sum float64
	found := false
	for _, x := range res.Durations {
		if x.Name == d.name {
			sum, found = sum+x.Seconds, true
		}
	}
	return sum, found
}

// samples are the variant's values of the duration over its runs.
func (d scaleOutDuration) samples(v variant) []float64 {
	var x []float64
	for _, r := range v.runs {
		if s, ok := d.value(r.res); ok {
			x = append(x, s)
		}
	}
	return x
}

// verdict colours a duration by its verdicts in any step of any run.
func (d scaleOutDuration) verdict(v variant, value string) Cell {
	out := Cell{Value: value}
	for _, r := range v.runs {
		for _, x := range r.res.Durations {
			if x.Name != d.name {
				continue
			}
			c := verdictCell(r.res, value, x.Subject(), results.MetricDurationSeconds)
			switch {
			case c.Status == CellFailed:
				out.Status, out.Threshold = CellFailed, c.Threshold
			case c.Status == CellPassed && out.Status == "":
				out.Status, out.Threshold = CellPassed, c.Threshold
			}
		}
	}
	return out
}

// notRecovered counts the variant's runs in which a step's latency never recovered.
func notRecovered(v variant) int {
	n := 0
	for _, r := range v.runs {
		for _, s := range r.res.Steps {
			if s.NotRecovered {
				n++
				break
			}
		}
	}
	return n
}

// runsOf is " in k of n runs", or "" for a single run.
func runsOf(k, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" in %d of %d runs", k, n)
}

// usedDurations are the duration columns some run measured.
func usedDurations(vs []variant) []scaleOutDuration {
	var out []scaleOutDuration
	for _, d := range scaleOutDurations {
		for _, v := range vs {
			if len(d.samples(v)) > 0 {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// durationSection: a row per variant, the scale-out durations in HH:MM:SS
// (mean, ± the sd over repeats).
func durationSection(vs []variant) Section {
	t := Table{ID: "scaleout", Name: "Scale-out durations per variant [HH:MM:SS]", Columns: []string{"variant", "runs"},
		Note: "Add new node(s): requested → the new nodes UN; New node(s) ready: UN → data balanced (each the total over the run's steps, as the run report's Durations table); data balanced and latency recovered: from the first topology request. With repeats the mean ± sd. Red: past a duration threshold, or latency that never recovered."}
	ds := usedDurations(vs)
	for _, d := range ds {
		t.Columns = append(t.Columns, d.col)
	}
	for _, v := range vs {
		row := []Cell{{Value: v.label}, {Value: strconv.Itoa(len(v.runs))}}
		for _, d := range ds {
			x := d.samples(v)
			if len(x) == 0 {
				c := Cell{Value: "—"}
				if k := notRecovered(v); k > 0 && d.name == results.DurLatencyRecov {
					c = Cell{Value: "not recovered" + runsOf(k, len(v.runs)), Status: CellFailed, Threshold: "latency did not recover before the next step or the end"}
				}
				row = append(row, c)
				continue
			}
			text := HMS(stats.Mean(x))
			if len(x) > 1 {
				text += " ± " + strconv.FormatFloat(stats.SD(x), 'f', 0, 64) + "s"
			}
			c := d.verdict(v, text)
			if d.name == results.DurLatencyRecov {
				if k := notRecovered(v); k > 0 {
					c.Status, c.Threshold = CellFailed, "latency did not recover before the next step or the end"
					c.Value += " (a step not recovered" + runsOf(k, len(v.runs)) + ")"
				}
			}
			row = append(row, c)
		}
		t.Rows = append(t.Rows, row)
	}
	if len(ds) == 0 {
		t.Note = "No run measured a topology step."
	}
	return Section{Table: t}
}

// healthSection: per variant, the runs' status, whether compaction kept
// up with the writes and whether any cycle was host-bound.
func healthSection(vs []variant) Section {
	t := Table{ID: "health", Name: "Compaction and host per variant", Columns: []string{"variant", "runs", "status", "compaction kept up", "host-bound cycles"},
		Note: fmt.Sprintf("Compaction fell behind: in that cycle the compaction backlog (scylla_compaction_manager_normalized_backlog over shard memory) grew and ended at %d or more, so the offered load is more than the cluster sustains and latency rises with the backlog. Host-bound: the nodes' and the load generator's scheduling lag and the CPU steal added up to %d ms per second or more, so those latencies are the machine's, not the variant's.",
			results.CompactionBehindBacklog, results.HostBoundLagMSPerS)}
	for _, v := range vs {
		t.Rows = append(t.Rows, []Cell{{Value: v.label}, {Value: strconv.Itoa(len(v.runs))}, statusCell(v), compactionCell(v), hostBoundCell(v)})
	}
	return Section{Table: t}
}

// statusCell tallies the variant's runs by status.
func statusCell(v variant) Cell {
	counts := map[string]int{}
	var order []string
	for _, r := range v.runs {
		if counts[r.res.Status] == 0 {
			order = append(order, r.res.Status)
		}
		counts[r.res.Status]++
	}
	var parts []string
	for _, s := range order {
		if len(v.runs) == 1 {
			parts = append(parts, s)
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	c := Cell{Value: strings.Join(parts, ", "), Status: CellPassed}
	if len(order) != 1 || order[0] != results.StatusPassed {
		c.Status = CellFailed
	}
	return c
}

// compactionCell: "yes", "no: Cycle #1 (node-2: 3.0 → 24.0)", or "not measured".
func compactionCell(v variant) Cell {
	var behind []string
	runsBehind, measured := 0, false
	for _, r := range v.runs {
		var cs []string
		for _, c := range r.res.Cycles {
			measured = measured || c.CompactionBacklog != nil
			if g := c.CompactionBacklog; c.CompactionBehind && g != nil {
				cs = append(cs, fmt.Sprintf("%s (%s: %.1f → %.1f)", c.Name, g.Node, g.Start, g.End))
			}
		}
		if len(cs) > 0 {
			runsBehind++
			behind = append(behind, cs...)
		}
	}
	switch {
	case !measured:
		return Cell{Value: "not measured"}
	case runsBehind == 0:
		return Cell{Value: "yes", Status: CellPassed}
	}
	text := "no: " + strings.Join(behind, ", ")
	if len(v.runs) > 1 {
		text += fmt.Sprintf(" (in %d of %d runs)", runsBehind, len(v.runs))
	}
	return Cell{Value: text, Status: CellFailed}
}

// hostBoundCell: "none", or the host-bound cycles with the worst lag and steal.
func hostBoundCell(v variant) Cell {
	var cycles []string
	seen := map[string]bool{}
	var lag, steal float64
	for _, r := range v.runs {
		for _, c := range r.res.Cycles {
			if !c.HostBound {
				continue
			}
			if !seen[c.Name] {
				seen[c.Name] = true
				cycles = append(cycles, c.Name)
			}
			lag = max(lag, c.HostLagMSPerS+c.LoaderLagMSPerS)
			steal = max(steal, c.CPUStealPct)
		}
	}
	if len(cycles) == 0 {
		return Cell{Value: "none", Status: CellPassed}
	}
	sort.SliceStable(cycles, func(i, j int) bool { return nodeOrder(cycles[i], cycles[j]) })
	worst := fmt.Sprintf("lag up to %.0f ms/s", lag)
	if steal >= 0.5 {
		worst += fmt.Sprintf(", CPU steal up to %.0f%%", steal)
	}
	return Cell{Value: strings.Join(cycles, ", ") + " (" + worst + ")", Status: CellWarning}
}
