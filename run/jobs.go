package run

import (
	"time"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/stress"
)

// The plan's load as stress jobs: the one description that the in-process
// load runs and that loaders get (split with Job.Share, sent as flags).

// baseJob is what every job of the run shares: the cluster, the table,
// values, consistency, mix and the keys written so far.
func baseJob(p *plan.Plan, hosts []string, keys int64) stress.Job {
	d, w := p.Data, p.Load
	j := stress.DefaultJob()
	j.Model = w.ModelSpec
	j.Hosts, j.DC, j.Keyspace, j.Table = hosts, d.DC, d.Keyspace, d.Table
	j.ValueMin, j.ValueMax = d.ValueMin, d.ValueMax
	j.WriteCL, j.ReadCL = w.WriteCL, w.ReadCL
	j.WriteRatio, j.ReadRatio = w.MixWrite, w.MixRead
	j.Concurrency, j.Distribution = w.Concurrency, w.Distribution
	j.Keys = keys
	j.Duration = 0 // until the runner stops it
	return j
}

// fillJob writes new keys from start until stopped, at fill_rate (0: as
// fast as the cluster takes them) with fill_concurrency writes in flight.
func fillJob(p *plan.Plan, hosts []string, start int64) stress.Job {
	j := baseJob(p, hosts, 0)
	j.Fill, j.StartKey = true, start
	j.Rate, j.Concurrency = p.Data.FillRate, p.Data.FillConcurrency
	j.Source = "fill"
	return j
}

// workloadJob is the mixed workload at rate among the keys written.
func workloadJob(p *plan.Plan, hosts []string, keys int64, rate float64) stress.Job {
	j := baseJob(p, hosts, keys)
	j.Rate = rate
	j.Source = "workload"
	return j
}

// calibrationMaxConcurrency is the highest concurrency a calibration
// probes, split between the loaders when there are several.
const calibrationMaxConcurrency = 512

// calibrationJob probes the capacity (closed loop) with P99 under ceiling,
// within the plan's (scaled) calibration time: a few levels fit it, and
// levels shorter than a few seconds measure bursts, not a sustainable rate.
func calibrationJob(p *plan.Plan, hosts []string, keys int64, ceiling time.Duration) stress.Job {
	j := baseJob(p, hosts, keys)
	j.Rate = 0
	j.CalibrateCeiling = ceiling
	j.CalibrateStep, j.CalibrateBudget = plan.CalibrationSchedule(p.Load.Calibration)
	j.CalibrateMaxConcurrency = calibrationMaxConcurrency
	j.Source = "calibration"
	return j
}
