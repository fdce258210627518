package run

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/internal/testutil"
	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/results"
)

// runCompactions runs the test plan with the wait for compactions and
// returns the run directory, its events and its terminal output.
func runCompactions(t *testing.T, w *fakeWorld, quiet, timeout time.Duration) (string, []results.Event, string) {
	t.Helper()
	oldLog := compactionsLogEvery
	compactionsLogEvery = 100 * time.Millisecond
	t.Cleanup(func() { compactionsLogEvery = oldLog })
	p := testPlan()
	p.Steps = nil
	p.Compactions.Wait, p.Compactions.Quiet, p.Waits.Compactions = true, quiet, timeout
	dir := filepath.Join(t.TempDir(), "run")
	var out testutil.SyncBuffer
	if _, err := Execute(context.Background(), p, Options{Out: dir, Stdout: &out, Deps: fakeDeps(w, new(string))}); err != nil {
		t.Fatal(err)
	}
	return dir, readEvents(t, dir), out.String()
}

// phaseSpan is when a phase started and ended.
func phaseSpan(t *testing.T, evs []results.Event, ph results.Phase) (time.Time, time.Time) {
	t.Helper()
	var start, end time.Time
	for _, e := range evs {
		if e.Phase == ph && e.Type == results.EventPhaseStart {
			start = e.Time
		}
		if e.Phase == ph && e.Type == results.EventPhaseEnd {
			end = e.Time
		}
	}
	if start.IsZero() || end.IsZero() {
		t.Fatalf("no %s phase in %+v", ph, evs)
	}
	return start, end
}

func warnings(evs []results.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == results.EventWarning && e.Phase == results.PhaseCompactions {
			out = append(out, e.Message)
		}
	}
	return out
}

// The wait follows the fills and precedes the steady state; it ends once
// no compaction has run for the quiet period, here after node-2's last
// compaction ends (0.4 s) plus 0.3 s, and says where they ran meanwhile.
func TestWaitCompactionsUntilQuiet(t *testing.T) {
	w := &fakeWorld{}
	var mu sync.Mutex
	var since time.Time
	w.compactions = func() (map[string]int, error) {
		mu.Lock()
		defer mu.Unlock()
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) < 400*time.Millisecond {
			return map[string]int{"node-1": 0, "node-2": 2, "node-3": 1}, nil
		}
		return map[string]int{"node-1": 0, "node-2": 0, "node-3": 0}, nil
	}
	dir, evs, out := runCompactions(t, w, 300*time.Millisecond, 10*time.Second)
	var seq []string
	for _, e := range evs {
		if e.Type == results.EventPhaseStart {
			seq = append(seq, string(e.Phase))
		}
	}
	if got := strings.Join(seq, " "); !strings.Contains(got, "hold compactions steady_state") {
		t.Fatalf("phases %s: want the wait between the last hold and the steady state", got)
	}
	start, end := phaseSpan(t, evs, results.PhaseCompactions)
	if d := end.Sub(start); d < 700*time.Millisecond || d > 3*time.Second {
		t.Errorf("waited %s, want about 0.4 s of compactions + 0.3 s quiet", d)
	}
	if ws := warnings(evs); len(ws) > 0 {
		t.Errorf("warnings %q", ws)
	}
	for _, want := range []string{"waiting for compactions: 3 running on node-2 (2), node-3 (1)", "compactions settled: none running for 300ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	res, err := results.Compute(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range res.Durations {
		if d.Name == results.DurCompactions {
			found = d.Seconds >= 0.7
		}
	}
	if !found {
		t.Errorf("durations %+v: want %q of at least 0.7 s", res.Durations, results.DurCompactions)
	}
}

// Compactions that never settle end the wait at its timeout with a
// warning (an event, a limitation of the report), and the run goes on.
func TestWaitCompactionsTimesOutWithAWarning(t *testing.T) {
	w := &fakeWorld{}
	w.compactions = func() (map[string]int, error) { return map[string]int{"node-1": 1, "node-2": 0}, nil }
	dir, evs, out := runCompactions(t, w, 200*time.Millisecond, 500*time.Millisecond)
	start, end := phaseSpan(t, evs, results.PhaseCompactions)
	if d := end.Sub(start); d < 500*time.Millisecond || d > 3*time.Second {
		t.Errorf("waited %s, want the 500ms timeout", d)
	}
	ws := warnings(evs)
	if len(ws) != 1 || !strings.Contains(ws[0], "had not settled within 500ms") || !strings.Contains(ws[0], "1 running on node-1 (1)") {
		t.Fatalf("warnings %q", ws)
	}
	if !strings.Contains(out, "warning: compactions had not settled") {
		t.Errorf("output lacks the warning:\n%s", out)
	}
	if _, end := phaseSpan(t, evs, results.PhaseSteady); end.IsZero() {
		t.Fatal("no steady state after the timeout")
	}
	res, err := results.Compute(dir)
	if err != nil {
		t.Fatal(err)
	}
	if lim := strings.Join(res.Setup.Limitations, "\n"); !strings.Contains(lim, "compactions had not settled") {
		t.Errorf("limitations %q lack the warning", res.Setup.Limitations)
	}
}

// Nodes without scylla_compaction_manager_compactions skip the wait with
// a warning; a failed reading is not quiet.
func TestWaitCompactionsNotExportedOrUnreadable(t *testing.T) {
	w := &fakeWorld{}
	w.compactions = func() (map[string]int, error) {
		return map[string]int{}, &monitor.NotExportedError{Metric: monitor.CompactionsMetric, Nodes: []string{"node-1", "node-2", "node-3"}}
	}
	_, evs, _ := runCompactions(t, w, time.Minute, time.Minute)
	start, end := phaseSpan(t, evs, results.PhaseCompactions)
	if d := end.Sub(start); d > 2*time.Second {
		t.Errorf("waited %s for metrics that are not exported", d)
	}
	if ws := warnings(evs); len(ws) != 1 || !strings.Contains(ws[0], "not waited for") || !strings.Contains(ws[0], "node-1, node-2, node-3") {
		t.Fatalf("warnings %q", ws)
	}

	w = &fakeWorld{}
	w.compactions = func() (map[string]int, error) {
		return map[string]int{"node-1": 0}, context.DeadlineExceeded
	}
	_, evs, _ = runCompactions(t, w, 100*time.Millisecond, 400*time.Millisecond)
	if ws := warnings(evs); len(ws) != 1 || !strings.Contains(ws[0], "had not settled") || !strings.Contains(ws[0], "deadline exceeded") {
		t.Fatalf("unreadable nodes: warnings %q, want the timeout's", ws)
	}
}
