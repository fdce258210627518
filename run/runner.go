// Package run executes a scenario: provision, schema, fill phases,
// steady state, nemesis, final hold, teardown, then the reports. It writes
// the run directory live (events, latency and metrics .jsonl) so that a
// report can be recomputed from it even after an interrupted or failed run.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// Disk snapshot names besides the fill phases'.
const (
	SnapshotScaleOut = "Scale out"
	SnapshotFinal    = "Final"
)

// Options control where and how a plan runs.
type Options struct {
	Out    string // the run directory
	Force  bool   // reuse a non-empty run directory
	Stdout io.Writer
	Stderr io.Writer
	Deps   Deps
	// TeardownTimeout bounds log collection and destruction (default 2 min).
	TeardownTimeout time.Duration
	// RunID names the run's resources (default: a new one, see NewRunID).
	RunID string
	// Baseline holds the best values of previous runs for the plan's
	// baseline rules (recorded in run_start's setup).
	Baseline *results.Baseline
}

// InputError is a problem with what the user asked for (exit code 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// RunError says how a run ended when it did not complete: Status is
// results.StatusError or results.StatusInterrupted.
type RunError struct {
	Status string
	Err    error
}

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

type run struct {
	p       *plan.Plan
	runID   string
	steps   []nemesis.Step
	o       Options
	dir     string
	rep     *reporter
	events  *results.JSONLWriter
	lat     *results.JSONLWriter
	met     *results.JSONLWriter
	runLog  *os.File
	started time.Time

	cancel context.CancelCauseFunc

	cluster Cluster
	disk    Disk
	load    Load
	env     *Env

	// fillKeys are the keys the fills wrote so far; fillPerKey is the
	// disk usage (points) a key added in the last fill phase, by measure
	// (fullest node's or cluster).
	fillKeys   int64
	fillPerKey map[string]float64

	recovery *monitor.Recovery
	cycles   *nemesis.Cycles

	bg         sync.WaitGroup
	diskCancel context.CancelFunc
	loadCancel context.CancelFunc
	loadDone   chan struct{}
	// loadFirst is closed when the workload's first interval record arrives
	// (the end of its warm-up, see warmUp).
	loadFirst chan struct{}
	loadMu    sync.Mutex
	loadStop  bool
}

// Execute runs the plan into o.Out. It returns the result computed by
// Finalize (nil when none could be computed) and, when the run did not
// complete, a *RunError or *InputError.
func Execute(ctx context.Context, p *plan.Plan, o Options) (*results.Result, error) {
	if o.TeardownTimeout <= 0 {
		o.TeardownTimeout = 2 * time.Minute
	}
	if err := prepareDir(o.Out, o.Force); err != nil {
		return nil, &InputError{Err: err}
	}
	if o.RunID == "" {
		o.RunID = NewRunID(time.Now())
	}
	r := &run{p: p, o: o, runID: o.RunID, steps: nemesisSteps(p), dir: o.Out, cycles: &nemesis.Cycles{}, started: time.Now().UTC()}
	if err := r.open(); err != nil {
		r.close()
		return nil, &RunError{Status: results.StatusError, Err: err}
	}
	r.recovery = monitor.NewRecovery(p.Thresholds, p.RecoveryIntervals)

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.cancel = cancel
	r.env = &Env{Plan: p, RunID: r.runID, Dir: r.dir, Emit: r.emit, Logf: r.rep.Logf, Metrics: r.metric, MetricsWriter: r.met, Fail: r.fail}

	r.emit(results.Event{Type: results.EventRunStart, Setup: setup(p, r.runID, plannedNodes(p), o.Baseline), Message: fmt.Sprintf("run %s of %s", r.runID, p.Scenario)})
	r.rep.Logf("run %s: scenario %s on %s, results in %s", r.runID, p.Scenario, p.Backend, r.dir)

	err := r.phases(runCtx)
	status, reason := results.StatusPassed, ""
	if err != nil {
		status = results.StatusError
		if ctx.Err() != nil {
			status = results.StatusInterrupted
			err = fmt.Errorf("interrupted: %w", err)
		} else if c := context.Cause(runCtx); c != nil && !errors.Is(err, c) {
			// An outside failure (node death) canceled the phase: say that.
			err = fmt.Errorf("%w (while: %v)", c, err)
		}
		reason = err.Error()
		r.rep.Logf("run %s: %s", status, reason)
	}
	cancel(errors.New("run ending"))

	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), o.TeardownTimeout)
	r.teardown(tctx)
	tcancel()

	r.emit(results.Event{Type: results.EventRunEnd, Status: status, Message: reason})
	r.close()

	var res *results.Result
	if o.Deps.Finalize == nil {
		// No reporting wired: result.json is still computed from the .jsonl
		// files (without threshold verdicts).
		var cerr error
		if res, cerr = results.Compute(r.dir); cerr != nil {
			fmt.Fprintf(r.stderr(), "elasticity: computing the result of %s: %v\n", r.dir, cerr)
			res = &results.Result{FormatVersion: results.FormatVersion, StartedAt: r.started, EndedAt: time.Now().UTC(),
				Setup: *setup(p, r.runID, plannedNodes(p), o.Baseline), Nodes: []results.NodeInfo{}}
		}
		res.Status, res.Reason = status, reason
		if werr := results.WriteResult(r.dir, res); werr != nil {
			fmt.Fprintf(r.stderr(), "elasticity: %v\n", werr)
		}
	} else {
		var ferr error
		res, ferr = o.Deps.Finalize(r.dir, status, reason)
		if ferr != nil {
			fmt.Fprintf(r.stderr(), "elasticity: computing the reports of %s: %v\n", r.dir, ferr)
			if err == nil {
				return res, &RunError{Status: results.StatusError, Err: fmt.Errorf("computing the reports: %w", ferr)}
			}
		}
	}
	if err != nil {
		return res, &RunError{Status: status, Err: err}
	}
	return res, nil
}

