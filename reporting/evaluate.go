// Package reporting turns a run directory into its reports: thresholds and
// derived answers (Evaluate), markdown, self-contained HTML with SVG charts,
// result.json and Argus-like tables, and run-to-run comparisons.
package reporting

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Evaluate fills res.Verdicts from res.Setup.Thresholds (SCT fixed_limit
// style) and res.Derived, and turns a passed run into a failed one when a
// threshold failed. Other statuses (error, interrupted) are kept: they say
// more than the thresholds do.
func Evaluate(res *results.Result) {
	res.Verdicts = []results.Verdict{}
	for _, th := range res.Setup.Thresholds {
		if th.IsDuration() {
			for i := range res.Durations {
				d := &res.Durations[i]
				if !th.SelectsDuration(d) {
					continue
				}
				var plan float64
				if th.RatioToPlan {
					if plan = d.PlanSeconds; plan <= 0 {
						continue // no estimate to be relative to
					}
				}
				limit, passed := th.Judge(d.Seconds, plan)
				res.Verdicts = append(res.Verdicts, results.Verdict{Threshold: th, Subject: d.Subject(), Value: d.Seconds, Passed: passed, Limit: limit, Baseline: plan})
			}
			continue
		}
		var baseline float64
		if th.RatioToSteady {
			steady := steadyCycle(res)
			if steady == nil {
				continue // nothing to be relative to
			}
			var ok bool
			if baseline, ok = steady.Metric(th.Metric); !ok {
				continue
			}
		}
		for i := range res.Cycles {
			c := &res.Cycles[i]
			if !th.Selects(c) {
				continue
			}
			v, ok := c.Metric(th.Metric)
			if !ok {
				continue
			}
			limit, passed := th.Judge(v, baseline)
			res.Verdicts = append(res.Verdicts, results.Verdict{Threshold: th, Subject: c.Name, Value: v, Passed: passed, Limit: limit, Baseline: baseline})
		}
	}
	evaluateBaseline(res)
	// Any ERROR or CRITICAL database event no expected_errors filter
	// expects fails the run (SCT's tester fails on them the same way).
	if res.ErrorEvents == nil {
		res.ErrorEvents = []results.ErrorEvent{}
	}
	failing := results.JudgeErrors(res.ErrorEvents, res.Setup.Severities, res.Setup.ExpectedErrors)
	lost, unbalanced := dataLossReason(res.Validations), rackBalanceReason(res)
	if res.Status == results.StatusPassed && (Failed(res) || len(failing) > 0 || lost != "" || unbalanced != "") {
		res.Status = results.StatusFailed
		var why []string
		for _, w := range []string{lost, unbalanced} {
			if w != "" {
				why = append(why, w)
			}
		}
		if len(failing) > 0 {
			why = append(why, results.ErrorsReason(failing))
		}
		if Failed(res) {
			why = append(why, "thresholds failed")
		}
		if res.Reason == "" {
			res.Reason = strings.Join(why, "; ")
		}
	}
	res.Derived = derive(res)
}

// evaluateBaseline judges the thresholds.baseline rules against the best
// values of the previous runs (Setup.Baseline), as Argus judges a cell.
func evaluateBaseline(res *results.Result) {
	for _, rule := range res.Setup.BaselineRules {
		th := rule.Threshold()
		judge := func(subject string, v float64) {
			vd := results.Verdict{Threshold: th, Subject: subject, Value: v, Rule: &rule}
			var best *float64
			if b, ok := res.Setup.Baseline.Lookup(subject, rule.Metric); ok {
				best, vd.Baseline, vd.BaselineRun = &b.Value, b.Value, b.RunID
			} else {
				vd.NoBaseline = true
			}
			vd.Limit, vd.Passed = rule.Judge(v, best)
			if vd.Limit != vd.Limit {
				vd.Limit = 0 // JSON has no NaN: no limit applied
			}
			res.Verdicts = append(res.Verdicts, vd)
		}
		if th.IsDuration() {
			for i := range res.Durations {
				if d := &res.Durations[i]; th.SelectsDuration(d) {
					judge(d.Subject(), d.Seconds)
				}
			}
			continue
		}
		for i := range res.Cycles {
			c := &res.Cycles[i]
			if !th.Selects(c) {
				continue
			}
			if v, ok := c.Metric(rule.Metric); ok && v > 0 {
				judge(c.Name, v)
			}
		}
	}
}

// steadyCycle is Cycle #0 (nil when it was not measured).
func steadyCycle(res *results.Result) *results.Cycle {
	for i := range res.Cycles {
		if res.Cycles[i].Name == results.SteadyStateCycle {
			return &res.Cycles[i]
		}
	}
	return nil
}

// Failed reports whether any threshold failed.
func Failed(res *results.Result) bool {
	for _, v := range res.Verdicts {
		if !v.Passed {
			return true
		}
	}
	return false
}

func derive(res *results.Result) *results.Derived {
	d := &results.Derived{}
	var first time.Time
	var normal, balanced, recovered time.Time
	modes := map[string]bool{}
	removed := map[string]bool{}
	for _, s := range res.Steps {
		if !s.Kind.IsTopology() {
			continue
		}
		if first.IsZero() || s.RequestedAt.Before(first) {
			first = s.RequestedAt
		}
		if s.Mode != "" {
			modes[s.Mode] = true
		}
		if s.Kind != results.KindGrow && s.NormalAt != nil {
			for _, n := range s.Nodes {
				removed[n] = true
			}
		}
		later := func(t *time.Time, dst *time.Time) {
			if t != nil && t.After(*dst) {
				*dst = *t
			}
		}
		later(s.NormalAt, &normal)
		later(s.BalancedAt, &balanced)
		later(s.RecoveredAt, &recovered)
	}
	if !first.IsZero() {
		secs := func(t time.Time) float64 {
			if t.IsZero() {
				return 0
			}
			return t.Sub(first).Seconds()
		}
		d.NodesNormalSeconds, d.DataBalancedSeconds, d.LatencyRecoveredSeconds = secs(normal), secs(balanced), secs(recovered)
		d.ScaleOutSeconds = math.Max(d.NodesNormalSeconds, math.Max(d.DataBalancedSeconds, d.LatencyRecoveredSeconds))
	}
	switch len(modes) {
	case 0:
	case 1:
		for m := range modes {
			d.Mode = m
		}
	default:
		d.Mode = "mixed"
	}
	for _, n := range res.Setup.InitialNodes {
		d.VCPUsBefore += n.VCPUs
	}
	for _, n := range res.Nodes {
		if !removed[n.Name] {
			d.VCPUsAfter += n.VCPUs
		}
	}
	if len(res.Cycles) > 0 {
		c0, cl := res.Cycles[0], res.Cycles[len(res.Cycles)-1]
		if d.VCPUsBefore > 0 {
			d.OpsPerVCPUBefore = (c0.WriteOpsPerS + c0.ReadOpsPerS) / float64(d.VCPUsBefore)
		}
		if d.VCPUsAfter > 0 && len(res.Cycles) > 1 {
			d.OpsPerVCPUAfter = (cl.WriteOpsPerS + cl.ReadOpsPerS) / float64(d.VCPUsAfter)
		}
	}
	if c, rate := res.Setup.CapacityOps, res.Setup.RateOpsPerSec; c > 0 && d.VCPUsBefore > 0 {
		d.CapacityPerVCPUBefore, d.OfferedPctBefore = c/float64(d.VCPUsBefore), 100*rate/c
		if a := res.CapacityAfterOps; a > 0 && d.VCPUsAfter > 0 {
			d.CapacityPerVCPUAfter, d.OfferedPctAfter = a/float64(d.VCPUsAfter), 100*rate/a
		}
		d.CapacityBeforeLowerBound = lowerBound(res.Probe(results.ProbeBefore))
		d.CapacityAfterLowerBound = d.CapacityPerVCPUAfter > 0 && lowerBound(res.Probe(results.ProbeAfter))
	}
	if n := len(res.Disk); n > 0 {
		last := res.Disk[n-1]
		lo, hi := map[string]float64{}, map[string]float64{}
		for _, nd := range last.Nodes {
			r := nd.Rack
			if r == "" {
				continue
			}
			if v, ok := lo[r]; !ok || nd.UsagePercent < v {
				lo[r] = nd.UsagePercent
			}
			if v, ok := hi[r]; !ok || nd.UsagePercent > v {
				hi[r] = nd.UsagePercent
			}
		}
		if len(lo) > 0 {
			d.DiskBalancePerRackPct = map[string]float64{}
			for r := range lo {
				d.DiskBalancePerRackPct[r] = hi[r] - lo[r]
			}
		}
	}
	return d
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func lowerBound(p *results.CapacityProbe) bool { return p != nil && p.LowerBound }
