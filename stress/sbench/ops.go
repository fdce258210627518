package sbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/cqlarg"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// blobDest reads a blob into a reused buffer (gocql's []byte copies).
type blobDest struct {
	b    []byte
	null bool
}

func (d *blobDest) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	d.null = data == nil
	d.b = append(d.b[:0], data...)
	return nil
}

// statements are the CQL of the model's operations.
type statements struct {
	insert, update, scan string
	reads                []string // per select-order-by entry
}

func (m *Model) statements() statements {
	ks, t := m.o.Keyspace, m.table()
	st := statements{
		insert: fmt.Sprintf("INSERT INTO %s.%s (pk, ck, v) VALUES (?, ?, ?)", ks, t),
		update: fmt.Sprintf("UPDATE %s.%s SET c1 = c1 + ?, c2 = c2 + ?, c3 = c3 + ?, c4 = c4 + ?, c5 = c5 + ? WHERE pk = ? AND ck = ?", ks, t),
		scan:   fmt.Sprintf("SELECT %s FROM %s.%s WHERE token(pk) >= ? AND token(pk) <= ?", m.fields(), ks, t),
	}
	for _, ob := range m.o.SelectOrderBy {
		st.reads = append(st.reads, m.readCQL(ob))
	}
	return st
}

func (m *Model) fields() string {
	if m.counters() {
		return "pk, ck, c1, c2, c3, c4, c5"
	}
	return "pk, ck, v"
}

// readCQL is modes.go's BuildReadQueryString for one ordering.
func (m *Model) readCQL(order string) string {
	o := m.o
	if order = strings.ToLower(order); order != "none" {
		order = " ORDER BY ck " + strings.ToUpper(order)
	} else {
		order = ""
	}
	bypass := ""
	if o.BypassCache {
		bypass = " BYPASS CACHE"
	}
	from := fmt.Sprintf("SELECT %s FROM %s.%s WHERE pk = ?", m.fields(), o.Keyspace, m.table())
	switch {
	case o.InRestriction:
		return from + " AND ck IN (" + strings.TrimSuffix(strings.Repeat("?,", o.RowsPerRequest), ",") + ")" + order + bypass
	case o.ProvideUpperBound:
		return from + " AND ck >= ? AND ck < ?" + order + bypass
	case o.NoLowerBound:
		return from + order + fmt.Sprintf(" LIMIT %d", o.RowsPerRequest) + bypass
	}
	return from + " AND ck >= ?" + order + fmt.Sprintf(" LIMIT %d", o.RowsPerRequest) + bypass
}

// worker is one goroutine's prepared queries, argument holders and
// buffers, executed again and again (see stress/workload.go's stmts).
type worker struct {
	ctx     context.Context
	pk, hi  cqlarg.Bigint
	cks     []cqlarg.Bigint // rows-per-request of them
	ckv     []int64
	vals    []cqlarg.Blob
	bufs    [][]byte
	insert  *gocql.Query
	batch   *gocql.Batch
	entries []gocql.BatchEntry
	update  *gocql.Query
	deltas  [][5]cqlarg.Bigint // per row of a request
	reads   []*gocql.Query
	scan    *gocql.Query
	// Read destinations.
	rpk, rck int64
	rv       blobDest
	c        [5]int64
	scratch  []byte
}

// workers hands the scheduler's goroutines their workers.
type workers struct {
	pool sync.Pool
	m    *Model
	s    *gocql.Session
	st   statements
	per  int          // rows a write request carries at most
	rows atomic.Int64 // rows read (scylla-bench's row count)
}

// newWorkers prepares workers whose writes carry up to per rows.
func (m *Model) newWorkers(s *gocql.Session, per int) *workers {
	return &workers{m: m, s: s, st: m.statements(), per: max(per, m.o.RowsPerRequest, 1)}
}

func (ws *workers) get(ctx context.Context) *worker {
	w, _ := ws.pool.Get().(*worker)
	if w == nil || w.ctx != ctx {
		w = ws.build(ctx)
	}
	return w
}

func (ws *workers) put(w *worker) { ws.pool.Put(w) }

