package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// WriteText prints the plan for a person to check before a run.
func (p *Plan) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	for _, section := range []func(*errWriter){p.textHeader, p.textNodes, p.textFill, p.textWorkload,
		p.textValidation, p.textPhases, p.textThresholds, p.textTimeouts} {
		section(ew)
	}
	return ew.err
}

// textHeader prints the scenario, the backend and the database.
func (p *Plan) textHeader(ew *errWriter) {
	pf := ew.pf
	pf("Plan: %s", p.Scenario)
	if p.Source != "" {
		pf(" (%s)", p.Source)
	}
	pf("\n")
	if p.Description != "" {
		pf("  %s\n", p.Description)
	}
	pf("Backend: %s", p.Backend)
	if p.Emulated {
		pf(" (emulated nodes: figures are shapes, not ScyllaDB's; durations × %g, disks %g MiB per catalog GB", p.TimeScale, p.StorageScaleMiBPerGB)
		if p.LocalDataDir != "" {
			pf("; node data: %s", p.LocalDataDir)
		}
		pf(")")
	} else if p.TimeScale != 1 || p.StorageScaleMiBPerGB > 0 {
		pf(" (real database nodes on scaled disks and durations: durations × %g", p.TimeScale)
		if p.StorageScaleMiBPerGB > 0 {
			pf(", disks %g MiB per catalog GB", p.StorageScaleMiBPerGB)
		}
		pf(")")
	}
	pf("\n")
	db := p.Flavour
	if p.Version != "" {
		db += " " + p.Version
	}
	tablets := "vnodes"
	if p.TabletsInitial > 0 {
		tablets = fmt.Sprintf("%d initial tablets", p.TabletsInitial)
	}
	pf("Database: %s, %d rack(s), RF=%d, %s, %s.%s, values %s\n\n", db, len(p.Racks), p.RF, tablets, p.Keyspace, p.Table, p.ValueSize)
}

