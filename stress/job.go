package stress

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/spf13/pflag"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// Job is one job of the load generator: a fixed-rate workload (optionally
// calibrated first), a fill, or a calibration alone. The runner builds it
// from the plan and runs it in process, or splits it between loaders that
// run it as `elasticity stress`. Its one encoding is that command's flags:
// Bind defines them, Args writes them, and every field round-trips.
type Job struct {
	// Model is the workload model's spec (Model.Spec; default "kv", the
	// built-in key/value model, whose settings are the flags --keyspace,
	// --table, --value-size, --mix, --cl-write and --cl-read; other models
	// carry their own and ignore those); "" is "kv".
	Model        string
	Hosts        []string
	Port         int
	DC           string
	Keyspace     string
	Table        string
	ValueMin     int
	ValueMax     int
	WriteCL      string
	ReadCL       string
	WriteRatio   float64 // relative weights of the mix
	ReadRatio    float64
	Rate         float64 // ops/s of the whole job; 0 = closed loop
	Duration     time.Duration
	Concurrency  int // 0: enough for Rate at 20 ms latency, at least 64
	Distribution string
	// Keys is the key range 0..Keys-1 reads and writes use; for a fill, the
	// number of keys to write (0: until Duration or an interrupt).
	Keys int64
	// Source names the loader in every record.
	Source string
	// Fill writes new keys StartKey, StartKey+KeyStride, ... only.
	Fill      bool
	StartKey  int64
	KeyStride int64
	// Loader and Loaders: the job is loader Loader's share of a job split
	// between Loaders (Share); 0 and 0 or 1: the whole job. A workload's
	// loaders draw their own keys (Binding.Loader).
	Loader, Loaders int
	// CalibrateCeiling > 0 probes the capacity under this P99 first;
	// LoadPercent of it becomes the rate, or with CalibrateOnly the
	// calibration is the job's output.
	CalibrateCeiling time.Duration
	CalibrateStep    time.Duration
	CalibrateBudget  time.Duration // 0: no bound on the whole probe
	// CalibrateMaxConcurrency bounds the probe (0: max(Concurrency, 64)).
	CalibrateMaxConcurrency int
	// CalibrateStartConcurrency is the probe's first level (0: 1).
	CalibrateStartConcurrency int
	CalibrateOnly             bool
	LoadPercent               float64
	Interval                  time.Duration
	Timeout                   time.Duration
	MaxLag                    time.Duration
}

// DefaultJob is the job of `elasticity stress` without flags.
func DefaultJob() Job {
	return Job{Model: KVSpec, Port: 9042, Keyspace: "elasticity", Table: "kv", ValueMin: 1024, ValueMax: 1024,
		WriteCL: "QUORUM", ReadCL: "QUORUM", WriteRatio: 1, ReadRatio: 1, Rate: 1000, Duration: 60 * time.Second,
		Distribution: "uniform", Keys: 100000, KeyStride: 1, CalibrateStep: 5 * time.Second,
		Interval: time.Second, Timeout: 10 * time.Second, MaxLag: time.Second}
}

