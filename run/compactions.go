package run

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/results"
)

// compactionsEvery paces the readings of the wait for compactions (at
// most; a short quiet period is read more often), and compactionsLogEvery
// its progress lines.
var (
	compactionsEvery    = time.Second
	compactionsLogEvery = 5 * time.Second
)

// waitCompactions waits until no node has run a compaction for the plan's
// quiet period, as SCT's wait_no_compactions_running waits for
// sum(scylla_compaction_manager_compactions) to be 0 before it measures
// (sdcm/tester.py: is_compaction_running, a property, reads the sum over
// the last 60 s and any non-zero value means running; 80 tries a minute
// apart). Past timeouts.compactions, or when the nodes do not export the
// metric, it records a warning and the run goes on: the compactions the
// fills left cost Cycle #0 its latency, not the run its verdict.
func (r *run) waitCompactions(ctx context.Context) error {
	quiet, timeout := r.p.Compactions.Quiet, r.p.Waits.Compactions
	every := min(compactionsEvery, max(quiet/10, 50*time.Millisecond))
	start := time.Now()
	deadline := start.Add(timeout)
	warn := func(msg string) {
		r.rep.Logf("warning: %s", msg)
		r.emit(results.Event{Type: results.EventWarning, Phase: results.PhaseCompactions, Message: msg})
	}
	var quietSince, lastLog time.Time
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		running, err := r.cluster.Compactions(rctx)
		cancel()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		now := time.Now()
		if errors.Is(err, monitor.ErrNotExported) {
			warn(fmt.Sprintf("compactions not waited for before the steady state: %v", err))
			return nil
		}
		state := describeCompactions(running)
		switch {
		case err != nil:
			quietSince = time.Time{} // unknown: not quiet
			state += fmt.Sprintf("; %v", err)
		case total(running) > 0:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = now
		}
		if !quietSince.IsZero() && now.Sub(quietSince) >= quiet {
			r.rep.Logf("compactions settled: none running for %s (waited %s)", quiet, now.Sub(start).Round(100*time.Millisecond))
			return nil
		}
		if now.After(deadline) {
			warn(fmt.Sprintf("compactions had not settled within %s (timeouts.compactions): %s; the steady state starts with them", timeout, state))
			return nil
		}
		if now.Sub(lastLog) >= compactionsLogEvery {
			lastLog = now
			if !quietSince.IsZero() {
				state = fmt.Sprintf("none running for %s of %s", now.Sub(quietSince).Round(100*time.Millisecond), quiet)
			}
			r.rep.Progress(results.PhaseCompactions, fmt.Sprintf("waiting for compactions: %s (%s left)", state, time.Until(deadline).Round(time.Second)))
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(every):
		}
	}
}

func total(running map[string]int) int {
	n := 0
	for _, v := range running {
		n += v
	}
	return n
}

// describeCompactions says where compactions run: "3 running on node-1 (2), node-3 (1)".
func describeCompactions(running map[string]int) string {
	var on []string
	for node, n := range running {
		if n > 0 {
			on = append(on, node)
		}
	}
	if len(on) == 0 {
		return "none running"
	}
	sort.Strings(on)
	parts := make([]string, len(on))
	for i, node := range on {
		parts[i] = fmt.Sprintf("%s (%d)", node, running[node])
	}
	return fmt.Sprintf("%d running on %s", total(running), strings.Join(parts, ", "))
}
