package stress

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/keygen"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// Sink receives one record per operation type per interval, never
// concurrently (the caller typically appends it to latency.jsonl).
type Sink func(results.LatencyRecord)

// Workload is a fixed-rate mixed read/write workload on the key/value table.
type Workload struct {
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
}

// Summary is the outcome of a workload run.
type Summary struct {
	sched.Summary
	// ReadMisses counts successful reads that found no row (the key was not written).
	ReadMisses int64 `json:"read_misses"`
}

func (w *Workload) normalise() error {
	if err := errors.Join(checkIdent("keyspace", w.Keyspace), checkIdent("table", w.Table)); err != nil {
		return err
	}
	if w.WriteRatio < 0 || w.ReadRatio < 0 || w.WriteRatio+w.ReadRatio <= 0 ||
		math.IsNaN(w.WriteRatio+w.ReadRatio) || math.IsInf(w.WriteRatio+w.ReadRatio, 0) {
		return fmt.Errorf("workload mix write=%v,read=%v: ratios must be non-negative and not both zero", w.WriteRatio, w.ReadRatio)
	}
	if w.KeyCount < 0 {
		return fmt.Errorf("workload key count %d is negative", w.KeyCount)
	}
	if w.ValueMin == 0 && w.ValueMax == 0 {
		w.ValueMin, w.ValueMax = 1024, 1024
	}
	if w.ValueMax == 0 {
		w.ValueMax = w.ValueMin
	}
	if w.WriteCL == 0 {
		w.WriteCL = gocql.Quorum
	}
	if w.ReadCL == 0 {
		w.ReadCL = gocql.Quorum
	}
	return nil
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
	op, misses, err := cqlMixOp(s, &w)
	if err != nil {
		return nil, err
	}
	return newRunner(w, op, misses, sink)
}

// newRunner builds the schedule of a normalised workload around op, which
// takes the operation type indexes of mixOps.
func newRunner(w Workload, op sched.Op, misses *atomic.Int64, sink Sink) (*Runner, error) {
	cfg := sched.Config{
		Ops: mixOps, Weights: []float64{w.WriteRatio, w.ReadRatio},
		Rate: w.Rate, Concurrency: w.Concurrency, MaxLag: w.MaxLag, Interval: w.Interval,
		Source: w.Source, Classify: ClassifyError, Sink: sink, Warn: w.Warn, Seed: w.Seed,
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

// Operation type indexes of a mixed workload.
const (
	opWrite = 0
	opRead  = 1
)

var mixOps = []string{results.OpWrite, results.OpRead}

// keyPicker chooses the keys of a mixed workload.
type keyPicker struct {
	dist    keygen.Distribution
	n       int64
	nextNew atomic.Int64 // KeyCount 0: next key to add
	written atomic.Int64 // KeyCount 0: keys added successfully
}

func (k *keyPicker) writeKey(seq uint64) int64 {
	if k.n > 0 {
		return k.dist.Key(seq, k.n)
	}
	return k.nextNew.Add(1) - 1
}

func (k *keyPicker) readKey(seq uint64) int64 {
	n := k.n
	if n == 0 {
		if n = k.written.Load(); n == 0 {
			return 0
		}
	}
	return k.dist.Key(seq, n)
}

// discard reads a blob column without keeping it.
type discard struct{}

func (*discard) UnmarshalCQL(gocql.TypeInfo, []byte) error { return nil }

var discardValue discard

// bigintArg and blobArg are bound once to a reused query and changed before
// each execution: no boxing, no marshalling allocation per operation.
type bigintArg struct {
	v   int64
	buf [8]byte
}

func (a *bigintArg) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	binary.BigEndian.PutUint64(a.buf[:], uint64(a.v))
	return a.buf[:], nil
}

type blobArg struct{ b []byte }

func (a *blobArg) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return a.b, nil }

// stmts are one goroutine's prepared queries, executed again and again
// (gocql allows re-executing a Query once the previous execution returned):
// a fresh Query per operation, with WithContext's clone, cost six
// allocations and ~600 bytes per operation.
type stmts struct {
	ctx         context.Context
	write, read *gocql.Query
	key         bigintArg
	val         blobArg
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

// cqlMixOp normalises w and returns the CQL operation of the mixed workload.
func cqlMixOp(s *gocql.Session, w *Workload) (sched.Op, *atomic.Int64, error) {
	if err := w.normalise(); err != nil {
		return nil, nil, err
	}
	dist, err := keygen.Parse(w.Distribution)
	if err != nil {
		return nil, nil, err
	}
	vals, err := keygen.NewValues(w.ValueMin, w.ValueMax)
	if err != nil {
		return nil, nil, err
	}
	keys := &keyPicker{dist: dist, n: w.KeyCount}
	qp := &queryPool{
		s:      s,
		insert: fmt.Sprintf("INSERT INTO %s.%s (key, value) VALUES (?, ?)", w.Keyspace, w.Table),
		sel:    fmt.Sprintf("SELECT value FROM %s.%s WHERE key = ?", w.Keyspace, w.Table),
		wcl:    w.WriteCL, rcl: w.ReadCL,
	}
	misses := new(atomic.Int64)
	op := func(ctx context.Context, typ int, seq uint64) error {
		st := qp.get(ctx)
		defer qp.pool.Put(st)
		if typ == opWrite {
			k := keys.writeKey(seq)
			st.key.v, st.val.b = k, vals.ForKey(k) // the key's own value: overwrites keep it valid
			err := st.write.Exec()
			if err == nil && keys.n == 0 {
				keys.written.Add(1)
			}
			return err
		}
		st.key.v = keys.readKey(seq)
		err := st.read.Scan(&discardValue)
		if errors.Is(err, gocql.ErrNotFound) {
			misses.Add(1)
			return nil
		}
		return err
	}
	return op, misses, nil
}