// Bind defines the job's flags on fs, with j's values as their defaults.
func (j *Job) Bind(fs *pflag.FlagSet) {
	fs.Var((*hostsValue)(&j.Hosts), "hosts", "CQL contact points, comma separated (host or host:port)")
	fs.IntVar(&j.Port, "port", j.Port, "CQL port")
	fs.StringVar(&j.Model, "model", j.Model, "workload model spec: kv (the built-in key/value table) or <form>:<text> of a registered form ("+strings.Join(ModelForms(), ", ")+")")
	fs.Var(&mixValue{&j.WriteRatio, &j.ReadRatio}, "mix", "operation ratio, e.g. write=1,read=1 or write=3,read=1 or write=1")
	fs.Var((*rateValue)(&j.Rate), "rate", "target operations per second of the whole generator (e.g. 5000/s, 5k/s); 0 = closed loop")
	fs.DurationVar(&j.Duration, "duration", j.Duration, "how long to apply the workload (0 = until interrupted)")
	fs.IntVar(&j.Concurrency, "concurrency", j.Concurrency, "maximum operations in flight (default: enough for the rate at 20 ms latency, at least 64)")
	fs.StringVar(&j.DC, "dc", j.DC, "data centre for --create-schema and DC-aware routing (default: the contact point's)")
	fs.StringVar(&j.Keyspace, "keyspace", j.Keyspace, "keyspace")
	fs.StringVar(&j.Table, "table", j.Table, "table (key bigint PRIMARY KEY, value blob)")
	fs.Var(&sizeValue{&j.ValueMin, &j.ValueMax}, "value-size", "value size, fixed (1KiB) or ranged (512..4KiB)")
	fs.StringVar(&j.WriteCL, "cl-write", j.WriteCL, "consistency level of writes")
	fs.StringVar(&j.ReadCL, "cl-read", j.ReadCL, "consistency level of reads")
	fs.StringVar(&j.Distribution, "distribution", j.Distribution, "key distribution: uniform, sequential, gaussian, gaussian(S), gaussian(M%,S%)")
	fs.Int64Var(&j.Keys, "keys", j.Keys, "number of keys 0..N-1 that reads and writes use (0 = writes add new keys, reads read those)")
	fs.DurationVar(&j.Interval, "interval", j.Interval, "measurement and print interval")
	fs.DurationVar(&j.Timeout, "timeout", j.Timeout, "client request timeout")
	fs.DurationVar(&j.MaxLag, "max-lag", j.MaxLag, "drop an operation that cannot start this long after its intended start")
	fs.StringVar(&j.Source, "source", j.Source, "loader name written in each record (default: stress)")
	fs.DurationVar(&j.CalibrateCeiling, "calibrate-ceiling", j.CalibrateCeiling, "probe the maximum throughput with P99 under this ceiling before the run")
	fs.Float64Var(&j.LoadPercent, "load-percent", j.LoadPercent, "with --calibrate-ceiling: run at this percent of the calibrated maximum")
	fs.DurationVar(&j.CalibrateStep, "calibrate-step", j.CalibrateStep, "duration of each calibration level")
	fs.DurationVar(&j.CalibrateBudget, "calibrate-budget", j.CalibrateBudget, "bound the whole calibration (0 = none): a level that would not end within it is not started")
	fs.IntVar(&j.CalibrateMaxConcurrency, "calibrate-max-concurrency", j.CalibrateMaxConcurrency, "highest concurrency the calibration probes (default: --concurrency, at least 64)")
	fs.IntVar(&j.CalibrateStartConcurrency, "calibrate-start-concurrency", j.CalibrateStartConcurrency, "first concurrency the calibration probes: it doubles from there while P99 stays under the ceiling, and halves from there until it does (default 1)")
	fs.BoolVar(&j.CalibrateOnly, "calibrate-only", j.CalibrateOnly, "with --calibrate-ceiling: print the calibration as one JSON line on standard output and exit")
	fs.BoolVar(&j.Fill, "fill", j.Fill, "only write new keys --start-key, +--key-stride, ... closed loop (or at --rate when given) until --duration passes, at least --keys are written (when given) or it is interrupted")
	fs.Int64Var(&j.StartKey, "start-key", j.StartKey, "with --fill: the first key")
	fs.Int64Var(&j.KeyStride, "key-stride", j.KeyStride, "with --fill: distance between keys (loader i of N: --start-key i --key-stride N)")
	fs.IntVar(&j.Loader, "loader", j.Loader, "this loader's index among --loaders sharing one workload (0-based): each draws its own keys")
	fs.IntVar(&j.Loaders, "loaders", j.Loaders, "how many loaders share the workload (0 or 1: this one alone)")
}

// Args encodes the job as the stress command's flags: every flag Bind
// defines, so that the job a loader parses is exactly this one.
func (j Job) Args() []string {
	fs := pflag.NewFlagSet("job", pflag.ContinueOnError)
	j.Bind(fs)
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}

