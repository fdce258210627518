package results

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Thresholds against previous runs (issue 19), as Argus judges a result
// cell (scylladb/argus argus/backend/service/results_service.py,
// Cell.update_cell_status_based_on_rules): a rule has an optional
// fixed_limit, best_pct (a limit best × (1 ± pct/100)) and best_abs (best ±
// abs), "+" when lower is better; the value passes only when it is
// strictly better than every limit. The best is the best value of the
// previous runs of the same scenario (Argus keeps the best per column and
// row of a test); with no previous value only fixed_limit applies, and with
// no limit at all the value passes, as in Argus.

// BaselineRule is one Argus ValidationRule (argus/client/generic_result.py)
// on one metric of the cycles or durations selected by Cycle.
type BaselineRule struct {
	// Cycle selects cycles as Threshold.Cycle does, or names a duration
	// (a duration name or a nemesis step) when Metric is duration_seconds.
	Cycle  string `json:"cycle"`
	Metric string `json:"metric"`
	// HigherIsBetter: throughput; latencies and durations are lower-is-better.
	HigherIsBetter bool     `json:"higher_is_better,omitempty"`
	BestPct        *float64 `json:"best_pct,omitempty"`
	BestAbs        *float64 `json:"best_abs,omitempty"`
	FixedLimit     *float64 `json:"fixed_limit,omitempty"`
}

// Threshold is the rule's selector as a threshold (for Selects and
// SelectsDuration, and for the verdict's metric and direction).
func (r BaselineRule) Threshold() Threshold {
	return Threshold{Cycle: r.Cycle, Metric: r.Metric, Floor: r.HigherIsBetter}
}

// Limits are the rule's limits given the best previous value (nil: none).
func (r BaselineRule) Limits(best *float64) []float64 {
	var out []float64
	if r.FixedLimit != nil {
		out = append(out, *r.FixedLimit)
	}
	if best != nil {
		if r.BestPct != nil {
			m := 1 + *r.BestPct/100
			if r.HigherIsBetter {
				m = 1 - *r.BestPct/100
			}
			out = append(out, *best*m)
		}
		if r.BestAbs != nil {
			if r.HigherIsBetter {
				out = append(out, *best-*r.BestAbs)
			} else {
				out = append(out, *best+*r.BestAbs)
			}
		}
	}
	return out
}

// Judge returns the tightest limit (NaN when there is none) and whether v
// is strictly better than every limit.
func (r BaselineRule) Judge(v float64, best *float64) (limit float64, passed bool) {
	limit = math.NaN()
	passed = v == v
	for _, l := range r.Limits(best) {
		better := v < l
		if r.HigherIsBetter {
			better = v > l
		}
		passed = passed && better
		if limit != limit || (r.HigherIsBetter && l > limit) || (!r.HigherIsBetter && l < limit) {
			limit = l
		}
	}
	return limit, passed
}

// String is the rule as the scenario writes it: "best_pct 20, fixed_limit 50".
func (r BaselineRule) String() string {
	var parts []string
	for _, x := range []struct {
		k string
		v *float64
	}{{"best_pct", r.BestPct}, {"best_abs", r.BestAbs}, {"fixed_limit", r.FixedLimit}} {
		if x.v != nil {
			parts = append(parts, x.k+" "+strconv.FormatFloat(*x.v, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ", ")
}

// Baseline is what thresholds.baseline rules are judged against: the best
// value of every metric over the previous runs, with the run it came from.
type Baseline struct {
	// Source says where the runs were found: "--baseline DIR" or "history DIR".
	Source string        `json:"source"`
	Runs   []BaselineRun `json:"runs"`
	Best   []BestValue   `json:"best"`
}

// BaselineRun is one previous run the baseline was taken from.
type BaselineRun struct {
	RunID     string    `json:"run_id"`
	Dir       string    `json:"dir"`
	StartedAt time.Time `json:"started_at"`
	Status    string    `json:"status"`
}

// BestValue is the best value of one metric of one subject (a cycle name or
// a duration's Subject) over the baseline's runs.
type BestValue struct {
	Subject string  `json:"subject"`
	Metric  string  `json:"metric"`
	Value   float64 `json:"value"`
	RunID   string  `json:"run_id"`
}

// Lookup returns the best value of metric on subject.
func (b *Baseline) Lookup(subject, metric string) (BestValue, bool) {
	if b == nil {
		return BestValue{}, false
	}
	for _, v := range b.Best {
		if v.Subject == subject && v.Metric == metric {
			return v, true
		}
	}
	return BestValue{}, false
}

// Subject names a duration in verdicts, tables and baselines: its name,
// and the cycle of a step's batch in parentheses.
func (d Duration) Subject() string {
	if d.Cycle != "" {
		return d.Name + " (" + d.Cycle + ")"
	}
	return d.Name
}

// higherIsBetter reports the direction of a metric: throughput floors are
// higher-is-better, latencies and durations lower-is-better.
func higherIsBetter(metric string) bool {
	for _, m := range CycleMetrics {
		if m.Name == metric {
			return m.Floor
		}
	}
	return false
}

// add folds one run's result into the best values.
func (b *Baseline) add(res *Result) {
	idx := map[[2]string]int{}
	for i, v := range b.Best {
		idx[[2]string{v.Subject, v.Metric}] = i
	}
	put := func(subject, metric string, v float64) {
		// A cycle with no reads has a P99 of 0: no value, not the best one.
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		k := [2]string{subject, metric}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(b.Best)
			b.Best = append(b.Best, BestValue{Subject: subject, Metric: metric, Value: v, RunID: res.Setup.RunID})
			return
		}
		cur := &b.Best[i]
		if (higherIsBetter(metric) && v > cur.Value) || (!higherIsBetter(metric) && v < cur.Value) {
			cur.Value, cur.RunID = v, res.Setup.RunID
		}
	}
	for i := range res.Cycles {
		c := &res.Cycles[i]
		for _, m := range CycleMetrics {
			v, _ := c.Metric(m.Name)
			put(c.Name, m.Name, v)
		}
	}
	for _, d := range res.Durations {
		put(d.Subject(), MetricDurationSeconds, d.Seconds)
	}
}

// ErrBaseline is wrapped by every error about a --baseline or --history
// directory: bad input, not a failed run.
var ErrBaseline = errors.New("baseline")

func baselineErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBaseline}, args...)...)
}

