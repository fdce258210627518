package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

// Pass statuses besides a run's (passed, failed, error, interrupted).
const (
	StatusSkipped = "skipped" // the cell's pre-flight said it cannot run here
)

// File names in the matrix directory.
const (
	FilePasses  = "matrix.jsonl" // one Pass per line, appended as each pass ends
	FileSummary = "matrix.json"
	DirHooks    = "hooks" // the hooks' output, one log per pass and hook
)

// Pass is one line of matrix.jsonl: one run of one cell.
type Pass struct {
	Index   int               `json:"pass"` // 1-based, in run order
	Cell    string            `json:"cell"` // its directory name
	Variant string            `json:"variant"`
	Repeat  int               `json:"repeat"`
	Values  map[string]string `json:"values"`
	Status  string            `json:"status"` // passed | failed | error | interrupted | skipped
	// Reason says why a pass did not pass: the pre-flight's failed checks,
	// the hook that failed, the run's error.
	Reason   string    `json:"reason,omitempty"`
	Hook     string    `json:"hook,omitempty"` // before-each | after-each when a hook failed the pass
	Dir      string    `json:"dir"`            // the run directory, relative to the matrix directory
	Started  time.Time `json:"started"`
	ElapsedS float64   `json:"elapsed_s"`
	// Figures are the run's results.Figures (durations, derived values, cycle metrics).
	Figures map[string]float64 `json:"figures,omitempty"`
}

// Measured reports whether the pass's figures count: it ran to the end
// (thresholds passed or failed) and its hooks succeeded.
func (p Pass) Measured() bool { return p.Status == "passed" || p.Status == "failed" }

// RunFunc runs one cell into dir and returns the run's status (passed,
// failed, error, interrupted).
type RunFunc func(ctx context.Context, c Cell, dir string) (status string, err error)

// Options is how Run runs the cells.
type Options struct {
	Scenario string
	Out      string
	// Runs is where the cells' run directories are (default Out): another
	// directory when --collect reads runs made elsewhere.
	Runs string
	Run  RunFunc
	// Preflight checks that this machine can run the cell; its error skips
	// the cell with the error as the reason (nil: no check).
	Preflight func(ctx context.Context, c Cell, dir string) error
	// BeforeEach and AfterEach are shell commands run around every pass.
	BeforeEach, AfterEach string
	// Figures reads a finished run's figures (nil: none recorded).
	Figures func(dir string) (map[string]float64, error)
	Logf    func(string, ...any)
	// Expect are the matrix's expectations, recorded in matrix.json from
	// the first pass so that `elasticity report` can judge an interrupted matrix.
	Expect []Expectation
}

// Summary is matrix.json.
type Summary struct {
	Scenario     string         `json:"scenario"`
	Started      time.Time      `json:"started"`
	Ended        time.Time      `json:"ended"`
	Cells        int            `json:"cells"`
	Passes       []Pass         `json:"passes"`
	Passed       int            `json:"passed"`
	Failed       int            `json:"failed"`  // thresholds failed
	Errored      int            `json:"errored"` // run or hook errors
	Skipped      int            `json:"skipped"` // pre-flight said the cell cannot run here
	Verdict      string         `json:"verdict"` // passed | failed | error | interrupted
	Expect       []Expectation  `json:"expect,omitempty"`
	Expectations []ExpectResult `json:"expectations,omitempty"`
}

