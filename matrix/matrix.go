// Package matrix expands a scenario into the cartesian product of --set
// values, orders repeats interleaved (A B A B, not A A B B, because single
// runs drift with the machine), runs each cell in its own directory and
// summarises the outcome.
package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Axis is one --set with several values: path=v1,v2,v3.
type Axis struct {
	Path   string
	Values []string
}

// ParseAxes reads --set flags. A value list is split on commas; a single value
// is an axis of one (it still applies to every cell).
func ParseAxes(sets []string) ([]Axis, error) {
	var axes []Axis
	seen := map[string]bool{}
	for _, s := range sets {
		path, vals, ok := strings.Cut(s, "=")
		path = strings.TrimSpace(path)
		if !ok || path == "" {
			return nil, fmt.Errorf("--set %q: want path=value[,value...]", s)
		}
		if seen[path] {
			return nil, fmt.Errorf("--set %q: %s is given twice; list its values in one --set", s, path)
		}
		seen[path] = true
		var values []string
		for _, v := range strings.Split(vals, ",") {
			if v = strings.TrimSpace(v); v == "" {
				return nil, fmt.Errorf("--set %q: empty value in the list", s)
			}
			values = append(values, v)
		}
		axes = append(axes, Axis{Path: path, Values: values})
	}
	return axes, nil
}

// Cell is one run of the matrix.
type Cell struct {
	Index   int      `json:"index"`   // position in run order
	Variant int      `json:"variant"` // which combination of values (repeats share it)
	Repeat  int      `json:"repeat"`  // 1-based
	Name    string   `json:"name"`    // directory name, unique
	Label   string   `json:"label"`   // human label of the variant
	Sets    []string `json:"sets"`    // path=value, one per axis
}

// Expand builds the cells: the cartesian product of the axes, repeated
// `repeat` times with the repeats interleaved.
func Expand(axes []Axis, repeat int) []Cell {
	if repeat < 1 {
		repeat = 1
	}
	combos := [][]string{nil}
	for _, a := range axes {
		var next [][]string
		for _, c := range combos {
			for _, v := range a.Values {
				next = append(next, append(append([]string(nil), c...), a.Path+"="+v))
			}
		}
		combos = next
	}
	var cells []Cell
	for r := 1; r <= repeat; r++ {
		for vi, c := range combos {
			label := variantLabel(c)
			name := fmt.Sprintf("%02d-%s", vi+1, dirSafe(label))
			if repeat > 1 {
				name += fmt.Sprintf("-r%d", r)
			}
			cells = append(cells, Cell{Index: len(cells), Variant: vi, Repeat: r, Name: name, Label: label, Sets: c})
		}
	}
	return cells
}

func variantLabel(sets []string) string {
	if len(sets) == 0 {
		return "base"
	}
	parts := make([]string, len(sets))
	for i, s := range sets {
		path, v, _ := strings.Cut(s, "=")
		if i := strings.LastIndex(path, "."); i >= 0 {
			path = path[i+1:]
		}
		parts[i] = path + "=" + v
	}
	return strings.Join(parts, " ")
}

func dirSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '=':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// GitHubMatrix is the JSON a GitHub Actions job passes to strategy.matrix with fromJSON.
type GitHubMatrix struct {
	Include []GitHubCell `json:"include"`
}

// GitHubCell is one job of the GitHub matrix.
type GitHubCell struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	SetArgs string `json:"set_args"` // ready to paste after `elasticity run SCENARIO`
}

// EmitGitHub writes the cells as a GitHub Actions matrix (one line of JSON).
func EmitGitHub(w io.Writer, cells []Cell) error {
	m := GitHubMatrix{Include: []GitHubCell{}}
	for _, c := range cells {
		args := make([]string, len(c.Sets))
		for i, s := range c.Sets {
			args[i] = "--set " + shellQuote(s)
		}
		m.Include = append(m.Include, GitHubCell{Name: c.Name, Label: c.Label, SetArgs: strings.Join(args, " ")})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}

func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.=/:%,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// RunFunc runs one cell into dir and returns the run's status (passed,
// failed, error, interrupted).
type RunFunc func(ctx context.Context, c Cell, dir string) (status string, err error)

// Outcome is what one cell produced.
type Outcome struct {
	Cell     Cell          `json:"cell"`
	Dir      string        `json:"dir"`
	Status   string        `json:"status"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Summary is matrix.json.
type Summary struct {
	Scenario string    `json:"scenario"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Outcomes []Outcome `json:"outcomes"`
	Passed   int       `json:"passed"`
	Failed   int       `json:"failed"`  // thresholds failed
	Errored  int       `json:"errored"` // run errors
	Verdict  string    `json:"verdict"` // passed | failed | error | interrupted
}

// Run executes the cells one after another. It stops early only when ctx
// ends; a failed cell does not stop the others. The summary is written to
// out/matrix.json after every cell so an interrupted matrix keeps its record.
func Run(ctx context.Context, scenario string, cells []Cell, out string, run RunFunc, logf func(string, ...any)) (*Summary, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("matrix: creating %s: %w", out, err)
	}
	s := &Summary{Scenario: scenario, Started: time.Now().UTC()}
	for i, c := range cells {
		if ctx.Err() != nil {
			break
		}
		dir := filepath.Join(out, c.Name)
		logf("matrix: cell %d/%d %s (repeat %d) → %s", i+1, len(cells), c.Label, c.Repeat, dir)
		start := time.Now()
		status, err := run(ctx, c, dir)
		o := Outcome{Cell: c, Dir: c.Name, Status: status, Duration: time.Since(start)}
		if err != nil {
			o.Error = err.Error()
			if o.Status == "" {
				o.Status = "error"
			}
		}
		s.Outcomes = append(s.Outcomes, o)
		logf("matrix: cell %s finished: %s in %s", c.Name, o.Status, o.Duration.Round(time.Second))
		s.tally()
		if werr := s.write(out); werr != nil {
			return s, werr
		}
	}
	s.Ended = time.Now().UTC()
	s.tally()
	if len(s.Outcomes) < len(cells) {
		s.Verdict = "interrupted"
	}
	return s, s.write(out)
}

func (s *Summary) tally() {
	s.Passed, s.Failed, s.Errored = 0, 0, 0
	for _, o := range s.Outcomes {
		switch o.Status {
		case "passed":
			s.Passed++
		case "failed":
			s.Failed++
		default:
			s.Errored++
		}
	}
	switch {
	case s.Errored > 0:
		s.Verdict = "error"
	case s.Failed > 0:
		s.Verdict = "failed"
	default:
		s.Verdict = "passed"
	}
}

func (s *Summary) write(out string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(out, ".matrix.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("matrix: writing summary: %w", err)
	}
	return os.Rename(tmp, filepath.Join(out, "matrix.json"))
}

// ErrNoCells is returned when nothing would run.
var ErrNoCells = errors.New("matrix: no cells")
