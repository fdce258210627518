// Package e2e runs the elasticity binary end to end on the local emulated
// backend: a smoke scenario, interrupts in two phases and a node that fails
// its startup during a grow. Every test checks that no node process is left.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

var binary string // built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "elasticity-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "elasticity")
	build := exec.Command("go", "build", "-o", binary, "../cmd/elasticity")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building elasticity:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// shrink keeps every e2e run short and on its own loopback addresses.
func shrink(base string) []string {
	return []string{
		"--set", "local.base_address=" + base,
		"--set", "steady_state=8m",
		"--set", "final_hold=4m",
		"--set", "dataset.fill.0.hold=2m",
	}
}

// processesOf lists running `elasticity <sub>` processes started from our
// binary (sub "node": emulated nodes, "stress": loaders).
func processesOf(t *testing.T, sub string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if args[0] == binary && len(args) > 1 && args[1] == sub {
			out = append(out, e.Name()+": "+strings.Join(args, " "))
		}
	}
	return out
}

func nodeProcesses(t *testing.T) []string { return processesOf(t, "node") }

func checkNoNodes(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := nodeProcesses(t)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node processes left after the run:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// start runs `elasticity run` with a deadline; output goes to a log file.
// runExpect runs a scenario to its end and fails the test unless the runner
// exits with one of want, and returns its output; nodes left behind are
// checked when the test ends.
func runExpect(t *testing.T, ctx context.Context, out string, want []int, args ...string) *bytes.Buffer {
	t.Helper()
	return runScenarioExpect(t, ctx, smokeScenario, out, want, args...)
}

// runScenarioExpect is runExpect with another scenario file.
func runScenarioExpect(t *testing.T, ctx context.Context, scenario, out string, want []int, args ...string) *bytes.Buffer {
	t.Helper()
	cmd, log := startScenario(t, ctx, scenario, out, args...)
	err := cmd.Wait()
	t.Cleanup(func() { checkNoNodes(t) })
	if code := exitCode(err); !slices.Contains(want, code) {
		t.Fatalf("exit %d, want %v: %v\n%s", code, want, err, log)
	}
	return log
}

const smokeScenario = "../configs/smoke.yaml"

func start(t *testing.T, ctx context.Context, out string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startScenario(t, ctx, smokeScenario, out, args...)
}

func startScenario(t *testing.T, ctx context.Context, scenario, out string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	full := append([]string{"run", scenario, "--out", out}, args...)
	cmd := exec.CommandContext(ctx, binary, full...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 60 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			// Interrupt, never kill: the run must tear its nodes down.
			_ = cmd.Process.Signal(syscall.SIGINT)
			_ = cmd.Wait()
		}
	})
	return cmd, &buf
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

func readEvents(t *testing.T, dir string) []results.Event {
	t.Helper()
	var evs []results.Event
	if err := results.ReadJSONL(filepath.Join(dir, results.FileEvents), func(_ int, e *results.Event) error {
		evs = append(evs, *e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

func lastRunEnd(t *testing.T, dir string) results.Event {
	t.Helper()
	evs := readEvents(t, dir)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == results.EventRunEnd {
			return evs[i]
		}
	}
	t.Fatalf("no run_end in %s", dir)
	return results.Event{}
}

func readResult(t *testing.T, dir string) *results.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.FileResult))
	if err != nil {
		t.Fatalf("result.json: %v", err)
	}
	var r results.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("result.json: %v", err)
	}
	return &r
}

// waitForEvent polls events.jsonl until match returns true.
func waitForEvent(t *testing.T, dir string, d time.Duration, log *bytes.Buffer, match func(results.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		f, err := os.Open(filepath.Join(dir, results.FileEvents))
		if err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var e results.Event
				if json.Unmarshal(sc.Bytes(), &e) == nil && match(e) {
					f.Close()
					return
				}
			}
			f.Close()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("event not seen within %s\n%s", d, log)
}

func TestSmokeRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "smoke")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	// node-2 logs a database ERROR line that the scenario expects: it must
	// not fail the run (thresholds may, on a loaded machine: exit 0 or 1).
	args := append(shrink("127.0.5.2"), "--fault", "node-2="+injectedError, "--set", `expected_errors=[{regex: "Compaction failed: injected"}]`,
		"--set", "validate.after_each_step=true")
	log := runExpect(t, ctx, out, []int{0, 1}, args...)
	if r := readResult(t, out); strings.Contains(r.Reason, "database error") {
		t.Errorf("an expected error failed the run: %s", r.Reason)
	} else if ev := injectedEvent(r); ev == nil || !ev.Expected {
		t.Errorf("the injected error is not an expected event: %+v", r.ErrorEvents)
	}
	want := []string{results.FileScenario, results.FileEvents, results.FileLatency, results.FileMetrics, results.FileResult, results.DirLogs,
		results.FileReportMD, results.FileReportHTML}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if logs, _ := os.ReadDir(filepath.Join(out, results.DirLogs)); len(logs) < 2 {
		t.Errorf("logs/ has %d entries, want the node logs", len(logs))
	}
	res := readResult(t, out)
	if res.Status != results.StatusPassed && res.Status != results.StatusFailed {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Reason, log)
	}
	var steady, nemesisCycles int
	for _, c := range res.Cycles {
		if c.WriteOpsPerS <= 0 || c.ReadOpsPerS <= 0 {
			t.Errorf("%s has no throughput: %+v", c.Name, c)
		}
		if c.Name == "Cycle #0" {
			steady++
		} else {
			nemesisCycles++
		}
	}
	if steady != 1 || nemesisCycles < 1 {
		t.Fatalf("cycles %+v", res.Cycles)
	}
	if len(res.Disk) < 3 {
		t.Errorf("disk usage at %d phases, want 3 or more", len(res.Disk))
	}
	if len(res.Durations) == 0 {
		t.Error("no durations")
	}
	// The emulated nodes export the compaction manager's gauge, so the run
	// waited for the fill's compactions before the steady state.
	var settled *results.Duration
	for i, d := range res.Durations {
		if d.Name == results.DurCompactions {
			settled = &res.Durations[i]
		}
	}
	if settled == nil || settled.Seconds < 3 {
		t.Errorf("durations %+v: want %q of at least the 3 s quiet period", res.Durations, results.DurCompactions)
	} else {
		t.Logf("compactions settled in %.1f s", settled.Seconds)
	}
	for _, l := range res.Setup.Limitations {
		if strings.Contains(l, "compactions not waited for") {
			t.Errorf("limitation %q: the emulated nodes export the metric", l)
		}
	}
	// Nothing lost, checked: after the step (under load) and after the
	// final hold the default sample and ranges read at ALL found every row
	// with its value.
	if len(res.Validations) != 2 || res.Validations[0].After != "Add 1 x i4i.large" || res.Validations[1].After != results.ValidationFinal {
		t.Errorf("data validations %+v, want after the step and final", res.Validations)
	}
	for _, v := range res.Validations {
		if v.Lost() != 0 || v.ReadErrors != 0 || v.SampleKeys == 0 || v.ScannedRanges != 4 || v.ScannedRows == 0 || v.Consistency != "ALL" {
			t.Errorf("data validation %+v", v)
		}
	}
	t.Logf("smoke: %d cycles, disk phases %d, durations %d", len(res.Cycles), len(res.Disk), len(res.Durations))
}

// injectedError is the node fault of the error e2e runs.
const injectedError = "--inject-error=3s:compaction - Compaction failed: injected"

func injectedEvent(r *results.Result) *results.ErrorEvent {
	for i, e := range r.ErrorEvents {
		if e.Node == "node-2" && strings.Contains(e.Line, "Compaction failed: injected") {
			return &r.ErrorEvents[i]
		}
	}
	return nil
}

// A database ERROR line no filter expects fails the run (exit 1), the
// reason names it, and result.json places it in the run's timeline.
func TestInjectedErrorFailsRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "inject")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	runExpect(t, ctx, out, []int{1}, append(shrink("127.0.5.80"), "--fault", "node-2="+injectedError)...)
	r := readResult(t, out)
	if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "DATABASE_ERROR on node-2") || !strings.Contains(r.Reason, "Compaction failed: injected") {
		t.Fatalf("status %s, reason %q", r.Status, r.Reason)
	}
	ev := injectedEvent(r)
	if ev == nil || ev.Expected || ev.Severity != results.SeverityError || ev.Phase == "" || !strings.HasPrefix(ev.Line, "ERROR ") {
		t.Fatalf("injected event %+v among %+v", ev, r.ErrorEvents)
	}
	if ev.Cycle != "" && ev.Phase != results.PhaseSteady && ev.Phase != results.PhaseNemesis && ev.Phase != results.PhaseFinalHold {
		t.Errorf("event in cycle %s outside a measured phase: %+v", ev.Cycle, ev)
	}
}

