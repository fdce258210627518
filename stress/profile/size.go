package profile

import (
	"math"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

var _ stress.Sizer = (*Model)(nil)

// KeyBytes implements stress.Sizer: a key is a partition as the fill
// writes it (all of its rows): its partition key and static columns once,
// and rows × its clustering and regular columns, each column the mean of
// its generator's distributions (PartitionGenerator's averages: rows per
// partition the product of the clustering columns' cluster means).
func (m *Model) KeyBytes() float64 {
	t := m.prof.table
	part, row := columnsBytes(t.pk)+columnsBytes(t.static), columnsBytes(t.ck)+columnsBytes(t.regular)
	return part + t.meanRows()*row
}

// KeyWrites implements stress.Sizer: writePartition's batches of the
// insert's select share of the partition's rows.
func (m *Model) KeyWrites() float64 {
	rows := m.prof.table.meanRows()
	per := min(max(1, math.Ceil(m.prof.Insert.Select.Max()*rows)), maxBatch)
	return math.Ceil(rows / per)
}

// meanRows is the mean rows of a partition, as rowCounts gives them to
// the fill's first sizeSamples partitions (the clustering columns' cluster
// draws, each at least 1, their product at most maxRows).
func (t *table) meanRows() float64 {
	counts := make([]int64, len(t.ck))
	return sampleMean(func(s uint64) float64 { return float64(t.rowCounts(int64(s), counts)) })
}

// sizeSamples is how many draws a mean averages: the distributions'
// closed-form means miss their bounds (an exp(1..3) clamps most draws at
// its maximum), so the means are those of the draws the generators make.
const sizeSamples = 4096

// sampleMean is f's mean over seeds 0..sizeSamples-1.
func sampleMean(f func(seed uint64) float64) float64 {
	var sum float64
	for s := uint64(0); s < sizeSamples; s++ {
		sum += f(s)
	}
	return sum / sizeSamples
}

func columnsBytes(cols []*column) float64 {
	var sum float64
	for _, c := range cols {
		sum += c.gen.meanBytes()
	}
	return sum
}

// fixedBytes are the encoded sizes of the fixed-width types.
var fixedBytes = map[kind]float64{
	kInt: 4, kBigint: 8, kCounter: 8, kTimestamp: 8, kSmallint: 2, kTinyint: 1, kFloat: 4, kDouble: 8,
	kBoolean: 1, kUUID: 16, kTimeUUID: 16, kDate: 4, kTime: 8, kInet: 4,
}

// meanBytes is the mean encoded size of g's values (appendValue):
// strings and blobs as long as the size distribution draws, collections
// that many elements each with its length, varints as long as the
// population's identities need.
func (g *generator) meanBytes() float64 {
	switch k := g.typ.kind; k {
	case kText, kAscii, kBlob:
		return g.size.DrawMean(1 << 24)
	case kList, kSet, kMap:
		per := 4 + g.elem.meanBytes()
		if g.elemKey != nil {
			per += 4 + g.elemKey.meanBytes()
		}
		return 4 + g.size.DrawMean(1<<16)*per
	case kVarint, kDecimal:
		n := sampleMean(func(s uint64) float64 { return float64(len(appendVarint(nil, g.identity(keygen.Mix64(s))))) })
		if k == kDecimal {
			n += 4 // the scale
		}
		return n
	default:
		return fixedBytes[k]
	}
}
