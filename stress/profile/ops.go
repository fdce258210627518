package profile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/cqlarg"
	"github.com/elasticity-dev/elasticity/stress/keygen"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// maxBatch is the most statements one batch carries (SchemaInsert splits
// at 65535).
const maxBatch = 65535

// newArgs are n bind markers' values, each encoded in place and reused.
func newArgs(n int) ([]*cqlarg.Blob, []any) {
	as, vs := make([]*cqlarg.Blob, n), make([]any, n)
	for i := range as {
		as[i] = &cqlarg.Blob{B: make([]byte, 0, 16)} // non-nil: an empty value is not null
		vs[i] = as[i]
	}
	return as, vs
}

// engine is a model bound on a session: the statements, the partition
// picker and the workers' reusable state.
type engine struct {
	m          *Model
	s          *gocql.Session
	t          *table
	insertCQL  string
	insertCols []binder
	// valueIndex is, per insert marker, its column's 1-based place among
	// the value columns (0: a key column), the order the row-population
	// ratio leaves the last ones out in; values is their number.
	valueIndex []int
	values     int
	batchType  gocql.BatchType
	insertCL   gocql.Consistency
	keys       *stress.KeyPicker // partitions, as the built-in picks keys
	seed       uint64
	pool       sync.Pool
	// whole makes every insert write all of its partitions' rows (the fill).
	whole bool
	// scans are the token range queries' scans, by operation index.
	scans []*scans
	// loader of loaders sharing the job (stress.Binding.Share): each scans
	// its own token ranges.
	loader, loaders int
}

// worker is one goroutine's statements and values, reused op after op
// (gocql allows re-executing a Query once its previous execution returned).
type worker struct {
	ctx     context.Context
	counts  []int64
	insert  *gocql.Query
	rowArgs [][]*cqlarg.Blob // per batch row: the insert's markers
	rowVals [][]any
	entries []gocql.BatchEntry
	batch   *gocql.Batch
	queries []*gocql.Query
	qargs   [][]*cqlarg.Blob
}

func (m *Model) newEngine(s *gocql.Session, b stress.Binding) (*engine, error) {
	if s == nil {
		return nil, errors.New("profile: nil session")
	}
	if b.Keys < 0 {
		return nil, fmt.Errorf("profile: key count %d is negative", b.Keys)
	}
	keys, err := stress.NewKeyPicker(b)
	if err != nil {
		return nil, err
	}
	t := m.prof.table
	cols := append(append([]*column{}, t.static...), t.regular...)
	cql, marks := m.prof.insertCQL(cols)
	e := &engine{m: m, s: s, t: t, insertCQL: cql, keys: keys, seed: b.Seed, insertCL: gocql.Quorum}
	e.loader, e.loaders = b.Share()
	for _, c := range marks {
		e.insertCols = append(e.insertCols, t.binderOf(c))
	}
	e.valueIndex, e.values = valueOrder(cols, marks)
	switch m.prof.Insert.BatchType {
	case "UNLOGGED":
		e.batchType = gocql.UnloggedBatch
	case "COUNTER":
		e.batchType = gocql.CounterBatch
	}
	if t.counter {
		e.batchType = gocql.CounterBatch // a batch of counter updates must be one
	}
	if m.prof.Insert.CL != "" {
		e.insertCL, _ = parseCL(m.prof.Insert.CL)
	}
	return e, nil
}

// worker returns a worker for ctx (the statements carry their context).
func (e *engine) worker(ctx context.Context) *worker {
	w, _ := e.pool.Get().(*worker)
	if w != nil && w.ctx == ctx {
		return w
	}
	w = &worker{ctx: ctx, counts: make([]int64, len(e.t.ck))}
	as, vs := newArgs(len(e.insertCols))
	w.rowArgs, w.rowVals = [][]*cqlarg.Blob{as}, [][]any{vs}
	w.insert = e.s.Query(e.insertCQL, vs...).WithContext(ctx).Consistency(e.insertCL).Idempotent(!e.t.counter)
	w.queries, w.qargs = make([]*gocql.Query, len(e.m.ops)), make([][]*cqlarg.Blob, len(e.m.ops))
	for i, o := range e.m.ops {
		if o.scan != nil {
			as, vs := newArgs(2)
			w.qargs[i] = as
			w.queries[i] = e.s.Query(o.scan.CQL, vs...).WithContext(ctx).Consistency(o.CL).PageSize(o.scan.PageSize).Idempotent(true)
			continue
		}
		if o.query == nil {
			continue
		}
		as, vs := newArgs(len(o.query.binders))
		w.qargs[i] = as
		w.queries[i] = e.s.Query(o.query.CQL, vs...).WithContext(ctx).Consistency(o.CL).Idempotent(!o.query.write)
	}
	return w
}

