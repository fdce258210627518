package csstress

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
	"github.com/elasticity-dev/elasticity/stress/csdist"
	"github.com/elasticity-dev/elasticity/stress/keygen"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// statements are the CQL texts of the predefined operations
// (CqlInserter, CqlReader, CqlCounterAdder, CqlCounterGetter).
type statements struct {
	write, read, counterWrite, counterRead string
}

func (m *Model) statements() statements {
	ks := fmt.Sprintf("%q", m.Keyspace())
	var set, sel, inc []string
	for _, c := range m.s.colNames {
		q := fmt.Sprintf("%q", c)
		set = append(set, q+" = ?")
		sel = append(sel, q)
		inc = append(inc, q+" = "+q+" + ?")
	}
	using := ""
	if m.s.timestamp != "" {
		using = " USING TIMESTAMP " + m.s.timestamp
	}
	return statements{
		write:        fmt.Sprintf("UPDATE %s.\"standard1\"%s SET %s WHERE key = ?", ks, using, strings.Join(set, ", ")),
		read:         fmt.Sprintf("SELECT %s FROM %s.\"standard1\" WHERE key = ?", strings.Join(sel, ", "), ks),
		counterWrite: fmt.Sprintf("UPDATE %s.\"counter1\" SET %s WHERE key = ?", ks, strings.Join(inc, ", ")),
		counterRead:  fmt.Sprintf("SELECT * FROM %s.\"counter1\" WHERE key = ?", ks),
	}
}

// stmts are one worker's prepared queries with their argument holders,
// executed again and again (gocql allows re-executing a Query once the
// previous execution returned).
type stmts struct {
	ctx                 context.Context
	write, read         *gocql.Query
	counterWrite, cRead *gocql.Query
	key                 cqlarg.Blob
	keyBuf              []byte
	vals                []cqlarg.Blob
	incs                []cqlarg.Bigint
	readDest, cReadDest []any
}

// queryPool hands the workers their statements.
type queryPool struct {
	pool  sync.Pool
	s     *gocql.Session
	text  statements
	cl    gocql.Consistency
	cols  int
	ksize int
}

func (p *queryPool) get(ctx context.Context) *stmts {
	st, _ := p.pool.Get().(*stmts)
	if st != nil && st.ctx == ctx {
		return st
	}
	st = &stmts{ctx: ctx, keyBuf: make([]byte, p.ksize), vals: make([]cqlarg.Blob, p.cols), incs: make([]cqlarg.Bigint, p.cols)}
	st.key.B = st.keyBuf
	wargs := make([]any, 0, p.cols+1)
	iargs := make([]any, 0, p.cols+1)
	for i := range st.vals {
		wargs = append(wargs, &st.vals[i])
		iargs = append(iargs, &st.incs[i])
		st.readDest = append(st.readDest, &cqlarg.DiscardValue)
	}
	st.cReadDest = append([]any{&cqlarg.DiscardValue}, st.readDest...)
	q := func(text string, args ...any) *gocql.Query {
		return p.s.Query(text, args...).WithContext(ctx).Consistency(p.cl).Idempotent(true)
	}
	st.write = q(p.text.write, append(wargs, &st.key)...)
	st.read = q(p.text.read, &st.key)
	// A counter increment applied twice counts twice: not idempotent.
	st.counterWrite = q(p.text.counterWrite, append(iargs, &st.key)...).Idempotent(false)
	st.cRead = q(p.text.counterRead, &st.key)
	return st
}

// picker chooses the population index of each operation.
type picker struct {
	pop   csdist.Dist   // -pop, when given
	next  *atomic.Int64 // SEQ: the position of this loader's walk (cassandra-stress's DistributionSequence)
	given bool
	seed  uint64
	keys  *stress.KeyPicker // no -pop: the scenario's keys, indexes from 1
}

func (m *Model) newPicker(b stress.Binding) (*picker, error) {
	p := &picker{given: m.s.pop.given, seed: keygen.Mix64(b.Seed ^ 0x706f70)}
	if p.given {
		p.pop = m.s.pop.dist
		if p.pop.Kind() == csdist.KindSeq {
			p.next = new(atomic.Int64)
			// Loader i of n walks its own part of seq=min..max, as SCT
			// gives each of its loaders one (sdcm/tester.py
			// populate_data_parallel); alone, the whole range.
			i, n := b.Share()
			min, max := p.pop.Bounds()
			lo, size := keygen.Part(min, max-min+1, i, n)
			p.pop = p.pop.SeqPart(lo, lo+size-1)
		}
		return p, nil
	}
	k, err := stress.NewKeyPicker(b)
	if err != nil {
		return nil, fmt.Errorf("stress_cmd: binding the key distribution: %w", err)
	}
	p.keys = k
	return p, nil
}

