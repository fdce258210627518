package keygen

import (
	"math"
	"testing"
)

func TestDistributionsStayInRange(t *testing.T) {
	for _, spec := range []string{"", "uniform", "seq", "sequential", "gaussian", "gaussian(2.5)"} {
		d, err := Parse(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		seen := map[int64]bool{}
		for seq := uint64(0); seq < 20000; seq++ {
			k := d.Key(seq, 1000)
			if k < 0 || k >= 1000 {
				t.Fatalf("%s: key %d out of [0,1000)", d, k)
			}
			seen[k] = true
		}
		if len(seen) < 900 {
			t.Fatalf("%s: only %d distinct keys of 1000 in 20000 draws", d, len(seen))
		}
	}
	for _, bad := range []string{"zipf", "gaussian(x)", "gaussian(-1)"} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestSequentialIsInOrder(t *testing.T) {
	d, _ := Parse("sequential")
	for i := int64(0); i < 25; i++ {
		if k := d.Key(99, 10); k != i%10 {
			t.Fatalf("draw %d gave %d", i, k)
		}
	}
}

func TestGaussianFollowsItsCentre(t *testing.T) {
	d, _ := Parse("gaussian")
	const n = 100000
	// Around seq 30000 the centre is key 30000 and stddev n/10 = 10000.
	var sum, sq float64
	const draws = 4000
	for i := uint64(0); i < draws; i++ {
		k := float64(d.Key(30000+i, n)) - float64(30000+i)
		if k > n/2 {
			k -= n
		}
		sum += k
		sq += k * k
	}
	mean, std := sum/draws, math.Sqrt(sq/draws-(sum/draws)*(sum/draws))
	if math.Abs(mean) > 1000 || std < 8500 || std > 11500 {
		t.Fatalf("offset from centre: mean %.0f stddev %.0f, want ~0 and ~10000", mean, std)
	}
}

func TestValues(t *testing.T) {
	v, err := NewValues(100, 200)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 1000, 0
	for seq := uint64(0); seq < 5000; seq++ {
		n := len(v.ForKey(int64(seq)))
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo != 100 || hi != 200 {
		t.Fatalf("sizes %d..%d, want 100..200", lo, hi)
	}
	f, _ := NewValues(1024, 1024)
	if len(f.ForKey(7)) != 1024 {
		t.Fatal("fixed size")
	}
	if a := testing.AllocsPerRun(1000, func() { _ = f.ForKey(3) }); a != 0 {
		t.Fatalf("%v allocs per value", a)
	}
	// A key's value is the same whichever Values computes it.
	g, _ := NewValues(100, 200)
	if string(g.ForKey(12345)) != string(v.ForKey(12345)) || string(v.ForKey(1)) == string(v.ForKey(2)) {
		t.Fatal("ForKey is not a function of the key alone")
	}
	if _, err := NewValues(10, 5); err == nil {
		t.Fatal("inverted range accepted")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string][2]int{"1KiB": {1024, 1024}, "100": {100, 100}, "512..4KiB": {512, 4096}, "1k-2k": {1024, 2048}, "1MiB": {1 << 20, 1 << 20}} {
		a, b, err := ParseSizeRange(in)
		if err != nil || a != want[0] || b != want[1] {
			t.Fatalf("%q: %d..%d %v", in, a, b, err)
		}
	}
	for _, bad := range []string{"", "x", "-1", "4KiB..1KiB", "1GiB"} {
		if _, _, err := ParseSizeRange(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// Loaders' parts of a range cover it once, and a loader's sequential
// distribution walks its own part; alone, the whole range.
func TestLoaderParts(t *testing.T) {
	for _, c := range []struct{ count, n int64 }{{10, 2}, {11, 3}, {7, 7}, {100, 1}} {
		next := int64(5)
		for i := range c.n {
			start, size := Part(5, c.count, int(i), int(c.n))
			if start != next || size < 1 {
				t.Fatalf("%d values over %d loaders: loader %d has %d+%d, want from %d", c.count, c.n, i, start, size, next)
			}
			next = start + size
		}
		if next != 5+c.count {
			t.Fatalf("%d values over %d loaders end at %d", c.count, c.n, next)
		}
	}
	if s, n := Part(0, 2, 0, 3); s != 0 || n != 1 { // fewer values than loaders: one each
		t.Fatalf("loader 0 of 3 over 2 values: %d+%d", s, n)
	}
	d, _ := Parse(Sequential)
	d = ForLoader(d, 1, 2)
	for want := int64(5); want < 13; want++ {
		if k := d.Key(0, 10); k != 5+(want-5)%5 {
			t.Fatalf("loader 1 of 2 over 10 keys drew %d, want %d", k, 5+(want-5)%5)
		}
	}
	u, _ := Parse(Uniform)
	if ForLoader(u, 1, 2) != u || GlobalSeq(7, 0, 1) != 7 || GlobalSeq(7, 1, 3) != 22 {
		t.Fatal("random distributions take the job's global seq, unchanged")
	}
}

// gaussian(M%,S%) is cassandra-stress gauss(1..n,mean,stdev): a fixed hot
// set, clamped to the keys, the same whatever the sequence number.
func TestFixedGaussianIsAHotSet(t *testing.T) {
	d, err := Parse("gaussian(50%,1%)")
	if err != nil {
		t.Fatal(err)
	}
	const n, draws = 100000, 20000
	var sum, sq float64
	for seq := uint64(0); seq < draws; seq++ {
		k := float64(d.Key(seq*7919, n))
		sum += k
		sq += k * k
	}
	mean, std := sum/draws, math.Sqrt(sq/draws-(sum/draws)*(sum/draws))
	if math.Abs(mean-50000) > 50 || std < 950 || std > 1050 {
		t.Fatalf("keys: mean %.0f stddev %.0f, want ~50000 and ~1000", mean, std)
	}
	edge, _ := Parse("gaussian(0%,10%)")
	low := 0
	for seq := uint64(0); seq < draws; seq++ {
		k := edge.Key(seq, n)
		if k < 0 || k >= n {
			t.Fatalf("%s: key %d out of [0,%d)", edge, k, n)
		}
		if k == 0 {
			low++
		}
	}
	if low < draws/3 { // half the draws fall below the centre and are clamped to it
		t.Fatalf("%s: %d of %d draws clamped to key 0, want about half", edge, low, draws)
	}
	if s := d.String(); s != "gaussian(50%,1%)" {
		t.Fatalf("String() = %q", s)
	}
	for _, bad := range []string{"gaussian(50,1)", "gaussian(50%,0%)", "gaussian(150%,1%)", "gaussian(50%,x%)", "gaussian(50%)"} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
