package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/matrix"
	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

func init() {
	// The run command reaches reporting through this hook.
	finalizeRun = reporting.Finalize

	addCommand(func(e *env) *cobra.Command {
		var check, plain bool
		var formats []string
		var out string
		c := &cobra.Command{
			Use:   "report DIR [DIR ...] [--check] [--plain] [--format md,html,json] [--out DIR]",
			Short: "Render reports from results directories",
			Long: `report recomputes a run's result from its .jsonl files (so it works on an
interrupted run too) and writes DIR/result.json, DIR/argus/ (Argus generic results tables),
DIR/report.md and DIR/report.html. The status comes from the events
(a run without run_end is "interrupted").

With several directories it writes a comparison instead: comparison.md and
comparison.html, into --out (default: the parent directory of the first
run, which is the matrix directory for runs of ` + "`elasticity matrix`" + `).
Repeats of one variant (directories named <variant>-r1, <variant>-r2 ...)
group together. It answers first: P99 per cycle and variant with the ratio
to each variant's own Cycle #0, the scale-out durations per variant, and
whether compaction kept up and any cycle was host-bound; then the charts
(comparison.html), the runs, every figure per variant grouped (latency,
throughput, host and compaction, durations) and last every run side by side
per cycle, repeats as mean ± stddev with a verdict better / worse /
inconclusive (Welch's t-test).

A matrix directory (with matrix.jsonl) gets its comparison rebuilt from
matrix.jsonl and its expectations judged again (matrix.json keeps them):
what an interrupted or killed matrix had measured.

--check exits 1 when any threshold failed (in any run); for a matrix
directory, the matrix's own exit code (an expectation FAILed: 1).
--plain writes the markdown without GitHub colour markup.

Exit code: 0 written, 1 thresholds failed (--check), 2 invalid input,
3 the reports could not be written.`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				var fs []string
				for _, f := range formats {
					for _, p := range strings.Split(f, ",") {
						p = strings.ToLower(strings.TrimSpace(p))
						switch p {
						case "":
						case "md", "markdown":
							fs = append(fs, reporting.FormatMarkdown)
						case "html":
							fs = append(fs, reporting.FormatHTML)
						case "json":
							fs = append(fs, reporting.FormatJSON)
						default:
							return withCode(ExitInvalid, fmt.Errorf("report: --format %q: want md, html or json", p))
						}
					}
				}
				if len(args) == 1 && fileExists(filepath.Join(args[0], matrix.FilePasses)) {
					return matrixReport(e, args[0], check)
				}
				for _, d := range args {
					if err := checkRunDir(d); err != nil {
						return withCode(ExitInvalid, fmt.Errorf("report: %w", err))
					}
				}
				if len(args) > 1 {
					return compareCmd(e, args, out, check)
				}
				dir := args[0]
				res, err := reporting.Render(dir, reporting.Options{Formats: fs, Plain: plain})
				if err != nil {
					var le *results.LineError
					if res == nil || errors.As(err, &le) {
						return withCode(ExitInvalid, fmt.Errorf("report: %w", err))
					}
					return withCode(ExitRunError, fmt.Errorf("report: %w", err))
				}
				if len(fs) == 0 {
					fs = []string{reporting.FormatMarkdown, reporting.FormatHTML, reporting.FormatJSON}
				}
				for _, f := range fs {
					switch f {
					case reporting.FormatMarkdown:
						fmt.Fprintln(e.Stdout, filepath.Join(dir, results.FileReportMD))
					case reporting.FormatHTML:
						fmt.Fprintln(e.Stdout, filepath.Join(dir, results.FileReportHTML))
					case reporting.FormatJSON:
						fmt.Fprintln(e.Stdout, filepath.Join(dir, results.FileResult))
						fmt.Fprintln(e.Stdout, filepath.Join(dir, reporting.DirArgus)+string(filepath.Separator))
					}
				}
				printVerdicts(e, res)
				if check && reporting.Failed(res) {
					return withCode(ExitFailed, fmt.Errorf("report: thresholds failed in %s", dir))
				}
				return nil
			},
		}
		c.Flags().BoolVar(&check, "check", false, "exit 1 when any threshold failed")
		c.Flags().BoolVar(&plain, "plain", false, "markdown without colour markup")
		c.Flags().StringSliceVar(&formats, "format", nil, "formats to write: md,html,json (default all)")
		c.Flags().StringVar(&out, "out", "", "directory of the comparison (several DIRs; default the first DIR's parent)")
		return c
	})
}

// matrixReport rebuilds a matrix directory's reports from matrix.jsonl.
func matrixReport(e *env, dir string, check bool) error {
	sum, err := matrix.ReadSummary(dir)
	if err != nil {
		sum = &matrix.Summary{} // killed before its first pass ended: no expectations known
	}
	if err := matrix.Report(dir, sum); err != nil {
		return withCode(ExitRunError, fmt.Errorf("report: %w", err))
	}
	fmt.Fprintln(e.Stdout, filepath.Join(dir, reporting.FileCompareMD))
	fmt.Fprintln(e.Stdout, filepath.Join(dir, reporting.FileCompareHTML))
	if err := matrixExit(e, sum); err != nil && check {
		return err
	}
	return nil
}

func checkRunDir(d string) error {
	st, err := os.Stat(d)
	if err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	for _, f := range []string{results.FileEvents, results.FileResult} {
		if _, err := os.Stat(filepath.Join(d, f)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s is not a results directory: no %s or %s", d, results.FileEvents, results.FileResult)
}

func printVerdicts(e *env, res *results.Result) {
	failed := 0
	for _, v := range res.Verdicts {
		if !v.Passed {
			failed++
			fmt.Fprintf(e.Stderr, "threshold failed: %s %s = %g (limit %g)\n", v.Subject, v.Threshold.Metric, v.Value, v.Threshold.Limit)
		}
	}
	fmt.Fprintf(e.Stdout, "status: %s (%d of %d thresholds passed)\n", res.Status, len(res.Verdicts)-failed, len(res.Verdicts))
}

func compareCmd(e *env, dirs []string, out string, check bool) error {
	if out == "" {
		out = filepath.Dir(filepath.Clean(dirs[0]))
	}
	if err := reporting.Compare(dirs, out, reporting.CompareOptions{}); err != nil {
		return withCode(ExitRunError, fmt.Errorf("report: %w", err))
	}
	fmt.Fprintln(e.Stdout, filepath.Join(out, reporting.FileCompareMD))
	fmt.Fprintln(e.Stdout, filepath.Join(out, reporting.FileCompareHTML))
	if check {
		for _, d := range dirs {
			res, err := reporting.Load(d)
			if err != nil {
				return withCode(ExitInvalid, fmt.Errorf("report: %w", err))
			}
			if reporting.Failed(res) {
				return withCode(ExitFailed, fmt.Errorf("report: thresholds failed in %s", d))
			}
		}
	}
	return nil
}