// index is the population index of operation seq; write tells a write
// (which may add a new index) from a read. Without -pop the fill wrote
// indexes 1..Keys: the key picker's key plus one.
func (p *picker) index(seq uint64, write bool) int64 {
	switch {
	case p.next != nil:
		return p.pop.Sample(uint64(p.next.Add(1) - 1))
	case p.given:
		return p.pop.Sample(seq + p.seed)
	case write:
		return 1 + p.keys.WriteKey(seq)
	}
	return 1 + p.keys.ReadKey(seq)
}

// pool prepares the query pool of the model on s.
func (m *Model) pool(s *gocql.Session) (*queryPool, error) {
	if s == nil {
		return nil, errors.New("stress_cmd: nil session")
	}
	return &queryPool{s: s, text: m.statements(), cl: m.s.cl, cols: len(m.s.colNames), ksize: m.s.keysize}, nil
}

// Bind prepares the mix's operations on s: the returned op runs operation
// typ (an index into Ops) number seq.
func (m *Model) Bind(ctx context.Context, s *gocql.Session, b stress.Binding) (sched.Op, error) {
	qp, err := m.pool(s)
	if err != nil {
		return nil, err
	}
	pk, err := m.newPicker(b)
	if err != nil {
		return nil, err
	}
	vals := newCells(m.s.size)
	kinds := make([]string, len(m.s.mix))
	for i, o := range m.s.mix {
		kinds[i] = o.kind
	}
	add := m.s.add
	return func(ctx context.Context, typ int, seq uint64) error {
		st := qp.get(ctx)
		defer qp.pool.Put(st)
		kind := kinds[typ]
		write := kind == kindWrite || kind == kindCounterWrite
		idx := pk.index(seq, write)
		putKey(st.keyBuf, idx)
		var err error
		switch kind {
		case kindWrite:
			err = writeRow(st, vals, idx)
			if err == nil && !pk.given && pk.keys.Adds() {
				pk.keys.Added(1)
			}
		case kindRead:
			err = st.read.Scan(st.readDest...)
		case kindCounterWrite:
			err = addCounters(st, &add, seq)
		case kindCounterRead:
			err = st.cRead.Scan(st.cReadDest...)
		}
		if errors.Is(err, gocql.ErrNotFound) {
			return nil // a row not (yet) written: a miss, not an error
		}
		return err
	}, nil
}

// writeRow writes every column of the row of idx (CqlInserter writes all of them).
func writeRow(st *stmts, vals *cells, idx int64) error {
	for i := range st.vals {
		st.vals[i].B = vals.value(idx, i)
	}
	return st.write.Exec()
}

// addCounters increments every counter of the row (CqlCounterAdder), each
// by a draw of add=.
func addCounters(st *stmts, add *csdist.Dist, seq uint64) error {
	for i := range st.incs {
		st.incs[i].V = add.Sample(keygen.Mix64(seq)*0x9e3779b97f4a7c15 + uint64(i))
	}
	return st.counterWrite.Exec()
}

// Fill writes the row of fill key StartKey+seq·Stride: population index
// key+1 (cassandra-stress's populations start at 1) of standard1, or of
// counter1 when every operation is a counter's.
func (m *Model) Fill(ctx context.Context, s *gocql.Session, b stress.Binding) (sched.Op, error) {
	qp, err := m.pool(s)
	if err != nil {
		return nil, err
	}
	vals := newCells(m.s.size)
	counters := m.onlyCounters()
	add := m.s.add
	start, stride := b.StartKey, max(b.Stride, 1)
	limit := maxIndex(m.s.keysize)
	return func(ctx context.Context, _ int, seq uint64) error {
		st := qp.get(ctx)
		defer qp.pool.Put(st)
		key := start + int64(seq)*stride
		if key+1 > limit {
			return fmt.Errorf("stress_cmd: fill row %d: keysize=%d keys hold only %d distinct indexes", key+1, len(st.keyBuf), limit)
		}
		putKey(st.keyBuf, key+1)
		var err error
		if counters {
			err = addCounters(st, &add, uint64(key))
		} else {
			err = writeRow(st, vals, key+1)
		}
		if err != nil && b.Failed != nil {
			b.Failed(key)
		}
		return err
	}, nil
}