func (r *run) stderr() io.Writer {
	if r.o.Stderr != nil {
		return r.o.Stderr
	}
	return io.Discard
}

// prepareDir creates the run directory, refusing a non-empty one unless forced.
func prepareDir(dir string, force bool) error {
	if dir == "" {
		return errors.New("no results directory given")
	}
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) > 0 && !force:
		return fmt.Errorf("results directory %s is not empty (use --force to reuse it)", dir)
	case err == nil && len(ents) > 0:
		for _, name := range []string{results.FileEvents, results.FileLatency, results.FileMetrics, results.FileResult, results.FileReportMD, results.FileReportHTML} {
			_ = os.Remove(filepath.Join(dir, name)) // forced: start the timeline afresh
		}
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("reading results directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, results.DirLogs), 0o755); err != nil {
		return fmt.Errorf("creating results directory: %w", err)
	}
	return nil
}

func (r *run) open() error {
	var err error
	if err = os.WriteFile(filepath.Join(r.dir, results.FileScenario), r.p.YAML, 0o644); err != nil {
		return fmt.Errorf("writing the resolved scenario: %w", err)
	}
	if r.events, err = results.OpenJSONL(filepath.Join(r.dir, results.FileEvents)); err != nil {
		return err
	}
	if r.lat, err = results.OpenJSONL(filepath.Join(r.dir, results.FileLatency)); err != nil {
		return err
	}
	if r.met, err = results.OpenJSONL(filepath.Join(r.dir, results.FileMetrics)); err != nil {
		return err
	}
	r.runLog, _ = os.Create(filepath.Join(r.dir, results.DirLogs, "run.log"))
	var logw io.Writer
	if r.runLog != nil {
		logw = r.runLog
	}
	r.rep = newReporter(r.o.Stdout, logw, r.emit)
	return nil
}

func (r *run) close() {
	for _, w := range []*results.JSONLWriter{r.events, r.lat, r.met} {
		if w != nil {
			_ = w.Close()
		}
	}
	if r.runLog != nil {
		_ = r.runLog.Close()
	}
}

func (r *run) emit(ev results.Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if r.events == nil {
		return
	}
	if err := r.events.Write(ev); err != nil {
		fmt.Fprintf(r.stderr(), "elasticity: %v\n", err)
	}
}

func (r *run) metric(s results.NodeSample) {
	if r.met != nil {
		_ = r.met.Write(s)
	}
}

// sink records one latency interval and feeds latency-recovered detection.
func (r *run) sink(rec results.LatencyRecord) {
	if r.lat != nil {
		_ = r.lat.Write(rec)
	}
	r.recovery.Observe(rec)
}

// fail ends the run from outside a phase (node death, load generator gone).
func (r *run) fail(err error) {
	if r.cancel != nil && err != nil {
		r.rep.Logf("failure: %v", err)
		r.cancel(err)
	}
}

