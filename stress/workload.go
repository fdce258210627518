package stress

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/cqlarg"
	"github.com/elasticity-dev/elasticity/stress/keygen"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// Sink receives one record per operation type per interval, never
// concurrently (the caller typically appends it to latency.jsonl).
type Sink func(results.LatencyRecord)

// Workload is a model's operations at a fixed rate: Model, or when it is
// nil the built-in key/value model of the fields Keyspace ... ReadCL.
type Workload struct {
	Model                 Model
	Keyspace, Table       string
	WriteRatio, ReadRatio float64 // relative weights, e.g. 1 and 1
	// Rate is the target of intended operations per second (open model); 0 runs closed-loop.
	Rate        float64
	Concurrency int // maximum operations in flight; default 64
	WriteCL     gocql.Consistency
	ReadCL      gocql.Consistency
	// Distribution of keys: sequential, uniform (default) or gaussian (see keygen.Parse).
	Distribution string
	// KeyCount is the number of keys known to exist (0..KeyCount-1). Writes
	// overwrite and reads read among them. 0: writes add keys 0, 1, 2 ... and
	// reads draw among the keys written so far.
	KeyCount           int64
	ValueMin, ValueMax int           // value size range in bytes; ValueMax 0 = ValueMin; both 0 = 1 KiB
	Interval           time.Duration // measurement interval; default 1 s
	Source             string        // results.LatencyRecord.Source
	// MaxLag is the catch-up bound of the open model (see package sched); default 1 s.
	MaxLag time.Duration
	// Warn receives loud warnings (concurrency too low for the rate ...).
	Warn func(string)
	Seed uint64
	// Loader and Loaders: this runner is loader Loader of Loaders sharing
	// one job (Job.Share): the model sees the job's global sequence numbers
	// and its binding says which loader it is, so loaders draw their own keys.
	Loader, Loaders int
}

// Summary is the outcome of a workload run.
type Summary struct {
	sched.Summary
	// ReadMisses counts successful reads that found no row (the key was not written).
	ReadMisses int64 `json:"read_misses"`
}

func (w *Workload) normalise() error {
	if w.KeyCount < 0 {
		return fmt.Errorf("workload key count %d is negative", w.KeyCount)
	}
	if w.Model != nil {
		return nil
	}
	k, err := w.kv().normalised()
	if err != nil {
		return err
	}
	w.ValueMin, w.ValueMax, w.WriteCL, w.ReadCL = k.ValueMin, k.ValueMax, k.WriteCL, k.ReadCL
	return nil
}

// kv is the built-in model of w's own fields.
func (w *Workload) kv() KV {
	return KV{Keyspace: w.Keyspace, Table: w.Table, ValueMin: w.ValueMin, ValueMax: w.ValueMax,
		WriteCL: w.WriteCL, ReadCL: w.ReadCL, WriteRatio: w.WriteRatio, ReadRatio: w.ReadRatio}
}

// model is w.Model, or the built-in model of w's fields.
func (w *Workload) model() Model {
	if w.Model != nil {
		return w.Model
	}
	return w.kv()
}

// binding is what w's operations are bound with.
func (w *Workload) binding() Binding {
	return Binding{Keys: w.KeyCount, Distribution: w.Distribution, Seed: w.Seed, Loader: w.Loader, Loaders: w.Loaders}
}

// bind normalises w and binds its model's operations on s; misses counts
// the built-in model's reads that found no row.
func (w *Workload) bind(ctx context.Context, s *gocql.Session) (sched.Op, *atomic.Int64, error) {
	if err := w.normalise(); err != nil {
		return nil, nil, err
	}
	b := w.binding()
	if k, ok := w.model().(KV); ok {
		op, misses, err := k.bindCounting(s, b)
		return globalSeq(op, b), misses, err
	}
	op, err := w.Model.Bind(ctx, s, b)
	if err != nil {
		return nil, nil, fmt.Errorf("binding the %s workload: %w", w.Model.Describe().Kind, err)
	}
	return globalSeq(op, b), new(atomic.Int64), nil
}

