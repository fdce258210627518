package sbench

import (
	"math"

	"github.com/elasticity-dev/elasticity/stress"
)

var _ stress.Sizer = (*Model)(nil)

// KeyBytes implements stress.Sizer: a key is a partition, its pk (8
// bytes) and clustering-row-count rows of a ck (8 bytes) and a value of
// clustering-row-size's mean (sizeDist.forRow draws min..max-1), or of the
// counter table's five counters (8 bytes each).
func (m *Model) KeyBytes() float64 {
	row := 8 + m.size.mean()
	if m.counters() {
		row = 8 + 5*8
	}
	return 8 + float64(m.o.ClusteringRowCount)*row
}

// KeyWrites implements stress.Sizer: the fill writes a partition in
// batches of fillRowsPerRequest rows.
func (m *Model) KeyWrites() float64 {
	return math.Ceil(float64(m.o.ClusteringRowCount) / float64(m.fillRowsPerRequest()))
}

// mean is the mean row size forRow draws.
func (d sizeDist) mean() float64 {
	if d.max <= d.min {
		return float64(d.min)
	}
	return float64(d.min) + float64(d.max-d.min-1)/2
}
