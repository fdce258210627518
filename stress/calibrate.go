package stress

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/internal/machinecpu"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// CalibrateOptions tunes the saturation probe.
type CalibrateOptions struct {
	// Ceiling is the highest acceptable P99 (of every operation type); required.
	Ceiling time.Duration
	// Step is how long each concurrency level runs; the first fifth is warm-up. Default 5 s.
	Step time.Duration
	// MaxConcurrency bounds the probe; default 512.
	MaxConcurrency int
	// StartConcurrency is the first level (default 1, at most
	// MaxConcurrency): from a level that passes the probe doubles as from
	// 1; from one that fails it halves until a level passes. A probe that
	// knows roughly where the knee is (the same cluster measured before)
	// skips the levels far below it.
	StartConcurrency int
	// MaxErrorRatio above which a level fails like a latency breach; default 0.01.
	MaxErrorRatio float64
	// Budget, when set, bounds the whole probe: a level that would not end
	// within it is not started, and the best level so far is the result.
	Budget time.Duration
	// Sink, when set, receives the probe's interval records.
	Sink Sink
	// Progress, when set, is told about every level measured.
	Progress func(CalibrationStep)
}

// CalibrationStep is one concurrency level of the probe.
type CalibrationStep struct {
	Concurrency int     `json:"concurrency"`
	OpsPerSec   float64 `json:"ops_per_sec"` // successful operations per second after warm-up
	P99MS       float64 `json:"p99_ms"`      // worst P99 across operation types
	Errors      int64   `json:"errors"`
	OK          bool    `json:"ok"` // under the ceiling and the error ratio
	// LoaderLagMSPerS is this load generator's own scheduling lag during
	// the level (internal/schedlag), in ms per second: operations it was
	// due to send while it did not run count that wait as latency.
	LoaderLagMSPerS float64 `json:"loader_lag_ms_per_sec,omitempty"`
	// MachineBusyPct is the share of the load generator machine's CPU time
	// that was busy during the level (0 when /proc/stat cannot be read).
	MachineBusyPct float64 `json:"machine_busy_pct,omitempty"`
}

// Calibration is the outcome of the probe.
type Calibration struct {
	MaxOpsPerSec float64           `json:"max_ops_per_sec"` // best throughput of an OK level
	Concurrency  int               `json:"concurrency"`     // the level that reached it
	Steps        []CalibrationStep `json:"steps"`
	// Stop says what ended the probe: StopCeiling (a level passed the
	// ceiling or the error ratio), StopFlat (throughput stopped growing),
	// StopMaxConcurrency or StopBudget. With the last two the cluster was
	// not saturated: MaxOpsPerSec is a lower bound of its capacity.
	Stop string `json:"stop,omitempty"`
}

// What ended a calibration (Calibration.Stop).
const (
	StopCeiling        = "ceiling"
	StopFlat           = "flat"
	StopMaxConcurrency = "max_concurrency"
	StopBudget         = "budget"
)

// LowerBound says whether the probe ended before the cluster saturated.
func (c Calibration) LowerBound() bool {
	return c.Stop == StopBudget || c.Stop == StopMaxConcurrency
}

// HostFigures are the highest load generator lag and machine CPU busy share
// of the levels that decided the capacity: the best level and every level
// above it (those ended the probe). A probe whose deciding levels ran on a
// saturated or lagging machine measured the machine, not the cluster.
func (c Calibration) HostFigures() (lagMSPerS, busyPct float64) {
	for _, st := range c.Steps {
		if st.Concurrency < c.Concurrency {
			continue
		}
		lagMSPerS, busyPct = max(lagMSPerS, st.LoaderLagMSPerS), max(busyPct, st.MachineBusyPct)
	}
	return lagMSPerS, busyPct
}

// Calibrate finds the maximum throughput the cluster sustains with the mix
// of w while the P99 stays under ceiling, with default options. A scenario's
// load_percent: 70 then runs at 0.7 x the result.
func Calibrate(ctx context.Context, s *gocql.Session, w Workload, ceiling time.Duration) (float64, error) {
	c, err := CalibrateWith(ctx, s, w, CalibrateOptions{Ceiling: ceiling})
	return c.MaxOpsPerSec, err
}

// CalibrateWith runs the closed-loop saturation probe: the workload mix of w
// (rate ignored) at concurrency 1, 2, 4 ... (from StartConcurrency) until the
// P99 passes the ceiling, errors pass MaxErrorRatio, throughput stops growing
// (< 5% for two levels) or MaxConcurrency is reached; when the first level
// already fails, at half of it, a quarter ... until one passes.
func CalibrateWith(ctx context.Context, s *gocql.Session, w Workload, o CalibrateOptions) (Calibration, error) {
	if s == nil {
		return Calibration{}, errors.New("calibrate: nil session")
	}
	op, _, err := w.bind(ctx, s)
	if err != nil {
		return Calibration{}, fmt.Errorf("calibrate: %w", err)
	}
	return calibrate(ctx, w, op, o)
}

