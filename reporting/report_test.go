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
	for _, f := range []string{results.FileResult, results.FileReportHTML, DirArgus} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(string(md), `$${\color{red}`) {
		t.Error("no failed value coloured red")
	}
}

// interruptedRun copies run1 and cuts its timeline where the final hold
// began, leaving torn last lines as a killed writer would.
func interruptedRun(t *testing.T) string {
	t.Helper()
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	path := filepath.Join(dir, results.FileEvents)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(b), `"phase":"final_hold"`)
	if cut < 0 {
		t.Fatal("fixture has no final_hold")
	}
	cut = strings.LastIndexByte(string(b[:cut]), '\n') + 1
	torn := append(b[:cut:cut], []byte(`{"time":"2026-03-03T00:06:0`)...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, results.FileLatency), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"start":"2026-03-03T00:08:00Z","op":"wri`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dir
}

func TestInterruptedRun(t *testing.T) {
	dir := interruptedRun(t)
	res, err := Finalize(dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.StatusInterrupted {
		t.Errorf("status %q, want interrupted", res.Status)
	}
	if n := len(res.Cycles); n != 4 {
		t.Errorf("%d cycles, want 4", n)
	}
	var final *results.DiskPhase
	for i := range res.Disk {
		if res.Disk[i].Phase == "Final" {
			final = &res.Disk[i]
		}
	}
	if final == nil || final.Source != "metrics" || len(final.Nodes) != 6 {
		t.Errorf("Final disk phase not recovered from metrics: %+v", final)
	}
	md, err := os.ReadFile(filepath.Join(dir, results.FileReportMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Status: INTERRUPTED**", "read from the nearest metrics samples", "The run did not finish"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// result.json reads back.
	back, err := results.ReadResult(filepath.Join(dir, results.FileResult))
	if err != nil {
		t.Fatal(err)
	}
	if back.Status != results.StatusInterrupted {
		t.Errorf("result.json status %q", back.Status)
	}
}

func TestReadResultRejectsUnknownVersion(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, results.FileResult)
	if err := os.WriteFile(p, []byte(`{"format_version": 99, "status": "passed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := results.ReadResult(p)
	if err == nil || !strings.Contains(err.Error(), "format_version 99 is not supported") {
		t.Fatalf("error %v", err)
	}
	if err := os.WriteFile(p, []byte(`{"status": "passed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadResult(p); err == nil {
		t.Fatal("a result without format_version was accepted")
	}
}

func TestEvaluateSelectors(t *testing.T) {
	res := &results.Result{Status: results.StatusPassed,
		Cycles:    []results.Cycle{{Name: "Cycle #0", ReadP99MS: 3}, {Name: "Cycle #1", ReadP99MS: 30}, {Name: "Cycle #2", ReadP99MS: 4}},
		Durations: []results.Duration{{Name: "Add new node(s)", Cycle: "Cycle #1", Seconds: 100}},
	}
	res.Setup.Thresholds = []results.Threshold{
		{Cycle: "steady_state", Metric: "read_p99_ms", Limit: 5},
		{Cycle: "Cycle #2", Metric: "read_p99_ms", Limit: 5},
		{Cycle: "Add new node(s)", Metric: "duration_seconds", Limit: 60},
	}
	Evaluate(res)
	got := map[string]bool{}
	for _, v := range res.Verdicts {
		got[v.Subject] = v.Passed
	}
	want := map[string]bool{"Cycle #0": true, "Cycle #2": true, "Add new node(s) (Cycle #1)": false}
	if len(got) != len(want) {
		t.Fatalf("verdicts %+v", res.Verdicts)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s passed=%v, want %v", k, got[k], v)
		}
	}
	if res.Status != results.StatusFailed {
		t.Errorf("status %q, want failed", res.Status)
	}
	// An error stays an error.
	res.Status = results.StatusError
	Evaluate(res)
	if res.Status != results.StatusError {
		t.Errorf("status %q, want error", res.Status)
	}
}

// A run that died early (no cycles, no latency or metrics files, even an
// empty timeline) still renders every report.
func TestEarlyDeath(t *testing.T) {
	for name, events := range map[string]string{
		"empty":       "",
		"during fill": `{"time":"2026-03-02T23:41:58Z","type":"run_start","setup":{"scenario":"x","emulated":true}}` + "\n" + `{"time":"2026-03-02T23:42:00Z","type":"phase_start","phase":"fill","name":"Soft Limit"}` + "\n",
		"run error":   `{"time":"2026-03-02T23:41:58Z","type":"run_start"}` + "\n" + `{"time":"2026-03-02T23:42:00Z","type":"run_end","status":"error","message":"creating the cluster: <boom>"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, results.FileEvents), []byte(events), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Finalize(dir, "", "")
			if err != nil {
				t.Fatal(err)
			}
			want := results.StatusInterrupted
			if name == "run error" {
				want = results.StatusError
			}
			if res.Status != want {
				t.Errorf("status %q, want %q", res.Status, want)
			}
			md, _ := os.ReadFile(filepath.Join(dir, results.FileReportMD))
			if !strings.Contains(string(md), "No steady-state cycle") {
				t.Errorf("report:\n%s", md)
			}
			if strings.Contains(string(md), "<boom>") {
				t.Error("reason not escaped in markdown")
			}
		})
	}
}

// A cycle whose host lag set its P99, or in which compaction fell behind,
// is marked in its latency table; a cycle below the bound, or whose backlog
// held, is not.
func TestCycleMarksInTheirTables(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cycles       []results.Cycle
		want, unwant string
	}{
		{"host-bound", []results.Cycle{
			{Name: results.SteadyStateCycle, HostLagMSPerS: 3},
			{Name: "Cycle #1", Step: "Add node", HostLagMSPerS: 42.4, HostBound: true},
			{Name: "Cycle #2", Step: "Add node", HostLagMSPerS: 2, LoaderLagMSPerS: 25, HostBound: true},
			{Name: "Cycle #3", Step: "Add node", HostLagMSPerS: 1, CPUStealPct: 23.4, HostBound: true},
		}, "Host-bound: Cycle #1 (host lag 42 ms/s), Cycle #2 (host lag 2 ms/s, load generator lag 25 ms/s), Cycle #3 (host lag 1 ms/s, CPU steal 23%)", "Host-bound: Cycle #0"},
		{"compaction behind", []results.Cycle{
			{Name: results.SteadyStateCycle, CompactionBacklog: &results.BacklogGrowth{Node: "node-2", Start: 14.7, End: 36.7}, CompactionBehind: true},
			{Name: "Cycle #1", Step: "Add node", CompactionBacklog: &results.BacklogGrowth{Node: "node-1", Start: 12, End: 13}},
		}, "Compaction fell behind: Cycle #0 (node-2: 14.7 → 36.7) —", "Cycle #1 (node-1"},
	} {
		var b bytes.Buffer
		if err := Markdown(&b, &results.Result{Cycles: tc.cycles}, MarkdownOptions{}); err != nil {
			t.Fatal(err)
		}
		if md := b.String(); !strings.Contains(md, tc.want) || strings.Contains(md, tc.unwant) {
			t.Errorf("%s: want %q and not %q in:\n%s", tc.name, tc.want, tc.unwant, md)
		}
	}
}

// The answers say whether the load was sustained: no when compaction fell
// behind in a cycle, yes with the highest backlog when it kept up, nothing
// when the nodes exported no backlog.
func TestAnswersSayWhetherCompactionKeptUp(t *testing.T) {
	behind := []results.Cycle{
		{Name: results.SteadyStateCycle, CompactionBacklog: &results.BacklogGrowth{Node: "node-2", Start: 15.9, End: 19.2}, CompactionBehind: true},
		{Name: "Cycle #1", CompactionBacklog: &results.BacklogGrowth{Node: "node-3", Start: 17, End: 35.8}, CompactionBehind: true},
		{Name: "Cycle #2", CompactionBacklog: &results.BacklogGrowth{Node: "node-1", Start: 0, End: 0}},
	}
	kept := []results.Cycle{
		{Name: results.SteadyStateCycle, CompactionBacklog: &results.BacklogGrowth{Node: "node-3", Start: 17.1, End: 3.1}},
		{Name: "Cycle #1", CompactionBacklog: &results.BacklogGrowth{Node: "node-3", Start: 1.6, End: 3.6}},
	}
	for _, tc := range []struct {
		cycles []results.Cycle
		want   string
	}{
		{behind, "Sustained load: no, compaction fell behind in Cycle #0, Cycle #1 ("},
		{kept, "Sustained load: yes, compaction kept up in every cycle (highest normalized backlog at a cycle's end 3.6, node-3 in Cycle #1)."},
		{[]results.Cycle{{Name: results.SteadyStateCycle}}, ""},
	} {
		got := strings.Join(Answers(&results.Result{Derived: &results.Derived{}, Cycles: tc.cycles}), "\n")
		if tc.want == "" && strings.Contains(got, "Sustained load") || !strings.Contains(got, tc.want) {
			t.Errorf("answers %q, want %q", got, tc.want)
		}
	}
}
