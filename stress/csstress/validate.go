package csstress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/murmur3"
	"github.com/elasticity-dev/elasticity/stress"
)

// The model reads its rows back for data validation (stress.Validator):
// validation's key k is the row the fill wrote for it, population index k+1
// of standard1, each column's value as cells regenerates it. Rows written
// only by -pop indexes outside the fill are not validation's keys.
var _ stress.Validator = (*Model)(nil)

// Token is the Murmur3 token of key's partition key.
func (m *Model) Token(key int64) int64 {
	kb := make([]byte, m.s.keysize)
	putKey(kb, key+1)
	return murmur3.Token(kb)
}

// CheckKey reads key's row of standard1 and compares every column.
func (m *Model) CheckKey(ctx context.Context, s *gocql.Session, cl gocql.Consistency, key int64) (stress.RowState, error) {
	kb := make([]byte, m.s.keysize)
	putKey(kb, key+1)
	got := make([][]byte, len(m.s.colNames))
	dest := make([]any, len(got))
	for i := range got {
		dest[i] = &got[i]
	}
	err := s.Query(m.statements().read, kb).WithContext(ctx).Consistency(cl).Scan(dest...)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return stress.RowsMissing, nil
	case err != nil:
		return stress.RowsOK, fmt.Errorf("reading back row %d of %s.standard1: %w", key+1, m.Keyspace(), err)
	}
	return m.rowState(newCells(m.s.size), key+1, got), nil
}

// rowState compares a row's columns with what index regenerates.
func (m *Model) rowState(vals *cells, index int64, got [][]byte) stress.RowState {
	for i, g := range got {
		if !bytes.Equal(g, vals.value(index, i)) {
			return stress.RowsWrong
		}
	}
	return stress.RowsOK
}

// ScanRange reads standard1's rows of tokens first..last and reports those
// whose key is a population index's.
func (m *Model) ScanRange(ctx context.Context, s *gocql.Session, cl gocql.Consistency, first, last int64, found func(int64, stress.RowState)) error {
	cols := make([]string, len(m.s.colNames))
	for i, c := range m.s.colNames {
		cols[i] = fmt.Sprintf("%q", c)
	}
	q := fmt.Sprintf("SELECT key, %s FROM %q.\"standard1\" WHERE token(key) >= ? AND token(key) <= ?", strings.Join(cols, ", "), m.Keyspace())
	it := s.Query(q, first, last).WithContext(ctx).Consistency(cl).PageSize(1000).Iter()
	vals := newCells(m.s.size)
	var key []byte
	got := make([][]byte, len(cols))
	dest := []any{&key}
	for i := range got {
		dest = append(dest, &got[i])
	}
	for it.Scan(dest...) {
		if idx, ok := indexOf(key, m.s.keysize); ok && idx >= 1 {
			found(idx-1, m.rowState(vals, idx, got))
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("scanning %s.standard1 tokens %d..%d: %w", m.Keyspace(), first, last, err)
	}
	return nil
}