// phase runs fn between phase_start and phase_end events.
func (r *run) phase(ctx context.Context, phase results.Phase, name string, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	label := string(phase)
	if name != "" {
		label += " " + name
	}
	r.rep.Logf("── %s", label)
	start := time.Now()
	r.emit(results.Event{Type: results.EventPhaseStart, Phase: phase, Name: name, PlanSeconds: r.planOfPhase(phase, name)})
	err := fn(ctx)
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.Cause(ctx)) {
		err = fmt.Errorf("%w: %v", context.Cause(ctx), err)
	}
	end := results.Event{Type: results.EventPhaseEnd, Phase: phase, Name: name}
	if err != nil {
		end.Status, end.Message = results.StatusError, err.Error()
		err = fmt.Errorf("%s: %w", label, err)
	}
	r.emit(end)
	r.rep.Logf("── %s done in %s", label, time.Since(start).Round(100*time.Millisecond))
	return err
}

// planOfPhase is the plan's estimate of a fill phase's duration, recorded
// with its phase_start so that reports show it beside the measured one.
func (r *run) planOfPhase(phase results.Phase, name string) map[string]float64 {
	if phase != results.PhaseFill {
		return nil
	}
	for _, f := range r.p.Fill {
		if f.Name == name && f.EstimatedSeconds > 0 {
			return map[string]float64{name: f.EstimatedSeconds}
		}
	}
	return nil
}

func (r *run) phases(ctx context.Context) error {
	p := r.p
	if err := r.phase(ctx, results.PhaseProvision, "", r.provision); err != nil {
		return err
	}
	if err := r.phase(ctx, results.PhaseSchema, "", func(ctx context.Context) error { return r.load.CreateSchema(ctx) }); err != nil {
		return err
	}
	for _, f := range p.Fill {
		if err := r.phase(ctx, results.PhaseFill, f.Name, func(ctx context.Context) error { return r.fill(ctx, f) }); err != nil {
			return err
		}
		if err := r.snapshot(ctx, f.Name); err != nil {
			return err
		}
		if err := r.phase(ctx, results.PhaseHold, f.Name, func(ctx context.Context) error {
			return r.sleep(ctx, results.PhaseHold, f.Hold, "holding after "+f.Name)
		}); err != nil {
			return err
		}
	}
	if p.Compactions.Wait {
		if err := r.phase(ctx, results.PhaseCompactions, "", r.waitCompactions); err != nil {
			return err
		}
	}
	if err := r.phase(ctx, results.PhaseSteady, "", r.steady); err != nil {
		return err
	}
	if len(r.steps) > 0 {
		if err := r.phase(ctx, results.PhaseNemesis, "", r.nemesis); err != nil {
			return err
		}
	}
	if err := r.phase(ctx, results.PhaseFinalHold, "", func(ctx context.Context) error {
		return r.sleep(ctx, results.PhaseFinalHold, p.FinalHold, "final hold under load")
	}); err != nil {
		return err
	}
	if err := r.snapshot(ctx, SnapshotFinal); err != nil {
		return err
	}
	if err := r.stopLoad(); err != nil {
		return err
	}
	if err := r.probeCapacityAfter(ctx); err != nil {
		return err
	}
	if _, ok := r.load.(Validator); ok && r.p.Validate.Enabled() && len(p.Fill) > 0 {
		return r.phase(ctx, results.PhaseValidate, "", func(ctx context.Context) error { return r.validateData(ctx, results.ValidationFinal) })
	}
	return nil
}

