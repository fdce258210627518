package reporting

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// RatioItem is one row of a ratio chart: an expectation's ratio of means,
// its 95% interval and the limit it is held to.
type RatioItem struct {
	Label   string
	Ratio   float64
	Lo, Hi  float64 // ±Inf: unbounded on that side
	HasCI   bool    // false: a ratio without an interval (one pass a side)
	Limit   float64
	Op      string // <= < >= >
	Verdict string // PASS | FAIL | INCONCLUSIVE
}

// RatioChart draws each item as a point with its interval against a tick
// at its limit, on one linear axis with 1.0 marked: a self-contained SVG.
func RatioChart(items []RatioItem) string {
	if len(items) == 0 {
		return ""
	}
	const w, labelW, rowH, top, bottom, right = 860, 330, 34, 28, 34, 24
	h := top + bottom + rowH*len(items)
	lo, hi := 1.0, 1.0
	widen := func(v float64) {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, it := range items {
		widen(it.Ratio)
		widen(it.Limit)
		if it.HasCI {
			widen(it.Lo)
			widen(it.Hi)
		}
	}
	pad := (hi - lo) * 0.08
	if pad == 0 {
		pad = 0.1
	}
	lo, hi = math.Max(0, lo-pad), hi+pad
	x0, x1 := float64(labelW), float64(w-right)
	x := func(v float64) float64 {
		switch {
		case math.IsInf(v, -1) || v < lo:
			return x0
		case math.IsInf(v, 1) || v > hi:
			return x1
		}
		return x0 + (v-lo)/(hi-lo)*(x1-x0)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12" role="img">`, w, h, w, h)
	fmt.Fprintf(&b, `<title>Ratio of means with 95%% interval (Fieller) per expectation; the red tick is the limit</title><rect width="%d" height="%d" fill="#fff"/>`, w, h)
	// Axis with ticks.
	axisY := float64(h - bottom)
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444"/>`, f1(x0), f1(axisY), f1(x1), f1(axisY))
	step := niceStep((hi - lo) / 6)
	for k := math.Ceil(lo / step); k*step <= hi+1e-9; k++ {
		v := math.Round(k*step*1e6) / 1e6
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ddd"/><text x="%s" y="%s" text-anchor="middle" fill="#444">%s</text>`,
			f1(x(v)), f1(float64(top-6)), f1(x(v)), f1(axisY), f1(x(v)), f1(axisY+16), tickLabel(v))
	}
	fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%s" stroke="#888" stroke-dasharray="4 3"/><text x="%s" y="%d" text-anchor="middle" fill="#666">1.0</text>`,
		f1(x(1)), top-6, f1(x(1)), f1(axisY), f1(x(1)), top-10)
	for i, it := range items {
		y := float64(top + rowH*i + rowH/2)
		col := "#7f7f7f"
		switch it.Verdict {
		case "PASS":
			col = "#2ca02c"
		case "FAIL":
			col = "#d62728"
		}
		label := it.Label
		if len(label) > 52 {
			label = label[:51] + "…"
		}
		fmt.Fprintf(&b, `<text x="6" y="%s" fill="#222">%s</text>`, f1(y+4), html.EscapeString(label))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end" fill="%s" font-weight="bold">%s</text>`, labelW-8, f1(y+4), col, html.EscapeString(it.Verdict))
		// The limit.
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d62728" stroke-width="2"><title>limit %s %g</title></line>`,
			f1(x(it.Limit)), f1(y-11), f1(x(it.Limit)), f1(y+11), html.EscapeString(it.Op), it.Limit)
		if it.HasCI {
			l, r := x(it.Lo), x(it.Hi)
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`, f1(l), f1(y), f1(r), f1(y), col)
			for _, e := range []struct {
				v   float64
				at  float64
				dir float64
			}{{it.Lo, l, -1}, {it.Hi, r, 1}} {
				if math.IsInf(e.v, 0) || e.v < lo || e.v > hi {
					// Open end: an arrow to the edge.
					fmt.Fprintf(&b, `<path d="M%s %s l%s -5 l0 10 z" fill="%s"/>`, f1(e.at), f1(y), f1(-e.dir*7), col)
				} else {
					fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`, f1(e.at), f1(y-6), f1(e.at), f1(y+6), col)
				}
			}
		}
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="5" fill="%s"><title>ratio %.3f</title></circle>`, f1(x(it.Ratio)), f1(y), col, it.Ratio)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