// Run executes the cells one after another. It stops early only when ctx
// ends; a failed or skipped cell does not stop the others. Each pass is
// appended to matrix.jsonl as it ends and matrix.json rewritten, so an
// interrupted matrix keeps its record.
func Run(ctx context.Context, cells []Cell, o Options) (*Summary, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("matrix: creating %s: %w", o.Out, err)
	}
	// A new matrix starts a new record.
	if err := os.WriteFile(filepath.Join(o.Out, FilePasses), nil, 0o644); err != nil {
		return nil, fmt.Errorf("matrix: creating %s: %w", FilePasses, err)
	}
	if o.Runs == "" {
		o.Runs = o.Out
	}
	s := &Summary{Scenario: o.Scenario, Started: time.Now().UTC(), Cells: len(cells), Expect: o.Expect}
	for i, c := range cells {
		if ctx.Err() != nil {
			break
		}
		dir := filepath.Join(o.Runs, c.Name)
		logf("matrix: pass %d/%d %s (repeat %d) → %s", i+1, len(cells), c.Label, c.Repeat, dir)
		p := runPass(ctx, c, dir, o)
		p.Index = i + 1
		logf("matrix: pass %d %s: %s in %s%s", p.Index, c.Name, p.Status, time.Duration(p.ElapsedS*float64(time.Second)).Round(time.Second), reasonSuffix(p.Reason))
		s.Passes = append(s.Passes, p)
		if err := AppendPass(o.Out, p); err != nil {
			return s, err
		}
		s.tally()
		if err := s.Write(o.Out); err != nil {
			return s, err
		}
	}
	s.Ended = time.Now().UTC()
	s.tally()
	return s, s.Write(o.Out)
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

func runPass(ctx context.Context, c Cell, dir string, o Options) Pass {
	start := time.Now()
	rel, err := filepath.Rel(o.Out, dir)
	if err != nil {
		rel = dir
	}
	p := Pass{Cell: c.Name, Variant: c.Label, Repeat: c.Repeat, Values: c.Values(), Dir: rel, Started: start.UTC()}
	done := func() Pass {
		p.ElapsedS = time.Since(start).Seconds()
		return p
	}
	if o.Preflight != nil {
		if err := o.Preflight(ctx, c, dir); err != nil {
			p.Status, p.Reason = StatusSkipped, err.Error()
			return done()
		}
	}
	if err := runHook(ctx, HookBeforeEach, o.BeforeEach, c, dir, o.Out); err != nil {
		p.Status, p.Hook, p.Reason = "error", HookBeforeEach, err.Error()
		return done()
	}
	status, err := o.Run(ctx, c, dir)
	p.Status = status
	if p.Status == "" {
		p.Status = "error"
	}
	if err != nil {
		p.Reason = err.Error()
	}
	if o.Figures != nil && p.Measured() {
		if f, ferr := o.Figures(dir); ferr == nil {
			p.Figures = f
		} else {
			p.Reason = errors.Join(err, ferr).Error()
		}
	}
	// After an interruption the hook would be killed at once: skip it.
	if ctx.Err() == nil {
		if herr := runHook(ctx, HookAfterEach, o.AfterEach, c, dir, o.Out); herr != nil {
			p.Status, p.Hook, p.Reason = "error", HookAfterEach, herr.Error()
		}
	}
	return done()
}

// AppendPass appends one line to out/matrix.jsonl.
func AppendPass(out string, p Pass) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("matrix: encoding pass %d: %w", p.Index, err)
	}
	f, err := os.OpenFile(filepath.Join(out, FilePasses), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("matrix: appending to %s: %w", FilePasses, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("matrix: appending to %s: %w", FilePasses, err)
	}
	return f.Close()
}

// ReadPasses reads out/matrix.jsonl. A torn last line (the matrix was
// killed while writing it) is left out.
func ReadPasses(out string) ([]Pass, error) {
	b, err := os.ReadFile(filepath.Join(out, FilePasses))
	if err != nil {
		return nil, fmt.Errorf("matrix: reading %s: %w", FilePasses, err)
	}
	var passes []Pass
	lines := splitLines(b)
	for i, line := range lines {
		var p Pass
		if err := json.Unmarshal(line, &p); err != nil {
			if i == len(lines)-1 {
				break
			}
			return passes, fmt.Errorf("matrix: %s:%d: %w", FilePasses, i+1, err)
		}
		passes = append(passes, p)
	}
	return passes, nil
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}