func (r *run) provision(ctx context.Context) error {
	var err error
	if r.cluster, err = r.o.Deps.NewCluster(ctx, r.env); err != nil {
		return fmt.Errorf("preparing the cluster: %w", err)
	}
	spec := r.p.Provision.Cluster
	r.rep.Progress(results.PhaseProvision, fmt.Sprintf("starting %d × %s in racks %v and waiting for them to be ready", spec.NodesPerRack*len(spec.Racks), spec.InstanceType, spec.Racks))
	if err := r.cluster.Create(ctx); err != nil {
		return fmt.Errorf("creating the cluster: %w", err)
	}
	if info := r.cluster.Info(); len(info) > 0 {
		// run_start carried the planned nodes; these are the provisioned
		// ones (addresses, modelled disks), also when no calibration follows.
		r.emit(results.Event{Type: results.EventProgress, Phase: results.PhaseProvision, Name: "provisioned", Setup: setup(r.p, r.runID, info, r.o.Baseline),
			Message: fmt.Sprintf("%d nodes provisioned", len(info))})
	}
	if r.disk, err = r.o.Deps.NewDisk(ctx, r.env, r.cluster); err != nil {
		return fmt.Errorf("starting the disk monitor: %w", err)
	}
	dctx, dcancel := context.WithCancel(context.WithoutCancel(ctx))
	r.diskCancel = dcancel
	r.bg.Add(1)
	go func() { defer r.bg.Done(); r.disk.Run(dctx) }()
	if r.load, err = r.o.Deps.NewLoad(ctx, r.env, r.cluster); err != nil {
		return fmt.Errorf("connecting the load generator: %w", err)
	}
	return nil
}

// snapshot records disk usage per node and for the cluster.
func (r *run) snapshot(ctx context.Context, name string) error {
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	nodes, cl, err := r.disk.Snapshot(sctx)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r.emit(results.Event{Type: results.EventWarning, Name: name, Message: fmt.Sprintf("disk snapshot %s: %v", name, err)})
		if len(nodes) == 0 {
			return nil
		}
	}
	cl.Node = "cluster"
	disk := append(append([]results.NodeDisk(nil), nodes...), cl)
	r.emit(results.Event{Type: results.EventDiskSnapshot, Name: name, Disk: disk})
	r.rep.Logf("disk [%s]: cluster %.1f%% used (%.2f of %.2f GB)", name, cl.UsagePercent, cl.UsedGB, cl.TotalGB)
	return nil
}