// build prepares every query the mode uses on ctx.
func (ws *workers) build(ctx context.Context) *worker {
	m, s, cl, r := ws.m, ws.s, ws.m.cl, ws.per
	w := &worker{ctx: ctx, cks: make([]cqlarg.Bigint, r), ckv: make([]int64, r)}
	page := m.o.PageSize
	switch {
	case m.counters():
		ws.buildCounterWrites(ctx, w)
	case r == 1:
		w.vals, w.bufs = make([]cqlarg.Blob, 1), make([][]byte, 1)
		w.insert = s.Query(ws.st.insert, &w.pk, &w.cks[0], &w.vals[0]).WithContext(ctx).Consistency(cl).Idempotent(true)
	default:
		w.vals, w.bufs = make([]cqlarg.Blob, r), make([][]byte, r)
		w.batch = s.Batch(gocql.UnloggedBatch).WithContext(ctx)
		w.batch.SetConsistency(cl)
		w.entries = make([]gocql.BatchEntry, r)
		for i := range w.entries {
			w.entries[i] = gocql.BatchEntry{Stmt: ws.st.insert, Args: []any{&w.pk, &w.cks[i], &w.vals[i]}, Idempotent: true}
		}
	}
	for _, q := range ws.st.reads {
		args := []any{&w.pk}
		switch {
		case m.o.InRestriction:
			for i := range w.cks {
				args = append(args, &w.cks[i])
			}
		case m.o.ProvideUpperBound:
			args = append(args, &w.cks[0], &w.hi)
		case m.o.NoLowerBound:
		default:
			args = append(args, &w.cks[0])
		}
		w.reads = append(w.reads, s.Query(q, args...).WithContext(ctx).Consistency(cl).PageSize(page).Idempotent(true))
	}
	w.scan = s.Query(ws.st.scan, &w.pk, &w.hi).WithContext(ctx).Consistency(cl).PageSize(page).Idempotent(true)
	return w
}

// buildCounterWrites prepares the counter update, or a counter batch of
// them; counter updates are not idempotent: never retried.
func (ws *workers) buildCounterWrites(ctx context.Context, w *worker) {
	w.deltas = make([][5]cqlarg.Bigint, ws.per)
	args := func(i int) []any {
		d := &w.deltas[i]
		return []any{&d[0], &d[1], &d[2], &d[3], &d[4], &w.pk, &w.cks[i]}
	}
	if ws.per == 1 {
		w.update = ws.s.Query(ws.st.update, args(0)...).WithContext(ctx).Consistency(ws.m.cl)
		return
	}
	w.batch = ws.s.Batch(gocql.CounterBatch).WithContext(ctx)
	w.batch.SetConsistency(ws.m.cl)
	w.entries = make([]gocql.BatchEntry, ws.per)
	for i := range w.entries {
		w.entries[i] = gocql.BatchEntry{Stmt: ws.st.update, Args: args(i)}
	}
}

// writeRows writes rows cks of pk: one INSERT or counter UPDATE, or a batch
// of them (unlogged as modes.go DoBatchedWrites, or a counter batch).
func (ws *workers) writeRows(w *worker, pk int64, cks []int64) error {
	m := ws.m
	w.pk.V = pk
	for i, ck := range cks {
		w.cks[i].V = ck
		if m.counters() {
			// modes.go DoCounterUpdates: c1..c5 += ck, ck+1 ... ck+4.
			for j := range w.deltas[i] {
				w.deltas[i][j].V = ck + int64(j)
			}
			continue
		}
		buf := grow(&w.bufs[i], m.size.forRow(pk, ck)) // as large as the largest row yet
		generateData(buf, pk, ck, m.o.ValidateData, m.o.NoRandomData)
		w.vals[i].B = buf
	}
	switch {
	case w.update != nil:
		return w.update.Exec()
	case w.batch == nil:
		return w.insert.Exec()
	}
	w.batch.Entries = w.entries[:len(cks)]
	return w.batch.Exec()
}

// read runs the read of pk at cks[:n] (modes.go createReadTestFunc) with
// the seq-th ordering, checking every row with validate-data.
func (ws *workers) read(w *worker, seq uint64, pk int64, cks []int64, n int) error {
	m := ws.m
	w.pk.V = pk
	switch {
	case m.o.InRestriction:
		for i := range w.cks {
			w.cks[i].V = 0 // modes.go: a partition's end pads the IN list with ck 0
			if i < n {
				w.cks[i].V = cks[i]
			}
		}
	default:
		w.cks[0].V = cks[0]
		w.hi.V = cks[0] + int64(m.o.RowsPerRequest)
	}
	return ws.readRows(w, w.reads[seq%uint64(len(w.reads))].Iter())
}

