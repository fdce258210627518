package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// JSONLWriter appends JSON lines to a file. It is safe for concurrent use;
// every Write is one whole line, flushed to the OS so that a crash or an
// interrupt loses at most the line being written.
type JSONLWriter struct {
	mu     sync.Mutex
	w      io.Writer
	f      *os.File // nil for a stream writer
	closed bool
	path   string
	buf    bytes.Buffer
}

// OpenJSONL opens (creating or appending to) a .jsonl file.
func OpenJSONL(path string) (*JSONLWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s for append: %w", path, err)
	}
	return &JSONLWriter{w: f, f: f, path: path}, nil
}

// NewJSONLStream writes JSON lines to w (a loader's standard output, for
// instance); name is used in errors. Close does not close w.
func NewJSONLStream(w io.Writer, name string) *JSONLWriter {
	return &JSONLWriter{w: w, path: name}
}

// Write appends v as one line.
func (w *JSONLWriter) Write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("writing %s: already closed", w.path)
	}
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends the newline
		return fmt.Errorf("encoding a line of %s: %w", w.path, err)
	}
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("appending to %s: %w", w.path, err)
	}
	return nil
}

// Path is the file written.
func (w *JSONLWriter) Path() string { return w.path }

// Close syncs and closes the file. It is safe to call twice.
func (w *JSONLWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	return errors.Join(serr, cerr)
}

// LineError says which line of which file could not be read.
type LineError struct {
	Path string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadJSONL calls fn for every line of a .jsonl file decoded into a fresh T.
// Blank lines are skipped. A final line without a newline that does not parse
// is treated as torn by an interrupted writer and ignored; any other line that
// does not parse is a *LineError naming the line.
func ReadJSONL[T any](path string, fn func(line int, v *T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	return DecodeJSONL(f, path, fn)
}

// DecodeJSONL is ReadJSONL over any reader; name is used in errors.
func DecodeJSONL[T any](r io.Reader, name string, fn func(line int, v *T) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			line++
			complete := b[len(b)-1] == '\n'
			trimmed := bytes.TrimSpace(b)
			if len(trimmed) > 0 {
				var v T
				if uerr := json.Unmarshal(trimmed, &v); uerr != nil {
					if !complete && err == io.EOF {
						return nil // torn last line of an interrupted run
					}
					return &LineError{Path: name, Line: line, Err: uerr}
				}
				if ferr := fn(line, &v); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s after line %d: %w", name, line, err)
		}
	}
}
