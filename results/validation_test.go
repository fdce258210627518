package results

import (
	"math"
	"testing"
)

func TestRingPartsCoverTheRing(t *testing.T) {
	prev := int64(math.MinInt64)
	for i := 0; i < RingParts; i++ {
		first, last := RingPart(i)
		if i == 0 && first != math.MinInt64 || i > 0 && first != prev+1 || last < first {
			t.Fatalf("part %d: %d..%d after %d", i, first, last, prev)
		}
		for _, tok := range []int64{first, last, first/2 + last/2} {
			if RingPartOf(tok) != i {
				t.Fatalf("token %d in part %d, want %d", tok, RingPartOf(tok), i)
			}
		}
		prev = last
	}
	if prev != math.MaxInt64 {
		t.Fatalf("last part ends at %d", prev)
	}
}