// bind is Model.Bind: the ops(...) mix.
func (m *Model) bind(s *gocql.Session, b stress.Binding) (sched.Op, error) {
	e, err := m.newEngine(s, b)
	if err != nil {
		return nil, err
	}
	if err := e.prepareScans(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, typ int, seq uint64) error {
		w := e.worker(ctx)
		defer e.pool.Put(w)
		if typ < 0 || typ >= len(m.ops) {
			return fmt.Errorf("profile: operation %d of %d", typ, len(m.ops))
		}
		if m.ops[typ].scan != nil {
			return e.scanOp(w, typ)
		}
		if m.ops[typ].query == nil {
			return e.insertOp(w, seq)
		}
		return e.queryOp(w, typ, seq)
	}, nil
}

// fill is Model.Fill: the seq-th partition of the fill, all of its rows,
// in batches of the insert's size.
func (m *Model) fill(s *gocql.Session, b stress.Binding) (sched.Op, error) {
	e, err := m.newEngine(s, stress.Binding{Distribution: b.Distribution, Seed: b.Seed})
	if err != nil {
		return nil, err
	}
	e.whole = true
	start, stride := b.StartKey, max(b.Stride, 1)
	return func(ctx context.Context, _ int, seq uint64) error {
		w := e.worker(ctx)
		defer e.pool.Put(w)
		p := start + int64(seq)*stride
		err := e.writePartition(w, p, seq)
		if err != nil && b.Failed != nil {
			b.Failed(p)
		}
		return err
	}, nil
}

// insertOp is SchemaInsert: partitions from the insert's partitions
// distribution, from each the select ratio of its rows, in one batch.
func (e *engine) insertOp(w *worker, seq uint64) error {
	os := keygen.Mix64(seq ^ e.seed ^ 0x1f83d9abfb41bd6b)
	n := int(max(1, e.m.prof.Insert.Partitions.Sample(os)))
	rows := 0
	for i := 0; i < n; i++ {
		p := e.keys.WriteKey(seq*uint64(n) + uint64(i))
		var err error
		if rows, err = e.addRows(w, rows, p, os+uint64(i), e.population(os+uint64(i))); err != nil {
			return err
		}
	}
	err := e.flush(w, rows)
	if err == nil && e.keys.Adds() {
		e.keys.Added(int64(n))
	}
	return err
}

// writePartition writes all of partition p's rows (the fill).
func (e *engine) writePartition(w *worker, p int64, seq uint64) error {
	total := e.t.rowCounts(p, w.counts)
	per := int64(max(1, math.Ceil(e.m.prof.Insert.Select.Max()*float64(total))))
	per = min(per, maxBatch)
	pop := e.population(keygen.Mix64(seq ^ e.seed ^ 0x1f83d9abfb41bd6b))
	for from := int64(0); from < total; from += per {
		k := min(per, total-from)
		for r := int64(0); r < k; r++ {
			e.setRow(w, int(r), p, from+r, pop)
		}
		if err := e.flush(w, int(k)); err != nil {
			return err
		}
	}
	return nil
}

