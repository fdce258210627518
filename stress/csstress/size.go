package csstress

import (
	"encoding/hex"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/csdist"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

var _ stress.Sizer = (*Model)(nil)

// KeyBytes implements stress.Sizer: a key is one row, its keysize-byte
// key and, as the fill writes it, every -col column (CqlInserter writes
// all of maxColumnsPerKey) of -col size='s mean, or, for a model of
// counter commands only, counter1's counters (8 bytes each).
func (m *Model) KeyBytes() float64 {
	cell := meanDraw(m.s.size)
	if m.onlyCounters() {
		cell = 8
	}
	return float64(m.s.keysize) + float64(len(m.s.colNames))*cell
}

// KeyWrites implements stress.Sizer: one INSERT (or counter UPDATE) a row.
func (m *Model) KeyWrites() float64 { return 1 }

// meanDrawSamples is how many draws meanDraw averages.
const meanDrawSamples = 4096

// meanDraw is the distribution's mean as sample draws it (bounded as
// cassandra-stress bounds it), averaged over fixed hashes so a plan is
// the same every time; a sequence's is the middle of its range (drawing
// would move the shared sequence).
func meanDraw(d csdist.Dist) float64 {
	lo, hi := d.Bounds()
	switch d.Kind() {
	case csdist.KindFixed:
		return float64(lo)
	case csdist.KindSeq:
		return (float64(lo) + float64(hi)) / 2
	}
	var sum float64
	for i := uint64(0); i < meanDrawSamples; i++ {
		sum += float64(d.Sample(keygen.Mix64(i ^ 0x73697a65)))
	}
	return sum / meanDrawSamples
}

// PartitionKey implements stress.Validator: key's blob key in hex, as
// nodetool getendpoints takes a blob.
func (m *Model) PartitionKey(key int64) string {
	kb := make([]byte, m.s.keysize)
	putKey(kb, key+1)
	return hex.EncodeToString(kb)
}
