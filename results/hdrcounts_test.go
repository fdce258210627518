package results

import (
	"math/rand"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Counts must answer exactly what a merged hdrhistogram answers.
func TestCountsMatchesHistogram(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	ref := NewHDR()
	acc := NewCounts()
	var dec HDRDecoder
	for i := 0; i < 50; i++ {
		h := NewHDR()
		for j := 0; j < 500; j++ {
			v := int64(r.ExpFloat64() * float64([]int{300, 3000, 300000, 20000000}[j%4]))
			_ = h.RecordValue(v)
		}
		enc, err := EncodeHDR(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := dec.AddTo(enc, acc); err != nil {
			t.Fatal(err)
		}
		ref.Merge(h)
	}
	if acc.Total() != ref.TotalCount() {
		t.Fatalf("total %d, want %d", acc.Total(), ref.TotalCount())
	}
	for _, p := range []float64{0, 1, 50, 90, 99, 99.9, 100} {
		if got, want := acc.ValueAt(p), ref.ValueAtQuantile(p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	acc.Reset()
	if acc.Total() != 0 || acc.ValueAt(99) != 0 {
		t.Fatal("Reset left values")
	}
}

func TestCountsIndexRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, 1023, 1024, 2047, 2048, 4095, 4096, 1e6, 59_999_999} {
		i := hdrIndexOf(v)
		if lo, hi := hdrValueOf(i), hdrHighestEquivalent(i); v < lo || v > hi {
			t.Errorf("%d → index %d → [%d, %d]", v, i, lo, hi)
		}
	}
}

func TestDecoderForeignGeometry(t *testing.T) {
	h := hdrhistogram.New(1, 3_600_000_000, 2)
	for _, v := range []int64{100, 2000, 2000, 50000} {
		_ = h.RecordValue(v)
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	acc := NewCounts()
	var dec HDRDecoder
	if err := dec.AddTo(string(b), acc); err != nil {
		t.Fatal(err)
	}
	if acc.Total() != 4 {
		t.Fatalf("total %d", acc.Total())
	}
	if got := acc.ValueAt(50); got < 1990 || got > 2010 {
		t.Errorf("p50 = %d, want ≈2000", got)
	}
	if err := dec.AddTo("not base64!", acc); err == nil {
		t.Error("garbage decoded without error")
	}
}

func BenchmarkHDRDecoder(b *testing.B) {
	h := NewHDR()
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		_ = h.RecordValue(int64(500 + r.ExpFloat64()*1500))
	}
	enc, _ := EncodeHDR(h)
	acc, acc2 := NewCounts(), NewCounts()
	var dec HDRDecoder
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := dec.AddTo(enc, acc, acc2); err != nil {
			b.Fatal(err)
		}
	}
}
