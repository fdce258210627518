package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJSONLRoundTripAndLineErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileLatency)
	w, err := OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if err := w.Write(LatencyRecord{Start: now, End: now.Add(time.Second), Op: OpWrite, Count: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []int64
	if err := ReadJSONL(path, func(_ int, r *LatencyRecord) error { got = append(got, r.Count); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2] != 2 {
		t.Fatalf("read back %v", got)
	}

	// A corrupt line in the middle is an error naming the line.
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	corrupt := lines[0] + "{not json\n" + lines[1]
	if err := os.WriteFile(path, []byte(corrupt), 0o644); err != nil {
		t.Fatal(err)
	}
	err = ReadJSONL(path, func(int, *LatencyRecord) error { return nil })
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("want a LineError at line 2, got %v", err)
	}

	// A torn last line (interrupted writer) is ignored.
	if err := os.WriteFile(path, []byte(lines[0]+`{"op":"wri`), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := ReadJSONL(path, func(int, *LatencyRecord) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("torn line: n=%d err=%v", n, err)
	}
}
