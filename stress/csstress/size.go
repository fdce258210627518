package csstress

import (
	"encoding/hex"

	"github.com/elasticity-dev/elasticity/stress"
)

var _ stress.Sizer = (*Model)(nil)

// KeyBytes implements stress.Sizer: a key is one row, its keysize-byte
// key and, as the fill writes it, every -col column (CqlInserter writes
// all of maxColumnsPerKey) of -col size='s mean, or, for a model of
// counter commands only, counter1's counters (8 bytes each).
func (m *Model) KeyBytes() float64 {
	_, hi := m.s.size.Bounds()
	cell := m.s.size.DrawMean(hi) // cells are as long as size= draws
	if m.onlyCounters() {
		cell = 8
	}
	return float64(m.s.keysize) + float64(len(m.s.colNames))*cell
}

// KeyWrites implements stress.Sizer: one INSERT (or counter UPDATE) a row.
func (m *Model) KeyWrites() float64 { return 1 }

// PartitionKey implements stress.Validator: key's blob key in hex, as
// nodetool getendpoints takes a blob.
func (m *Model) PartitionKey(key int64) string {
	kb := make([]byte, m.s.keysize)
	putKey(kb, key+1)
	return hex.EncodeToString(kb)
}
