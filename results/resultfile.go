package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteResult writes dir/result.json atomically (a reader never sees half
// of it): the one writer of the file.
func WriteResult(dir string, res *Result) error {
	path := filepath.Join(dir, FileResult)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", FileResult, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ReadResult reads and validates a result.json: its format_version must be
// the one this package writes.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading result: %w", err)
	}
	var probe struct {
		FormatVersion *int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("reading %s: not a result.json: %w", path, err)
	}
	switch {
	case probe.FormatVersion == nil:
		return nil, fmt.Errorf("reading %s: no format_version: not a result.json of elasticity", path)
	case *probe.FormatVersion != FormatVersion:
		return nil, fmt.Errorf("reading %s: format_version %d is not supported (this elasticity reads version %d); re-render it from the .jsonl files with `elasticity report`", path, *probe.FormatVersion, FormatVersion)
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	switch res.Status {
	case StatusPassed, StatusFailed, StatusError, StatusInterrupted, StatusRunning:
	default:
		return nil, fmt.Errorf("reading %s: unknown status %q", path, res.Status)
	}
	return &res, nil
}
