package stress

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Console prints one line per measurement interval (all operation types
// merged) and a final summary, in the manner of cassandra-stress.
type Console struct {
	mu     sync.Mutex
	w      io.Writer
	nOps   int
	start  time.Time
	buf    []results.LatencyRecord
	header bool
	// nominal is the length of the first interval printed.
	nominal time.Duration
}

// NewConsole prints to w for a workload of nOps operation types.
func NewConsole(w io.Writer, nOps int) *Console { return &Console{w: w, nOps: max(nOps, 1)} }

// Record is a Sink: it prints a line once every operation type of an interval arrived.
func (c *Console) Record(r results.LatencyRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		c.start = r.Start
	}
	if len(c.buf) > 0 && !c.buf[0].End.Equal(r.End) {
		c.printLocked() // an interval with fewer types than expected
	}
	c.buf = append(c.buf, r)
	if len(c.buf) >= c.nOps {
		c.printLocked()
	}
}

func (c *Console) printLocked() {
	if len(c.buf) == 0 {
		return
	}
	if !c.header {
		fmt.Fprintf(c.w, "%8s %9s %8s %8s %8s %8s %8s %7s %7s %7s\n",
			"elapsed", "ops/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "dropped", "late")
		c.header = true
	}
	w, err := results.MergeWindow(c.buf, time.Time{}, time.Time{}, "")
	c.buf = c.buf[:0]
	if err != nil {
		fmt.Fprintf(c.w, "interval: %v\n", err)
		return
	}
	span := w.End.Sub(w.Start)
	if c.nominal == 0 {
		c.nominal = span
	}
	if span < c.nominal/2 {
		return // the last sliver of a run: its rate would mislead (the summary covers it)
	}
	ops := float64(w.Count+w.ErrorCount()) / w.End.Sub(w.Start).Seconds()
	s := results.SummarizeHDR(w.Response)
	fmt.Fprintf(c.w, "%7.1fs %9.0f %8.2f %8.2f %8.2f %8.2f %8.2f %7d %7d %7d\n",
		w.End.Sub(c.start).Seconds(), ops, s.P50, s.P90, s.P99, s.P999, s.Max, w.ErrorCount(), w.Dropped, w.Late)
}

// Flush prints an incomplete interval still buffered.
func (c *Console) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.printLocked()
}

// PrintSummary prints the final summary of a run.
func PrintSummary(w io.Writer, sum Summary) {
	el := sum.End.Sub(sum.Start)
	fmt.Fprintf(w, "\nSummary: %s, target %s, achieved %.1f ops/s\n", el.Round(time.Millisecond), rateString(sum.TargetRate), sum.AchievedRate)
	fmt.Fprintf(w, "  intended %d = succeeded %d + errors %d + dropped %d; late %d", sum.Intended, sum.Succeeded, sum.Errors, sum.Dropped, sum.Late)
	if sum.ReadMisses > 0 {
		fmt.Fprintf(w, "; reads of missing keys %d", sum.ReadMisses)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-6s %-8s %9s %8s %8s %8s %8s %8s %8s  %s\n", "op", "time", "count", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "mean ms", "errors")
	for _, o := range sum.Ops {
		if o.Intended == 0 {
			continue
		}
		for _, kind := range []struct {
			name string
			s    results.Summary
		}{{"response", o.Response}, {"service", o.Service}} {
			errs := ""
			if kind.name == "response" {
				errs = errorString(o.Errors)
			}
			fmt.Fprintf(w, "  %-6s %-8s %9d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f  %s\n", o.Op, kind.name, o.Succeeded,
				kind.s.P50, kind.s.P90, kind.s.P99, kind.s.P999, kind.s.Max, kind.s.Mean, errs)
		}
	}
	for _, m := range sum.Warnings {
		fmt.Fprintln(w, "  "+m)
	}
	lag := sum.LoaderLagPerSecond()
	fmt.Fprintf(w, "  load generator lag: %.1f ms/s (%.0f ms runnable but not running)\n", lag, sum.LoaderLagMS)
	if lag >= results.HostBoundLagMSPerS {
		fmt.Fprintf(w, "  warning: the load generator itself did not run %.0f ms of every second (>= %d): operations due then were sent late, and these latencies are partly this machine's\n",
			lag, results.HostBoundLagMSPerS)
	}
}

func rateString(r float64) string {
	if r <= 0 {
		return "closed loop"
	}
	return fmt.Sprintf("%.0f ops/s", r)
}

func errorString(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
