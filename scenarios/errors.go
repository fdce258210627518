package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a scenario: where (file and line, or the
// --set that introduced it), which field, and what.
type Problem struct {
	// File is the scenario file, or "--set path=value" when an override is at fault.
	File string `json:"file"`
	// Line is 1-based; 0 when unknown (or for --set problems).
	Line int `json:"line,omitempty"`
	// Path is the dotted field path, lists indexed: "nemesis.0.grow_cluster.mode".
	Path string `json:"path,omitempty"`
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError lists every problem found in a scenario, in file order.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// sortProblems orders problems by file position; --set problems come last
// in the order the overrides were given.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		as, bs := strings.HasPrefix(a.File, "--set "), strings.HasPrefix(b.File, "--set ")
		if as != bs {
			return !as
		}
		if as {
			return false // keep override order
		}
		return a.Line < b.Line
	})
}

// ProblemAt is a problem with the field at path, placed where the field
// was given (its line, or the --set that gave it) when the scenario came
// from a file: what the planner's warnings are reported as.
func (s *Scenario) ProblemAt(path, format string, args ...any) Problem {
	p := Problem{File: s.source, Path: path, Msg: fmt.Sprintf(format, args...)}
	if l, ok := s.lines[path]; ok {
		p.File, p.Line = s.where(l)
	}
	return p
}
