package reporting

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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
}

// repeatSuffix is how `elasticity matrix` names repeats of one variant.
var repeatSuffix = regexp.MustCompile(`-r[0-9]+$`)

// VariantOf names the scenario variant of a run directory: its base name
// without the matrix's -rN repeat suffix, so repeats group together.
func VariantOf(dir string) string {
	return repeatSuffix.ReplaceAllString(filepath.Base(filepath.Clean(dir)), "")
}

// Section is a part of a comparison its caller computed (the matrix's
// passes, groups and expectations), shown before the runs' tables.
type Section struct {
	Table Table
	// SVG is a self-contained chart shown after the table: inline in the
	// HTML, written to File and linked from the markdown.
	SVG  string
	File string
}

// Compare writes comparison.md and comparison.html into the directory out
// ("" = the current directory): the given sections, then per-cycle rows of
// every run side by side with ratios to the first run, and, for variants
// run more than once, mean ± stddev with a verdict against the first
// variant. Without directories (no cell ran) only the sections are shown.
func Compare(dirs []string, out string, sections ...Section) error {
	if len(dirs) == 0 && len(sections) == 0 {
		return fmt.Errorf("comparing runs: no results directory given")
	}
	var runs []run
	for _, d := range dirs {
		res, err := Load(d)
		if err != nil {
			return fmt.Errorf("comparing runs: %s: %w", d, err)
		}
		runs = append(runs, run{dir: d, name: filepath.Base(filepath.Clean(d)), variant: VariantOf(d), res: res})
	}
	if out == "" {
		out = "."
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("comparing runs: creating %s: %w", out, err)
	}
	title := fmt.Sprintf("elasticity comparison of %d runs", len(runs))
	var intro []string
	if len(runs) > 0 {
		sections = append(sections, tableSections(compareTables(runs))...)
		intro = append(intro, "Ratios are to the first run ("+runs[0].name+"). Latencies are response times in ms; lower is better. Throughput in op/s; higher is better.")
	}
	if anyEmulated(runs) {
		intro = append(intro, EmulatedNote)
	}
	if n := hostBoundRuns(runs); n != "" {
		intro = append(intro, n)
	}
	if n := compactionBehindRuns(runs); n != "" {
		intro = append(intro, n)
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# %s\n\n", title)
	for _, s := range intro {
		fmt.Fprintf(&md, "%s\n\n", mdText(s))
	}
	for _, sec := range sections {
		t := sec.Table
		fmt.Fprintf(&md, "## %s\n\n", mdText(t.Name))
		if len(t.Rows) > 0 {
			if err := mdTable(&md, t, MarkdownOptions{}); err != nil {
				return fmt.Errorf("comparing runs: %w", err)
			}
			md.WriteString("\n")
		}
		if t.Note != "" {
			fmt.Fprintf(&md, "%s\n\n", mdText(t.Note))
		}
		if sec.SVG != "" && sec.File != "" {
			if err := writeFile(filepath.Join(out, sec.File), []byte(sec.SVG)); err != nil {
				return err
			}
			fmt.Fprintf(&md, "![%s](%s)\n\n", mdText(t.Name), sec.File)
		}
	}
	if err := writeFile(filepath.Join(out, FileCompareMD), md.Bytes()); err != nil {
		return err
	}
	var h bytes.Buffer
	if err := tablesPage(&h, title, intro, sections); err != nil {
		return err
	}
	return writeFile(filepath.Join(out, FileCompareHTML), h.Bytes())
}

func anyEmulated(runs []run) bool {
	for _, r := range runs {
		if r.res.Setup.Emulated {
			return true
		}
	}
	return false
}

// hostBoundRuns names the runs with host-bound cycles, and their worst host
// figures: a latency compared across such runs is the machines' difference,
// not the variants'. "" when none was.
func hostBoundRuns(runs []run) string {
	var names []string
	for _, r := range runs {
		var cycles []string
		var lag, steal float64
		for _, c := range r.res.Cycles {
			if c.HostBound {
				cycles = append(cycles, c.Name)
				lag = max(lag, c.HostLagMSPerS+c.LoaderLagMSPerS)
				steal = max(steal, c.CPUStealPct)
			}
		}
		if len(cycles) == 0 {
			continue
		}
		worst := fmt.Sprintf("lag up to %.0f ms/s", lag)
		if steal > 0 {
			worst += fmt.Sprintf(", CPU steal up to %.0f%%", steal)
		}
		names = append(names, fmt.Sprintf("%s (%s; %s)", r.name, strings.Join(cycles, ", "), worst))
	}
	if len(names) == 0 {
		return ""
	}
	return "Host-bound runs: " + strings.Join(names, "; ") + ". Their latencies in those cycles are the machine's, not the model's: compared with another run's, they measure the two runs' hosts."
}

// compactionBehindRuns names the runs in which compaction fell behind the
// writes, and in which cycles: their offered load is more than the cluster
// sustains. "" when it kept up in every run.
func compactionBehindRuns(runs []run) string {
	var names []string
	for _, r := range runs {
		if cycles := results.CompactionBehindCycles(r.res.Cycles); len(cycles) > 0 {
			names = append(names, fmt.Sprintf("%s (%s)", r.name, strings.Join(cycles, ", ")))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "Compaction fell behind in: " + strings.Join(names, "; ") + ". In those cycles the compaction backlog kept growing: the offered load is more than that cluster sustains, and its latency rises with the backlog."
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
	for _, name := range names {
		t := Table{ID: "cycle-" + strings.TrimPrefix(name, "Cycle #"), Name: name, Columns: []string{"run"}}
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
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title><style>{{.CSS}}</style></head>
<body><h1>{{.Title}}</h1>
{{range .Intro}}<p class="note">{{.}}</p>{{end}}
{{range .Sections}}{{with .Table}}<h2 id="{{.ID}}">{{.Name}}</h2>
{{if .Rows}}<table id="t-{{.ID}}"><thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Status}} class="{{.Status}}"{{end}}{{if .Threshold}} title="{{.Threshold}}"{{end}}>{{.Value}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{end}}
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
	Table Table
	SVG   template.HTML // built by this package's chart writers, which escape every text
}

func tablesPage(w *bytes.Buffer, title string, intro []string, sections []Section) error {
	hs := make([]htmlSection, len(sections))
	for i, s := range sections {
		hs[i] = htmlSection{Table: s.Table, SVG: template.HTML(s.SVG)}
	}
	err := tablesTmpl.Execute(w, struct {
		Title    string
		Intro    []string
		Sections []htmlSection
		CSS      template.CSS
	}{title, intro, hs, template.CSS(css)})
	if err != nil {
		return fmt.Errorf("rendering the comparison: %w", err)
	}
	return nil
}
