package reporting

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stats"
)

// The comparison's charts, drawn as the run report's (svg.go): the same
// size, padding, classes and palette, every text escaped, no script and
// no external reference. A variant keeps its colour in every chart.

// compareMaxPoints bounds each run's latency series in the comparison.
const compareMaxPoints = 600

// yAxis maps values to the plot's y and lists its ticks.
type yAxis struct {
	y     func(float64) float64
	ticks []float64
}

func logAxis(lo, hi float64) yAxis {
	if lo <= 0 || math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	l0, l1 := math.Floor(math.Log10(math.Max(lo, 1e-3))), math.Ceil(math.Log10(math.Max(hi, 1e-3)))
	if l1 <= l0 {
		l1 = l0 + 1
	}
	a := yAxis{y: func(v float64) float64 {
		if v <= 0 {
			v = math.Pow(10, l0)
		}
		return padT + plotH - (math.Log10(v)-l0)/(l1-l0)*plotH
	}}
	for e := l0; e <= l1; e++ {
		a.ticks = append(a.ticks, math.Pow(10, e))
	}
	return a
}

// timeStep is a tick step in seconds that reads as a clock: 1, 2, 5, 10,
// 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 6, 12 h.
func timeStep(raw float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200} {
		if raw <= s {
			return s
		}
	}
	return niceStep(raw)
}

// linAxis is a linear axis from 0 to hi with step(hi/5) ticks.
func linAxis(hi float64, step func(float64) float64) yAxis {
	if hi <= 0 {
		hi = 1
	}
	st := step(hi / 5)
	hi = math.Ceil(hi/st) * st
	a := yAxis{y: func(v float64) float64 { return padT + plotH - v/hi*plotH }}
	for v := 0.0; v <= hi+st/2; v += st {
		a.ticks = append(a.ticks, v)
	}
	return a
}

// frame opens an SVG chart: title, y grid with labels, y-axis label.
func frame(b *strings.Builder, title, yLabel string, ax yAxis, tick func(float64) string) {
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`, chartW, chartH, chartW, chartH, html.EscapeString(title))
	fmt.Fprintf(b, `<text x="%d" y="18" class="ct">%s</text>`, padL, html.EscapeString(title))
	for _, v := range ax.ticks {
		y := ax.y(v)
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%s" y2="%s" class="grid"/><text x="%d" y="%s" class="yt">%s</text>`, padL, padL+plotW, f1(y), f1(y), padL-6, f1(y+4), tick(v))
	}
	fmt.Fprintf(b, `<text x="14" y="%d" class="yl" transform="rotate(-90 14 %d)">%s</text>`, padT+plotH/2, padT+plotH/2, html.EscapeString(yLabel))
}

