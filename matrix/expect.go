package matrix

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/stats"
)

// Verdicts of an expectation.
const (
	ExpectPass         = "PASS"
	ExpectFail         = "FAIL"
	ExpectInconclusive = "INCONCLUSIVE"
)

// Expectation is one --expect 'METRIC: A / B <= R': the ratio of the mean
// of METRIC over the passes of the cells A selects to its mean over B's,
// held to R.
type Expectation struct {
	Text   string     `json:"text"`
	Metric string     `json:"metric"`
	A      []Selector `json:"a"`
	B      []Selector `json:"b"`
	Op     string     `json:"op"` // <= < >= >
	Limit  float64    `json:"limit"`
}

// Selector is one key=value condition on a cell's values; Key is an axis's
// path or the path's last part (mode for nemesis.0.grow_cluster.mode).
type Selector struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Path  string `json:"path"` // the axis it names, set by Check
}

var reExpectTail = regexp.MustCompile(`^(.*?)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$`)

// ParseExpect reads one --expect. METRIC may be quoted ("New node(s) ready").
// A and B are key=value[,key=value...]; when a value holds a '/', write
// " / " with spaces between A and B.
func ParseExpect(s string) (Expectation, error) {
	e := Expectation{Text: s}
	bad := func(why string, args ...any) (Expectation, error) {
		return e, fmt.Errorf("--expect %q: %s (want 'METRIC: A / B <= R', e.g. 'scale_out_seconds: mode=parallel / mode=serial <= 0.8')", s, fmt.Sprintf(why, args...))
	}
	metric, rest, ok := strings.Cut(s, ":")
	if !ok {
		return bad("no ':' after the metric")
	}
	e.Metric = strings.Trim(strings.TrimSpace(metric), `"'`)
	if e.Metric == "" {
		return bad("empty metric")
	}
	m := reExpectTail.FindStringSubmatch(strings.TrimSpace(rest))
	if m == nil {
		return bad("no comparison <=, <, >= or > with a number")
	}
	e.Op = m[2]
	limit, err := strconv.ParseFloat(m[3], 64)
	if err != nil || math.IsNaN(limit) || math.IsInf(limit, 0) || limit <= 0 {
		return bad("the limit %q is not a positive number", m[3])
	}
	e.Limit = limit
	sides := strings.Split(m[1], " / ")
	if len(sides) != 2 {
		sides = strings.Split(m[1], "/")
	}
	if len(sides) != 2 {
		return bad("want exactly one ' / ' between the two selectors")
	}
	for i, side := range sides {
		var sel []Selector
		for _, cond := range strings.Split(side, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(cond), "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return bad("selector %q: want key=value[,key=value...]", strings.TrimSpace(side))
			}
			sel = append(sel, Selector{Key: k, Value: v})
		}
		if i == 0 {
			e.A = sel
		} else {
			e.B = sel
		}
	}
	return e, nil
}

// Check resolves the selectors against the matrix's axes: every key names
// one axis, every value is one of its values, each side selects at least
// one cell and no cell is on both sides.
func (e *Expectation) Check(axes []Axis, cells []Cell) error {
	for _, side := range [][]Selector{e.A, e.B} {
		for i := range side {
			s := &side[i]
			var hits []Axis
			for _, a := range axes {
				if a.Path == s.Key || lastPart(a.Path) == s.Key {
					hits = append(hits, a)
				}
			}
			switch len(hits) {
			case 0:
				var keys []string
				for _, a := range axes {
					keys = append(keys, a.Path)
				}
				return fmt.Errorf("--expect %q: %s is not an axis of the matrix (axes: %s)", e.Text, s.Key, strings.Join(keys, ", "))
			case 1:
			default:
				return fmt.Errorf("--expect %q: %s names several axes; write the whole path", e.Text, s.Key)
			}
			s.Path = hits[0].Path
			found := false
			for _, v := range hits[0].Values {
				found = found || v == s.Value
			}
			if !found {
				return fmt.Errorf("--expect %q: %s=%s matches no cell (%s is one of %s)", e.Text, s.Key, s.Value, s.Path, strings.Join(hits[0].Values, ", "))
			}
		}
	}
	na, nb := 0, 0
	for _, c := range cells {
		a, b := matches(e.A, c.Values()), matches(e.B, c.Values())
		if a && b {
			return fmt.Errorf("--expect %q: cell %q is selected by both sides", e.Text, c.Label)
		}
		if a {
			na++
		}
		if b {
			nb++
		}
	}
	if na == 0 || nb == 0 {
		return fmt.Errorf("--expect %q: a selector matches no cell", e.Text)
	}
	return nil
}

// Selects reports whether either side selects the cell.
func (e *Expectation) Selects(c Cell) bool {
	v := c.Values()
	return matches(e.A, v) || matches(e.B, v)
}

