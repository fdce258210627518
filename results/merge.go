package results

import (
	"fmt"
	"sort"
	"time"
)

// MergeLoaders merges the latency.jsonl records of several loaders (each
// tagged with its Source) into one record per interval and operation: HDR
// histograms are added, counts summed. Intervals are aligned on their start
// truncated to the interval length, because loaders tick independently.
// The result is in time order and carries Source "merged".
func MergeLoaders(inputs [][]LatencyRecord, interval time.Duration) ([]LatencyRecord, error) {
	if interval <= 0 {
		interval = time.Second
	}
	type key struct {
		start time.Time
		op    string
	}
	groups := map[key]*LatencyRecord{}
	hists := map[key][2][]string{}
	for li, recs := range inputs {
		for ri := range recs {
			r := recs[ri]
			k := key{r.Start.Truncate(interval), r.Op}
			g, ok := groups[k]
			if !ok {
				g = &LatencyRecord{Start: k.start, End: k.start.Add(interval), Op: r.Op, Class: r.Class, Source: "merged"}
				groups[k] = g
			}
			g.Count += r.Count
			g.Dropped += r.Dropped
			g.Late += r.Late
			g.LoaderLagMS = max(g.LoaderLagMS, r.LoaderLagMS)
			for class, n := range r.Errors {
				if g.Errors == nil {
					g.Errors = map[string]int64{}
				}
				g.Errors[class] += n
			}
			h := hists[k]
			if r.ResponseHDR == "" && r.Count > 0 {
				return nil, fmt.Errorf("merging loader %d record %d (%s %s): no response histogram", li+1, ri+1, r.Op, r.Start.Format(time.RFC3339))
			}
			h[0] = append(h[0], r.ResponseHDR)
			h[1] = append(h[1], r.ServiceHDR)
			hists[k] = h
		}
	}
	out := make([]LatencyRecord, 0, len(groups))
	for k, g := range groups {
		for i, encs := range hists[k] {
			merged := NewHDR()
			for _, enc := range encs {
				if enc == "" {
					continue
				}
				h, err := DecodeHDR(enc)
				if err != nil {
					return nil, fmt.Errorf("merging %s %s: %w", k.op, k.start.Format(time.RFC3339), err)
				}
				merged.Merge(h)
			}
			s, err := EncodeHDR(merged)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				g.ResponseHDR, g.Response = s, SummarizeHDR(merged)
			} else {
				g.ServiceHDR, g.Service = s, SummarizeHDR(merged)
			}
		}
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].Op < out[j].Op
	})
	return out, nil
}
