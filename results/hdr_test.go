package results

import (
	"testing"
	"time"
)

func TestDecodeHDR(t *testing.T) {
	h, err := DecodeHDR("")
	if err != nil || h.TotalCount() != 0 {
		t.Fatalf("empty: %v %v", h, err)
	}
	if _, err := DecodeHDR("not base64!"); err == nil {
		t.Fatal("garbage decoded")
	}
	src := NewHDR()
	for v := int64(1); v <= 1000; v++ {
		_ = src.RecordValue(v * 100)
	}
	enc, err := EncodeHDR(src)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHDR(enc)
	if err != nil {
		t.Fatal(err)
	}
	if SummarizeHDR(back) != SummarizeHDR(src) || back.TotalCount() != 1000 {
		t.Fatalf("round trip: %+v vs %+v", SummarizeHDR(back), SummarizeHDR(src))
	}
	if s := SummarizeHDR(src); s.P50 < 49.9 || s.P50 > 50.1 || s.Max < 99.9 || s.Max > 100.1 {
		t.Fatalf("summary in ms: %+v", s)
	}
}

// Merging interval histograms gives exactly the percentiles of recording
// everything in one histogram.
func TestMergeWindowIsExact(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := NewHDR()
	var recs []LatencyRecord
	for i := 0; i < 10; i++ {
		for _, op := range []string{OpWrite, OpRead} {
			h := NewHDR()
			for j := int64(0); j < 100; j++ {
				v := (j+1)*int64(i+1)*37 + 5
				_ = h.RecordValue(v)
				if op == OpWrite && i >= 3 && i < 7 {
					_ = all.RecordValue(v)
				}
			}
			enc, err := EncodeHDR(h)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, LatencyRecord{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second),
				Op: op, Count: 100, Errors: map[string]int64{"timeout": 1}, Dropped: 2, ResponseHDR: enc, ServiceHDR: enc})
		}
	}
	w, err := MergeWindow(recs, t0.Add(3*time.Second), t0.Add(7*time.Second), OpWrite)
	if err != nil {
		t.Fatal(err)
	}
	if w.Intervals != 4 || w.Count != 400 || w.Dropped != 8 || w.ErrorCount() != 4 || w.Errors["timeout"] != 4 {
		t.Fatalf("window %+v", w)
	}
	if SummarizeHDR(w.Response) != SummarizeHDR(all) {
		t.Fatalf("merged %+v, direct %+v", SummarizeHDR(w.Response), SummarizeHDR(all))
	}
	if !w.Start.Equal(t0.Add(3*time.Second)) || !w.End.Equal(t0.Add(7*time.Second)) || w.OpsPerSec() != 100 {
		t.Fatalf("span %v..%v, %v ops/s", w.Start, w.End, w.OpsPerSec())
	}
	both, _ := MergeWindow(recs, time.Time{}, time.Time{}, "")
	if both.Count != 2000 || both.Intervals != 20 {
		t.Fatalf("all ops: %d in %d records", both.Count, both.Intervals)
	}
	recs[5].ResponseHDR = "AAAA"
	if _, err := MergeWindow(recs, time.Time{}, time.Time{}, ""); err == nil {
		t.Fatal("corrupt histogram merged")
	}
}