func calibrate(ctx context.Context, w Workload, op sched.Op, o CalibrateOptions) (Calibration, error) {
	if o.Ceiling <= 0 {
		return Calibration{}, errors.New("calibrate: a latency ceiling is required")
	}
	if o.Step <= 0 {
		o.Step = 5 * time.Second
	}
	if o.MaxConcurrency <= 0 {
		o.MaxConcurrency = 512
	}
	if o.MaxErrorRatio <= 0 {
		o.MaxErrorRatio = 0.01
	}
	start := min(max(o.StartConcurrency, 1), o.MaxConcurrency)
	var cal Calibration
	flat := 0
	began := time.Now()
	cal.Stop = StopMaxConcurrency
	down := false // the first level failed: halving towards 1
	for c := start; c >= 1 && c <= o.MaxConcurrency; {
		// The budget is counted in whole levels, then in time with half a
		// step of slack: a level's set-up takes a little more than its
		// step, and by time alone a budget of N steps ran N-1 levels.
		over := len(cal.Steps) >= max(1, int(o.Budget/o.Step)) || time.Since(began)+o.Step > o.Budget+o.Step/2
		if o.Budget > 0 && over && len(cal.Steps) > 0 {
			cal.Stop = StopBudget
			break
		}
		st, err := probeLevel(ctx, w, op, c, o)
		if err != nil {
			return cal, err
		}
		if ctx.Err() != nil {
			break // an interrupted level measures nothing
		}
		cal.Steps = append(cal.Steps, st)
		if o.Progress != nil {
			o.Progress(st)
		}
		if !st.OK {
			cal.Stop = StopCeiling
			if len(cal.Steps) == 1 && c > 1 {
				down = true
			}
			if !down || c == 1 {
				break
			}
			c /= 2
			continue
		}
		if st.OpsPerSec < cal.MaxOpsPerSec*1.05 {
			flat++
		} else {
			flat = 0
		}
		if st.OpsPerSec > cal.MaxOpsPerSec {
			cal.MaxOpsPerSec, cal.Concurrency = st.OpsPerSec, c
		}
		if down {
			break // the level above failed: this is the knee
		}
		if flat >= 2 {
			cal.Stop = StopFlat
			break
		}
		c *= 2
	}
	if err := ctx.Err(); err != nil {
		return cal, fmt.Errorf("calibrate: %w", err)
	}
	if cal.MaxOpsPerSec == 0 {
		return cal, fmt.Errorf("calibrate: no concurrency level kept P99 under %v without errors (%+v)", o.Ceiling, cal.Steps)
	}
	return cal, nil
}

// probeLevel runs one closed-loop level and measures it after warm-up.
func probeLevel(ctx context.Context, w Workload, op sched.Op, c int, o CalibrateOptions) (CalibrationStep, error) {
	interval := o.Step / 5
	var mu sync.Mutex
	var recs []results.LatencyRecord
	sink := func(r results.LatencyRecord) {
		if o.Sink != nil {
			o.Sink(r)
		}
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}
	lw := w
	lw.Rate, lw.Concurrency, lw.Interval, lw.Warn = 0, c, interval, nil
	r, err := newRunner(lw, op, nil, sink)
	if err != nil {
		return CalibrationStep{}, fmt.Errorf("calibrate: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, o.Step)
	defer cancel()
	start := time.Now()
	cpu0, cpuErr := machinecpu.Read()
	sum, err := r.sch.Run(lctx)
	if err != nil {
		return CalibrationStep{}, fmt.Errorf("calibrate at concurrency %d: %w", c, err)
	}
	from := start.Add(interval)
	st := CalibrationStep{Concurrency: c, LoaderLagMSPerS: sum.LoaderLagPerSecond()}
	if cpu1, err := machinecpu.Read(); err == nil && cpuErr == nil {
		st.MachineBusyPct = machinecpu.BusyPct(cpu0, cpu1)
	}
	var ok, errs int64
	mu.Lock()
	defer mu.Unlock()
	for _, o := range w.model().Ops() {
		name := o.Name
		win, err := results.MergeWindow(recs, from, time.Time{}, name)
		if err != nil {
			return st, fmt.Errorf("calibrate: %w", err)
		}
		if p := results.SummarizeHDR(win.Response).P99; p > st.P99MS {
			st.P99MS = p
		}
		ok += win.Count
		errs += win.ErrorCount()
		if secs := win.End.Sub(win.Start).Seconds(); secs > 0 {
			st.OpsPerSec += float64(win.Count) / secs
		}
	}
	st.Errors = errs
	st.OK = ok > 0 && st.P99MS <= float64(o.Ceiling)/float64(time.Millisecond) &&
		float64(errs) <= o.MaxErrorRatio*float64(ok+errs)
	return st, nil
}
