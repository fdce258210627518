package run

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// diskMonitor adapts monitor.DiskMonitor to the runner.
type diskMonitor struct {
	m *monitor.DiskMonitor
}

func newDiskMonitor(lc *liveCluster, env *Env) *diskMonitor {
	interval := 5 * time.Second
	if env.Plan.Emulated {
		// Small emulated disks fill in seconds: sample often so fills stop near target.
		interval = time.Second
	}
	m := monitor.NewDiskMonitor(func() []*cluster.Node {
		var out []*cluster.Node
		for _, n := range lc.c.Nodes() {
			if s := lc.c.State(n); s == cluster.StateNormal || s == cluster.StateJoining || s == cluster.StateLeaving {
				out = append(out, n)
			}
		}
		return out
	}, env.MetricsWriter, interval)
	m.Logf = env.Logf
	if dr, ok := lc.p.(provision.DiskReader); ok {
		// Disk figures from inside each node, never the host's, where
		// node_exporter is absent (docker: ScyllaDB's image from 2026.3).
		m.Inside = func(ctx context.Context, n *cluster.Node) (provision.DiskUsage, error) {
			return dr.ReadDisk(ctx, n.Node)
		}
	}
	return &diskMonitor{m: m}
}

func (d *diskMonitor) Run(ctx context.Context) { _ = d.m.Run(ctx) }

func (d *diskMonitor) Snapshot(ctx context.Context) ([]results.NodeDisk, results.NodeDisk, error) {
	return d.m.Snapshot(ctx)
}

func (d *diskMonitor) ClusterUsagePercent() float64 { return d.m.ClusterUsagePercent() }
func (d *diskMonitor) MaxUsagePercent() float64     { return d.m.MaxUsagePercent() }

func (d *diskMonitor) DataBytes() float64 {
	var b float64
	for _, s := range d.m.Latest() {
		b += s.DiskUsedBytes
	}
	return b
}

// stressLoad adapts the stress package to the runner.
type stressLoad struct {
	p    *plan.Plan
	env  *Env
	dc   string // the DC the nodes report, which the keyspace names
	s    *gocql.Session
	keys atomic.Int64 // keys written by the fills: the workload reads among them
	// failed are the fill's keys whose write failed (not lost when missing).
	failed unacked
	// knee is the concurrency each loader's previous calibration peaked at
	// (one entry in process): the next probe of the same cluster starts
	// there instead of at 1, which skips the levels far below it.
	knee []int
}

// calibrated remembers where each loader's calibration peaked.
func (l *stressLoad) calibrated(cals []stress.Calibration) {
	l.knee = l.knee[:0]
	for _, c := range cals {
		l.knee = append(l.knee, c.Concurrency)
	}
}

// kneeOf is the concurrency loader i's previous calibration peaked at, or 0.
func (l *stressLoad) kneeOf(i int) int {
	if i < len(l.knee) {
		return l.knee[i]
	}
	return 0
}

