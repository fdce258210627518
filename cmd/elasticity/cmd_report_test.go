package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportFixture copies reporting/testdata/run1 to dst.
func reportFixture(t *testing.T, dst string) string {
	t.Helper()
	src := filepath.Join("..", "..", "reporting", "testdata", "run1")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.jsonl", "latency.jsonl", "metrics.jsonl", "scenario.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestReportCommand(t *testing.T) {
	dir := reportFixture(t, filepath.Join(t.TempDir(), "run1"))
	code, out, errs := cli(t, "", "report", dir)
	if code != ExitPassed {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"report.md", "report.html", "result.json", "argus/"} {
		if !strings.Contains(out, f) {
			t.Errorf("output does not name %s: %s", f, out)
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out, "status: failed") {
		t.Errorf("no status line: %s", out)
	}
	if code, _, _ := cli(t, "", "report", "--check", dir); code != ExitFailed {
		t.Errorf("--check exit %d, want %d", code, ExitFailed)
	}
	if code, _, _ := cli(t, "", "report", "--plain", "--format", "md", dir); code != ExitPassed {
		t.Errorf("--plain exit %d", code)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if strings.Contains(string(md), `\color`) || !strings.Contains(string(md), "(FAIL)") {
		t.Error("--plain markdown still coloured or without FAIL marks")
	}
	if code, _, _ := cli(t, "", "report", "--format", "pdf", dir); code != ExitInvalid {
		t.Errorf("--format pdf exit %d, want %d", code, ExitInvalid)
	}
	if code, _, _ := cli(t, "", "report", t.TempDir()); code != ExitInvalid {
		t.Errorf("empty directory exit %d, want %d", code, ExitInvalid)
	}
}

func TestReportCompare(t *testing.T) {
	root := t.TempDir()
	a := reportFixture(t, filepath.Join(root, "01-load=50-r1"))
	b := reportFixture(t, filepath.Join(root, "01-load=50-r2"))
	c := reportFixture(t, filepath.Join(root, "02-load=70"))
	code, out, errs := cli(t, "", "report", a, b, c)
	if code != ExitPassed {
		t.Fatalf("exit %d: %s", code, errs)
	}
	md, err := os.ReadFile(filepath.Join(root, "comparison.md"))
	if err != nil {
		t.Fatalf("%v (output %s)", err, out)
	}
	// The same layout as a matrix's: the answer first.
	if secs := strings.Split(string(md), "\n## "); len(secs) < 4 || !strings.HasPrefix(secs[1], "P99 per cycle and variant") ||
		!strings.HasPrefix(secs[2], "Scale-out durations per variant") || !strings.HasPrefix(secs[3], "Compaction and host per variant") {
		t.Errorf("comparison does not answer first:\n%.1200s", md)
	}
	for _, want := range []string{"| load=50 (n=2) P99 write [ms] ", "## Latency per variant [ms]", "## Cycle #1", "(×1.00)", "01-load=50 (n=2)", "inconclusive"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "comparison.html")); err != nil {
		t.Error(err)
	}
}