// legend writes entry i of the legend on the right.
func legend(b *strings.Builder, i int, color string, dash bool, name string) {
	ly := padT + 10 + i*16
	d := ""
	if dash {
		d = ` stroke-dasharray="4 2"`
	}
	if len([]rune(name)) > 24 {
		name = string([]rune(name)[:23]) + "…"
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text x="%d" y="%d" class="lg">%s</text>`,
		chartW-padR+10, chartW-padR+28, ly, ly, color, d, chartW-padR+32, ly+4, html.EscapeString(name))
}

func noChart(what string) string {
	return `<p class="note">No data for ` + html.EscapeString(what) + `.</p>`
}

func variantColor(i int) string { return palette[i%len(palette)] }

// p99CycleChart: P99 per cycle, a line per variant and operation (write
// solid, read dashed), on a log scale.
func p99CycleChart(vs []variant, runs []run) string {
	const title = "P99 per cycle and variant (log scale; write solid, read dashed; the mean over repeats)"
	cycles := cycleNames(runs)
	ops := []struct {
		name string
		dash bool
		get  func(*results.Cycle) float64
	}{{"write", false, func(c *results.Cycle) float64 { return c.WriteP99MS }}, {"read", true, func(c *results.Cycle) float64 { return c.ReadP99MS }}}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		for _, op := range ops {
			for _, c := range cycles {
				if x := v.cycleValues(c, op.get); len(x) > 0 && stats.Mean(x) > 0 {
					lo, hi = math.Min(lo, stats.Mean(x)), math.Max(hi, stats.Mean(x))
				}
			}
		}
	}
	if len(cycles) == 0 || math.IsInf(lo, 1) {
		return noChart(title)
	}
	ax := logAxis(lo, hi)
	xOf := func(i int) float64 { return padL + (float64(i)+0.5)/float64(len(cycles))*plotW }
	var b strings.Builder
	frame(&b, title, "P99 ms (log)", ax, tickLabel)
	for i, c := range cycles {
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" class="axis"/><text x="%s" y="%d" class="xt">%s</text>`,
			f1(xOf(i)), f1(xOf(i)), padT+plotH, padT+plotH+4, f1(xOf(i)), padT+plotH+18, html.EscapeString(c))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, padL, padT, plotW, plotH)
	entry := 0
	for vi, v := range vs {
		col := variantColor(vi)
		for _, op := range ops {
			var path strings.Builder
			var dots strings.Builder
			for i, c := range cycles {
				x := v.cycleValues(c, op.get)
				if len(x) == 0 {
					continue
				}
				m := stats.Mean(x)
				if path.Len() == 0 {
					path.WriteString("M")
				} else {
					path.WriteString(" L")
				}
				fmt.Fprintf(&path, "%s %s", f1(xOf(i)), f1(ax.y(m)))
				fmt.Fprintf(&dots, `<circle cx="%s" cy="%s" r="3.5"><title>%s %s %s: %s ms</title></circle>`, f1(xOf(i)), f1(ax.y(m)),
					html.EscapeString(v.label), html.EscapeString(c), op.name, MS(m))
			}
			if path.Len() == 0 {
				continue
			}
			dash := ""
			if op.dash {
				dash = ` stroke-dasharray="5 3"`
			}
			fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.8"%s/><g fill="%s">%s</g>`, path.String(), col, dash, col, dots.String())
			legend(&b, entry, col, op.dash, v.label+" "+op.name)
			entry++
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// firstRequest is when a run's first topology step was requested (zero: none).
func firstRequest(res *results.Result) time.Time {
	var first time.Time
	for _, s := range res.Steps {
		if s.Kind.IsTopology() && (first.IsZero() || s.RequestedAt.Before(first)) {
			first = s.RequestedAt
		}
	}
	return first
}

// intervalP99Chart: one operation's P99 per interval against the seconds
// since each run's first topology request, a line per run in its
// variant's colour, from as much of the steady state before it as the
// variants share.
func intervalP99Chart(op string, vs []variant) string {
	title := fmt.Sprintf("%s P99 per interval, from the first topology request (log scale; a line per run)", strings.ToUpper(op[:1])+op[1:])
	type line struct {
		vi   int
		name string
		x, y []float64
	}
	var lines []line
	lead, tail := math.Inf(1), 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for vi, v := range vs {
		for _, r := range v.runs {
			first := firstRequest(r.res)
			if r.tl == nil || first.IsZero() || len(r.tl.Latency[op]) == 0 {
				continue
			}
			l := line{vi: vi, name: r.name}
			before := 0.0
			if c := cycleOf(r.res, results.SteadyStateCycle); c != nil && c.Start.Before(first) {
				before = first.Sub(c.Start).Seconds()
			}
			lead = math.Min(lead, before)
			for _, p := range r.tl.Latency[op] {
				s := p.Time.Sub(first).Seconds()
				if s < -before || p.P99MS <= 0 {
					continue
				}
				l.x, l.y = append(l.x, s), append(l.y, p.P99MS)
				tail = math.Max(tail, s)
				lo, hi = math.Min(lo, p.P99MS), math.Max(hi, p.P99MS)
			}
			if len(l.x) > 0 {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 || tail <= 0 {
		return noChart(title + " (no run has per-interval latency and a topology step)")
	}
	lead = math.Min(lead, tail/2) // context, not the whole steady state of a long run
	ax := logAxis(lo, hi)
	span := lead + tail
	xOf := func(s float64) float64 { return padL + math.Max(0, math.Min(1, (s+lead)/span))*plotW }
	var b strings.Builder
	frame(&b, title, "P99 ms (log)", ax, tickLabel)
	step := timeStep(span / 8)
	for s := -math.Floor(lead/step) * step; s <= tail+step/2; s += step {
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" class="axis"/><text x="%s" y="%d" class="xt">%s</text>`,
			f1(xOf(s)), f1(xOf(s)), padT+plotH, padT+plotH+4, f1(xOf(s)), padT+plotH+18, relTime(s))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, padL, padT, plotW, plotH)
	fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="#57606a" stroke-dasharray="3 3"/><text x="%s" y="%d" class="sl">first topology request</text>`,
		f1(xOf(0)), f1(xOf(0)), padT, padT+plotH, f1(xOf(0)+3), padT+11)
	shown := map[int]bool{}
	entry := 0
	for _, l := range lines {
		var p strings.Builder
		for j := range l.x {
			if j == 0 {
				p.WriteString("M")
			} else {
				p.WriteString(" L")
			}
			p.WriteString(f1(xOf(l.x[j])))
			p.WriteByte(' ')
			p.WriteString(f1(ax.y(l.y[j])))
		}
		col := variantColor(l.vi)
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.4"><title>%s</title></path>`, p.String(), col, html.EscapeString(l.name))
		if !shown[l.vi] {
			shown[l.vi] = true
			legend(&b, entry, col, false, vs[l.vi].label)
			entry++
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// relTime labels seconds from the request: -5:00, 0:00, 12:30, 1:05:00.
func relTime(s float64) string {
	sign := ""
	if s < 0 {
		sign, s = "-", -s
	}
	n := int64(math.Round(s))
	if n >= 3600 {
		return fmt.Sprintf("%s%d:%02d:%02d", sign, n/3600, n/60%60, n%60)
	}
	return fmt.Sprintf("%s%d:%02d", sign, n/60, n%60)
}

// durationChart: the scale-out durations as bars grouped by duration, a
// bar per variant (the mean), with the repeats' min–max as a whisker.
func durationChart(vs []variant) string {
	const title = "Scale-out durations per variant (bar: mean; whisker: min–max over repeats)"
	ds := usedDurations(vs)
	hi := 0.0
	for _, d := range ds {
		for _, v := range vs {
			for _, x := range d.samples(v) {
				hi = math.Max(hi, x)
			}
		}
	}
	if len(ds) == 0 || hi <= 0 {
		return noChart(title)
	}
	ax := linAxis(hi*1.08, timeStep) // room for the labels over the bars
	var b strings.Builder
	frame(&b, title, "duration (m:ss)", ax, relTime)
	groupW := float64(plotW) / float64(len(ds))
	barW := math.Min(48, groupW*0.8/float64(len(vs)))
	for gi, d := range ds {
		gx := padL + groupW*float64(gi)
		fmt.Fprintf(&b, `<text x="%s" y="%d" class="xt">%s</text>`, f1(gx+groupW/2), padT+plotH+18, html.EscapeString(d.col))
		left := gx + (groupW-barW*float64(len(vs)))/2
		for vi, v := range vs {
			x := d.samples(v)
			if len(x) == 0 {
				continue
			}
			m := stats.Mean(x)
			bx, top := left+barW*float64(vi), ax.y(m)
			col := variantColor(vi)
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity=".85"><title>%s %s: %s (n=%d)</title></rect>`,
				f1(bx+1), f1(top), f1(barW-2), f1(float64(padT+plotH)-top), col, html.EscapeString(v.label), html.EscapeString(d.col), HMS(m), len(x))
			if len(x) > 1 {
				mn, mx := x[0], x[0]
				for _, s := range x {
					mn, mx = math.Min(mn, s), math.Max(mx, s)
				}
				cx := bx + barW/2
				fmt.Fprintf(&b, `<path d="M%s %s V%s M%s %s H%s M%s %s H%s" stroke="#1b1f23" stroke-width="1.2"/>`,
					f1(cx), f1(ax.y(mn)), f1(ax.y(mx)), f1(cx-5), f1(ax.y(mn)), f1(cx+5), f1(cx-5), f1(ax.y(mx)), f1(cx+5))
			}
			if barW >= 30 {
				fmt.Fprintf(&b, `<text x="%s" y="%s" class="sl" text-anchor="middle">%s</text>`, f1(bx+barW/2), f1(top-3), relTime(m))
			}
		}
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, padL, padT, plotW, plotH)
	for vi, v := range vs {
		legend(&b, vi, variantColor(vi), false, v.label)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// compareCharts are the comparison's charts, in reading order.
func compareCharts(vs []variant, runs []run) []string {
	return []string{p99CycleChart(vs, runs), intervalP99Chart(results.OpWrite, vs), intervalP99Chart(results.OpRead, vs), durationChart(vs)}
}