func newStressLoad(ctx context.Context, env *Env, c Cluster) (*stressLoad, error) {
	// The keyspace must name the DC the nodes are in, as their snitch names
	// it (Ec2Snitch: after the region), not the one the scenario assumed.
	dc, err := c.DataCenter()
	if err != nil {
		return nil, fmt.Errorf("the cluster's data centre: %w", err)
	}
	if dc != env.Plan.Data.DC {
		env.Logf("the nodes report data centre %q (the scenario says %q): the keyspace and the load use %q", dc, env.Plan.Data.DC, dc)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, err := stress.NewSession(cctx, stress.SessionConfig{Hosts: c.Hosts(), LocalDC: dc, Translate: addressTranslator(c)})
	if err != nil {
		return nil, err
	}
	return &stressLoad{p: env.Plan, env: env, dc: dc, s: s}, nil
}

// AddressTranslator is what a Cluster may also do: map the addresses
// nodes report for themselves (in system.peers; private addresses on AWS)
// to the ones the runner reaches them at.
type AddressTranslator interface {
	ReachAddress(addr string) string
}

// addressTranslator is c's translation, nil when it has none.
func addressTranslator(c Cluster) func(string) string {
	if t, ok := c.(AddressTranslator); ok {
		return t.ReachAddress
	}
	return nil
}

// CreateSchema runs the workload model's schema for the plan's keyspace,
// RF and tablets in the DC the nodes report.
func (l *stressLoad) CreateSchema(ctx context.Context) error {
	d := l.p.Data
	m, err := baseJob(l.p, nil, 0).ResolveModel()
	if err != nil {
		return err
	}
	return stress.CreateModelSchema(ctx, l.s, m, stress.SchemaTarget{Keyspace: d.Keyspace, Table: d.Table, RF: d.RF, DC: l.dc, Tablets: d.Tablets})
}

func (l *stressLoad) Fill(ctx context.Context, upTo int64, done func() bool, sink func(results.LatencyRecord), progress func(int64)) (int64, error) {
	start := l.keys.Load()
	if upTo > 0 && upTo <= start {
		return start, nil
	}
	f, err := fillJob(l.p, nil, start).FillSpec()
	if err != nil {
		return start, err
	}
	f.Warn = func(s string) { l.env.Logf("fill: %s", s) }
	f.Failed = l.failed.add
	// Checked often, a round that ends at a key count ends near it (a
	// tenth of a second at full rate is a fraction of a point of disk on
	// an emulated node). progress and done are called in turn, never at once.
	f.CheckEvery = 50 * time.Millisecond
	var written int64
	stop := func() bool { return (upTo > 0 && start+written >= upTo) || done() }
	n, err := stress.RunFill(ctx, l.s, f, stop, stress.Sink(sink), func(k int64) {
		written = k
		progress(start + k)
	})
	l.keys.Add(n)
	return start + n, err
}

// workload is the workload job at rate, in process.
func (l *stressLoad) workload(j stress.Job) (stress.Workload, error) {
	w, err := j.Workload()
	w.Warn = func(s string) { l.env.Logf("workload: %s", s) }
	return w, err
}

// calibrationCeiling is the P99 a calibrated level may reach: the tightest
// steady-state P99 threshold, else 50 ms. A lower ceiling gives a lower
// capacity and so a gentler load_percent.
func (l *stressLoad) calibrationCeiling() time.Duration {
	ceiling := 50.0
	for _, lim := range results.RecoveryTargets(l.env.Plan.Thresholds, nil) {
		ceiling = min(ceiling, lim)
	}
	return time.Duration(ceiling * float64(time.Millisecond))
}

func (l *stressLoad) Calibrate(ctx context.Context) (results.CapacityProbe, error) {
	j := calibrationJob(l.p, nil, l.keys.Load(), l.calibrationCeiling())
	w, err := l.workload(j)
	if err != nil {
		return results.CapacityProbe{}, err
	}
	opts := j.CalibrateOptions()
	opts.Progress = func(s stress.CalibrationStep) {
		l.env.Logf("calibration: concurrency %d → %.0f ops/s, P99 %.2f ms, %d errors (ok=%v)", s.Concurrency, s.OpsPerSec, s.P99MS, s.Errors, s.OK)
	}
	opts.StartConcurrency = l.kneeOf(0)
	c, err := stress.CalibrateWith(ctx, l.s, w, opts)
	l.calibrated([]stress.Calibration{c})
	return l.capacity([]stress.Calibration{c}, err)
}

// probeOf is what calibrations measured together: the capacity, whether it
// saturated the cluster, and the worst host any loader saw while its
// deciding levels ran.
func probeOf(capacity float64, cals []stress.Calibration) results.CapacityProbe {
	p := results.CapacityProbe{CapacityOps: capacity}
	for _, c := range cals {
		lag, busy := c.HostFigures()
		p.LoaderLagMSPerS, p.MachineBusyPct = max(p.LoaderLagMSPerS, lag), max(p.MachineBusyPct, busy)
		p.Unsaturated = p.Unsaturated || (c.LowerBound() && c.MaxOpsPerSec > 0)
	}
	return p
}

// capacity is what calibrations measured together (several loaders probe at
// once, so their maxima add up). When no level stayed under the ceiling, the
// best throughput measured is the saturated capacity: the run goes on with
// it rather than fail.
func (l *stressLoad) capacity(cals []stress.Calibration, err error) (results.CapacityProbe, error) {
	sum, best := 0.0, 0.0
	for _, c := range cals {
		sum += c.MaxOpsPerSec
		top := 0.0
		for _, st := range c.Steps {
			top = max(top, st.OpsPerSec)
		}
		best += top
	}
	for _, c := range cals {
		if c.LowerBound() && c.MaxOpsPerSec > 0 {
			why := "the calibration budget (workload.calibration) ended"
			if c.Stop == stress.StopMaxConcurrency {
				why = "the highest concurrency was reached"
			}
			l.env.Logf("calibration: %s at concurrency %d with P99 still under %s: the cluster was not saturated, its capacity is at least %.0f ops/s", why, c.Steps[len(c.Steps)-1].Concurrency, l.calibrationCeiling(), c.MaxOpsPerSec)
		}
	}
	switch {
	case sum > 0:
		return probeOf(sum, cals), nil
	case best > 0:
		l.env.Logf("calibration: no level kept P99 under %s; using the best throughput measured, %.0f ops/s, as capacity", l.calibrationCeiling(), best)
		return probeOf(best, cals), nil
	case err != nil:
		return results.CapacityProbe{}, err
	}
	return results.CapacityProbe{}, fmt.Errorf("calibration measured no throughput")
}

func (l *stressLoad) Run(ctx context.Context, rate float64, sink func(results.LatencyRecord)) error {
	w, err := l.workload(workloadJob(l.p, nil, l.keys.Load(), rate))
	if err != nil {
		return err
	}
	_, err = stress.Run(ctx, l.s, w, stress.Sink(sink))
	return err
}

func (l *stressLoad) Close() { l.s.Close() }