func TestInterruptDuringFill(t *testing.T) {
	out := filepath.Join(t.TempDir(), "int-fill")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// A target the fill cannot reach quickly keeps the run in the fill.
	cmd, log := start(t, ctx, out, append(shrink("127.0.5.20"), "--set", "dataset.fill.0.target_percent=95%")...)
	waitForEvent(t, out, 60*time.Second, log, func(e results.Event) bool { return e.Type == results.EventPhaseStart && e.Phase == "fill" })
	time.Sleep(time.Second)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	defer checkNoNodes(t)
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, log)
	}
	if e := lastRunEnd(t, out); e.Status != results.StatusInterrupted {
		t.Fatalf("run_end %+v", e)
	}
	if _, err := os.Stat(filepath.Join(out, results.FileResult)); err == nil {
		if r := readResult(t, out); r.Status != results.StatusInterrupted {
			t.Fatalf("result status %s", r.Status)
		}
	}
}

func TestInterruptDuringGrow(t *testing.T) {
	out := filepath.Join(t.TempDir(), "int-grow")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd, log := start(t, ctx, out, shrink("127.0.5.40")...)
	waitForEvent(t, out, 100*time.Second, log, func(e results.Event) bool { return e.Type == results.EventStepRequested })
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	defer checkNoNodes(t)
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, log)
	}
	if e := lastRunEnd(t, out); e.Status != results.StatusInterrupted {
		t.Fatalf("run_end %+v", e)
	}
}

func TestGrowStartupFailure(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fail")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	args := append(shrink("127.0.5.60"), "--fault", "node-4=--fail-startup=raft operation [read_barrier] timed out")
	log := runExpect(t, ctx, out, []int{3}, args...)
	e := lastRunEnd(t, out)
	if e.Status != results.StatusError || !strings.Contains(e.Message, "node-4") {
		t.Fatalf("run_end %+v", e)
	}
	found := false
	for _, ev := range readEvents(t, out) {
		if ev.Type == results.EventDBError && strings.Contains(ev.Line, "Startup failed") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no database_error with the Startup failed line\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(out, results.FileResult)); err == nil {
		r := readResult(t, out)
		if r.Status != results.StatusError {
			t.Fatalf("result status %s", r.Status)
		}
		inErrors := false
		for _, es := range r.Errors {
			if strings.Contains(es.Line, "Startup failed") {
				inErrors = true
			}
		}
		if !inErrors {
			t.Fatalf("Startup failed not among result errors: %+v", r.Errors)
		}
	}
}

// The workload on two loader processes (the path aws.loader_count takes with
// machines): the run's latency.jsonl holds their merged records, each
// loader's own records are kept, and no loader outlives the run.
func TestSmokeRunWithLoaders(t *testing.T) {
	out := filepath.Join(t.TempDir(), "loaders")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	log := runExpect(t, ctx, out, []int{0, 1}, append(shrink("127.0.5.80"), "--set", "local.loaders=2")...)
	if left := processesOf(t, "stress"); len(left) > 0 {
		t.Fatalf("loader processes left after the run:\n%s", strings.Join(left, "\n"))
	}
	perOp := map[string]int64{}
	var merged, other int
	if err := results.ReadJSONL(filepath.Join(out, results.FileLatency), func(_ int, r *results.LatencyRecord) error {
		if r.Source == "merged" {
			merged++
		} else {
			other++
		}
		perOp[r.Op] += r.Count
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if merged == 0 || other != 0 || perOp[results.OpFill] == 0 || perOp[results.OpWrite] == 0 || perOp[results.OpRead] == 0 {
		t.Fatalf("latency.jsonl: %d merged records, %d others, ops %v\n%s", merged, other, perOp, log)
	}
	var fromLoaders int64
	for _, name := range []string{"loader-1", "loader-2"} {
		var n int64
		if err := results.ReadJSONL(filepath.Join(out, "loaders", name+".jsonl"), func(_ int, r *results.LatencyRecord) error {
			n += r.Count
			return nil
		}); err != nil || n == 0 {
			t.Fatalf("%s's own records: %v, %d ops", name, err, n)
		}
		fromLoaders += n
	}
	if total := perOp[results.OpFill] + perOp[results.OpWrite] + perOp[results.OpRead]; total != fromLoaders {
		t.Fatalf("merged records count %d ops, the loaders' own %d", total, fromLoaders)
	}
	res := readResult(t, out)
	for _, c := range res.Cycles {
		if c.WriteOpsPerS <= 0 || c.ReadOpsPerS <= 0 {
			t.Errorf("%s has no throughput: %+v", c.Name, c)
		}
	}
	t.Logf("loaders: %d merged records, ops %v, status %s", merged, perOp, res.Status)
}
