package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

// loadResult is the result of a 3 → 6 node serial scale-out at a load:
// the higher the load, the higher the scale-out's P99 and the longer it
// takes; at 80% compaction falls behind in Cycle #1 and Cycle #2 is
// host-bound.
func loadResult(load float64) *results.Result {
	t0 := time.Date(2026, 12, 5, 20, 0, 0, 0, time.UTC)
	k := load / 50
	res := &results.Result{FormatVersion: results.FormatVersion, Status: results.StatusPassed, StartedAt: t0, EndedAt: t0.Add(3 * time.Hour),
		Setup: results.Setup{Scenario: "90pct-scaleout", Backend: "local", Emulated: true, RF: 3, Tablets: 1024, WriteRatio: 0.5, ReadRatio: 0.5,
			LoadPercent: load, CapacityOps: 10000, RateOpsPerSec: 100 * load,
			Thresholds: []results.Threshold{{Cycle: "*", Metric: results.MetricWriteP99, Limit: 10}, {Cycle: "*", Metric: results.MetricReadP99, Limit: 10},
				{Cycle: results.DurAddNodes, Metric: results.MetricDurationSeconds, Limit: 150}}}}
	at := t0
	cycle := func(name string, mins float64, p99w, p99r float64) *results.Cycle {
		c := results.Cycle{Name: name, Start: at, End: at.Add(time.Duration(mins * float64(time.Minute))), DurationS: mins * 60,
			WriteP90MS: p99w / 2, WriteP99MS: p99w, ReadP90MS: p99r / 2, ReadP99MS: p99r, WriteOpsPerS: 50 * load, ReadOpsPerS: 50 * load,
			CompactionBacklog: &results.BacklogGrowth{Node: "node-1", Start: 1, End: 1.5}}
		if name != results.SteadyStateCycle {
			c.Step = "Add 3 x i4i.4xlarge"
		}
		at = c.End
		res.Cycles = append(res.Cycles, c)
		return &res.Cycles[len(res.Cycles)-1]
	}
	cycle(results.SteadyStateCycle, 30, 2.1, 4.6)
	for i, up := range []float64{300, 2, 1} {
		name := fmt.Sprintf("Cycle #%d", i+1)
		start := at
		c := cycle(name, 10*k, 2.1*(1+up*(k-0.9)), 4.6*(1+up*(k-0.9)))
		join, ready := 100*k, 300*k
		normal, balanced := start.Add(time.Duration(join)*time.Second), start.Add(time.Duration(join+ready)*time.Second)
		recovered := balanced.Add(time.Minute)
		res.Durations = append(res.Durations,
			results.Duration{Name: results.DurAddNodes, Step: c.Step, Cycle: name, Start: start, End: normal, Seconds: join},
			results.Duration{Name: results.DurNodesReady, Step: c.Step, Cycle: name, Start: normal, End: balanced, Seconds: ready})
		res.Steps = append(res.Steps, results.StepTiming{Step: c.Step, Cycle: name, Kind: results.KindGrow, Mode: results.ModeSerial,
			RequestedAt: start, NormalAt: &normal, BalancedAt: &balanced, RecoveredAt: &recovered})
	}
	if load >= 80 {
		res.Cycles[1].CompactionBacklog, res.Cycles[1].CompactionBehind = &results.BacklogGrowth{Node: "node-2", Start: 1.5, End: 24}, true
		res.Cycles[2].HostBound, res.Cycles[2].HostLagMSPerS, res.Cycles[2].LoaderLagMSPerS = true, 28, 6
	}
	reporting.Evaluate(res)
	return res
}

// runLoadMatrix runs a load_percent=50,70,80 matrix whose passes write
// loadResult into their run directories, and reports it; preflight may
// refuse cells.
func runLoadMatrix(t *testing.T, preflight func(context.Context, Cell, string) error) (out string, md []byte) {
	t.Helper()
	axes, _ := ParseAxes([]string{"workload.load_percent=50,70,80"})
	cells := Expand(axes, 1)
	x, err := ParseExpect(`"Cycle #1.write_p99_ms": load_percent=80 / load_percent=50 <= 2`)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Check(axes, cells); err != nil {
		t.Fatal(err)
	}
	out = t.TempDir()
	sum, err := Run(context.Background(), cells, Options{Out: out, Expect: []Expectation{x}, Preflight: preflight,
		Run: func(_ context.Context, c Cell, dir string) (string, error) {
			var load float64
			fmt.Sscan(c.Values()["workload.load_percent"], &load)
			res := loadResult(load)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
			return res.Status, results.WriteResult(dir, res)
		},
		Figures: func(dir string) (map[string]float64, error) {
			res, err := results.ReadResult(filepath.Join(dir, results.FileResult))
			if err != nil {
				return nil, err
			}
			return results.Figures(res), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sum.Passes { // elapsed times are the machine's: fixed for the golden file
		sum.Passes[i].ElapsedS = 60
	}
	if err := os.Remove(filepath.Join(out, FilePasses)); err != nil {
		t.Fatal(err)
	}
	for _, p := range sum.Passes {
		if err := AppendPass(out, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := Report(out, sum); err != nil {
		t.Fatal(err)
	}
	md, err = os.ReadFile(filepath.Join(out, reporting.FileCompareMD))
	if err != nil {
		t.Fatal(err)
	}
	return out, md
}

// The comparison of a load_percent=50,70,80 matrix, as `elasticity matrix`
// writes it (runs holding their result.json), in markdown: the verdict,
// then P99 per cycle × variant with the ratios to each variant's Cycle #0,
// the scale-out durations and compaction and host per variant, before the
// expectations, the passes and the long tables.
func TestReportGoldenLoadMatrix(t *testing.T) {
	_, md := runLoadMatrix(t, nil)
	checkGolden(t, "comparison-load-50-70-80.golden.md", md)
	heads := strings.Split(string(md), "\n## ")
	if len(heads) < 5 || !strings.HasPrefix(heads[1], "P99 per cycle and variant") || !strings.HasPrefix(heads[2], "Scale-out durations per variant") ||
		!strings.HasPrefix(heads[3], "Compaction and host per variant") || !strings.HasPrefix(heads[0], "# elasticity comparison: 90pct-scaleout, 3 variants (3 runs)\n\n**matrix verdict: ") {
		t.Errorf("the comparison does not answer first:\n%.1500s", md)
	}
}

// A variant whose cell could not run here has no column in the answer
// tables: they say why, and its long-table cells are pending.
func TestReportNamesPendingVariants(t *testing.T) {
	_, md := runLoadMatrix(t, func(_ context.Context, c Cell, _ string) error {
		if c.Values()["workload.load_percent"] == "80" {
			return errors.New("memory: 1.2 GiB available, 3.4 GiB needed")
		}
		return nil
	})
	p99 := string(md)[strings.Index(string(md), "## P99"):strings.Index(string(md), "## Scale-out")]
	if strings.Contains(p99, "load_percent=80 P99") || !strings.Contains(p99, "Not measured: load_percent=80: pending (memory: 1.2 GiB available, 3.4 GiB needed).") {
		t.Errorf("P99 table of a matrix with a pending variant:\n%s", p99)
	}
	if !strings.Contains(string(md), "| Cycle #1.write_p99_ms | 65.1                  | 317.1                 | pending (memory: 1.2 GiB available, 3.4 GiB needed) |") {
		t.Errorf("the long tables do not show the pending variant:\n%s", md)
	}
}
