package reporting

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Hand-written SVG keeps the HTML self-contained and small: a chart is a few
// polylines over shaded phase spans. Every text is escaped here because the
// result is trusted by html/template.

type series struct {
	name    string
	color   string
	dash    bool
	scatter bool
	t       []time.Time
	y       []float64
}

type chartSpec struct {
	title  string
	yLabel string
	logY   bool
	yMin   float64 // linear charts: lower bound (0)
	yMax   float64 // linear charts: fixed upper bound when > 0
	start  time.Time
	end    time.Time
	spans  []Span
	series []series
}

const (
	chartW, chartH            = 1180, 280
	padL, padR, padT, padB    = 64, 170, 30, 34
	plotW, plotH              = chartW - padL - padR, chartH - padT - padB
	maxChartPointsPerSeries   = 2000
	spanFill, spanHold        = "#f3e3c3", "#ececec"
	spanSteady                = "#d9eed5"
	spanCycleA, spanCycleB    = "#d8e6f3", "#e6ddf2"
	colWrite, colRead, colFil = "#1f77b4", "#d62728", "#8c6d31"
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func (c *chartSpec) render() template.HTML {
	if !c.end.After(c.start) {
		return template.HTML(`<p class="note">No data for ` + html.EscapeString(c.title) + `.</p>`)
	}
	// Y range.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, v := range s.y {
			if c.logY && v <= 0 {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	var ymap func(float64) float64
	var ticks []float64
	if c.logY {
		l0, l1 := math.Floor(math.Log10(math.Max(lo, 1e-3))), math.Ceil(math.Log10(math.Max(hi, 1e-3)))
		if l1 <= l0 {
			l1 = l0 + 1
		}
		ymap = func(v float64) float64 {
			if v <= 0 {
				v = math.Pow(10, l0)
			}
			return padT + plotH - (math.Log10(v)-l0)/(l1-l0)*plotH
		}
		for e := l0; e <= l1; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
	} else {
		lo = c.yMin
		if c.yMax > 0 {
			hi = c.yMax
		}
		if hi <= lo {
			hi = lo + 1
		}
		step := niceStep((hi - lo) / 5)
		hi = math.Ceil(hi/step) * step
		ymap = func(v float64) float64 { return padT + plotH - (v-lo)/(hi-lo)*plotH }
		for v := lo; v <= hi+step/2; v += step {
			ticks = append(ticks, v)
		}
	}
	total := c.end.Sub(c.start).Seconds()
	xmap := func(t time.Time) float64 {
		x := t.Sub(c.start).Seconds() / total
		return padL + math.Max(0, math.Min(1, x))*plotW
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`, chartW, chartH, chartW, chartH, html.EscapeString(c.title))
	fmt.Fprintf(&b, `<text x="%d" y="18" class="ct">%s</text>`, padL, html.EscapeString(c.title))
	// Phase spans.
	cyc := 0
	for _, s := range c.spans {
		col := spanHold
		switch s.Kind {
		case SpanFill:
			col = spanFill
		case SpanSteady:
			col = spanSteady
		case SpanCycle:
			col = spanCycleA
			if cyc%2 == 1 {
				col = spanCycleB
			}
			cyc++
		}
		x0, x1 := xmap(s.Start), xmap(s.End)
		fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="%d" fill="%s"><title>%s %s – %s</title></rect>`, f1(x0), padT, f1(math.Max(x1-x0, 0.5)), plotH, col,
			html.EscapeString(s.Name), s.Start.UTC().Format("15:04:05"), s.End.UTC().Format("15:04:05"))
		if x1-x0 > 34 && s.Kind != SpanHold {
			fmt.Fprintf(&b, `<text x="%s" y="%d" class="sl">%s</text>`, f1(x0+3), padT+11, html.EscapeString(shortSpan(s.Name)))
		}
	}
	// Axes and grid.
	for _, v := range ticks {
		y := ymap(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s" class="grid"/><text x="%d" y="%s" class="yt">%s</text>`, padL, padL+plotW, f1(y), f1(y), padL-6, f1(y+4), tickLabel(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%d" class="yl" transform="rotate(-90 14 %d)">%s</text>`, padT+plotH/2, padT+plotH/2, html.EscapeString(c.yLabel))
	for i := 0; i <= 8; i++ {
		t := c.start.Add(time.Duration(float64(c.end.Sub(c.start)) * float64(i) / 8))
		x := xmap(t)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" class="axis"/><text x="%s" y="%d" class="xt">%s</text>`, f1(x), f1(x), padT+plotH, padT+plotH+4, f1(x), padT+plotH+18, t.UTC().Format("15:04:05"))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, padL, padT, plotW, plotH)
	// Series.
	for i, s := range c.series {
		t, y := downsample(s.t, s.y, maxChartPointsPerSeries)
		if len(t) == 0 {
			continue
		}
		if s.scatter {
			fmt.Fprintf(&b, `<g fill="%s">`, s.color)
			for j := range t {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3"><title>%s %s</title></circle>`, f1(xmap(t[j])), f1(ymap(y[j])), t[j].UTC().Format("15:04:05"), tickLabel(y[j]))
			}
			b.WriteString(`</g>`)
		} else {
			var p strings.Builder
			for j := range t {
				if j == 0 {
					p.WriteString("M")
				} else {
					p.WriteString(" L")
				}
				p.WriteString(f1(xmap(t[j])))
				p.WriteByte(' ')
				p.WriteString(f1(ymap(y[j])))
			}
			dash := ""
			if s.dash {
				dash = ` stroke-dasharray="5 3"`
			}
			fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.4"%s/>`, p.String(), s.color, dash)
		}
		ly := padT + 10 + i*16
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="4 2"`
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text x="%d" y="%d" class="lg">%s</text>`,
			chartW-padR+10, chartW-padR+28, ly, ly, s.color, dash, chartW-padR+32, ly+4, html.EscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func shortSpan(name string) string {
	if strings.HasPrefix(name, "Cycle ") {
		return strings.TrimPrefix(name, "Cycle ")
	}
	return name
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func tickLabel(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case math.Abs(v) >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	case math.Abs(v) < 1:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// downsample keeps at most n points, taking the maximum of each group so
// that spikes stay visible.
func downsample(t []time.Time, y []float64, n int) ([]time.Time, []float64) {
	if len(t) <= n {
		return t, y
	}
	g := (len(t) + n - 1) / n
	ot, oy := make([]time.Time, 0, n), make([]float64, 0, n)
	for i := 0; i < len(t); i += g {
		j := min(i+g, len(t))
		m := y[i]
		for _, v := range y[i:j] {
			m = math.Max(m, v)
		}
		ot, oy = append(ot, t[i+(j-i)/2]), append(oy, m)
	}
	return ot, oy
}

// charts builds the run's charts.
func charts(a *analysis) []template.HTML {
	tl := a.Timeline
	if tl == nil {
		return nil
	}
	base := chartSpec{start: tl.Start, end: tl.End, spans: tl.Spans}
	opColor := map[string]string{results.OpWrite: colWrite, results.OpRead: colRead, results.OpFill: colFil}
	ops := []string{results.OpWrite, results.OpRead, results.OpFill}

	lat := base
	lat.title, lat.yLabel, lat.logY = "Latency per interval (response time, P90 dashed, P99 solid)", "ms (log)", true
	thr := base
	thr.title, thr.yLabel = "Throughput (successful operations)", "op/s"
	for _, op := range ops {
		pts := tl.Latency[op]
		if len(pts) == 0 {
			continue
		}
		t := make([]time.Time, len(pts))
		p90, p99, ops := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
		for i, p := range pts {
			t[i], p90[i], p99[i], ops[i] = p.Time, p.P90MS, p.P99MS, p.OpsPerSec
		}
		if op != results.OpFill {
			lat.series = append(lat.series, series{name: op + " P90", color: opColor[op], dash: true, t: t, y: p90})
		}
		lat.series = append(lat.series, series{name: op + " P99", color: opColor[op], t: t, y: p99})
		thr.series = append(thr.series, series{name: op, color: opColor[op], t: t, y: ops})
	}
	disk := base
	disk.title, disk.yLabel, disk.yMax = "Disk usage per node", "usage %", 100
	nodes := sortedKeys(tl.Disk)
	sort.SliceStable(nodes, func(i, j int) bool { return nodeOrder(nodes[i], nodes[j]) })
	for i, n := range nodes {
		pts := tl.Disk[n]
		t, y := make([]time.Time, len(pts)), make([]float64, len(pts))
		for j, p := range pts {
			t[j], y[j] = p.Time, p.Value
		}
		disk.series = append(disk.series, series{name: n, color: palette[i%len(palette)], t: t, y: y})
	}
	st := base
	st.title, st.yLabel, st.logY = "Reactor stalls (each dot one stall)", "ms (log)", true
	byNode := map[string]*series{}
	var order []string
	for _, s := range tl.Stalls {
		se := byNode[s.Node]
		if se == nil {
			se = &series{name: s.Node, scatter: true}
			byNode[s.Node] = se
			order = append(order, s.Node)
		}
		se.t, se.y = append(se.t, s.Time), append(se.y, s.MS)
	}
	sort.SliceStable(order, func(i, j int) bool { return nodeOrder(order[i], order[j]) })
	for i, n := range order {
		se := byNode[n]
		se.color = palette[i%len(palette)]
		st.series = append(st.series, *se)
	}
	out := []template.HTML{lat.render(), thr.render(), disk.render()}
	if len(st.series) > 0 {
		out = append(out, st.render())
	} else {
		out = append(out, template.HTML(`<p class="note">No reactor stalls.</p>`))
	}
	return append(out, clusterCharts(tl, base)...)
}

// cycleSection is one cycle's charts, zoomed to it: the target of the
// latency tables' "Overview" links.
type cycleSection struct {
	ID, Title string
	Charts    []template.HTML
}

// CycleAnchor is the HTML id of a cycle's section ("Cycle #1" → "cycle-1").
func CycleAnchor(cycle string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(cycle) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if r == ' ' {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// cycleSections zooms the latency, throughput and tablet charts to every
// cycle (with a tenth of its length either side).
func cycleSections(a *analysis) []cycleSection {
	tl := a.Timeline
	if tl == nil {
		return nil
	}
	var out []cycleSection
	for _, c := range a.Result.Cycles {
		pad := c.End.Sub(c.Start) / 10
		from, to := c.Start.Add(-pad), c.End.Add(pad)
		title := c.Name
		if c.Step != "" {
			title += " — " + c.Step
		}
		title += fmt.Sprintf(" (%s – %s UTC)", c.Start.UTC().Format("15:04:05"), c.End.UTC().Format("15:04:05"))
		var cs []template.HTML
		for _, spec := range zoomSpecs(tl, from, to) {
			cs = append(cs, spec.render())
		}
		out = append(out, cycleSection{ID: CycleAnchor(c.Name), Title: title, Charts: cs})
	}
	return out
}

// zoomSpecs are the charts of one window: latency, throughput, tablets.
func zoomSpecs(tl *Timeline, from, to time.Time) []chartSpec {
	base := chartSpec{start: from, end: to, spans: tl.Spans}
	lat := base
	lat.title, lat.yLabel, lat.logY = "Latency (response time, P90 dashed, P99 solid)", "ms (log)", true
	thr := base
	thr.title, thr.yLabel = "Throughput (successful operations)", "op/s"
	opColor := map[string]string{results.OpWrite: colWrite, results.OpRead: colRead, results.OpFill: colFil}
	for _, op := range []string{results.OpWrite, results.OpRead} {
		var t []time.Time
		var p90, p99, ops []float64
		for _, p := range tl.Latency[op] {
			if p.Time.Before(from) || p.Time.After(to) {
				continue
			}
			t, p90, p99, ops = append(t, p.Time), append(p90, p.P90MS), append(p99, p.P99MS), append(ops, p.OpsPerSec)
		}
		if len(t) == 0 {
			continue
		}
		lat.series = append(lat.series, series{name: op + " P90", color: opColor[op], dash: true, t: t, y: p90},
			series{name: op + " P99", color: opColor[op], t: t, y: p99})
		thr.series = append(thr.series, series{name: op, color: opColor[op], t: t, y: ops})
	}
	out := []chartSpec{lat, thr}
	tab := base
	tab.title, tab.yLabel = "Tablets per node", "tablets"
	for _, s := range perNodeSeries(tl.Tablets) {
		if s = clip(s, from, to); len(s.t) > 0 {
			tab.series = append(tab.series, s)
		}
	}
	if len(tab.series) > 0 {
		out = append(out, tab)
	}
	return out
}

func clip(s series, from, to time.Time) series {
	o := s
	o.t, o.y = nil, nil
	for i, t := range s.t {
		if !t.Before(from) && !t.After(to) {
			o.t, o.y = append(o.t, t), append(o.y, s.y[i])
		}
	}
	return o
}

// clusterCharts are the cluster-internal charts from metrics.jsonl: what
// the database did while latency moved.
func clusterCharts(tl *Timeline, base chartSpec) []template.HTML {
	var out []template.HTML
	add := func(c chartSpec, what string) {
		if len(c.series) == 0 {
			out = append(out, template.HTML(`<p class="note">No `+html.EscapeString(what)+` in metrics.jsonl.</p>`))
			return
		}
		out = append(out, c.render())
	}
	tab := base
	tab.title, tab.yLabel = "Tablets per node (scylla_tablets_count)", "tablets"
	tab.series = perNodeSeries(tl.Tablets)
	add(tab, "tablet counts")
	util := base
	util.title, util.yLabel, util.yMax = "Reactor utilization per node (scylla_reactor_utilization, mean over shards)", "%", 100
	util.series = perNodeSeries(tl.Utilization)
	add(util, "reactor utilization")
	mig := base
	mig.title, mig.yLabel = "Tablet migrations started by the balancer, cluster-wide (rate of scylla_load_balancer_migrations_produced)", "migrations/s"
	if len(tl.Migrations) > 0 {
		mig.series = []series{pointSeries("migrations", palette[3], tl.Migrations)}
	}
	add(mig, "tablet migrations")
	to := base
	to.title, to.yLabel = "Coordinator timeouts, cluster-wide (rate of scylla_storage_proxy_coordinator_{read,write}_timeouts)", "timeouts/s"
	if len(tl.ReadTimeouts) > 0 {
		to.series = append(to.series, pointSeries("read", colRead, tl.ReadTimeouts))
	}
	if len(tl.WriteTimeouts) > 0 {
		to.series = append(to.series, pointSeries("write", colWrite, tl.WriteTimeouts))
	}
	add(to, "coordinator timeouts")
	return out
}

func pointSeries(name, color string, pts []ValuePoint) series {
	t, y := make([]time.Time, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		t[i], y[i] = p.Time, p.Value
	}
	return series{name: name, color: color, t: t, y: y}
}

func perNodeSeries(m map[string][]ValuePoint) []series {
	nodes := sortedKeys(m)
	sort.SliceStable(nodes, func(i, j int) bool { return nodeOrder(nodes[i], nodes[j]) })
	var out []series
	for i, n := range nodes {
		out = append(out, pointSeries(n, palette[i%len(palette)], m[n]))
	}
	return out
}

func nodeOrder(a, b string) bool {
	na, nb := trailingInt(a), trailingInt(b)
	if strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") && na >= 0 && nb >= 0 {
		return na < nb
	}
	return a < b
}

func trailingInt(s string) int {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return -1
	}
	return n
}
