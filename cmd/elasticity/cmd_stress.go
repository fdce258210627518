package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

func init() { addCommand(newStressCmd) }

type stressFlags struct {
	hosts        []string
	port         int
	mix          string
	rate         string
	duration     time.Duration
	concurrency  int
	out          string
	createSchema bool
	rf           int
	dc           string
	tablets      int
	keyspace     string
	table        string
	valueSize    string
	clWrite      string
	clRead       string
	distribution string
	keys         int64
	prefill      bool
	interval     time.Duration
	timeout      time.Duration
	maxLag       time.Duration
	source       string
	ceiling      time.Duration
	loadPercent  float64
	calStep      time.Duration
	summaryJSON  string
	fill         bool
	startKey     int64
	keyStride    int64
	keysSet      bool
	rateSet      bool
	calOnly      bool
}

func newStressCmd(e *env) *cobra.Command {
	f := &stressFlags{}
	c := &cobra.Command{
		Use:   "stress",
		Short: "Run the load generator against a CQL cluster",
		Long: `Run a fixed-rate (open model) mixed read/write workload against any CQL cluster
(emulated nodes or real ScyllaDB/Cassandra) and print one line per interval and a
final summary. Response time is measured from each operation's intended start,
service time from its actual send; an operation that cannot start within --max-lag
of its intended start is dropped and counted, never skipped silently.

With --calibrate-ceiling the cluster's maximum throughput under that P99 is probed
first (closed loop) and --load-percent of it becomes the rate.`,
		Example: `  elasticity stress --hosts 127.0.0.2,127.0.0.3 --create-schema --rf 3 --prefill --keys 100000 \
      --mix write=1,read=1 --rate 5000/s --duration 60s --out latency.jsonl
  elasticity stress --hosts 10.0.0.5 --calibrate-ceiling 10ms --load-percent 70 --duration 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.keysSet = cmd.Flags().Changed("keys")
			f.rateSet = cmd.Flags().Changed("rate")
			return runStress(cmd.Context(), e, f)
		},
	}
	fl := c.Flags()
	fl.StringSliceVar(&f.hosts, "hosts", nil, "CQL contact points, comma separated (host or host:port)")
	fl.IntVar(&f.port, "port", 9042, "CQL port")
	fl.StringVar(&f.mix, "mix", "write=1,read=1", "operation ratio, e.g. write=1,read=1 or write=3,read=1 or write=1")
	fl.StringVar(&f.rate, "rate", "1000/s", "target operations per second of the whole generator (e.g. 5000/s, 5k/s); 0 = closed loop")
	fl.DurationVar(&f.duration, "duration", 60*time.Second, "how long to apply the workload (0 = until interrupted)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "maximum operations in flight (default: enough for the rate at 20 ms latency, at least 64)")
	fl.StringVar(&f.out, "out", "", "append per-interval latency records (latency.jsonl format) to this file; - writes them to standard output and the console to standard error")
	fl.BoolVar(&f.createSchema, "create-schema", false, "create the keyspace and table if they do not exist")
	fl.IntVar(&f.rf, "rf", 3, "replication factor for --create-schema")
	fl.StringVar(&f.dc, "dc", "", "data centre for --create-schema and DC-aware routing (default: the contact point's)")
	fl.IntVar(&f.tablets, "tablets", 0, "initial tablets for --create-schema (0 = cluster default, -1 = vnodes)")
	fl.StringVar(&f.keyspace, "keyspace", "elasticity", "keyspace")
	fl.StringVar(&f.table, "table", "kv", "table (key bigint PRIMARY KEY, value blob)")
	fl.StringVar(&f.valueSize, "value-size", "1KiB", "value size, fixed (1KiB) or ranged (512..4KiB)")
	fl.StringVar(&f.clWrite, "cl-write", "QUORUM", "consistency level of writes")
	fl.StringVar(&f.clRead, "cl-read", "QUORUM", "consistency level of reads")
	fl.StringVar(&f.distribution, "distribution", "uniform", "key distribution: uniform, sequential, gaussian, gaussian(S)")
	fl.Int64Var(&f.keys, "keys", 100000, "number of keys 0..N-1 that reads and writes use (0 = writes add new keys, reads read those)")
	fl.BoolVar(&f.prefill, "prefill", false, "write keys 0..N-1 first (closed loop) so that reads find them")
	fl.DurationVar(&f.interval, "interval", time.Second, "measurement and print interval")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "client request timeout")
	fl.DurationVar(&f.maxLag, "max-lag", time.Second, "drop an operation that cannot start this long after its intended start")
	fl.StringVar(&f.source, "source", "", "loader name written in each record (default: stress)")
	fl.DurationVar(&f.ceiling, "calibrate-ceiling", 0, "probe the maximum throughput with P99 under this ceiling before the run")
	fl.Float64Var(&f.loadPercent, "load-percent", 0, "with --calibrate-ceiling: run at this percent of the calibrated maximum")
	fl.DurationVar(&f.calStep, "calibrate-step", 5*time.Second, "duration of each calibration level")
	fl.StringVar(&f.summaryJSON, "summary-json", "", "write the final summary as JSON to this file")
	fl.BoolVar(&f.fill, "fill", false, "only write new keys --start-key, +--key-stride, ... closed loop (or at --rate when given) until --duration passes, at least --keys are written (when given) or it is interrupted")
	fl.Int64Var(&f.startKey, "start-key", 0, "with --fill: the first key")
	fl.Int64Var(&f.keyStride, "key-stride", 1, "with --fill: distance between keys (loader i of N: --start-key i --key-stride N)")
	fl.BoolVar(&f.calOnly, "calibrate-only", false, "with --calibrate-ceiling: print the calibration as one JSON line on standard output and exit")
	return c
}

// parseMix reads "write=1,read=1".
func parseMix(s string) (write, read float64, err error) {
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok {
			return 0, 0, fmt.Errorf("--mix %q: %q is not op=weight", s, part)
		}
		v, perr := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if perr != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, 0, fmt.Errorf("--mix %q: weight %q of %s is not a non-negative number", s, val, name)
		}
		if seen[name] {
			return 0, 0, fmt.Errorf("--mix %q: %s given twice", s, name)
		}
		seen[name] = true
		switch name {
		case results.OpWrite:
			write = v
		case results.OpRead:
			read = v
		default:
			return 0, 0, fmt.Errorf("--mix %q: unknown operation %q (want write and/or read)", s, name)
		}
	}
	if write+read <= 0 {
		return 0, 0, fmt.Errorf("--mix %q: weights sum to zero", s)
	}
	return write, read, nil
}

// parseRate reads "5000/s", "5k/s", "5000" or "0".
func parseRate(s string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ops/s"), "/s")
	mult := 1.0
	if strings.HasSuffix(t, "k") {
		t, mult = strings.TrimSuffix(t, "k"), 1000
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("--rate %q: want operations per second such as 5000/s or 5k/s", s)
	}
	return v * mult, nil
}

func parseCL(flag, s string) (gocql.Consistency, error) {
	cl, err := gocql.ParseConsistencyWrapper(strings.ToUpper(strings.TrimSpace(s)))
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a consistency level (ONE, QUORUM, LOCAL_QUORUM, ALL ...)", flag, s)
	}
	return cl, nil
}

func runStress(ctx context.Context, e *env, f *stressFlags) error {
	invalid := func(err error) error { return withCode(ExitInvalid, fmt.Errorf("stress: %w", err)) }
	if len(f.hosts) == 0 {
		return invalid(errors.New("--hosts is required"))
	}
	write, read, err := parseMix(f.mix)
	if err != nil {
		return invalid(err)
	}
	rate, err := parseRate(f.rate)
	if err != nil {
		return invalid(err)
	}
	vmin, vmax, err := keygen.ParseSizeRange(f.valueSize)
	if err != nil {
		return invalid(fmt.Errorf("--value-size: %w", err))
	}
	wcl, err := parseCL("--cl-write", f.clWrite)
	if err != nil {
		return invalid(err)
	}
	rcl, err := parseCL("--cl-read", f.clRead)
	if err != nil {
		return invalid(err)
	}
	if _, err := keygen.Parse(f.distribution); err != nil {
		return invalid(err)
	}
	switch {
	case f.duration < 0:
		return invalid(errors.New("--duration must not be negative"))
	case f.interval <= 0:
		return invalid(errors.New("--interval must be positive"))
	case f.concurrency < 0:
		return invalid(errors.New("--concurrency must not be negative"))
	case f.keys < 0:
		return invalid(errors.New("--keys must not be negative"))
	case f.prefill && f.keys == 0:
		return invalid(errors.New("--prefill needs --keys N"))
	case f.loadPercent < 0 || f.loadPercent > 1000:
		return invalid(errors.New("--load-percent must be within 0..1000"))
	case f.loadPercent > 0 && f.ceiling <= 0:
		return invalid(errors.New("--load-percent needs --calibrate-ceiling"))
	case f.calOnly && f.ceiling <= 0:
		return invalid(errors.New("--calibrate-only needs --calibrate-ceiling"))
	case f.fill && (f.prefill || f.ceiling > 0):
		return invalid(errors.New("--fill cannot be combined with --prefill or --calibrate-ceiling"))
	case f.startKey < 0:
		return invalid(errors.New("--start-key must not be negative"))
	case f.keyStride < 1:
		return invalid(errors.New("--key-stride must be at least 1"))
	}
	// Human-readable output goes to standard error when standard output
	// carries data (records or the calibration) for a program to read.
	say := e.Stdout
	if f.out == "-" || f.calOnly {
		say = e.Stderr
	}
	if f.concurrency == 0 {
		// Little's law at a pessimistic 20 ms per operation.
		f.concurrency = max(64, int(math.Ceil(rate*0.02)))
	}
	if f.source == "" {
		f.source = "stress"
	}
	w := stress.Workload{
		Keyspace: f.keyspace, Table: f.table, WriteRatio: write, ReadRatio: read,
		Rate: rate, Concurrency: f.concurrency, WriteCL: wcl, ReadCL: rcl,
		Distribution: f.distribution, KeyCount: f.keys, ValueMin: vmin, ValueMax: vmax,
		Interval: f.interval, Source: f.source, MaxLag: f.maxLag,
		Warn: func(m string) { fmt.Fprintln(e.Stderr, m) },
	}
	if f.createSchema {
		// Validate names before connecting.
		if _, err := (stress.Schema{Keyspace: f.keyspace, Table: f.table, RF: f.rf, DC: "x"}).Statements(); err != nil {
			return invalid(err)
		}
	}

	runErr := func(err error) error {
		if ctx.Err() != nil {
			return withCode(ExitInterrupted, fmt.Errorf("stress: interrupted: %w", err))
		}
		return withCode(ExitRunError, fmt.Errorf("stress: %w", err))
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	sess, err := stress.NewSession(cctx, stress.SessionConfig{Hosts: f.hosts, Port: f.port, Timeout: f.timeout, LocalDC: f.dc})
	cancel()
	if err != nil {
		return runErr(err)
	}
	defer sess.Close()

	if f.createSchema {
		if err := stress.CreateSchema(ctx, sess, stress.Schema{Keyspace: f.keyspace, Table: f.table, RF: f.rf, DC: f.dc, Tablets: f.tablets}); err != nil {
			return runErr(err)
		}
		fmt.Fprintf(say, "schema %s.%s ready (RF %d)\n", f.keyspace, f.table, f.rf)
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
	console := stress.NewConsole(say, 2)
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

	if f.fill {
		if !f.rateSet {
			rate = 0 // a fill is closed loop unless a rate is asked for
		}
		return runFillOnly(ctx, say, f, sess, stress.Fill{
			Keyspace: f.keyspace, Table: f.table, ValueSize: vmin, ValueMax: vmax,
			Concurrency: f.concurrency, RateCap: rate, CL: wcl, Interval: f.interval, Source: f.source,
			StartKey: f.startKey, Stride: f.keyStride, CheckEvery: 50 * time.Millisecond,
		}, sink, func() error { return sinkErr }, runErr)
	}

	if f.prefill {
		fmt.Fprintf(say, "prefilling keys 0..%d\n", f.keys-1)
		var written atomic.Int64
		fillStart := time.Now()
		var lastPrint time.Time
		lastN := int64(-1)
		n, err := stress.RunFill(ctx, sess, stress.Fill{
			Keyspace: f.keyspace, Table: f.table, ValueSize: vmin, ValueMax: vmax,
			Concurrency: f.concurrency, CL: wcl, Interval: f.interval, Source: f.source,
			CheckEvery: 50 * time.Millisecond,
		}, func() bool { return written.Load() >= f.keys }, sink, func(n int64) {
			written.Store(n)
			shown := min(n, f.keys)
			if now := time.Now(); shown != lastN && (now.Sub(lastPrint) >= time.Second || n >= f.keys) {
				lastPrint, lastN = now, shown
				fmt.Fprintf(say, "prefill: %d/%d keys (%.0f keys/s)\n", shown, f.keys, float64(n)/now.Sub(fillStart).Seconds())
			}
		})
		if err != nil {
			return runErr(err)
		}
		if ctx.Err() != nil {
			return withCode(ExitInterrupted, errors.New("stress: interrupted during prefill"))
		}
		if written.Load() < f.keys {
			return runErr(fmt.Errorf("prefill wrote %d of %d keys (%d attempted)", written.Load(), f.keys, n))
		}
	}

	if f.ceiling > 0 {
		fmt.Fprintf(say, "calibrating: closed loop, P99 ceiling %v, %v per level\n", f.ceiling, f.calStep)
		cal, err := stress.CalibrateWith(ctx, sess, w, stress.CalibrateOptions{
			Ceiling: f.ceiling, Step: f.calStep, MaxConcurrency: max(f.concurrency, 64),
			Progress: func(s stress.CalibrationStep) {
				fmt.Fprintf(say, "  concurrency %4d: %9.0f ops/s, p99 %8.2f ms, errors %d\n", s.Concurrency, s.OpsPerSec, s.P99MS, s.Errors)
			},
		})
		if err != nil {
			return runErr(err)
		}
		fmt.Fprintf(say, "calibrated maximum: %.0f ops/s (concurrency %d)\n", cal.MaxOpsPerSec, cal.Concurrency)
		if f.calOnly {
			b, err := json.Marshal(cal)
			if err != nil {
				return runErr(err)
			}
			_, err = fmt.Fprintf(e.Stdout, "%s\n", b)
			return err
		}
		if f.loadPercent > 0 {
			w.Rate = cal.MaxOpsPerSec * f.loadPercent / 100
			fmt.Fprintf(say, "rate: %.0f%% of it = %.0f ops/s\n", f.loadPercent, w.Rate)
		}
	}

	fmt.Fprintf(say, "stress: %s, mix write=%g,read=%g, concurrency %d, %s keys %d, values %s, CL write %s read %s\n",
		rateLabel(w.Rate), write, read, w.Concurrency, f.distribution, f.keys, f.valueSize, wcl, rcl)
	rctx := ctx
	if f.duration > 0 {
		var c context.CancelFunc
		rctx, c = context.WithTimeout(ctx, f.duration)
		defer c()
	}
	sum, err := stress.Run(rctx, sess, w, sink)
	console.Flush()
	stress.PrintSummary(say, sum)
	if sum.ReadMisses > 0 && !f.prefill {
		fmt.Fprintf(say, "  note: %d reads found no row; --prefill writes keys 0..%d first\n", sum.ReadMisses, f.keys-1)
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
		return withCode(ExitInterrupted, errors.New("stress: interrupted"))
	}
	return nil
}

// runFillOnly is `stress --fill`: new keys until --duration, --keys or an
// interrupt; one loader among several fills every --key-stride'th key.
func runFillOnly(ctx context.Context, say io.Writer, f *stressFlags, sess *gocql.Session, fill stress.Fill,
	sink func(results.LatencyRecord), sinkErr func() error, runErr func(error) error) error {
	fctx := ctx
	if f.duration > 0 {
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	var written atomic.Int64
	done := func() bool { return f.keysSet && f.keys > 0 && written.Load() >= f.keys }
	fmt.Fprintf(say, "fill: keys %d, %d, ... (stride %d), %s\n", f.startKey, f.startKey+f.keyStride, f.keyStride, rateLabel(fill.RateCap))
	start := time.Now()
	n, err := stress.RunFill(fctx, sess, fill, done, sink, func(k int64) { written.Store(k) })
	fmt.Fprintf(say, "fill: %d keys written of %d attempted in %s (next --start-key %d)\n",
		written.Load(), n, time.Since(start).Round(time.Millisecond), f.startKey+n*f.keyStride)
	switch {
	case err != nil:
		return runErr(err)
	case sinkErr() != nil:
		return runErr(sinkErr())
	case ctx.Err() != nil:
		return withCode(ExitInterrupted, errors.New("stress: interrupted during fill"))
	}
	return nil
}

func rateLabel(r float64) string {
	if r <= 0 {
		return "closed loop"
	}
	return fmt.Sprintf("%.0f ops/s", r)
}
