package reporting

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stats"
)

// Comparison file names, written into the output directory of Compare.
const (
	FileCompareMD   = "comparison.md"
	FileCompareHTML = "comparison.html"
)

// run is one compared run.
type run struct {
	dir     string
	name    string
	variant string
	res     *results.Result
	tl      *Timeline // nil for a directory holding only result.json
}

// repeatSuffix is how `elasticity matrix` names repeats of one variant.
var repeatSuffix = regexp.MustCompile(`-r[0-9]+$`)

// VariantOf names the scenario variant of a run directory: its base name
// without the matrix's -rN repeat suffix, so repeats group together.
func VariantOf(dir string) string {
	return repeatSuffix.ReplaceAllString(filepath.Base(filepath.Clean(dir)), "")
}

// Section is a part of a comparison: a table, a chart or both.
type Section struct {
	Table Table
	// SVG is a self-contained chart (or several) shown after the table in
	// the HTML; with File it is also written there and linked from the
	// markdown, without it the markdown points to the HTML.
	SVG  string
	File string
	// Markdown, when set, is the table as comparison.md shows it (values
	// coloured apart from what follows them, such as a ratio).
	Markdown *Table
	// Groups head the columns in the HTML: each group's name spans its
	// columns (the last ones of the table, in order), whose own names start
	// with it and are shown without it.
	Groups []ColumnGroup
}

// ColumnGroup is a header over Span columns.
type ColumnGroup struct {
	Name string
	Span int
}

// CompareOptions are what a caller adds to a comparison.
type CompareOptions struct {
	// Verdict is the line under the title (default: the runs' statuses).
	Verdict string
	// Sections come after the answer tables and the charts (a matrix's
	// expectations and passes).
	Sections []Section
	// Figures are the long tables' figures per variant; nil: the runs'.
	Figures []VariantFigures
	// Late sections come after the long figure tables (a matrix's outliers).
	Late []Section
}

// Compare writes comparison.md and comparison.html into the directory out
// ("" = the current directory). The answer comes first: P99 per cycle per
// variant with the ratio to the variant's own Cycle #0, the scale-out
// durations per variant, compaction and host per variant; then the charts
// (HTML), the caller's sections, the runs, the long figure tables grouped
// (latency, throughput, host and compaction, durations), and last every
// run side by side per cycle, with mean ± sd and a verdict against the
// first variant for repeated variants. Without directories (no cell ran)
// only the caller's sections and figures are shown.
func Compare(dirs []string, out string, opt CompareOptions) error {
	if len(dirs) == 0 && len(opt.Sections) == 0 && len(opt.Figures) == 0 {
		return fmt.Errorf("comparing runs: no results directory given")
	}
	var runs []run
	for _, d := range dirs {
		r, err := loadRun(d)
		if err != nil {
			return fmt.Errorf("comparing runs: %s: %w", d, err)
		}
		runs = append(runs, r)
	}
	if out == "" {
		out = "."
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("comparing runs: creating %s: %w", out, err)
	}
	vs := variantsOf(runs)
	title := compareTitle(runs, vs)
	intro := []string{opt.Verdict}
	if opt.Verdict == "" {
		intro[0] = runsVerdict(runs, vs)
	}
	if anyEmulated(runs) {
		intro = append(intro, EmulatedNote)
	}
	figs := opt.Figures
	if figs == nil {
		figs = runFigures(vs)
	}
	secs := compareSections(runs, vs, figs, opt)
	md, err := compareMarkdown(out, title, intro, secs)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, FileCompareMD), md); err != nil {
		return err
	}
	var h bytes.Buffer
	if err := tablesPage(&h, title, intro, secs); err != nil {
		return err
	}
	return writeFile(filepath.Join(out, FileCompareHTML), h.Bytes())
}