func (s *Summary) tally() {
	s.Passed, s.Failed, s.Errored, s.Skipped = 0, 0, 0, 0
	interrupted := false
	for _, p := range s.Passes {
		switch p.Status {
		case "passed":
			s.Passed++
		case "failed":
			s.Failed++
		case StatusSkipped:
			s.Skipped++
		case "interrupted":
			interrupted = true
			s.Errored++
		default:
			s.Errored++
		}
	}
	switch {
	case interrupted || len(s.Passes) < s.Cells:
		s.Verdict = "interrupted"
	case s.Errored > 0 || s.Skipped == len(s.Passes):
		s.Verdict = "error" // a run could not finish, or no cell could run here
	case s.Failed > 0:
		s.Verdict = "failed"
	default:
		s.Verdict = "passed"
	}
}

// VerdictWord is the matrix's verdict: the expectations' when there are any
// (FAIL when one failed, else INCONCLUSIVE when one was, else PASS), else
// the passes' (passed, failed, error, interrupted, upper-cased).
func (s *Summary) VerdictWord() string {
	if len(s.Expectations) == 0 {
		return strings.ToUpper(s.Verdict)
	}
	counts := s.expectCounts()
	switch {
	case counts[ExpectFail] > 0:
		return ExpectFail
	case counts[ExpectInconclusive] > 0:
		return ExpectInconclusive
	}
	return ExpectPass
}

func (s *Summary) expectCounts() map[string]int {
	counts := map[string]int{}
	for _, x := range s.Expectations {
		counts[x.Verdict]++
	}
	return counts
}

// VerdictLine is the matrix's verdict with its tally, as `elasticity
// matrix` prints it last and the comparison shows it first.
func (s *Summary) VerdictLine() string {
	tally := fmt.Sprintf("%d passed, %d failed thresholds, %d errors, %d skipped", s.Passed, s.Failed, s.Errored, s.Skipped)
	if len(s.Expectations) > 0 {
		c := s.expectCounts()
		tally += fmt.Sprintf("; expectations: %d PASS, %d FAIL, %d INCONCLUSIVE", c[ExpectPass], c[ExpectFail], c[ExpectInconclusive])
	}
	return fmt.Sprintf("matrix verdict: %s (%s)", s.VerdictWord(), tally)
}

// Write writes out/matrix.json.
func (s *Summary) Write(out string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(out, ".matrix.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("matrix: writing summary: %w", err)
	}
	return os.Rename(tmp, filepath.Join(out, FileSummary))
}

// ReadSummary reads out/matrix.json.
func ReadSummary(out string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(out, FileSummary))
	if err != nil {
		return nil, fmt.Errorf("matrix: reading %s: %w", FileSummary, err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("matrix: %s: %w", FileSummary, err)
	}
	return &s, nil
}

// Report rebuilds what a matrix reports from out/matrix.jsonl: the passes
// and tallies of s, the verdicts of s.Expect (into matrix.json) and the
// comparison (the matrix's sections, then the runs' own tables). It works
// on an interrupted matrix: whatever passes were recorded.
func Report(out string, s *Summary) error {
	passes, err := ReadPasses(out)
	if err != nil {
		return err
	}
	if len(s.Expect) == 0 {
		for _, r := range s.Expectations { // a matrix.json written before Expect was recorded
			s.Expect = append(s.Expect, r.Expectation)
		}
	}
	s.Passes, s.Expectations = passes, nil
	s.tally()
	for _, x := range s.Expect {
		s.Expectations = append(s.Expectations, x.Evaluate(passes))
	}
	if err := s.Write(out); err != nil {
		return err
	}
	var dirs []string
	for _, p := range passes {
		d := filepath.Join(out, p.Dir)
		if p.Status != StatusSkipped && isRunDir(d) {
			dirs = append(dirs, d)
		}
	}
	if err := reporting.Compare(dirs, out, CompareOptions(s)); err != nil {
		return fmt.Errorf("matrix: writing the comparison report: %w", err)
	}
	return nil
}

// isRunDir: the directory holds a run's records or its result.json (a run
// collected from elsewhere without its .jsonl files).
func isRunDir(d string) bool {
	for _, f := range []string{results.FileEvents, results.FileResult} {
		if _, err := os.Stat(filepath.Join(d, f)); err == nil {
			return true
		}
	}
	return false
}

// ErrNoCells is returned when nothing would run.
var ErrNoCells = errors.New("matrix: no cells")
