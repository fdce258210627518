package results

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The nodes' own latency: what the coordinators measured, from a request's
// arrival at its coordinator to its answer (ScyllaDB's
// scylla_storage_proxy_coordinator_{write,read}_latency histograms), beside
// what the load generator measured from each operation's intended start.
// Where the client's P99 is well above the nodes', the difference was spent
// outside the nodes' request path: in the load generator, the network or,
// on one machine, the host; a report says so instead of presenting it as
// the cluster's.

// Histogram is a cumulative latency histogram: Count samples in all, N of
// them at most LE microseconds (the +Inf bucket is Count).
type Histogram struct {
	Count   float64  `json:"count"`
	Buckets []Bucket `json:"buckets,omitempty"`
}

// Bucket is one bucket of a Histogram.
type Bucket struct {
	LE float64 `json:"le"`
	N  float64 `json:"n"`
}

// CoordinatorLatency is a node's coordinator latency histograms, summed
// over its shards (NodeSample.CoordinatorLatency).
type CoordinatorLatency struct {
	Write Histogram `json:"write"`
	Read  Histogram `json:"read"`
}

type latencySample struct {
	t   time.Time
	lat *CoordinatorLatency
}

// at is how many samples were at most le microseconds: a bucket's count,
// or all of them above the last bucket kept (NodeSample keeps none past
// the first that holds every sample).
func (h Histogram) at(le float64) float64 {
	for _, b := range h.Buckets {
		if b.LE == le {
			return b.N
		}
	}
	if n := len(h.Buckets); n > 0 && le > h.Buckets[n-1].LE {
		return h.Count
	}
	return 0
}

// bounds are the bucket bounds of hs, in order.
func bounds(hs ...Histogram) []float64 {
	var les []float64
	for _, h := range hs {
		for _, b := range h.Buckets {
			les = append(les, b.LE)
		}
	}
	slices.Sort(les)
	return slices.Compact(les)
}

// sub is h minus an earlier reading of the same counters, clamped at zero
// for a node that restarted.
func (h Histogram) sub(earlier Histogram) Histogram {
	out := Histogram{Count: max(0, h.Count-earlier.Count)}
	for _, le := range bounds(h, earlier) {
		out.Buckets = append(out.Buckets, Bucket{le, min(out.Count, max(0, h.at(le)-earlier.at(le)))})
	}
	return out
}

// addHistograms sums histograms bound by bound.
func addHistograms(hs []Histogram) Histogram {
	var out Histogram
	for _, h := range hs {
		out.Count += h.Count
	}
	for _, le := range bounds(hs...) {
		var n float64
		for _, h := range hs {
			n += h.at(le)
		}
		out.Buckets = append(out.Buckets, Bucket{le, n})
	}
	return out
}

// quantileMS is the q-quantile (0..1) in ms, interpolated linearly within
// its bucket as Prometheus' histogram_quantile does; a quantile in the
// +Inf bucket is the highest bound. 0 without samples.
func (h Histogram) quantileMS(q float64) float64 {
	if h.Count <= 0 || len(h.Buckets) == 0 {
		return 0
	}
	rank := q * h.Count
	prevLE, prevN := 0.0, 0.0
	for _, b := range h.Buckets {
		if b.N >= rank {
			if b.N == prevN {
				return b.LE / 1000
			}
			return (prevLE + (b.LE-prevLE)*(rank-prevN)/(b.N-prevN)) / 1000
		}
		prevLE, prevN = b.LE, b.N
	}
	return prevLE / 1000
}

// nodeP99 is the P99 of writes and reads over all nodes' coordinators
// during [start, end]: each node's counts at the end less those at its
// last reading at or before start (none for a node that joined since).
func nodeP99(lat map[string][]latencySample, start, end time.Time) (write, read float64) {
	var ws, rs []Histogram
	for _, ss := range lat {
		var from, to *latencySample
		for i := range ss {
			s := &ss[i]
			if !s.t.After(start) {
				from = s
			}
			if !s.t.After(end) {
				to = s
			}
		}
		if to == nil || to == from {
			continue
		}
		w, r := to.lat.Write, to.lat.Read
		if from != nil {
			w, r = w.sub(from.lat.Write), r.sub(from.lat.Read)
		}
		ws, rs = append(ws, w), append(rs, r)
	}
	return addHistograms(ws).quantileMS(0.99), addHistograms(rs).quantileMS(0.99)
}

// nodeLatencyNote sets each cycle's client P99 beside the nodes' own; ""
// when the nodes exported no latency histograms.
func nodeLatencyNote(cycles []Cycle) string {
	var parts []string
	for _, c := range cycles {
		if c.NodeWriteP99MS == 0 && c.NodeReadP99MS == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s write %.2f ms (client %.2f), read %.2f ms (client %.2f)",
			c.Name, c.NodeWriteP99MS, c.WriteP99MS, c.NodeReadP99MS, c.ReadP99MS))
	}
	if len(parts) == 0 {
		return ""
	}
	return "The nodes' own P99 (their coordinators' scylla_storage_proxy_coordinator_{write,read}_latency histograms, summed over the nodes: from a request's arrival at its coordinator to its answer) beside the load generator's: " +
		strings.Join(parts, "; ") + ". What the client's P99 has above the nodes' was spent outside the nodes' request path: in the load generator, the network, or the machine they share."
}