func (r *run) fill(ctx context.Context, f plan.Fill) error {
	timeout := r.p.Waits.Fill
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var keys int64
	var mu sync.Mutex
	began, unit := time.Now(), r.p.Workload.Model.Unit()
	stop := make(chan struct{})
	defer close(stop)
	// The target is on the fullest node unless the phase says average.
	usage, what := r.disk.MaxUsagePercent, "fullest node's"
	if f.ByAverage() {
		usage, what = r.disk.ClusterUsagePercent, "cluster"
	}
	bar := r.rep.bar(int(f.TargetPercent*10), fmt.Sprintf("%s: disk %% ×10", f.Name))
	go func() {
		every := 5 * time.Second
		if bar != nil {
			every = 500 * time.Millisecond
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				if bar != nil {
					_ = bar.Finish()
				}
				return
			case <-t.C:
				mu.Lock()
				k := keys
				mu.Unlock()
				msg := fmt.Sprintf("%s: %s disk %.1f%% of target %.0f%% (%d %ss written)", f.Name, what, usage(), f.TargetPercent, k, unit)
				if bar != nil {
					_ = bar.Set(min(int(usage()*10), int(f.TargetPercent*10)))
					r.rep.event(results.PhaseFill, msg)
				} else {
					r.rep.Progress(results.PhaseFill, msg)
				}
			}
		}
	}()
	// SCT fills as full_storage_utils.StressUtils.run_stress_until_target
	// does: write, `nodetool flush` on every node, read every node's df,
	// and write again while the fullest node is below the target; its
	// Hard Limit figure is that last reading. Writes show on disk late
	// (memtables until the flush, samples a second old), so no round aims
	// at the target by the live reading: the first stops short of it, and
	// the later ones write a number of keys, from the usage per key the
	// flushed readings measured, that lands just above it.
	if _, _, err := r.disk.Snapshot(fctx); err != nil && fctx.Err() == nil {
		r.rep.Logf("%s: reading disk usage before filling: %v", f.Name, err)
	}
	startPct, startKeys := usage(), r.fillKeys
	if startPct >= f.TargetPercent {
		r.rep.Logf("%s: %s disk already %.2f%%, at or above %.0f%%: nothing to write", f.Name, what, startPct, f.TargetPercent)
		return nil
	}
	perKey := r.fillPerKey[what] // from an earlier phase, until this one measures its own
	for round := 1; ; round++ {
		u := usage()
		goal, upTo := fillGoal(f.TargetPercent, u), int64(0)
		done := func() bool { return usage() >= goal }
		if perKey > 0 {
			upTo = r.fillKeys + int64(math.Ceil((goal-u)/perKey))
		} else {
			// Nothing measured yet: stop by the live reading, well short
			// of the target so that what it does not show yet fits.
			d := f.TargetPercent - u
			goal = f.TargetPercent - min(max(1, 0.1*d), d/2)
			done = fillDone(usage, goal)
		}
		if round == 1 {
			if upTo > 0 {
				r.rep.Logf("%s: %s disk %.2f%%: writing ~%d %ss (%.2g points per %s measured before), aiming at %.1f%%", f.Name, what, u, upTo-r.fillKeys, unit, perKey, unit, goal)
			} else {
				r.rep.Logf("%s: %s disk %.2f%%: writing until it is about to reach %.1f%%, then flushing and topping up by key count", f.Name, what, u, goal)
			}
		}
		n, err := r.load.Fill(fctx, upTo, done, r.sink, func(k int64) {
			mu.Lock()
			keys = k
			mu.Unlock()
		})
		r.fillKeys = max(r.fillKeys, n)
		if err != nil && ctx.Err() == nil && fctx.Err() != nil {
			return fmt.Errorf("%s disk usage %.1f%% did not reach %.0f%% within %s", what, usage(), f.TargetPercent, timeout)
		}
		if err != nil {
			return fmt.Errorf("filling to %.0f%%: %w", f.TargetPercent, err)
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := r.cluster.Flush(fctx); err != nil {
			r.rep.Logf("%s: flushing memtables: %v", f.Name, err)
		}
		if u, err = r.settledUsage(fctx, usage); err != nil && fctx.Err() == nil {
			r.rep.Logf("%s: reading disk usage after the flush: %v", f.Name, err)
		}
		// A phase measures its own rate once it has written enough to
		// see one (the flushed readings hold every key written).
		if k := r.fillKeys - startKeys; k > 0 && u > startPct && (u-startPct >= 1 || perKey <= 0) {
			perKey = (u - startPct) / float64(k)
			if r.fillPerKey == nil {
				r.fillPerKey = map[string]float64{}
			}
			r.fillPerKey[what] = perKey
		}
		if u >= f.TargetPercent || round == maxFillRounds {
			if u < f.TargetPercent {
				r.rep.Logf("%s: %s disk %.2f%% after %d rounds, short of %.0f%%", f.Name, what, u, round, f.TargetPercent)
			}
			break
		}
		if perKey > 0 {
			next := fillGoal(f.TargetPercent, u)
			r.rep.Logf("%s: %s disk %.2f%% after the flush, below %.0f%%: writing ~%d more %ss (%.2g points per %s), aiming at %.1f%%",
				f.Name, what, u, f.TargetPercent, int64(math.Ceil((next-u)/perKey)), unit, perKey, unit, next)
		} else {
			r.rep.Logf("%s: %s disk %.2f%% after the flush, below %.0f%%: writing more (no usage per key measured yet)", f.Name, what, u, f.TargetPercent)
		}
	}
	r.rep.Logf("%s reached: %s disk %.2f%%, cluster %.1f%% after %d %ss; %s", f.Name, what, usage(), r.disk.ClusterUsagePercent(), r.fillKeys, unit,
		r.fillVolume(r.fillKeys-startKeys, time.Since(began)))
	return nil
}

// fillVolume is what a fill phase wrote, in the plan's estimate of a key's
// bytes (value_size's mean, or the workload model's: a partition of rows),
// and at what rate: unique data, each replica stores it once more.
func (r *run) fillVolume(keys int64, took time.Duration) string {
	b := r.p.FillKeyBytes()
	s := fmt.Sprintf("this phase wrote %d %ss, ≈%s of unique data (≈%s a %s)", keys, r.p.Workload.Model.Unit(), scenarios.HumanBytes(float64(keys)*b),
		scenarios.HumanBytes(b), r.p.Workload.Model.Unit())
	if secs := took.Seconds(); secs > 0 {
		s += fmt.Sprintf(" at ≈%s/s", scenarios.HumanBytes(float64(keys)*b/secs))
	}
	return s
}