// globalSeq is op receiving the job's sequence numbers rather than this
// loader's (keygen.GlobalSeq): whatever a model draws from seq then
// differs between the loaders of one job, and together they draw what one
// loader alone would. Alone: op itself, today's stream.
func globalSeq(op sched.Op, b Binding) sched.Op {
	i, n := b.Share()
	if op == nil || n <= 1 {
		return op
	}
	return func(ctx context.Context, typ int, seq uint64) error {
		return op(ctx, typ, keygen.GlobalSeq(seq, i, n))
	}
}

// Runner runs one Workload; SetRate may be called while Run runs.
type Runner struct {
	sch    *sched.Scheduler
	misses *atomic.Int64
}

// NewRunner prepares a workload run on session s.
func NewRunner(s *gocql.Session, w Workload, sink Sink) (*Runner, error) {
	if s == nil {
		return nil, errors.New("workload: nil session")
	}
	op, misses, err := w.bind(context.Background(), s)
	if err != nil {
		return nil, err
	}
	return newRunner(w, op, misses, sink)
}

// newRunner builds the schedule of a normalised workload around op, which
// takes the indexes of its model's Ops.
func newRunner(w Workload, op sched.Op, misses *atomic.Int64, sink Sink) (*Runner, error) {
	names, weights := opNamesWeights(w.model().Ops())
	cfg := sched.Config{
		Ops: names, Weights: weights,
		Rate: w.Rate, Concurrency: w.Concurrency, MaxLag: w.MaxLag, Interval: w.Interval,
		Source: w.Source, Classify: ClassifyError, Sink: classSink(w.model().Ops(), sink), Warn: w.Warn, Seed: w.Seed,
	}
	sch, err := sched.New(cfg, op)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return &Runner{sch: sch, misses: misses}, nil
}

// Run applies the workload until ctx ends and returns its summary.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	sum, err := r.sch.Run(ctx)
	return Summary{Summary: sum, ReadMisses: r.misses.Load()}, err
}

// SetRate changes the target rate of the running schedule (0 = closed loop).
func (r *Runner) SetRate(opsPerSec float64) error { return r.sch.SetRate(opsPerSec) }

// Rate is the current target rate.
func (r *Runner) Rate() float64 { return r.sch.Rate() }

// Run applies workload w on session s until ctx ends (open model, see package sched).
func Run(ctx context.Context, s *gocql.Session, w Workload, sink Sink) (Summary, error) {
	r, err := NewRunner(s, w, sink)
	if err != nil {
		return Summary{}, err
	}
	return r.Run(ctx)
}

// opNamesWeights are the schedule's operation names and weights.
func opNamesWeights(ops []OpSpec) (names []string, weights []float64) {
	for _, o := range ops {
		names, weights = append(names, o.Name), append(weights, o.Weight)
	}
	return names, weights
}

// classSink sets the class of the records of operations whose name is not
// their class (results.LatencyRecord.Class); the built-in model's records
// (write, read) stay as they were.
func classSink(ops []OpSpec, sink Sink) Sink {
	if sink == nil {
		return nil
	}
	class := map[string]string{}
	for _, o := range ops {
		if o.Class != o.Name {
			class[o.Name] = o.Class
		}
	}
	if len(class) == 0 {
		return sink
	}
	return func(r results.LatencyRecord) {
		r.Class = class[r.Op]
		sink(r)
	}
}

// stmts are one goroutine's prepared queries, executed again and again
// (gocql allows re-executing a Query once the previous execution returned):
// a fresh Query per operation, with WithContext's clone, cost six
// allocations and ~600 bytes per operation.
type stmts struct {
	ctx         context.Context
	write, read *gocql.Query
	key         cqlarg.Bigint
	val         cqlarg.Blob
}

// queryPool hands the workers' operations their reusable statements.
type queryPool struct {
	pool     sync.Pool
	s        *gocql.Session
	insert   string
	sel      string
	wcl, rcl gocql.Consistency
}

func (p *queryPool) get(ctx context.Context) *stmts {
	st, _ := p.pool.Get().(*stmts)
	if st == nil || st.ctx != ctx {
		st = &stmts{ctx: ctx}
		st.write = p.s.Query(p.insert, &st.key, &st.val).WithContext(ctx).Consistency(p.wcl).Idempotent(true)
		if p.sel != "" {
			st.read = p.s.Query(p.sel, &st.key).WithContext(ctx).Consistency(p.rcl).Idempotent(true)
		}
	}
	return st
}
