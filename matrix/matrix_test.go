package matrix

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
	sets := []string{"workload.load_percent=50,70,80", "nemesis.0.grow_cluster.mode=serial,parallel", "description=two words"}
	axes, _ := ParseAxes(sets)
	cells := Expand(axes, 1)
	var m, wf bytes.Buffer
	if err := EmitGitHubMatrix(&m, cells); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "github-matrix.golden.json", m.Bytes())
	err := EmitGitHub(&wf, cells, Workflow{Scenario: "configs/smoke.yaml", Sets: sets,
		Expects: []string{"scale_out_seconds: mode=parallel / mode=serial <= 0.8", "Cycle #1.read_p99_ms: mode=parallel,load_percent=80 / mode=serial,load_percent=80 <= 1.5"}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "github-workflow.golden.yml", wf.Bytes())
	var parsed struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix GitHubMatrix `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(wf.Bytes(), &parsed); err != nil {
		t.Fatalf("the workflow is not YAML: %v", err)
	}
	if n := len(parsed.Jobs["cell"].Strategy.Matrix.Include); n != len(cells) {
		t.Fatalf("the cell job has %d matrix entries, want %d", n, len(cells))
	}
	var collect string
	for _, st := range parsed.Jobs["collect"].Steps {
		collect += st.Run
	}
	if !strings.Contains(collect, "--expect 'Cycle #1.read_p99_ms: mode=parallel,load_percent=80 / mode=serial,load_percent=80 <= 1.5'") {
		t.Fatalf("the collect job's commands lose the expectation:\n%s", collect)
	}
	// The workflow carries the expectations and uploads the record and the comparison.
	for _, want := range []string{"--expect 'scale_out_seconds: mode=parallel / mode=serial <= 0.8'", "--collect runs", "matrix/matrix.jsonl", "matrix/comparison.md", "matrix/expectations.svg", "actions/upload-artifact", "actions/download-artifact"} {
		if !strings.Contains(wf.String(), want) {
			t.Errorf("workflow lacks %q", want)
		}
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed:\n got %s\nwant %s", name, got, want)
	}
}

func TestRunRecordsEveryPassAndVerdict(t *testing.T) {
	axes, _ := ParseAxes([]string{"workload.load_percent=50,70"})
	cells := Expand(axes, 2)
	out := t.TempDir()
	statuses := []string{"passed", "failed", "passed", "passed"}
	var ran []string
	s, err := Run(context.Background(), cells, Options{Out: out, Run: func(_ context.Context, c Cell, dir string) (string, error) {
		ran = append(ran, filepath.Base(dir))
		return statuses[c.Index], nil
	}, Figures: func(dir string) (map[string]float64, error) {
		return map[string]float64{"scale_out_seconds": float64(len(dir))}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 4 || s.Passed != 3 || s.Failed != 1 || s.Verdict != "failed" {
		t.Fatalf("ran %v summary %+v", ran, s)
	}
	passes, err := ReadPasses(out)
	if err != nil || len(passes) != 4 {
		t.Fatalf("matrix.jsonl: %d passes, %v", len(passes), err)
	}
	if p := passes[1]; p.Index != 2 || p.Status != "failed" || p.Values["workload.load_percent"] != "70" || p.Repeat != 1 || p.Figures["scale_out_seconds"] == 0 || p.Dir != cells[1].Name {
		t.Fatalf("pass 2: %+v", p)
	}
	// An interrupted matrix says so and keeps its lines.
	ctx, cancel := context.WithCancel(context.Background())
	out2 := t.TempDir()
	s, err = Run(ctx, cells, Options{Out: out2, Run: func(_ context.Context, c Cell, _ string) (string, error) {
		cancel()
		return "interrupted", nil
	}})
	if err != nil || s.Verdict != "interrupted" || len(s.Passes) != 1 {
		t.Fatalf("interrupted: %+v %v", s, err)
	}
	if passes, _ := ReadPasses(out2); len(passes) != 1 {
		t.Fatalf("interrupted matrix.jsonl: %d lines", len(passes))
	}
}

func TestRunSkipsCellsItsPreflightRefuses(t *testing.T) {
	axes, _ := ParseAxes([]string{"backend=local,aws"})
	cells := Expand(axes, 1)
	out := t.TempDir()
	s, err := Run(context.Background(), cells, Options{Out: out,
		Run: func(context.Context, Cell, string) (string, error) { return "passed", nil },
		Preflight: func(_ context.Context, c Cell, _ string) error {
			if c.Values()["backend"] == "aws" {
				return errors.New("aws-credentials: none found")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Passed != 1 || s.Skipped != 1 || s.Verdict != "passed" {
		t.Fatalf("%+v", s)
	}
	if p := s.Passes[1]; p.Status != StatusSkipped || p.Reason != "aws-credentials: none found" {
		t.Fatalf("aws pass: %+v", p)
	}
	// All skipped: nothing could run here.
	s, _ = Run(context.Background(), cells, Options{Out: t.TempDir(), Run: func(context.Context, Cell, string) (string, error) { return "passed", nil },
		Preflight: func(context.Context, Cell, string) error { return errors.New("no") }})
	if s.Verdict != "error" {
		t.Fatalf("all skipped: %+v", s)
	}
}

func TestHooksGetTheCellAndFailTheirPass(t *testing.T) {
	axes, _ := ParseAxes([]string{"nemesis.0.grow_cluster.mode=serial,parallel"})
	cells := Expand(axes, 2)
	out := t.TempDir()
	envLog := filepath.Join(out, "env.log")
	before := `echo "$ELASTICITY_CELL $ELASTICITY_REPEAT $ELASTICITY_SET_NEMESIS_0_GROW_CLUSTER_MODE $ELASTICITY_RUN_DIR" >> ` + envLog +
		`; if [ "$ELASTICITY_SET_NEMESIS_0_GROW_CLUSTER_MODE" = parallel ] && [ "$ELASTICITY_REPEAT" = 1 ]; then echo restart refused; exit 7; fi`
	var ran []string
	s, err := Run(context.Background(), cells, Options{Out: out, BeforeEach: before, AfterEach: "true",
		Run: func(_ context.Context, c Cell, _ string) (string, error) {
			ran = append(ran, c.Name)
			return "passed", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 3 || s.Errored != 1 || s.Passed != 3 {
		t.Fatalf("ran %v, %+v", ran, s)
	}
	p := s.Passes[1]
	if p.Status != "error" || p.Hook != HookBeforeEach || !strings.Contains(p.Reason, "before-each hook") || !strings.Contains(p.Reason, "exit status 7") || !strings.Contains(p.Reason, "restart refused") {
		t.Fatalf("hook-failed pass: %+v", p)
	}
	b, _ := os.ReadFile(envLog)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 || lines[2] != cells[2].Name+" 2 serial "+filepath.Join(out, cells[2].Name) {
		t.Fatalf("hook environment:\n%s", b)
	}
	// A failing after-each fails a pass that ran.
	s, _ = Run(context.Background(), cells[:1], Options{Out: t.TempDir(), AfterEach: "exit 3",
		Run: func(context.Context, Cell, string) (string, error) { return "passed", nil }})
	if p := s.Passes[0]; p.Status != "error" || p.Hook != HookAfterEach {
		t.Fatalf("after-each: %+v", p)
	}
}