// textNodes prints the node groups.
func (p *Plan) textNodes(ew *errWriter) {
	pf := ew.pf
	pf("Nodes\n")
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  rack\tcount\tinstance type\tvCPUs\tdisk per node\tadded by\n")
	for _, n := range p.Nodes {
		by := n.AddedBy
		if by == "" {
			by = "initial cluster"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%s\t%s\n", n.Rack, n.Count, n.InstanceType, n.VCPUs, scenarios.HumanBytes(n.DiskBytes), by)
	}
	tw.Flush()
	pf("  initial cluster capacity: %s\n\n", scenarios.HumanBytes(p.InitialCapacityBytes))
}

// textFill prints the fill phases.
func (p *Plan) textFill(ew *errWriter) {
	pf := ew.pf
	if len(p.Fill) > 0 {
		pf("Fill (RF=%d; on-disk figures include every replica)\n", p.RF)
		tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  phase\ttarget\ton disk at target\tto write\tunique data\t%ss\t≈ time\thold\n", p.Workload.Model.Unit())
		for _, f := range p.Fill {
			fmt.Fprintf(tw, "  %s\t%g%%\t%s\t%s\t%s\t%d\t%s\t%s\n", f.Name, f.TargetPercent, scenarios.HumanBytes(f.TargetBytes),
				scenarios.HumanBytes(f.WriteBytes), scenarios.HumanBytes(f.UniqueBytes), f.Rows, secs(f.EstimatedSeconds), secs(f.HoldSeconds))
		}
		tw.Flush()
		pf("\n")
	} else {
		pf("Fill: none (the workload starts on an empty table)\n\n")
	}
}

// textWorkload prints the workload and its load generators.
func (p *Plan) textWorkload(ew *errWriter) {
	pf := ew.pf
	wl := p.Workload
	rate := fmt.Sprintf("%g ops/s", wl.RateOpsPerS)
	if wl.RateOpsPerS == 0 {
		rate = fmt.Sprintf("%g%% of measured capacity (≈ %.0f of an estimated %.0f ops/s)", wl.LoadPercent, wl.EstimatedRateOpsPerS, wl.EstimatedCapacityOps)
	}
	pf("Workload: write:read %g:%g at %s, concurrency %d, consistency write %s / read %s, %s keys\n",
		round2(wl.WriteRatio*100), round2(wl.ReadRatio*100), rate, wl.Concurrency, wl.WriteConsistency, wl.ReadConsistency, wl.Distribution)
	if !wl.Model.IsBuiltin() {
		p.textModel(pf)
	}
	switch {
	case wl.Loaders > 0 && wl.LoaderInstanceType != "":
		pf("Load generators: %d × %s running elasticity stress (fills, calibration and workload split between them, records merged)\n\n", wl.Loaders, wl.LoaderInstanceType)
	case wl.Loaders > 0:
		pf("Load generators: %d elasticity stress processes (fills, calibration and workload split between them, records merged)\n\n", wl.Loaders)
	default:
		pf("Load generator: the runner itself\n\n")
	}
}

// textValidation prints the data validation: what it reads, counted in
// the model's keys (rows, or partitions of rows), or why it is not done.
func (p *Plan) textValidation(ew *errWriter) {
	pf := ew.pf
	v, mp := p.Validate, p.Workload.Model
	switch {
	case !v.Enabled() || len(p.Fill) == 0:
		pf("Data validation: off\n\n")
	case mp != nil && mp.NotValidated != "":
		pf("Data validation: not done: %s\n\n", mp.NotValidated)
	default:
		count := func(n int64, all string) string {
			if n < 0 {
				return all
			}
			return fmt.Sprint(n)
		}
		when := "after the final hold"
		if v.AfterEachStep {
			when = "after each nemesis step and after the final hold"
		}
		pf("Data validation: %s, %s %ss read back and %s of %d token ranges scanned at %s; any missing or wrong %s fails the run\n\n",
			when, count(v.Sample, "all"), mp.Unit(), count(int64(v.TokenRanges), "all"), results.RingParts, v.Consistency, mp.Unit())
	}
}

// textPhases prints the phases in order.
func (p *Plan) textPhases(ew *errWriter) {
	pf := ew.pf
	pf("Phases (≈ marks estimates)\n")
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tstart\tphase\tname\tduration\tcycles\tdetail\n")
	for i, ph := range p.Phases {
		d := secs(ph.Seconds)
		if ph.Estimated {
			d = "≈" + d
		}
		cycles := ""
		if ph.Cycles > 0 {
			cycles = fmt.Sprint(ph.Cycles)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, secs(ph.StartSeconds), ph.Phase, ph.Name, d, cycles, ph.Detail)
	}
	tw.Flush()
	pf("\n")
}

// textThresholds prints the thresholds and baseline rules.
func (p *Plan) textThresholds(ew *errWriter) {
	pf := ew.pf
	if len(p.Thresholds) > 0 || len(p.BaselineRules) > 0 {
		pf("Thresholds\n")
		tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  cycle\tmetric\tlimit\n")
		for _, t := range p.Thresholds {
			op := "<="
			if t.Floor {
				op = ">="
			}
			limit := fmt.Sprintf("%s %g", op, t.Limit)
			switch {
			case t.RatioToSteady:
				limit = fmt.Sprintf("%s %gx %s", op, t.Limit, results.SteadyStateCycle)
			case t.RatioToPlan:
				limit = fmt.Sprintf("%s %gx plan", op, t.Limit)
			case t.Metric == results.MetricDurationSeconds:
				limit = op + " " + secs(t.Limit)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Cycle, t.Metric, limit)
		}
		for _, b := range p.BaselineRules {
			fmt.Fprintf(tw, "  %s\t%s\t%s against the best previous run\n", b.Cycle, b.Metric, b)
		}
		tw.Flush()
		pf("\n")
	} else {
		pf("Thresholds: none (the run passes unless it fails)\n\n")
	}
}

// textTimeouts prints the timeouts, the backend's lines and the estimated wall time.
func (p *Plan) textTimeouts(ew *errWriter) {
	pf := ew.pf
	var to []string
	for _, t := range p.Timeouts {
		to = append(to, t.Name+" "+secs(t.Seconds))
	}
	pf("Timeouts (wall clock): %s\n", strings.Join(to, ", "))

	section := ""
	for _, l := range p.Extra {
		if l.Section != section {
			section = l.Section
			pf("\n%s\n", section)
		}
		pf("  %s: %s\n", l.Label, l.Value)
	}
	pf("\nEstimated wall time: ≈ %s\n", secs(p.EstimatedSeconds))
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// secs prints seconds as a short duration ("18s", "1m30s", "2h").
func secs(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Second {
		d = d.Round(time.Second)
	} else {
		d = d.Round(10 * time.Millisecond)
	}
	return scenarios.Duration(d).String()
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

// pf prints to the writer (the first error is kept in err).
func (e *errWriter) pf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
