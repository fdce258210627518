package matrix

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestExpandInterleavesRepeats(t *testing.T) {
	axes, err := ParseAxes([]string{"workload.load_percent=50,70", "nemesis.0.grow_cluster.mode=serial,parallel"})
	if err != nil {
		t.Fatal(err)
	}
	cells := Expand(axes, 2)
	if len(cells) != 8 {
		t.Fatalf("2×2×2 repeats: want 8 cells, got %d", len(cells))
	}
	var order []string
	for _, c := range cells {
		order = append(order, c.Label+"#"+string(rune('0'+c.Repeat)))
	}
	want := "load_percent=50 mode=serial#1,load_percent=50 mode=parallel#1,load_percent=70 mode=serial#1,load_percent=70 mode=parallel#1," +
		"load_percent=50 mode=serial#2,load_percent=50 mode=parallel#2,load_percent=70 mode=serial#2,load_percent=70 mode=parallel#2"
	if got := strings.Join(order, ","); got != want {
		t.Fatalf("order:\n got %s\nwant %s", got, want)
	}
	names := map[string]bool{}
	for _, c := range cells {
		if names[c.Name] {
			t.Fatalf("duplicate dir name %s", c.Name)
		}
		names[c.Name] = true
	}
}

func TestParseAxesErrors(t *testing.T) {
	for _, bad := range [][]string{{"noequals"}, {"=5"}, {"a=1,,2"}, {"a=1", "a=2"}} {
		if _, err := ParseAxes(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestEmitGitHubGolden(t *testing.T) {
	axes, _ := ParseAxes([]string{"workload.load_percent=50,70,80", "nemesis.0.grow_cluster.mode=serial,parallel", "description=two words"})
	var b bytes.Buffer
	if err := EmitGitHub(&b, Expand(axes, 1)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "github-matrix.golden.json")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("--emit github output changed:\n got %s\nwant %s", b.String(), want)
	}
}

func TestRunRecordsEveryCellAndVerdict(t *testing.T) {
	axes, _ := ParseAxes([]string{"workload.load_percent=50,70"})
	cells := Expand(axes, 2)
	out := t.TempDir()
	statuses := []string{"passed", "failed", "passed", "passed"}
	var ran []string
	s, err := Run(context.Background(), "smoke", cells, out, func(_ context.Context, c Cell, dir string) (string, error) {
		ran = append(ran, filepath.Base(dir))
		return statuses[c.Index], nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 4 || s.Passed != 3 || s.Failed != 1 || s.Verdict != "failed" {
		t.Fatalf("ran %v summary %+v", ran, s)
	}
	if _, err := os.Stat(filepath.Join(out, "matrix.json")); err != nil {
		t.Fatal(err)
	}
	// An interrupted matrix says so.
	ctx, cancel := context.WithCancel(context.Background())
	s, err = Run(ctx, "smoke", cells, t.TempDir(), func(_ context.Context, c Cell, _ string) (string, error) {
		cancel()
		return "interrupted", nil
	}, nil)
	if err != nil || s.Verdict != "interrupted" || len(s.Outcomes) != 1 {
		t.Fatalf("interrupted: %+v %v", s, err)
	}
}
