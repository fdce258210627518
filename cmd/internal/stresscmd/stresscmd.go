// Package stresscmd is the `stress` command (the load generator's CLI),
// shared by elasticity and the slim elasticity-loader binary that loader
// machines run.
package stresscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/cmd/internal/command"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
	_ "github.com/elasticity-dev/elasticity/stress/models" // every workload model form --model may name
)

// stressFlags are the stress command's flags: the job (stress.Job, whose
// flags are its encoding between the runner and loaders) and what this
// process does with it besides (schema, prefill, where records go).
type stressFlags struct {
	job          stress.Job
	out          string
	createSchema bool
	rf           int
	tablets      int
	prefill      bool
	summaryJSON  string
	keysSet      bool
	rateSet      bool
}

// New returns the stress command writing to stdout and stderr.
func New(stdout, stderr io.Writer) *cobra.Command {
	e := &streams{Stdout: stdout, Stderr: stderr}
	f := &stressFlags{job: stress.DefaultJob()}
	c := &cobra.Command{
		Use:   "stress",
		Short: "Run the load generator against a CQL cluster",
		Long: `Run a fixed-rate (open model) mixed read/write workload against any CQL cluster
(emulated nodes or real ScyllaDB/Cassandra) and print one line per interval and a
final summary. Response time is measured from each operation's intended start,
service time from its actual send; an operation that cannot start within --max-lag
of its intended start is dropped and counted, never skipped silently.

With --calibrate-ceiling the cluster's maximum throughput under that P99 is probed
first (closed loop) and --load-percent of it becomes the rate.

--model chooses the workload: kv (the built-in key/value table, default), a
cassandra-stress command line (cs:LINE), a user profile (profile:..., as
elasticity plan's scenarios build it) or a scylla-bench mode (sb:mode=...);
--create-schema and --prefill then use the model's schema and fill.`,
		Example: `  elasticity stress --hosts 127.0.0.2,127.0.0.3 --create-schema --rf 3 --prefill --keys 100000 \
      --mix write=1,read=1 --rate 5000/s --duration 60s --out latency.jsonl
  elasticity stress --hosts 10.0.0.5 --calibrate-ceiling 10ms --load-percent 70 --duration 5m
  elasticity stress --hosts 127.0.0.2 --create-schema --rf 1 --prefill --keys 10000 --rate 500/s \
      --model 'cs:cassandra-stress mixed ratio(write=1,read=2) cl=QUORUM -col size=FIXED(512) n=FIXED(1)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.keysSet = cmd.Flags().Changed("keys")
			f.rateSet = cmd.Flags().Changed("rate")
			return runStress(cmd.Context(), e, f)
		},
	}
	fl := c.Flags()
	f.job.Bind(fl)
	fl.StringVar(&f.out, "out", "", "append per-interval latency records (latency.jsonl format) to this file; - writes them to standard output and the console to standard error")
	fl.BoolVar(&f.createSchema, "create-schema", false, "create the keyspace and table if they do not exist")
	fl.IntVar(&f.rf, "rf", 3, "replication factor for --create-schema")
	fl.IntVar(&f.tablets, "tablets", 0, "initial tablets for --create-schema (0 = cluster default, -1 = vnodes)")
	fl.BoolVar(&f.prefill, "prefill", false, "write keys 0..N-1 first (closed loop) so that reads find them")
	fl.StringVar(&f.summaryJSON, "summary-json", "", "write the final summary as JSON to this file")
	return c
}

// streams are where the command writes.
type streams struct{ Stdout, Stderr io.Writer }

func runStress(ctx context.Context, e *streams, f *stressFlags) error {
	invalid := func(err error) error { return command.WithCode(command.ExitInvalid, fmt.Errorf("stress: %w", err)) }
	j := &f.job
	if err := j.Validate(); err != nil {
		return invalid(err)
	}
	switch {
	case f.prefill && j.Keys == 0:
		return invalid(errors.New("--prefill needs --keys N"))
	case j.Fill && f.prefill:
		return invalid(errors.New("--fill cannot be combined with --prefill or --calibrate-ceiling"))
	}
	if j.Fill {
		// A fill is closed loop unless a rate is asked for, and writes until
		// --duration or an interrupt unless --keys is given.
		if !f.rateSet {
			j.Rate = 0
		}
		if !f.keysSet {
			j.Keys = 0
		}
	}
	if j.Source == "" {
		j.Source = "stress"
	}
	w, err := j.Workload()
	if err != nil {
		return invalid(err)
	}
	w.Warn = func(m string) { fmt.Fprintln(e.Stderr, m) }
	wcl, rcl := w.WriteCL, w.ReadCL
	write, read := j.WriteRatio, j.ReadRatio
	// Human-readable output goes to standard error when standard output
	// carries data (records or the calibration) for a program to read.
	say := e.Stdout
	if f.out == "-" || j.CalibrateOnly {
		say = e.Stderr
	}
	if f.createSchema {
		// Validate names before connecting.
		if _, err := w.Model.Schema(schemaTarget(f, "x")); err != nil {
			return invalid(err)
		}
	}

	runErr := func(err error) error {
		if ctx.Err() != nil {
			return command.WithCode(command.ExitInterrupted, fmt.Errorf("stress: interrupted: %w", err))
		}
		return command.WithCode(command.ExitRunError, fmt.Errorf("stress: %w", err))
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	sess, err := stress.NewSession(cctx, stress.SessionConfig{Hosts: j.Hosts, Port: j.Port, Timeout: j.Timeout, LocalDC: j.DC})
	cancel()
	if err != nil {
		return runErr(err)
	}
	defer sess.Close()

	if f.createSchema {
		if err := stress.CreateModelSchema(ctx, sess, w.Model, schemaTarget(f, j.DC)); err != nil {
			return runErr(err)
		}
		info := w.Model.Describe()
		fmt.Fprintf(say, "schema %s.%s ready (RF %d)\n", info.Keyspace, info.Table, f.rf)
	}

	var out *results.JSONLWriter
	var sinkErr error
	switch f.out {
	case "":
	case "-":
		out = results.NewJSONLStream(e.Stdout, "standard output")
	default:
		if out, err = results.OpenJSONL(f.out); err != nil {
			return runErr(err)
		}
		defer out.Close()
	}
	console := stress.NewConsole(say, len(w.Model.Ops())) // one line per interval: every operation's record
	sink := func(r results.LatencyRecord) {
		if out != nil {
			if err := out.Write(r); err != nil && sinkErr == nil {
				sinkErr = err
				fmt.Fprintf(e.Stderr, "stress: %v\n", err)
			}
		}
		if r.Op != results.OpFill {
			console.Record(r)
		}
	}

	if j.Fill {
		fill, err := j.FillSpec()
		if err != nil {
			return invalid(err)
		}
		fill.CheckEvery = 50 * time.Millisecond
		return runFillOnly(ctx, say, j, sess, fill, sink, func() error { return sinkErr }, runErr)
	}

	if f.prefill {
		fmt.Fprintf(say, "prefilling keys 0..%d\n", j.Keys-1)
		var written atomic.Int64
		fillStart := time.Now()
		var lastPrint time.Time
		lastN := int64(-1)
		n, err := stress.RunFill(ctx, sess, stress.Fill{
			Model: w.Model, Keyspace: j.Keyspace, Table: j.Table, ValueSize: j.ValueMin, ValueMax: j.ValueMax,
			Concurrency: w.Concurrency, CL: wcl, Interval: j.Interval, Source: j.Source,
			CheckEvery: 50 * time.Millisecond,
		}, func() bool { return written.Load() >= j.Keys }, sink, func(n int64) {
			written.Store(n)
			shown := min(n, j.Keys)
			if now := time.Now(); shown != lastN && (now.Sub(lastPrint) >= time.Second || n >= j.Keys) {
				lastPrint, lastN = now, shown
				fmt.Fprintf(say, "prefill: %d/%d keys (%.0f keys/s)\n", shown, j.Keys, float64(n)/now.Sub(fillStart).Seconds())
			}
		})
		if err != nil {
			return runErr(err)
		}
		if ctx.Err() != nil {
			return command.WithCode(command.ExitInterrupted, errors.New("stress: interrupted during prefill"))
		}
		if written.Load() < j.Keys {
			return runErr(fmt.Errorf("prefill wrote %d of %d keys (%d attempted)", written.Load(), j.Keys, n))
		}
	}

	if j.CalibrateCeiling > 0 {
		fmt.Fprintf(say, "calibrating: closed loop, P99 ceiling %v, %v per level\n", j.CalibrateCeiling, j.CalibrateStep)
		opts := j.CalibrateOptions()
		opts.Progress = func(s stress.CalibrationStep) {
			fmt.Fprintf(say, "  concurrency %4d: %9.0f ops/s, p99 %8.2f ms, errors %d\n", s.Concurrency, s.OpsPerSec, s.P99MS, s.Errors)
		}
		cal, err := stress.CalibrateWith(ctx, sess, w, opts)
		if err != nil {
			return runErr(err)
		}
		fmt.Fprintf(say, "calibrated maximum: %.0f ops/s (concurrency %d)\n", cal.MaxOpsPerSec, cal.Concurrency)
		if j.CalibrateOnly {
			b, err := json.Marshal(cal)
			if err != nil {
				return runErr(err)
			}
			_, err = fmt.Fprintf(e.Stdout, "%s\n", b)
			return err
		}
		if j.LoadPercent > 0 {
			w.Rate = cal.MaxOpsPerSec * j.LoadPercent / 100
			fmt.Fprintf(say, "rate: %.0f%% of it = %.0f ops/s\n", j.LoadPercent, w.Rate)
		}
	}

	if _, kv := w.Model.(stress.KV); kv {
		fmt.Fprintf(say, "stress: %s, mix write=%g,read=%g, concurrency %d, %s keys %d, values %s, CL write %s read %s\n",
			rateLabel(w.Rate), write, read, w.Concurrency, j.Distribution, j.Keys, valueSize(j), wcl, rcl)
	} else {
		fmt.Fprintf(say, "stress: %s, %s, concurrency %d, %s keys %d\n",
			rateLabel(w.Rate), describeOps(w.Model), w.Concurrency, j.Distribution, j.Keys)
	}
	rctx := ctx
	if j.Duration > 0 {
		var c context.CancelFunc
		rctx, c = context.WithTimeout(ctx, j.Duration)
		defer c()
	}
	sum, err := stress.Run(rctx, sess, w, sink)
	console.Flush()
	stress.PrintSummary(say, sum)
	if sum.ReadMisses > 0 && !f.prefill {
		fmt.Fprintf(say, "  note: %d reads found no row; --prefill writes keys 0..%d first\n", sum.ReadMisses, j.Keys-1)
	}
	if f.summaryJSON != "" {
		b, jerr := json.MarshalIndent(sum, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(f.summaryJSON, append(b, '\n'), 0o644)
		}
		if jerr != nil {
			err = errors.Join(err, fmt.Errorf("writing the summary: %w", jerr))
		}
	}
	if err != nil {
		return runErr(err)
	}
	if sinkErr != nil {
		return runErr(sinkErr)
	}
	if ctx.Err() != nil {
		return command.WithCode(command.ExitInterrupted, errors.New("stress: interrupted"))
	}
	return nil
}

// runFillOnly is `stress --fill`: new keys until --duration, --keys or an
// interrupt; one loader among several fills every --key-stride'th key.
func runFillOnly(ctx context.Context, say io.Writer, j *stress.Job, sess *gocql.Session, fill stress.Fill,
	sink func(results.LatencyRecord), sinkErr func() error, runErr func(error) error) error {
	fctx := ctx
	if j.Duration > 0 {
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(ctx, j.Duration)
		defer cancel()
	}
	var written atomic.Int64
	done := func() bool { return j.Keys > 0 && written.Load() >= j.Keys }
	fmt.Fprintf(say, "fill: keys %d, %d, ... (stride %d), %s\n", j.StartKey, j.StartKey+j.KeyStride, j.KeyStride, rateLabel(fill.RateCap))
	start := time.Now()
	n, err := stress.RunFill(fctx, sess, fill, done, sink, func(k int64) { written.Store(k) })
	fmt.Fprintf(say, "fill: %d keys written of %d attempted in %s (next --start-key %d)\n",
		written.Load(), n, time.Since(start).Round(time.Millisecond), j.StartKey+n*j.KeyStride)
	switch {
	case err != nil:
		return runErr(err)
	case sinkErr() != nil:
		return runErr(sinkErr())
	case ctx.Err() != nil:
		return command.WithCode(command.ExitInterrupted, errors.New("stress: interrupted during fill"))
	}
	return nil
}

func rateLabel(r float64) string {
	if r <= 0 {
		return "closed loop"
	}
	return fmt.Sprintf("%.0f ops/s", r)
}

// valueSize prints the job's value size as --value-size takes it.
func valueSize(j *stress.Job) string {
	if j.ValueMax > j.ValueMin {
		return fmt.Sprintf("%d..%d", j.ValueMin, j.ValueMax)
	}
	return fmt.Sprintf("%d", j.ValueMin)
}

// schemaTarget is where --create-schema puts the model's schema.
func schemaTarget(f *stressFlags, dc string) stress.SchemaTarget {
	j := &f.job
	return stress.SchemaTarget{Keyspace: j.Keyspace, Table: j.Table, DC: dc, RF: f.rf, Tablets: f.tablets}
}

// describeOps is a model's kind and operations with their shares.
func describeOps(m stress.Model) string {
	info := m.Describe()
	var total float64
	for _, o := range info.Ops {
		total += o.Weight
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s.%s:", info.Kind, info.Keyspace, info.Table)
	for i, o := range info.Ops {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s (%s, %.0f%%, CL %s)", sep, o.Name, o.Class, 100*o.Weight/max(total, 1e-300), o.CL)
	}
	return b.String()
}
