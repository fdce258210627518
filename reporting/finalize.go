package reporting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/elasticity-dev/elasticity/results"
)

// Report formats.
const (
	FormatMarkdown = "md"
	FormatHTML     = "html"
	FormatJSON     = "json"
)

// Options tune Render.
type Options struct {
	// Status overrides the status the events say ("" keeps it); Reason goes with it.
	Status, Reason string
	// Formats to write (default md, html, json). json writes result.json and argus/ (one file per table in Argus's generic results format).
	Formats []string
	Plain   bool
}

// Finalize computes the result of a run directory and writes result.json,
// argus/, report.md and report.html. The phase runner calls it at the
// end of every run; status "" keeps what the events say.
func Finalize(dir string, status, reason string) (*results.Result, error) {
	return Render(dir, Options{Status: status, Reason: reason})
}

// Render computes, evaluates and writes the reports of dir.
func Render(dir string, opt Options) (*results.Result, error) {
	a, err := analyze(dir)
	if err != nil {
		return nil, err
	}
	res := a.Result
	if opt.Status != "" {
		res.Status = opt.Status
		if opt.Reason != "" || opt.Status != results.StatusInterrupted {
			res.Reason = opt.Reason
		}
	}
	Evaluate(res)
	formats := opt.Formats
	if len(formats) == 0 {
		formats = []string{FormatMarkdown, FormatHTML, FormatJSON}
	}
	var errs []error
	for _, f := range formats {
		var err error
		switch f {
		case FormatJSON:
			err = results.WriteResult(dir, res)
			if err == nil {
				err = writeArgus(dir, ArgusResults(res))
			}
		case FormatMarkdown:
			var b bytes.Buffer
			if err = Markdown(&b, res, MarkdownOptions{Plain: opt.Plain}); err == nil {
				err = writeFile(filepath.Join(dir, results.FileReportMD), b.Bytes())
			}
		case FormatHTML:
			var b bytes.Buffer
			if err = HTML(&b, a); err == nil {
				err = writeFile(filepath.Join(dir, results.FileReportHTML), b.Bytes())
			}
		default:
			err = fmt.Errorf("unknown report format %q (md, html, json)", f)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, append(b, '\n'))
}

// writeFile replaces path atomically so a reader never sees half a report.
func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Load returns the result of a run directory: recomputed from the .jsonl
// files when they exist (they are the source of truth), else result.json.
func Load(dir string) (*results.Result, error) {
	if _, err := os.Stat(filepath.Join(dir, results.FileEvents)); err == nil {
		res, err := results.Compute(dir)
		if err != nil {
			return nil, err
		}
		Evaluate(res)
		return res, nil
	}
	return results.ReadResult(filepath.Join(dir, results.FileResult))
}

// analyze computes the analysis of dir from its .jsonl files; a directory
// holding only result.json (copied from elsewhere) is rendered without charts.
func analyze(dir string) (*analysis, error) {
	if _, err := os.Stat(filepath.Join(dir, results.FileEvents)); errors.Is(err, os.ErrNotExist) {
		if _, rerr := os.Stat(filepath.Join(dir, results.FileResult)); rerr == nil {
			res, err := results.ReadResult(filepath.Join(dir, results.FileResult))
			if err != nil {
				return nil, err
			}
			return &analysis{Result: res}, nil
		}
		return nil, fmt.Errorf("%s is not a results directory: no %s or %s", dir, results.FileEvents, results.FileResult)
	}
	a, err := analyzeRun(dir, defaultMaxPoints)
	if err != nil {
		return nil, fmt.Errorf("computing the result of %s: %w", dir, err)
	}
	return a, nil
}