// settledUsage reads every node until usage stops moving, and returns it.
// Just after a flush, compactions of the new sstables hold their inputs and
// outputs at once for a moment: on an emulated disk that is points above
// where usage settles a second later, and where the phase's snapshot and
// hold would find it.
func (r *run) settledUsage(ctx context.Context, usage func() float64) (float64, error) {
	var last []float64
	var err error
	for end := time.Now().Add(fillSettleMax); ; {
		if _, _, err = r.disk.Snapshot(ctx); err != nil && ctx.Err() != nil {
			return usage(), err
		}
		last = append(last, usage())
		if n := len(last); n >= 3 && max(last[n-1], last[n-2], last[n-3])-min(last[n-1], last[n-2], last[n-3]) < 0.1 {
			return last[n-1], err
		}
		if time.Now().After(end) {
			return last[len(last)-1], err
		}
		select {
		case <-ctx.Done():
			return last[len(last)-1], context.Cause(ctx)
		case <-time.After(fillSettleEvery):
		}
	}
}

// fillSettleEvery and fillSettleMax pace settledUsage: three readings that
// agree over a second, or what the last one says after 10 s.
var (
	fillSettleEvery = 500 * time.Millisecond
	fillSettleMax   = 10 * time.Second
)

// maxFillRounds bounds the top-ups of one fill phase.
const maxFillRounds = 8

// fillGoal is where a round that writes a measured number of keys aims
// from usage u: half a point above the target, less a tenth of the way
// still to go, so that a long round (whose estimate errs most) rather ends
// short, and a short one just above the target.
func fillGoal(target, u float64) float64 {
	return target + 0.5 - 0.1*max(0, target-u)
}

// fillDone is a first round's stop condition: usage is sampled about once a
// second and writes land before they show, so stop when the current growth
// rate would reach goal within fillLead.
func fillDone(usage func() float64, goal float64) func() bool {
	startAt, startPct := time.Now(), usage()
	return func() bool {
		u := usage()
		if u >= goal {
			return true
		}
		if el := time.Since(startAt).Seconds(); el >= 5 {
			if rate := (u - startPct) / el; rate > 0 && u+rate*fillLead.Seconds() >= goal {
				return true
			}
		}
		return false
	}
}

// fillLead is how far ahead the fill stop condition looks.
const fillLead = 2 * time.Second

func (r *run) sleep(ctx context.Context, phase results.Phase, d time.Duration, what string) error {
	if d <= 0 {
		return nil
	}
	end := time.Now().Add(d)
	tick := time.NewTicker(progressEvery(d))
	defer tick.Stop()
	timer := time.NewTimer(d)
	defer timer.Stop()
	r.rep.Progress(phase, fmt.Sprintf("%s, %s left", what, d.Round(time.Second)))
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-timer.C:
			return nil
		case <-tick.C:
			r.rep.Progress(phase, fmt.Sprintf("%s, %s left", what, time.Until(end).Round(time.Second)))
		}
	}
}

func progressEvery(d time.Duration) time.Duration {
	if d < time.Minute {
		return 5 * time.Second
	}
	return 15 * time.Second
}

// steady calibrates when asked, starts the workload that runs without a gap
// until the end of the final hold, and measures Cycle #0.
func (r *run) steady(ctx context.Context) error {
	rate := r.p.Load.Rate
	if rate <= 0 && r.p.Load.LoadPercent > 0 {
		r.rep.Progress(results.PhaseSteady, "calibrating the cluster's capacity")
		probe, err := r.calibrate(ctx, results.ProbeBefore)
		if err != nil {
			return fmt.Errorf("calibrating: %w", err)
		}
		capacity := probe.CapacityOps
		rate = capacity * r.p.Load.LoadPercent / 100
		// run_start was written before the capacity was known: this event
		// carries the setup again with the rate and capacity filled in.
		s := setup(r.p, r.runID, plannedNodes(r.p), r.o.Baseline)
		s.RateOpsPerSec, s.CapacityOps = rate, capacity
		if r.cluster != nil {
			if info := r.cluster.Info(); len(info) > 0 {
				s.InitialNodes = info
			}
		}
		r.emit(results.Event{Type: results.EventProgress, Phase: results.PhaseSteady, Name: "calibrated", Setup: s, Probe: &probe,
			Message: fmt.Sprintf("capacity %.0f ops/s; rate %.0f ops/s (%.0f%% load)", capacity, rate, r.p.Load.LoadPercent)})
		r.rep.Logf("calibrated capacity %.0f ops/s → rate %.0f ops/s", capacity, rate)
	}
	if rate <= 0 {
		return errors.New("no workload rate: set rate or load_percent")
	}
	r.startLoad(ctx, rate)
	if err := r.warmUp(ctx); err != nil {
		return err
	}
	cyc := r.cycles.Start(r.nemesisEnv(), "")
	r.recovery.StartBaseline()
	err := r.sleep(ctx, results.PhaseSteady, r.p.SteadyState, fmt.Sprintf("%s under %.0f ops/s", cyc, rate))
	r.recovery.EndBaseline()
	r.cycles.End(r.nemesisEnv(), cyc, "")
	if t := r.recovery.Targets(); len(t) > 0 {
		r.rep.Logf("latency-recovered targets (P99): %v ms", t)
	}
	return err
}

