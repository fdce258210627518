package reporting

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

func TestVariantOf(t *testing.T) {
	for in, want := range map[string]string{"/m/01-load=50-r2": "01-load=50", "/m/02-base": "02-base", "x-r10/": "x"} {
		if got := VariantOf(in); got != want {
			t.Errorf("VariantOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareWritesPages(t *testing.T) {
	a := copyRun(t, filepath.Join("testdata", "run1"))
	b := interruptedRun(t)
	out := filepath.Join(t.TempDir(), "cmp")
	if err := Compare([]string{a, b}, out, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, FileCompareMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Runs", "## Cycle #0", "## Cycle #3", "interrupted", "(×1.00)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, FileCompareHTML))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "http") {
		t.Error("comparison HTML references a URL")
	}
	if err := Compare(nil, out, CompareOptions{}); err == nil {
		t.Error("Compare of nothing succeeded")
	}
}

// A comparison's "Compaction and host per variant" table names the
// variants whose cycles were host-bound, with their worst lag and steal,
// and whose compaction fell behind, and says "none" and "yes" otherwise.
func TestCompareNamesHostBoundAndCompactionBehindRuns(t *testing.T) {
	root := t.TempDir()
	write := func(name string, cycles ...results.Cycle) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteResult(dir, &results.Result{FormatVersion: results.FormatVersion, Status: results.StatusPassed, Setup: results.Setup{Scenario: "s"}, Cycles: cycles}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	quiet := write("quiet", results.Cycle{Name: "Cycle #0", HostLagMSPerS: 2}, results.Cycle{Name: "Cycle #1", HostLagMSPerS: 3})
	noisy := write("noisy", results.Cycle{Name: "Cycle #0", HostLagMSPerS: 2},
		results.Cycle{Name: "Cycle #1", HostLagMSPerS: 30, LoaderLagMSPerS: 12, CPUStealPct: 4, HostBound: true},
		results.Cycle{Name: "Cycle #2", HostLagMSPerS: 1, CPUStealPct: 44, HostBound: true})
	read := func(dirs ...string) string {
		out := filepath.Join(t.TempDir(), "cmp")
		if err := Compare(dirs, out, CompareOptions{}); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(out, FileCompareMD))
		if err != nil {
			t.Fatal(err)
		}
		return string(md)
	}
	if md := read(quiet, noisy); !strings.Contains(md, "| not measured       | $${\\color{orange}Cycle #1, Cycle #2 (lag up to 42 ms/s, CPU steal up to 44%)}$$ |") ||
		!strings.Contains(md, "| not measured       | $${\\color{green}none}$$ ") {
		t.Errorf("comparison does not name the host-bound run:\n%s", md)
	}
	if md := read(quiet, quiet); strings.Contains(md, "lag up to") {
		t.Errorf("comparison of quiet runs names host-bound ones:\n%s", md)
	}
	behind := write("load80", results.Cycle{Name: "Cycle #0", CompactionBehind: true, CompactionBacklog: &results.BacklogGrowth{Node: "node-1", Start: 0.2, End: 24}},
		results.Cycle{Name: "Cycle #1", CompactionBacklog: &results.BacklogGrowth{Node: "node-2", Start: 24, End: 25}})
	if md := read(quiet, behind); !strings.Contains(md, "no: Cycle #0 (node-1: 0.2 → 24.0)") {
		t.Errorf("comparison does not name the run whose compaction fell behind:\n%s", md)
	}
	if md := read(quiet, noisy); strings.Contains(md, "no: Cycle") {
		t.Errorf("comparison of runs whose compaction kept up names one:\n%s", md)
	}
}

func TestArgusTables(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	if _, err := Render(dir, Options{Formats: []string{FormatJSON}}); err != nil {
		t.Fatal(err)
	}
	tables, err := ReadArgus(dir) // validates every file
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ArgusTable{}
	var names []string
	for _, tb := range tables {
		byName[tb.Meta.Name] = tb
		names = append(names, tb.Meta.Name)
	}
	want := []string{"mixed - Steady State - latencies", "mixed - Steady State - stalls - REACTOR_STALLED",
		"mixed - grow - latencies", "mixed - grow - stalls - REACTOR_STALLED", "Disk usage", "Durations"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("tables %q, want %q", names, want)
	}
	sc := byName["mixed - grow - latencies"]
	if strings.Join(sc.Meta.RowsMeta, ",") != "Cycle #1,Cycle #2,Cycle #3" {
		t.Errorf("rows %q", sc.Meta.RowsMeta)
	}
	cell := func(tb ArgusTable, col, row string) *ArgusCell {
		for i := range tb.Results {
			if tb.Results[i].Column == col && tb.Results[i].Row == row {
				return &tb.Results[i]
			}
		}
		return nil
	}
	// read_p90_ms ≤ 5 applies to every nemesis cycle: Argus's fixed_limit, cells UNSET for Argus to judge.
	if r, ok := sc.Meta.ValidationRules["P90 read"]; !ok || r.FixedLimit == nil || *r.FixedLimit != 5 || r.BestPct != nil {
		t.Errorf("P90 read rule %+v", sc.Meta.ValidationRules)
	}
	if c := cell(sc, "P90 read", "Cycle #1"); c == nil || c.Status != ArgusUnset || c.Value == nil {
		t.Errorf("Cycle #1 P90 read %+v", c)
	}
	if c := cell(sc, "start time", "Cycle #1"); c == nil || c.ValueText == nil || c.Value != nil {
		t.Errorf("start time %+v", c)
	}
	for _, c := range sc.Meta.ColumnsMeta {
		if c.Name == "P90 read" && (c.Unit != "ms" || c.Type != ArgusFloat || c.HigherIsBetter == nil || *c.HigherIsBetter) {
			t.Errorf("P90 read column %+v", c)
		}
		if c.Name == "start time" && (c.Type != ArgusText || c.HigherIsBetter != nil) {
			t.Errorf("start time column %+v", c)
		}
	}
	// "Add new node(s)" ≤ 600 s judges one row of three: our verdict, no table rule.
	du := byName["Durations"]
	if _, ok := du.Meta.ValidationRules["duration"]; ok {
		t.Errorf("durations rule %+v", du.Meta.ValidationRules)
	}
	var judged int
	for _, c := range du.Results {
		if c.Status == ArgusPass || c.Status == ArgusError {
			judged++
		}
	}
	if judged == 0 {
		t.Errorf("no judged duration: %+v", du.Results)
	}
	// Stalls: total, then only the non-empty buckets have cells.
	for _, name := range []string{"mixed - Steady State - stalls - REACTOR_STALLED", "mixed - grow - stalls - REACTOR_STALLED"} {
		for _, c := range byName[name].Results {
			if c.Column != "total" && (c.Value == nil || *c.Value == 0) {
				t.Errorf("%s: empty bucket sent: %+v", name, c)
			}
		}
	}
	if _, err := results.ReadResult(filepath.Join(dir, results.FileResult)); err != nil {
		t.Fatal(err)
	}
}

// A comparison shows the workload model's operations per cycle, each in
// the runs that have it with ratios to the first, and their figures in
// the long tables under the names matrix --expect takes.
func TestCompareShowsOperations(t *testing.T) {
	root := t.TempDir()
	write := func(name string, ops ...results.OpFigures) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		res := &results.Result{FormatVersion: results.FormatVersion, Status: results.StatusPassed, Setup: results.Setup{Scenario: "s"},
			Cycles: []results.Cycle{{Name: "Cycle #0", Ops: ops}}}
		if err := results.WriteResult(dir, res); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a := write("a", results.OpFigures{Name: "insert", Class: results.OpWrite, OpsPerS: 100, P99MS: 4},
		results.OpFigures{Name: "latest", Class: results.OpRead, OpsPerS: 200, P99MS: 2})
	b := write("b", results.OpFigures{Name: "insert", Class: results.OpWrite, OpsPerS: 100, P99MS: 8},
		results.OpFigures{Name: "slice", Class: results.OpRead, OpsPerS: 50, P99MS: 9})
	out := filepath.Join(t.TempDir(), "cmp")
	if err := Compare([]string{a, b}, out, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, FileCompareMD))
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	for _, want := range []string{"Cycle #0 per operation, every run", "(×2.00)", "Per operation per variant", "Cycle #0.op.insert.p99_ms"} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison lacks %q:\n%s", want, md)
		}
	}
	// An operation only one run has is not compared run by run.
	for _, line := range strings.Split(md, "\n") {
		if strings.Contains(line, "| latest ") || strings.Contains(line, "| slice ") {
			t.Errorf("an operation of one run in the per-operation table: %s", line)
		}
	}
}
