package results

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HDR histogram geometry shared by every writer and reader of latency.jsonl:
// values are microseconds from 1 µs to 60 s with 3 significant digits.
const (
	HDRLowestMicros  = 1
	HDRHighestMicros = 60_000_000
	HDRSigFigs       = 3
)

// NewHDR returns an empty histogram with the latency.jsonl geometry.
func NewHDR() *hdrhistogram.Histogram {
	return hdrhistogram.New(HDRLowestMicros, HDRHighestMicros, HDRSigFigs)
}

// EncodeHDR encodes h as the base64 text stored in LatencyRecord.ResponseHDR/ServiceHDR.
func EncodeHDR(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encoding HDR histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHDR decodes an encoded histogram of latency.jsonl. The empty string
// (an interval without values may omit it) decodes to an empty histogram.
func DecodeHDR(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHDR(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding HDR histogram: %w", err)
	}
	return h, nil
}

// SummarizeHDR returns the headline numbers of a microsecond histogram in milliseconds.
func SummarizeHDR(h *hdrhistogram.Histogram) Summary {
	if h == nil || h.TotalCount() == 0 {
		return Summary{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Summary{
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
		Mean: h.Mean() / 1000,
	}
}

// Window is the merged content of the latency records of one time window.
type Window struct {
	Response  *hdrhistogram.Histogram // response time (from intended start), µs
	Service   *hdrhistogram.Histogram // service time (from actual send), µs
	Count     int64                   // successful operations
	Errors    map[string]int64        // failed operations by class
	Dropped   int64
	Late      int64
	Intervals int       // records merged
	Start     time.Time // earliest record start (zero when none)
	End       time.Time // latest record end
}

// ErrorCount is the total of Errors.
func (w *Window) ErrorCount() int64 {
	var n int64
	for _, v := range w.Errors {
		n += v
	}
	return n
}

// OpsPerSec is the rate of successful operations over the merged records' span.
func (w *Window) OpsPerSec() float64 {
	d := w.End.Sub(w.Start).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(w.Count) / d
}

// MergeWindow merges the records of operation op (every operation when op is
// "") whose interval midpoint lies in [from, to). A zero from or to leaves
// that side open. Because intervals are merged as HDR histograms, the window's
// percentiles are exact (to the histogram's precision) rather than averages of
// interval percentiles.
func MergeWindow(records []LatencyRecord, from, to time.Time, op string) (*Window, error) {
	w := &Window{Response: NewHDR(), Service: NewHDR(), Errors: map[string]int64{}}
	for i := range records {
		r := &records[i]
		if op != "" && r.Op != op {
			continue
		}
		mid := r.Start.Add(r.End.Sub(r.Start) / 2)
		if (!from.IsZero() && mid.Before(from)) || (!to.IsZero() && !mid.Before(to)) {
			continue
		}
		resp, err := DecodeHDR(r.ResponseHDR)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s %s): response: %w", i, r.Op, r.Start.Format(time.RFC3339), err)
		}
		svc, err := DecodeHDR(r.ServiceHDR)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s %s): service: %w", i, r.Op, r.Start.Format(time.RFC3339), err)
		}
		w.Response.Merge(resp)
		w.Service.Merge(svc)
		w.Count += r.Count
		w.Dropped += r.Dropped
		w.Late += r.Late
		for k, v := range r.Errors {
			w.Errors[k] += v
		}
		if w.Intervals == 0 || r.Start.Before(w.Start) {
			w.Start = r.Start
		}
		if r.End.After(w.End) {
			w.End = r.End
		}
		w.Intervals++
	}
	return w, nil
}
