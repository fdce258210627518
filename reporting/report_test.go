package reporting

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

// copyRun copies a fixture run directory into a temporary one.
func copyRun(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (regenerate with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (regenerate with -update if intended); got:\n%s", name, got)
	}
}

func TestFinalizeFixture(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	res, err := Finalize(dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.StatusFailed {
		t.Errorf("status %q, want failed (read_p90_ms fails in Cycle #1)", res.Status)
	}
	md, err := os.ReadFile(filepath.Join(dir, results.FileReportMD))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "run1.golden.md", md)
	for _, f := range []string{results.FileResult, results.FileReportHTML, FileArgus} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(string(md), `$${\color{red}`) {
		t.Error("no failed value coloured red")
	}
}