// comparable reports why a previous run cannot be a baseline of a run of
// scenario on backend ("" when it can): another scenario or backend (an
// emulated run's figures are shapes, not ScyllaDB's), or a run that did not
// complete (its figures are partial).
func comparable(res *Result, scenario, backend string) string {
	switch {
	case res.Setup.Scenario != scenario:
		return fmt.Sprintf("a run of scenario %q, not %q", res.Setup.Scenario, scenario)
	case res.Setup.Backend != backend:
		return fmt.Sprintf("a run on backend %s, not %s", res.Setup.Backend, backend)
	case res.Status != StatusPassed && res.Status != StatusFailed:
		return fmt.Sprintf("a run that did not complete (status %s)", res.Status)
	}
	return ""
}

// LoadBaseline reads one previous run's results directory (--baseline
// DIR) as the baseline of a run of scenario on backend. A directory that is
// not a completed run of the same scenario and backend is an error wrapping
// ErrBaseline.
func LoadBaseline(dir, scenario, backend string) (*Baseline, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, baselineErr("--baseline %s: %v", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, baselineErr("--baseline %s is not a directory (give a previous run's results directory)", dir)
	}
	path := filepath.Join(dir, FileResult)
	if _, err := os.Stat(path); err != nil {
		hint := "give a previous run's results directory"
		if _, e := os.Stat(filepath.Join(dir, FileEvents)); e == nil {
			hint = "render it first with `elasticity report " + dir + "`"
		}
		return nil, baselineErr("--baseline %s is not a run: it has no %s (%s)", dir, FileResult, hint)
	}
	res, err := ReadResult(path)
	if err != nil {
		return nil, baselineErr("--baseline %s: %v", dir, err)
	}
	if why := comparable(res, scenario, backend); why != "" {
		return nil, baselineErr("--baseline %s is %s", dir, why)
	}
	b := &Baseline{Source: "--baseline " + dir}
	b.Runs = append(b.Runs, BaselineRun{RunID: res.Setup.RunID, Dir: dir, StartedAt: res.StartedAt, Status: res.Status})
	b.add(res)
	return b, nil
}

// HistoryBaseline collects the best values of every completed run of
// scenario on backend found in the results directories directly under dir
// (runs/ by default), leaving out the directory exclude (the run's own). A
// missing dir is an error only when required (given with --history); other
// runs and unreadable results are skipped.
func HistoryBaseline(dir, scenario, backend, exclude string, required bool) (*Baseline, error) {
	b := &Baseline{Source: "history " + dir, Runs: []BaselineRun{}, Best: []BestValue{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !required && errors.Is(err, os.ErrNotExist) {
			return b, nil
		}
		return nil, baselineErr("--history %s: %v", dir, errors.Unwrap(err))
	}
	var runs []*Result
	var dirs []string
	for _, e := range ents {
		sub := filepath.Join(dir, e.Name())
		if !e.IsDir() || sameDir(sub, exclude) {
			continue
		}
		res, err := ReadResult(filepath.Join(sub, FileResult))
		if err != nil || comparable(res, scenario, backend) != "" {
			continue
		}
		runs, dirs = append(runs, res), append(dirs, sub)
	}
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return runs[order[i]].StartedAt.Before(runs[order[j]].StartedAt) })
	for _, i := range order {
		res := runs[i]
		b.Runs = append(b.Runs, BaselineRun{RunID: res.Setup.RunID, Dir: dirs[i], StartedAt: res.StartedAt, Status: res.Status})
		b.add(res)
	}
	return b, nil
}

func sameDir(a, b string) bool {
	if b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