// ParseJob decodes Args (on top of DefaultJob) and validates the result.
func ParseJob(args []string) (Job, error) {
	j := DefaultJob()
	fs := pflag.NewFlagSet("job", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	j.Bind(fs)
	if err := fs.Parse(args); err != nil {
		return Job{}, err
	}
	if fs.NArg() > 0 {
		return Job{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return j, j.Validate()
}

// Validate checks what the flags cannot check one by one.
func (j Job) Validate() error {
	if len(j.Hosts) == 0 {
		return errors.New("--hosts is required")
	}
	if _, err := j.ResolveModel(); err != nil {
		return err
	}
	if _, err := ParseCL("--cl-write", j.WriteCL); err != nil {
		return err
	}
	if _, err := ParseCL("--cl-read", j.ReadCL); err != nil {
		return err
	}
	if _, err := keygen.Parse(j.Distribution); err != nil {
		return err
	}
	switch {
	case j.WriteRatio < 0 || j.ReadRatio < 0 || !(j.WriteRatio+j.ReadRatio > 0):
		return fmt.Errorf("--mix write=%g,read=%g: weights must be non-negative and not sum to zero", j.WriteRatio, j.ReadRatio)
	case j.ValueMin <= 0 || j.ValueMax < j.ValueMin:
		return fmt.Errorf("--value-size %d..%d: want a positive size, maximum not below minimum", j.ValueMin, j.ValueMax)
	case j.Duration < 0:
		return errors.New("--duration must not be negative")
	case j.Interval <= 0:
		return errors.New("--interval must be positive")
	case j.Concurrency < 0:
		return errors.New("--concurrency must not be negative")
	case j.Keys < 0:
		return errors.New("--keys must not be negative")
	case j.CalibrateStartConcurrency < 0:
		return fmt.Errorf("--calibrate-start-concurrency %d: must not be negative", j.CalibrateStartConcurrency)
	case j.LoadPercent < 0 || j.LoadPercent > 1000:
		return errors.New("--load-percent must be within 0..1000")
	case j.LoadPercent > 0 && j.CalibrateCeiling <= 0:
		return errors.New("--load-percent needs --calibrate-ceiling")
	case j.CalibrateOnly && j.CalibrateCeiling <= 0:
		return errors.New("--calibrate-only needs --calibrate-ceiling")
	case j.Fill && j.CalibrateCeiling > 0:
		return errors.New("--fill cannot be combined with --calibrate-ceiling")
	case j.StartKey < 0:
		return errors.New("--start-key must not be negative")
	case j.KeyStride < 1:
		return errors.New("--key-stride must be at least 1")
	case j.Loaders < 0 || j.Loader < 0 || (j.Loader > 0 && j.Loader >= j.Loaders):
		return fmt.Errorf("--loader %d of --loaders %d: want 0 <= loader < loaders", j.Loader, j.Loaders)
	}
	return nil
}

// Share is loader i's part of the job split between n loaders: the rate
// and concurrency divided (at least 1 in flight), a fill's keys interleaved
// (loader i writes StartKey+i, then every n-th key), a workload's key
// stream its own (Loader, Loaders: see Binding.Loader).
func (j Job) Share(i, n int) Job {
	if n <= 1 {
		return j
	}
	j.Hosts = append([]string(nil), j.Hosts...)
	j.Loader, j.Loaders = i, n
	j.Rate /= float64(n)
	if j.Concurrency > 0 {
		j.Concurrency = max(1, int(math.Ceil(float64(j.Concurrency)/float64(n))))
	}
	if j.Fill {
		j.StartKey += int64(i) * j.KeyStride
		j.KeyStride *= int64(n)
	}
	return j
}

// inflight is Concurrency, or enough for Rate by Little's law at a
// pessimistic 20 ms per operation, at least 64.
func (j Job) inflight() int {
	if j.Concurrency > 0 {
		return j.Concurrency
	}
	return max(64, int(math.Ceil(j.Rate*0.02)))
}

// Workload is the job's workload at its rate.
func (j Job) Workload() (Workload, error) {
	wcl, err := ParseCL("--cl-write", j.WriteCL)
	if err != nil {
		return Workload{}, err
	}
	rcl, err := ParseCL("--cl-read", j.ReadCL)
	if err != nil {
		return Workload{}, err
	}
	m, err := j.ResolveModel()
	if err != nil {
		return Workload{}, err
	}
	return Workload{
		Model:    m,
		Keyspace: j.Keyspace, Table: j.Table, WriteRatio: j.WriteRatio, ReadRatio: j.ReadRatio,
		Rate: j.Rate, Concurrency: j.inflight(), WriteCL: wcl, ReadCL: rcl,
		Distribution: j.Distribution, KeyCount: j.Keys, ValueMin: j.ValueMin, ValueMax: j.ValueMax,
		Interval: j.Interval, Source: j.Source, MaxLag: j.MaxLag, Loader: j.Loader, Loaders: j.Loaders,
	}, nil
}

// FillSpec is the job's fill: new keys from StartKey every KeyStride, at
// Rate (0: closed loop).
func (j Job) FillSpec() (Fill, error) {
	wcl, err := ParseCL("--cl-write", j.WriteCL)
	if err != nil {
		return Fill{}, err
	}
	m, err := j.ResolveModel()
	if err != nil {
		return Fill{}, err
	}
	return Fill{
		Model:    m,
		Keyspace: j.Keyspace, Table: j.Table, ValueSize: j.ValueMin, ValueMax: j.ValueMax,
		Concurrency: j.inflight(), RateCap: j.Rate, CL: wcl, Interval: j.Interval, Source: j.Source,
		StartKey: j.StartKey, Stride: j.KeyStride,
	}, nil
}

// MaxModelSpec bounds a spec: it travels to loaders as one argument
// (--model=SPEC), and Linux refuses an argument over 128 KiB (MAX_ARG_STRLEN).
const MaxModelSpec = 120 << 10

// ResolveModel is the job's model: ParseModel of its spec, the built-in
// one with the job's keyspace, table, values, mix and consistency levels.
func (j Job) ResolveModel() (Model, error) {
	if len(j.Model) > MaxModelSpec {
		return nil, fmt.Errorf("--model: a spec of %d bytes is longer than the %d a loader's command line takes", len(j.Model), MaxModelSpec)
	}
	if strings.ContainsRune(j.Model, 0) {
		return nil, errors.New("--model: a spec cannot hold a NUL byte (it is a command-line argument)")
	}
	spec := j.Model
	if spec == "" {
		spec = KVSpec
	}
	m, err := ParseModel(spec)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	if _, ok := m.(KV); !ok {
		return m, nil
	}
	wcl, err := ParseCL("--cl-write", j.WriteCL)
	if err != nil {
		return nil, err
	}
	rcl, err := ParseCL("--cl-read", j.ReadCL)
	if err != nil {
		return nil, err
	}
	return KV{Keyspace: j.Keyspace, Table: j.Table, ValueMin: j.ValueMin, ValueMax: j.ValueMax,
		WriteCL: wcl, ReadCL: rcl, WriteRatio: j.WriteRatio, ReadRatio: j.ReadRatio}, nil
}

// CalibrateOptions are the job's calibration settings.
func (j Job) CalibrateOptions() CalibrateOptions {
	mc := j.CalibrateMaxConcurrency
	if mc <= 0 {
		mc = max(j.inflight(), 64)
	}
	return CalibrateOptions{Ceiling: j.CalibrateCeiling, Step: j.CalibrateStep, Budget: j.CalibrateBudget, MaxConcurrency: mc, StartConcurrency: j.CalibrateStartConcurrency}
}

// ParseCL reads a consistency level; flag names the setting in the error.
func ParseCL(flag, s string) (gocql.Consistency, error) {
	cl, err := gocql.ParseConsistencyWrapper(strings.ToUpper(strings.TrimSpace(s)))
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a consistency level (ONE, QUORUM, LOCAL_QUORUM, ALL ...)", flag, s)
	}
	return cl, nil
}

// ParseMix reads "write=1,read=1".
func ParseMix(s string) (write, read float64, err error) {
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

// ParseRate reads "5000/s", "5k/s", "5000" or "0".
func ParseRate(s string) (float64, error) {
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

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// The flag values: each String is what its Set reads back.

type hostsValue []string

func (h *hostsValue) String() string { return strings.Join(*h, ",") }
func (h *hostsValue) Type() string   { return "hosts" }
func (h *hostsValue) Set(s string) error {
	*h = nil
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*h = append(*h, p)
		}
	}
	return nil
}

type mixValue struct{ write, read *float64 }

func (m *mixValue) String() string {
	if m.write == nil {
		return ""
	}
	return "write=" + formatFloat(*m.write) + ",read=" + formatFloat(*m.read)
}
func (m *mixValue) Type() string { return "mix" }
func (m *mixValue) Set(s string) error {
	w, r, err := ParseMix(s)
	if err != nil {
		return err
	}
	*m.write, *m.read = w, r
	return nil
}

type rateValue float64

func (r *rateValue) String() string { return formatFloat(float64(*r)) }
func (r *rateValue) Type() string   { return "rate" }
func (r *rateValue) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = rateValue(v)
	return nil
}

type sizeValue struct{ min, max *int }

func (v *sizeValue) String() string {
	if v.min == nil {
		return ""
	}
	if *v.max > *v.min {
		return strconv.Itoa(*v.min) + ".." + strconv.Itoa(*v.max)
	}
	return strconv.Itoa(*v.min)
}
func (v *sizeValue) Type() string { return "size" }
func (v *sizeValue) Set(s string) error {
	lo, hi, err := keygen.ParseSizeRange(s)
	if err != nil {
		return err
	}
	*v.min, *v.max = lo, hi
	return nil
}