// compareSections lays the comparison out: the answer, the charts, the
// caller's sections, the runs, the long figure tables, the caller's late
// sections, and every run per cycle.
func compareSections(runs []run, vs []variant, figs []VariantFigures, opt CompareOptions) []Section {
	var secs []Section
	if len(runs) > 0 {
		secs = append(secs, p99Section(vs, runs), durationSection(vs), healthSection(vs), chartSection(vs, runs))
		if n := notMeasured(figs); n != "" {
			for i := range secs[:3] {
				secs[i].Table.Note += " " + n
				if m := secs[i].Markdown; m != nil {
					m.Note += " " + n
				}
			}
		}
	}
	secs = append(secs, opt.Sections...)
	tables := compareTables(runs)
	if len(tables) > 0 {
		secs = append(secs, Section{Table: tables[0]})
	}
	secs = append(secs, tableSections(FigureTables(figs))...)
	secs = append(secs, opt.Late...)
	if len(tables) > 1 {
		secs = append(secs, tableSections(tables[1:])...)
	}
	return secs
}

// loadRun reads a run directory with its per-interval latency for the
// charts: recomputed from the .jsonl files when they exist (they are the
// source of truth), else result.json without charts.
func loadRun(d string) (run, error) {
	var a *analysis
	var err error
	if _, serr := os.Stat(filepath.Join(d, results.FileEvents)); serr == nil {
		if a, err = analyzeRun(d, compareMaxPoints); err == nil {
			Evaluate(a.Result)
		}
	} else {
		a, err = analyze(d) // result.json alone: no charts
	}
	if err != nil {
		return run{}, err
	}
	return run{dir: d, name: filepath.Base(filepath.Clean(d)), variant: VariantOf(d), res: a.Result, tl: a.Timeline}, nil
}

func compareMarkdown(out, title string, intro []string, secs []Section) ([]byte, error) {
	var md bytes.Buffer
	fmt.Fprintf(&md, "# %s\n\n", mdText(title))
	for i, s := range intro {
		if i == 0 {
			fmt.Fprintf(&md, "**%s**\n\n", mdText(s))
			continue
		}
		fmt.Fprintf(&md, "> %s\n\n", mdText(s))
	}
	for _, sec := range secs {
		t := sec.Table
		if sec.Markdown != nil {
			t = *sec.Markdown
		}
		fmt.Fprintf(&md, "## %s\n\n", mdText(t.Name))
		if len(t.Rows) > 0 {
			if err := mdTable(&md, t, MarkdownOptions{}); err != nil {
				return nil, fmt.Errorf("comparing runs: %w", err)
			}
			md.WriteString("\n")
		}
		if t.Note != "" {
			fmt.Fprintf(&md, "%s\n\n", mdText(t.Note))
		}
		switch {
		case sec.SVG != "" && sec.File != "":
			if err := writeFile(filepath.Join(out, sec.File), []byte(sec.SVG)); err != nil {
				return nil, err
			}
			fmt.Fprintf(&md, "![%s](%s)\n\n", mdText(t.Name), sec.File)
		case sec.SVG != "":
			fmt.Fprintf(&md, "The charts are in [%s](%s).\n\n", FileCompareHTML, FileCompareHTML)
		}
	}
	return md.Bytes(), nil
}

// compareTitle names the scenario when every run is of the same one.
func compareTitle(runs []run, vs []variant) string {
	scen := ""
	for i, r := range runs {
		if i == 0 {
			scen = r.res.Setup.Scenario
		} else if r.res.Setup.Scenario != scen {
			scen = ""
			break
		}
	}
	t := "elasticity comparison"
	if scen != "" {
		t += ": " + scen
	}
	return t + fmt.Sprintf(", %d variant%s (%d run%s)", len(vs), plural(len(vs)), len(runs), plural(len(runs)))
}

