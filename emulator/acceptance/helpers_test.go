package acceptance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches and parses a node's Prometheus metrics.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics of %s: %w", url, err)
	}
	return fams, nil
}

// metricSum sums the series of a family whose labels include all of want
// (key, value pairs); found is false when no series matched.
func metricSum(fams map[string]*dto.MetricFamily, name string, want ...string) (sum float64, found bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			ok := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					ok = true
				}
			}
			if !ok {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		default:
			continue
		}
		found = true
	}
	return sum, found
}

// loadResult is what an open-loop run measured.
type loadResult struct {
	Lat      []time.Duration // successful operations, from intended start, sorted
	Errors   map[string]int  // by error text (truncated)
	Intended int
}

func (r loadResult) P(p float64) time.Duration {
	if len(r.Lat) == 0 {
		return 0
	}
	return r.Lat[min(len(r.Lat)-1, int(float64(len(r.Lat))*p))]
}

func (r loadResult) String() string {
	return fmt.Sprintf("intended=%d ok=%d p50=%v p90=%v p99=%v errors=%v", r.Intended, len(r.Lat),
		r.P(0.5).Round(10*time.Microsecond), r.P(0.9).Round(10*time.Microsecond), r.P(0.99).Round(10*time.Microsecond), r.Errors)
}

// openLoop starts op at a fixed rate until ctx ends or dur passes, each in
// its own goroutine (bounded by maxInFlight: operations beyond it count as
// errors "client overloaded" rather than shifting the schedule), and
// measures latency from each operation's intended start, so queueing in
// the database shows in full.
func openLoop(ctx context.Context, rate float64, dur time.Duration, maxInFlight int, op func(ctx context.Context, seq int) error) loadResult {
	interval := time.Duration(float64(time.Second) / rate)
	n := int(dur / interval)
	res := loadResult{Errors: map[string]int{}, Intended: n}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxInFlight)
	start := time.Now()
	for i := range n {
		intended := start.Add(time.Duration(i) * interval)
		if d := time.Until(intended); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		if ctx.Err() != nil {
			res.Intended = i
			break
		}
		select {
		case sem <- struct{}{}:
		default:
			mu.Lock()
			res.Errors["client overloaded"]++
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := op(ctx, i)
			d := time.Since(intended)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				msg := err.Error()
				if len(msg) > 60 {
					msg = msg[:60]
				}
				res.Errors[msg]++
				return
			}
			res.Lat = append(res.Lat, d)
		}()
	}
	wg.Wait()
	slices.Sort(res.Lat)
	return res
}

// eventually polls cond every interval until it returns nil or ctx ends,
// returning the last error.
func eventually(ctx context.Context, interval time.Duration, cond func() error) error {
	var err error
	for {
		if err = cond(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}

// waitNoCompactions waits until no node has a compaction running, as the
// runner does before a steady state and SCT's wait_no_compactions_running
// (sum of scylla_compaction_manager_compactions): a fill leaves compaction
// work that competes with requests until it is done.
func waitNoCompactions(ctx context.Context, t testing.TB, nodes []*tnode) {
	t.Helper()
	start := time.Now()
	err := eventually(ctx, 200*time.Millisecond, func() error {
		for _, n := range nodes {
			v, err := n.metric(ctx, "scylla_compaction_manager_compactions")
			if err != nil {
				return err
			}
			if v > 0 {
				return fmt.Errorf("%s: %.0f compactions running", n.Addr, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("waiting for compactions to end: %v", err)
	}
	t.Logf("compactions settled in %v", time.Since(start).Round(100*time.Millisecond))
}
