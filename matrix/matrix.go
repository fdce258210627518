// Package matrix expands a scenario into the cartesian product of --set
// values, orders repeats interleaved (A B A B, not A A B B, because single
// runs drift with the machine), runs each cell in its own directory and
// summarises the outcome.
package matrix

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/elasticity-dev/elasticity/reporting"
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

// Values are the cell's values by axis path.
func (c Cell) Values() map[string]string {
	m := make(map[string]string, len(c.Sets))
	for _, s := range c.Sets {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return m
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
			label := variantLabel(c, axes)
			name := fmt.Sprintf("%02d-%s", vi+1, dirSafe(label))
			if repeat > 1 {
				name += fmt.Sprintf("-r%d", r)
			}
			cells = append(cells, Cell{Index: len(cells), Variant: vi, Repeat: r, Name: name, Label: label, Sets: c})
		}
	}
	return cells
}

// variantLabel names a variant by the values of the axes that vary: a
// single value applies to every cell and tells them nothing apart.
func variantLabel(sets []string, axes []Axis) string {
	var parts []string
	for i, s := range sets {
		if len(axes[i].Values) < 2 {
			continue
		}
		path, v, _ := strings.Cut(s, "=")
		parts = append(parts, lastPart(path)+"="+v)
	}
	if len(parts) == 0 {
		return "base"
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

// EmitGitHubMatrix writes the cells as a GitHub Actions matrix (one line of JSON).
func EmitGitHubMatrix(w io.Writer, cells []Cell) error {
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

// Workflow is what EmitGitHub needs besides the cells: the matrix's own
// arguments, so that the collecting job rebuilds the same cells.
type Workflow struct {
	Scenario string   // the scenario file, relative to the repository
	Sets     []string // the --set flags as given
	Repeat   int
	Backend  string
	Expects  []string // --expect
}

// buildSteps start both jobs of the workflow: the repository and the binary.
const buildSteps = `      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version-file: go.mod
      - run: go build -o elasticity ./cmd/elasticity`

// EmitGitHub writes a GitHub Actions workflow: one job per cell (the
// strategy.matrix of EmitGitHubMatrix) that uploads its run directory, and
// a collecting job that downloads them all, writes matrix.jsonl, the
// comparison and the expectations' verdicts with `elasticity matrix
// --collect`, uploads them as the "matrix" artifact and fails when an
// expectation fails.
func EmitGitHub(w io.Writer, cells []Cell, wf Workflow) error {
	var mj strings.Builder
	if err := EmitGitHubMatrix(&mj, cells); err != nil {
		return err
	}
	args := []string{shellQuote(wf.Scenario)}
	for _, s := range wf.Sets {
		args = append(args, "--set "+shellQuote(s))
	}
	if wf.Repeat > 1 {
		args = append(args, fmt.Sprintf("--repeat %d", wf.Repeat))
	}
	if wf.Backend != "" {
		args = append(args, "--backend "+shellQuote(wf.Backend))
	}
	for _, e := range wf.Expects {
		args = append(args, "--expect "+shellQuote(e))
	}
	backend := ""
	if wf.Backend != "" {
		backend = " --backend " + shellQuote(wf.Backend)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Generated by: elasticity matrix %s --emit github
name: elasticity matrix
on: workflow_dispatch
jobs:
  cell:
    name: ${{ matrix.label }}
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix: %s
    steps:
%s
      - name: run
        run: |
          ./elasticity run %s${{ matrix.set_args }}%s --out runs/${{ matrix.name }}
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: run-${{ matrix.name }}
          path: runs/${{ matrix.name }}
  collect:
    needs: cell
    if: always()
    runs-on: ubuntu-latest
    steps:
%s
      - uses: actions/download-artifact@v4
        with:
          pattern: run-*
          path: artifacts
      - name: expectations
        run: |
          mkdir -p runs
          for d in artifacts/run-*; do mv "$d" "runs/${d#artifacts/run-}"; done
          ./elasticity matrix %s --collect runs --out matrix
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: matrix
          path: |
            matrix/%s
            matrix/%s
            matrix/%s
            matrix/%s
            matrix/%s
          if-no-files-found: warn
`, strings.Join(args, " "), strings.TrimSpace(mj.String()), buildSteps, shellQuote(wf.Scenario)+" ", backend, buildSteps, strings.Join(args, " "),
		FilePasses, FileSummary, reporting.FileCompareMD, reporting.FileCompareHTML, FileChart)
	_, err := io.WriteString(w, b.String())
	return err
}

func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.=/:%,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