// readRows reads what it returns to the end, checking each row with
// validate-data (modes.go executeReadsQuery); a corrupt row fails the
// operation once the read is done.
func (ws *workers) readRows(w *worker, it *gocql.Iter) error {
	var corrupt error
	var rows int64
	defer func() { ws.rows.Add(rows) }()
	if ws.m.counters() {
		for it.Scan(&w.rpk, &w.rck, &w.c[0], &w.c[1], &w.c[2], &w.c[3], &w.c[4]) {
			rows++
			if ws.m.o.ValidateData && corrupt == nil {
				if err := validateCounters(w.rck, &w.c); err != nil {
					corrupt = fmt.Errorf("pk(%d): %w", w.rpk, err)
				}
			}
		}
	} else {
		for it.Scan(&w.rpk, &w.rck, &w.rv) {
			rows++
			if ws.m.o.ValidateData && corrupt == nil {
				if err := validateData(w.rpk, w.rck, w.rv.b, &w.scratch); err != nil {
					corrupt = fmt.Errorf("data corruption in pk(%d), ck(%d): %w", w.rpk, w.rck, err)
				}
			}
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	return corrupt
}

// scanRange reads token range i of range-count (workloads.go RangeScan).
func (ws *workers) scanRange(w *worker, i int) error {
	w.pk.V, w.hi.V = tokenRange(i, ws.m.o.RangeCount)
	return ws.readRows(w, w.scan.Iter())
}

// tokenRange is RangeScan.NextTokenRange: range i of n, the last one
// stretching to the maximum token.
func tokenRange(i, n int) (first, last int64) {
	const minToken, maxToken = -1 << 63, 1<<63 - 1
	if n == 1 {
		return minToken, maxToken
	}
	per := int64(^uint64(0) / uint64(n))
	first = minToken + int64(i)*per
	if i+1 == n {
		return first, maxToken
	}
	return first, first + per - 1
}

// Bind implements stress.Model: the mode's operations (Ops order).
func (m *Model) Bind(_ context.Context, s *gocql.Session, b stress.Binding) (sched.Op, error) {
	op, _, err := m.bind(s, b)
	return op, err
}

// bind is Bind that also returns the workers (their row count).
func (m *Model) bind(s *gocql.Session, b stress.Binding) (sched.Op, *workers, error) {
	if s == nil {
		return nil, nil, errors.New("sb: nil session")
	}
	p, err := m.newPicker(b)
	if err != nil {
		return nil, nil, err
	}
	ws := m.newWorkers(s, m.o.RowsPerRequest)
	kinds := make([]string, 0, 2)
	for _, o := range m.Ops() {
		kinds = append(kinds, o.Name)
	}
	return func(ctx context.Context, typ int, seq uint64) error {
		w := ws.get(ctx)
		defer ws.put(w)
		switch kinds[typ] {
		case ModeWrite, ModeCounterUpdate:
			want := m.o.RowsPerRequest
			if m.counters() {
				want = 1
			}
			pk, n := p.pick(seq, w.ckv[:want])
			return ws.writeRows(w, pk, w.ckv[:n])
		case ModeScan:
			return ws.scanRange(w, int(seq%uint64(m.o.RangeCount)))
		}
		want := 1 // the read's first ck; the IN list takes rows-per-request
		if m.o.InRestriction {
			want = m.o.RowsPerRequest
		}
		pk, n := p.pick(seq, w.ckv[:want])
		return ws.read(w, seq, pk, w.ckv, n)
	}, ws, nil
}

// Fill implements stress.Model: the seq-th op writes key StartKey +
// seq·Stride, partition pk partition-offset+key, every clustering row in
// order (scylla-bench's sequential write), in batches of
// fillRowsPerRequest rows.

func (m *Model) Fill(_ context.Context, s *gocql.Session, b stress.Binding) (sched.Op, error) {
	if s == nil {
		return nil, errors.New("sb: nil session")
	}
	per := m.fillRowsPerRequest()
	ws := m.newWorkers(s, int(per))
	start, stride := b.StartKey, max(b.Stride, 1)
	return func(ctx context.Context, _ int, seq uint64) error {
		w := ws.get(ctx)
		defer ws.put(w)
		key := start + int64(seq)*stride
		pk := m.o.PartitionOffset + key
		for ck := int64(0); ck < m.o.ClusteringRowCount; ck += per {
			n := min(per, m.o.ClusteringRowCount-ck)
			for i := range n {
				w.ckv[i] = ck + i
			}
			if err := ws.writeRows(w, pk, w.ckv[:n]); err != nil {
				if b.Failed != nil {
					b.Failed(key)
				}
				return err
			}
		}
		return nil
	}, nil
}

// fillBatchBytes and fillBatchRows bound a fill request: a partition's
// rows go in single-partition batches (one mutation in ScyllaDB), under
// ScyllaDB's batch size warning (batch_size_warn_threshold_in_kb, 128).
const (
	fillBatchBytes = 64 << 10
	fillBatchRows  = 500
)

// fillRowsPerRequest is how many rows of a partition a fill request
// writes: rows-per-request at least, else as many as fit in fillBatchBytes
// (scylla-bench's sequential write sends rows-per-request; the fill is the
// run's own phase, and a row a request would make a partition of small
// rows a hundred round trips).
func (m *Model) fillRowsPerRequest() int64 {
	n := min(fillBatchBytes/max(m.size.max, 1), fillBatchRows, m.o.ClusteringRowCount)
	return max(n, int64(m.o.RowsPerRequest), 1)
}