// probeCapacityAfter measures the capacity again once the topology steps
// are done and the workload stopped, the same way as the calibration
// before the steady state (only when that calibration set the rate).
func (r *run) probeCapacityAfter(ctx context.Context) error {
	if !r.p.Load.CapacityAfter {
		return nil
	}
	return r.phase(ctx, results.PhaseCalibrate, "after", func(ctx context.Context) error {
		r.rep.Progress(results.PhaseCalibrate, "probing the capacity after the last topology step")
		probe, err := r.calibrate(ctx, results.ProbeAfter)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			// A failed probe costs the run an answer, not its verdict.
			r.emit(results.Event{Type: results.EventWarning, Phase: results.PhaseCalibrate, Message: fmt.Sprintf("capacity probe after the last step: %v", err)})
			return nil
		}
		r.emit(results.Event{Type: results.EventCapacity, Phase: results.PhaseCalibrate, Name: results.ProbeAfter, CapacityOps: probe.CapacityOps, Probe: &probe,
			Message: fmt.Sprintf("capacity after the last topology step %.0f ops/s", probe.CapacityOps)})
		r.rep.Logf("capacity after the last topology step: %.0f ops/s", probe.CapacityOps)
		return nil
	})
}

// calibrate runs a capacity probe and names and times it (the report
// judges the nodes' lag over that window). A probe whose load generator
// machine had no CPU left or lagged is said so at once.
func (r *run) calibrate(ctx context.Context, name string) (results.CapacityProbe, error) {
	start := time.Now()
	p, err := r.load.Calibrate(ctx)
	p.Name, p.Start, p.End = name, start, time.Now()
	if err == nil && (p.MachineBusyPct >= results.HostBoundBusyPct || p.LoaderLagMSPerS >= results.HostBoundLagMSPerS) {
		r.rep.Logf("capacity probe %s: the load generator's machine was %.0f%% busy and its lag %.0f ms/s: %.0f ops/s is what this host sustained, a lower bound of the cluster's capacity",
			name, p.MachineBusyPct, p.LoaderLagMSPerS, p.CapacityOps)
	}
	return p, err
}

func (r *run) startLoad(ctx context.Context, rate float64) {
	lctx, cancel := context.WithCancel(ctx)
	r.loadCancel = cancel
	r.loadDone = make(chan struct{})
	r.loadFirst = make(chan struct{})
	var first sync.Once
	sink := func(rec results.LatencyRecord) {
		r.sink(rec)
		first.Do(func() { close(r.loadFirst) })
	}
	go func() {
		defer close(r.loadDone)
		err := r.load.Run(lctx, rate, sink)
		r.loadMu.Lock()
		stopping := r.loadStop
		r.loadMu.Unlock()
		if !stopping && lctx.Err() == nil {
			if err == nil {
				err = errors.New("ended early")
			}
			r.fail(fmt.Errorf("workload: %w", err))
		}
	}()
}

// warmUpLimit bounds the warm-up: a load generator that reported no
// interval by then is measured as it is (its silence shows in Cycle #0).
const warmUpLimit = 10 * time.Second