// addRows adds partition p's selected rows to w's batch after its first
// `have` rows (flushing at maxBatch) and returns the batch's rows.
func (e *engine) addRows(w *worker, have int, p int64, os uint64, pop float64) (int, error) {
	total := e.t.rowCounts(p, w.counts)
	k := int64(math.Ceil(e.m.prof.Insert.Select.Next(os) * float64(total)))
	k = min(max(k, 1), total)
	first := int64(keygen.Mix64(os^0x7a3c) % uint64(total)) // a run of rows from a random one, wrapping
	for i := int64(0); i < k; i++ {
		if have == maxBatch {
			if err := e.flush(w, have); err != nil {
				return 0, err
			}
			have = 0
		}
		e.setRow(w, have, p, (first+i)%total, pop)
		have++
	}
	return have, nil
}

// setRow encodes row r of partition p into batch row i's values, the
// value columns past the pop share of them null (PartitionIterator.advance:
// the k-th of n value columns is null when k/n > rowPopulationRatio).
func (e *engine) setRow(w *worker, i int, p, r int64, pop float64) {
	for len(w.rowArgs) <= i {
		as, vs := newArgs(len(e.insertCols))
		w.rowArgs, w.rowVals = append(w.rowArgs, as), append(w.rowVals, vs)
	}
	for j, b := range e.insertCols {
		a := w.rowArgs[i][j]
		if k := e.valueIndex[j]; k > 0 && float64(k)/float64(e.values) > pop {
			a.Null = true
			continue
		}
		a.Null = false
		a.B = e.t.appendValue(a.B[:0], b, p, w.counts, r)
	}
}

// population is the row-population ratio of one partition's rows in an
// insert (DataSpec.rowPopulationRatio.next() per partition): 1 unless the
// insert's row-population says otherwise.
func (e *engine) population(seed uint64) float64 {
	rp := e.m.prof.Insert.RowPopulation
	if rp.IsZero() {
		return 1
	}
	return rp.Next(keygen.Mix64(seed ^ 0x5be0cd19137e2179))
}

// valueOrder places each insert marker's column among the value columns
// (static and regular) in the order cassandra-stress's generator has
// them, the driver's table metadata: by name (StressProfile.GeneratorFactory
// walks tableMetaData.getColumns()).
func valueOrder(values, marks []*column) (index []int, n int) {
	sorted := append([]*column{}, values...)
	slices.SortFunc(sorted, func(a, b *column) int { return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)) })
	index = make([]int, len(marks))
	for j, c := range marks {
		index[j] = slices.Index(sorted, c) + 1
	}
	return index, len(sorted)
}

// flush executes w's first n rows: alone when one, else as a batch.
func (e *engine) flush(w *worker, n int) error {
	switch n {
	case 0:
		return nil
	case 1:
		return w.insert.Exec()
	}
	if w.batch == nil { // re-executed like the queries (gocql caches no routing key of a batch)
		w.batch = e.s.BatchWithContext(w.ctx, e.batchType)
		w.batch.Cons = e.insertCL
	}
	b := w.batch
	w.entries = w.entries[:0]
	for i := 0; i < n; i++ {
		w.entries = append(w.entries, gocql.BatchEntry{Stmt: e.insertCQL, Args: w.rowVals[i], Idempotent: !e.t.counter})
	}
	b.Entries = w.entries
	return b.Exec()
}

// queryOp is SchemaQuery: a partition among those written, and the
// markers' values from one of its rows (samerow) or each from a row of
// its own (multirow); a result without rows counts as a miss.
func (e *engine) queryOp(w *worker, typ int, seq uint64) error {
	o := e.m.ops[typ]
	p := e.keys.ReadKey(seq)
	total := e.t.rowCounts(p, w.counts)
	os := keygen.Mix64(seq ^ e.seed ^ 0x3c6ef372fe94f82b)
	r := int64(os % uint64(total))
	for j, b := range o.query.binders {
		if !o.query.SameRow && b.role != rolePK {
			r = int64(keygen.Mix64(os+uint64(j)) % uint64(total))
		}
		a := w.qargs[typ][j]
		a.B = e.t.appendValue(a.B[:0], b, p, w.counts, r)
	}
	if o.query.write {
		return w.queries[typ].Exec()
	}
	iter := w.queries[typ].Iter()
	rows := iter.NumRows()
	if err := iter.Close(); err != nil {
		return err
	}
	if rows == 0 {
		e.m.misses[typ].Add(1)
	}
	return nil
}