// SideLabel prints a side's selectors.
func SideLabel(sel []Selector) string {
	parts := make([]string, len(sel))
	for i, s := range sel {
		parts[i] = s.Key + "=" + s.Value
	}
	return strings.Join(parts, ",")
}

func lastPart(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

func matches(sel []Selector, values map[string]string) bool {
	for _, s := range sel {
		path := s.Path
		if path == "" {
			path = s.Key
		}
		if values[path] != s.Value {
			return false
		}
	}
	return true
}

// ExpectResult is an expectation judged on the passes.
type ExpectResult struct {
	Expectation
	SideA    Side        `json:"a_sample"`
	SideB    Side        `json:"b_sample"`
	CI       stats.Ratio `json:"ratio"`
	HasRatio bool        `json:"has_ratio"`
	Verdict  string      `json:"verdict"`
	Why      string      `json:"why,omitempty"`
}

// Side is one side's sample.
type Side struct {
	N       int     `json:"n"`
	Mean    float64 `json:"mean"`
	SD      float64 `json:"sd"`
	Pending int     `json:"pending,omitempty"` // passes skipped or not run
	Missing int     `json:"missing,omitempty"` // passes that ran without the figure
}

// Evaluate judges an expectation on the passes recorded so far. Passes
// that passed or failed thresholds count (both measured); errors, skips
// and interruptions do not. PASS: the whole 95% interval of the ratio
// meets the limit; FAIL: none of it does; INCONCLUSIVE otherwise, and
// whenever a side has fewer than two measured passes.
func (e Expectation) Evaluate(passes []Pass) ExpectResult {
	r := ExpectResult{Expectation: e}
	sample := func(sel []Selector, side *Side) []float64 {
		var x []float64
		for _, p := range passes {
			if !matches(sel, p.Values) {
				continue
			}
			if !p.Measured() {
				side.Pending++
				continue
			}
			v, ok := p.Figures[e.Metric]
			if !ok {
				side.Missing++
				continue
			}
			x = append(x, v)
		}
		side.N, side.Mean, side.SD = len(x), stats.Mean(x), stats.SD(x)
		return x
	}
	a, b := sample(e.A, &r.SideA), sample(e.B, &r.SideB)
	r.CI, r.HasRatio = stats.RatioCI(a, b)
	r.Verdict = ExpectInconclusive
	switch {
	case len(a) == 0 || len(b) == 0:
		r.Why = "no measured pass on a side"
		if r.SideA.Pending+r.SideB.Pending > 0 {
			r.Why = "pending: " + r.Why
		}
	case !r.HasRatio:
		r.Why = SideLabel(e.B) + "'s mean is 0"
	case len(a) < 2 || len(b) < 2:
		r.Why = "fewer than 2 measured passes on a side: no interval"
	case !r.CI.Bounded:
		r.Why = fmt.Sprintf("the interval is unbounded: %s's mean is within t=%.1f standard errors of 0; more repeats needed", SideLabel(e.B), stats.T975(r.CI.DF))
	default:
		lo, hi := r.CI.Lo, r.CI.Hi
		var pass, fail bool
		switch e.Op {
		case "<=":
			pass, fail = hi <= e.Limit, lo > e.Limit
		case "<":
			pass, fail = hi < e.Limit, lo >= e.Limit
		case ">=":
			pass, fail = lo >= e.Limit, hi < e.Limit
		case ">":
			pass, fail = lo > e.Limit, hi <= e.Limit
		}
		switch {
		case pass:
			r.Verdict = ExpectPass
		case fail:
			r.Verdict = ExpectFail
		default:
			r.Why = fmt.Sprintf("the interval contains %g: more repeats or less noise needed", e.Limit)
		}
	}
	return r
}

// Line is the verdict line of an expectation.
func (r ExpectResult) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "expect %s: %s / %s %s %g: ", r.Metric, SideLabel(r.A), SideLabel(r.B), r.Op, r.Limit)
	if r.HasRatio {
		fmt.Fprintf(&b, "ratio %.3f, 95%% CI %s (n=%d/%d) ", r.CI.Ratio, r.Interval(), r.SideA.N, r.SideB.N)
	} else {
		fmt.Fprintf(&b, "no ratio (n=%d/%d) ", r.SideA.N, r.SideB.N)
	}
	b.WriteString(r.Verdict)
	if r.Why != "" {
		b.WriteString(" (" + r.Why + ")")
	}
	return b.String()
}

// Interval prints the 95% interval.
func (r ExpectResult) Interval() string {
	if !r.HasRatio {
		return "—"
	}
	if math.IsInf(r.CI.Lo, 0) || math.IsInf(r.CI.Hi, 0) {
		return "[−∞, +∞]"
	}
	return fmt.Sprintf("[%.3f, %.3f]", r.CI.Lo, r.CI.Hi)
}