// runsVerdict tallies the runs' statuses.
func runsVerdict(runs []run, vs []variant) string {
	if len(runs) == 0 {
		return "No run to compare."
	}
	counts := map[string]int{}
	var order []string
	for _, r := range runs {
		if counts[r.res.Status] == 0 {
			order = append(order, r.res.Status)
		}
		counts[r.res.Status]++
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	return fmt.Sprintf("Verdict: %d run%s of %d variant%s: %s.", len(runs), plural(len(runs)), len(vs), plural(len(vs)), strings.Join(parts, ", "))
}

// chartSection holds the comparison's charts.
func chartSection(vs []variant, runs []run) Section {
	return Section{Table: Table{ID: "charts", Name: "Charts",
		Note: "P99 per cycle per variant; each run's P99 per interval from its first topology request (writes, then reads); the scale-out durations per variant. A variant has the same colour in every chart."},
		SVG: strings.Join(compareCharts(vs, runs), "\n")}
}

// notMeasured names the variants without a measured run and why (a
// matrix's pending cells), which the answer tables cannot show; "" when
// every variant has one.
func notMeasured(figs []VariantFigures) string {
	var parts []string
	for _, f := range figs {
		if len(f.Runs) == 0 {
			parts = append(parts, f.Name+": "+f.Pending)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Not measured: " + strings.Join(parts, "; ") + "."
}

// runFigures are the runs' figures per variant: the runs that ran to the
// end (thresholds passed or failed) count, as a matrix counts its passes.
func runFigures(vs []variant) []VariantFigures {
	var out []VariantFigures
	for _, v := range vs {
		f := VariantFigures{Name: v.label}
		for _, r := range v.runs {
			if r.res.Status == results.StatusPassed || r.res.Status == results.StatusFailed {
				f.Runs = append(f.Runs, results.Figures(r.res))
			}
		}
		if len(f.Runs) == 0 {
			f.Pending = "no run ran to the end"
		}
		out = append(out, f)
	}
	return out
}

func anyEmulated(runs []run) bool {
	for _, r := range runs {
		if r.res.Setup.Emulated {
			return true
		}
	}
	return false
}

// metric is one compared number of a cycle.
type metric struct {
	name   string
	lower  bool // lower is better
	format func(float64) string
	get    func(*results.Cycle) float64
}

var compared = []metric{
	{"P90 write [ms]", true, MS, func(c *results.Cycle) float64 { return c.WriteP90MS }},
	{"P90 read [ms]", true, MS, func(c *results.Cycle) float64 { return c.ReadP90MS }},
	{"P99 write [ms]", true, MS, func(c *results.Cycle) float64 { return c.WriteP99MS }},
	{"P99 read [ms]", true, MS, func(c *results.Cycle) float64 { return c.ReadP99MS }},
	{"Throughput write [op/s]", false, Thousands, func(c *results.Cycle) float64 { return c.WriteOpsPerS }},
	{"Throughput read [op/s]", false, Thousands, func(c *results.Cycle) float64 { return c.ReadOpsPerS }},
	{"duration [HH:MM:SS]", true, HMS, func(c *results.Cycle) float64 { return c.DurationS }},
}

func cycleOf(res *results.Result, name string) *results.Cycle {
	for i := range res.Cycles {
		if res.Cycles[i].Name == name {
			return &res.Cycles[i]
		}
	}
	return nil
}

func ratio(v, base float64) string {
	if base == 0 || math.IsNaN(v) {
		return ""
	}
	return fmt.Sprintf(" (×%.2f)", v/base)
}

func compareTables(runs []run) []Table {
	if len(runs) == 0 {
		return nil
	}
	var out []Table
	// The runs.
	rt := Table{ID: "runs", Name: "Runs", Columns: []string{"run", "variant", "status", "setup", "scale-out", "nodes normal", "data balanced", "latency recovered", "op/s per vCPU before", "op/s per vCPU after"},
		Note: "Scale-out times are from the first topology request to the last nodes normal, the data balanced and the latency recovered."}
	for _, r := range runs {
		st := Cell{Value: r.res.Status}
		switch r.res.Status {
		case results.StatusPassed:
			st.Status = CellPassed
		case results.StatusFailed, results.StatusError:
			st.Status = CellFailed
		}
		d := r.res.Derived
		if d == nil {
			d = &results.Derived{}
		}
		rt.Rows = append(rt.Rows, []Cell{{Value: r.name}, {Value: r.variant}, st, {Value: SetupLine(r.res)},
			{Value: HMS(d.ScaleOutSeconds)}, {Value: HMS(d.NodesNormalSeconds)}, {Value: HMS(d.DataBalancedSeconds)}, {Value: HMS(d.LatencyRecoveredSeconds)},
			{Value: Thousands(d.OpsPerVCPUBefore)}, {Value: Thousands(d.OpsPerVCPUAfter)}})
	}
	out = append(out, rt)

	// Per cycle, every run side by side.
	names := cycleNames(runs)
	for _, name := range names {
		t := Table{ID: "cycle-" + strings.TrimPrefix(name, "Cycle #"), Name: name + ", every run", Columns: []string{"run"},
			Note: "Ratios are to the first run (" + runs[0].name + "). Latencies are response times in ms, lower is better; throughput in op/s, higher is better."}
		for _, m := range compared {
			t.Columns = append(t.Columns, m.name)
		}
		base := cycleOf(runs[0].res, name)
		for _, r := range runs {
			c := cycleOf(r.res, name)
			row := []Cell{{Value: r.name}}
			for _, m := range compared {
				if c == nil {
					row = append(row, Cell{Value: "—"})
					continue
				}
				v := m.get(c)
				cell := verdictCell(r.res, m.format(v), c.Name, metricKey(m.name)...)
				if base != nil && r.dir != runs[0].dir {
					cell.Value += ratio(v, m.get(base))
				}
				row = append(row, cell)
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}

	out = append(out, opTables(runs, names)...)

	// Repeated variants: mean ± stddev and a verdict against the first variant.
	groups := map[string][]run{}
	var order []string
	for _, r := range runs {
		if _, ok := groups[r.variant]; !ok {
			order = append(order, r.variant)
		}
		groups[r.variant] = append(groups[r.variant], r)
	}
	repeated := false
	for _, g := range groups {
		if len(g) > 1 {
			repeated = true
		}
	}
	if repeated {
		st := Table{ID: "variants", Name: "Variants (mean ± stddev over repeats)", Columns: []string{"cycle", "metric"},
			Note: "Verdict against the first variant by Welch's t-test at 95%: \"inconclusive\" when the difference is within the noise (or a variant ran once)."}
		for _, v := range order {
			st.Columns = append(st.Columns, fmt.Sprintf("%s (n=%d)", v, len(groups[v])))
		}
		for _, v := range order[1:] {
			st.Columns = append(st.Columns, "verdict "+v)
		}
		for _, name := range names {
			for _, m := range compared {
				row := []Cell{{Value: name}, {Value: m.name}}
				samples := make([][]float64, len(order))
				for i, v := range order {
					for _, r := range groups[v] {
						if c := cycleOf(r.res, name); c != nil {
							samples[i] = append(samples[i], m.get(c))
						}
					}
					mean, sd := stats.Mean(samples[i]), stats.SD(samples[i])
					cell := "—"
					switch len(samples[i]) {
					case 0:
					case 1:
						cell = m.format(mean)
					default:
						cell = m.format(mean) + " ± " + m.format(sd)
					}
					row = append(row, Cell{Value: cell})
				}
				for i := 1; i < len(order); i++ {
					verdict := stats.Welch(samples[0], samples[i], m.lower)
					c := Cell{Value: verdict}
					switch verdict {
					case "better":
						c.Status = CellPassed
					case "worse":
						c.Status = CellFailed
					}
					row = append(row, c)
				}
				st.Rows = append(st.Rows, row)
			}
		}
		out = append(out, st)
	}
	return out
}

// metricKey maps a compared column to the threshold metrics that colour it.
func metricKey(col string) []string {
	switch col {
	case "P90 write [ms]":
		return []string{"write_p90_ms"}
	case "P90 read [ms]":
		return []string{"read_p90_ms"}
	case "P99 write [ms]":
		return []string{"write_p99_ms"}
	case "P99 read [ms]":
		return []string{"read_p99_ms"}
	case "Throughput write [op/s]":
		return []string{"write_ops_per_sec", "total_ops_per_sec"}
	case "Throughput read [op/s]":
		return []string{"read_ops_per_sec", "total_ops_per_sec"}
	}
	return nil
}

var tablesTmpl = template.Must(template.New("tables").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>{{.Title}}</title><style>{{.CSS}}</style></head>
<body><h1>{{.Title}}</h1>
{{range $i, $p := .Intro}}{{if eq $i 0}}<p><b>{{$p}}</b></p>{{else}}<div class="emulated">{{$p}}</div>{{end}}{{end}}
{{range .Sections}}{{with .Table}}<h2 id="{{.ID}}">{{.Name}}</h2>
{{if .Rows}}<table id="t-{{.ID}}"><thead>{{end}}{{end}}{{if .Table.Rows}}{{if .Groups}}<tr>{{range .Lead}}<th rowspan="2">{{.}}</th>{{end}}{{range .Groups}}<th colspan="{{.Span}}" class="group">{{.Name}}</th>{{end}}</tr>
<tr>{{range .Grouped}}<th>{{.}}</th>{{end}}</tr>{{else}}<tr>{{range .Table.Columns}}<th>{{.}}</th>{{end}}</tr>{{end}}</thead><tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if .Threshold}} title="{{.Threshold}}"{{end}}>{{.Value}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{with .Table}}{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{end}}
{{if .SVG}}<div class="chart">{{.SVG}}</div>{{end}}
{{end}}</body></html>
`))

// tableSections wraps tables without charts.
func tableSections(tables []Table) []Section {
	out := make([]Section, len(tables))
	for i, t := range tables {
		out[i] = Section{Table: t}
	}
	return out
}

type htmlSection struct {
	Table  Table
	Rows   [][]htmlCell
	Groups []ColumnGroup
	// Lead are the columns before the groups, Grouped the grouped ones
	// without their group's name.
	Lead, Grouped []string
	SVG           template.HTML // built by this package's chart writers, which escape every text
}

func tablesPage(w *bytes.Buffer, title string, intro []string, sections []Section) error {
	hs := make([]htmlSection, len(sections))
	for i, s := range sections {
		hs[i] = htmlSection{Table: s.Table, SVG: template.HTML(s.SVG)}
		for _, r := range s.Table.Rows {
			row := make([]htmlCell, len(r))
			for j, c := range r {
				row[j] = htmlCell{Value: c.Value, Class: c.Status, Threshold: c.Threshold}
				if j > 0 && numericWithRatio(c.Value) {
					row[j].Class = strings.TrimSpace(row[j].Class + " num")
				}
			}
			hs[i].Rows = append(hs[i].Rows, row)
		}
		span := 0
		for _, g := range s.Groups {
			span += g.Span
		}
		cols := s.Table.Columns
		if len(s.Groups) == 0 || span > len(cols) {
			continue
		}
		hs[i].Groups, hs[i].Lead = s.Groups, cols[:len(cols)-span]
		k := len(cols) - span
		for _, g := range s.Groups {
			for _, c := range cols[k : k+g.Span] {
				hs[i].Grouped = append(hs[i].Grouped, strings.TrimPrefix(c, g.Name+" "))
			}
			k += g.Span
		}
	}
	err := tablesTmpl.Execute(w, struct {
		Title    string
		Intro    []string
		Sections []htmlSection
		CSS      template.CSS
	}{title, intro, hs, template.CSS(css + compareCSS)})
	if err != nil {
		return fmt.Errorf("rendering the comparison: %w", err)
	}
	return nil
}

// numericWithRatio: a number, or a number and its ratio ("8.09 ×4.32").
func numericWithRatio(v string) bool {
	n, r, ok := strings.Cut(v, " ×")
	return numeric(n) && (!ok || numeric(r))
}

// compareCSS: the column groups' headers stand out over their columns.
const compareCSS = `th.group{text-align:center;background:#eaeef2}`
