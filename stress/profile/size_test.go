package profile

import (
	"math"
	"testing"
)

// measuredKeyBytes is the mean bytes of partitions 0..n-1 as the fill
// generates them: every row's clustering and regular values, the
// partition key and static values once.
func measuredKeyBytes(m *Model, n int64) float64 {
	t := m.prof.table
	counts := make([]int64, len(t.ck))
	var buf []byte
	var total int
	for p := int64(0); p < n; p++ {
		rows := t.rowCounts(p, counts)
		for _, c := range append(append([]*column{}, t.pk...), t.static...) {
			buf = t.appendValue(buf[:0], t.binderOf(c), p, counts, 0)
			total += len(buf)
		}
		for r := int64(0); r < rows; r++ {
			for _, c := range append(append([]*column{}, t.ck...), t.regular...) {
				buf = t.appendValue(buf[:0], t.binderOf(c), p, counts, r)
				total += len(buf)
			}
		}
	}
	return float64(total) / float64(n)
}

// The estimate of a partition's bytes (the distributions' means) is what
// the generator writes on average, within 3%.
func TestKeyBytesIsWhatTheFillWrites(t *testing.T) {
	for _, c := range []struct{ path, ops string }{
		{timeseries, "insert=1"},
		{"testdata/alltypes.yaml", "insert=1"},
		{"testdata/keyvalue.yaml", "insert=1"},
	} {
		m := load(t, c.path, c.ops)
		est, got := m.KeyBytes(), measuredKeyBytes(m, 2000)
		t.Logf("%s: estimate %.1f B a partition, generated %.1f B (2000 partitions), in %g requests", c.path, est, got, m.KeyWrites())
		if math.Abs(est-got) > 0.03*got {
			t.Errorf("%s: estimated %.1f B a partition, the fill writes %.1f B on average", c.path, est, got)
		}
	}
}