// warmUp waits for the workload's first interval record before Cycle #0
// starts. A latency record counts the operations that completed in its
// interval, so the workload's first one lacks those still in flight at its
// end (rate x mean response time, by Little's law: 29 of 200 for a user
// profile's 10-row batches on a loaded host, a fraction of one for the
// built-in's single rows) and carries the statements' first preparation;
// from the second interval on, the operations carried in and out balance.
// Cycle #0 measuring from the first record on reported a rate short of
// the target that no operation had missed (none dropped, none failed).
// cassandra-stress, too, measures after a warm-up (StressAction.warmup:
// a quarter of the operations, at most 50,000, run and not reported).
func (r *run) warmUp(ctx context.Context) error {
	limit := time.NewTimer(warmUpLimit)
	defer limit.Stop()
	select {
	case <-r.loadFirst:
		return nil
	case <-limit.C:
		r.rep.Logf("warm-up: the workload reported no interval within %s; Cycle #0 starts without it", warmUpLimit)
		return nil
	case <-r.loadDone:
		return nil // the load ended (its failure ends the run)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// stopLoad ends the workload and waits for its last interval to be written.
func (r *run) stopLoad() error {
	if r.loadCancel == nil {
		return nil
	}
	r.loadMu.Lock()
	r.loadStop = true
	r.loadMu.Unlock()
	r.loadCancel()
	select {
	case <-r.loadDone:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("the workload did not stop within 30s")
	}
}

func (r *run) nemesisEnv() *nemesis.Env {
	pol := policy(r.p)
	if r.disk != nil {
		pol.DataBytes = r.disk.DataBytes
	}
	return &nemesis.Env{
		Cluster:  r.cluster,
		Emit:     r.emit,
		Logf:     r.rep.Logf,
		Progress: r.rep.Progress,
		Cycles:   r.cycles,
		Recovery: r.recovery,
		Cleanup:  r.cleanup(),
		Timeouts: pol,
		LogDir:   filepath.Join(r.dir, results.DirLogs),
	}
}

// cleanup is what follows a grow: nodetool cleanup of the run's keyspace on
// the old nodes when it uses vnodes (SCT's nodetool_cleanup_on_all_nodes_parallel),
// a recorded skip when it uses tablets, nothing when the flavour's default
// is kept.
func (r *run) cleanup() nemesis.Cleanup {
	kc, ok := r.cluster.(KeyspaceCleaner)
	switch {
	case r.p.Data.Tablets > 0:
		return nemesis.Cleanup{Skip: TabletsCleanupSkip}
	case r.p.Data.Tablets < 0 && ok:
		return nemesis.Cleanup{Cleaner: keyspaceCleaner{c: kc, keyspace: r.p.Data.Keyspace}}
	}
	return nemesis.Cleanup{}
}

// TabletsCleanupSkip is why a tablets keyspace is not cleaned up.
const TabletsCleanupSkip = "tablets keyspace: ScyllaDB's cleanup is a no-op with tablets (a replica drops a tablet's data when the tablet moves away)"

func (r *run) nemesis(ctx context.Context) error {
	env := r.nemesisEnv()
	last := -1 // the "Scale out" snapshot follows the last topology step
	for i, s := range r.steps {
		if s.IsTopology() {
			last = i
		}
	}
	for i, s := range r.steps {
		r.rep.Logf("nemesis %d/%d: %s (%s)", i+1, len(r.steps), s.Name, s.Kind)
		if err := nemesis.Run(ctx, env, s); err != nil {
			return err
		}
		if r.p.Validate.AfterEachStep {
			if err := r.validateData(ctx, s.Name); err != nil {
				return err
			}
		}
		if i == last {
			if err := r.snapshot(ctx, SnapshotScaleOut); err != nil {
				return err
			}
		}
	}
	return nil
}

// teardown stops the load, collects logs and destroys every node; it runs
// on every path out of a run and records problems as warnings.
func (r *run) teardown(ctx context.Context) {
	r.rep.Logf("── %s", results.PhaseTeardown)
	r.emit(results.Event{Type: results.EventPhaseStart, Phase: results.PhaseTeardown})
	warn := func(what string, err error) {
		if err != nil {
			msg := fmt.Sprintf("teardown: %s: %v", what, err)
			r.rep.Logf("%s", msg)
			r.emit(results.Event{Type: results.EventWarning, Phase: results.PhaseTeardown, Message: msg})
		}
	}
	warn("stopping the workload", r.stopLoad())
	if r.load != nil {
		r.load.Close()
	}
	if r.diskCancel != nil {
		r.diskCancel()
	}
	waitGroup(&r.bg, 10*time.Second)
	if r.cluster != nil {
		r.rep.Progress(results.PhaseTeardown, "collecting node logs")
		warn("collecting logs", r.cluster.CollectLogs(ctx, filepath.Join(r.dir, results.DirLogs)))
		r.rep.Progress(results.PhaseTeardown, "destroying the cluster")
		warn("destroying the cluster", r.cluster.Destroy(ctx))
	}
	r.emit(results.Event{Type: results.EventPhaseEnd, Phase: results.PhaseTeardown})
}

func waitGroup(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
