package reporting

import (
	"math"
	"sort"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Span kinds of the charts' shaded phases.
const (
	SpanFill   = "fill"
	SpanHold   = "hold"
	SpanSteady = "steady"
	SpanCycle  = "cycle"
	// SpanCompactions is the wait for compactions before the steady state
	// (shaded as a hold).
	SpanCompactions = "compactions"
)

// defaultMaxPoints bounds every chart series.
const defaultMaxPoints = 2000

// analysis is everything a report shows: the Result and the time series of
// its charts, computed in one pass over the run directory.
type analysis struct {
	Result   *results.Result
	Timeline *Timeline
}

// Timeline holds the downsampled series of a run's charts.
type Timeline struct {
	Start  time.Time
	End    time.Time
	Bucket time.Duration // width of one latency point
	// Latency points per operation (write, read, fill), in time order.
	Latency map[string][]LatencyPoint
	// Disk usage percent per node, in time order.
	Disk   map[string][]ValuePoint
	Stalls []StallPoint
	Spans  []Span
	// Cluster-internal series from metrics.jsonl: gauges per node (tablets,
	// reactor utilization %) and cluster-wide rates of counters (per second).
	Tablets       map[string][]ValuePoint
	Utilization   map[string][]ValuePoint
	Migrations    []ValuePoint // load_balancer_migrations_produced
	ReadTimeouts  []ValuePoint // storage_proxy_coordinator_read_timeouts
	WriteTimeouts []ValuePoint // storage_proxy_coordinator_write_timeouts
}

// Keys of NodeSample.Metrics the charts read (monitor.ScrapedMetrics without the scylla_ prefix).
const (
	MetricTablets       = "tablets_count"
	MetricUtilization   = "reactor_utilization"
	MetricMigrations    = "load_balancer_migrations_produced"
	MetricReadTimeouts  = "storage_proxy_coordinator_read_timeouts"
	MetricWriteTimeouts = "storage_proxy_coordinator_write_timeouts"
)

// LatencyPoint is one bucket of a latency series.
type LatencyPoint struct {
	Time      time.Time
	P90MS     float64
	P99MS     float64
	OpsPerSec float64
	Errors    int64
}

// ValuePoint is one sample of a series.
type ValuePoint struct {
	Time  time.Time
	Value float64
}

// StallPoint is one reactor stall.
type StallPoint struct {
	Time time.Time
	Node string
	MS   float64
}

// Span is a shaded phase of the charts.
type Span struct {
	Name  string
	Kind  string // fill | hold | steady | cycle
	Start time.Time
	End   time.Time
}

// analyzeRun reduces dir with a timeline builder watching.
func analyzeRun(dir string, maxPoints int) (*analysis, error) {
	b := newTimelineBuilder(maxPoints)
	res, err := results.Reduce(dir, b)
	if err != nil {
		return nil, err
	}
	return &analysis{Result: res, Timeline: b.finish(res)}, nil
}

// timelineBuilder is a results.Observer that buckets the records into the
// charts' series as Reduce reads them.
type timelineBuilder struct {
	tl          *Timeline
	maxPoints   int
	first, last time.Time
	phaseOpen   map[[2]string]time.Time
	stalls      []StallPoint
	lat         *latencyBuckets
	diskLast    map[string]time.Time
	gaugeLast   map[string]map[string]time.Time // metric → node → bucket of its last point
	counters    map[string]*counterRate
}

func newTimelineBuilder(maxPoints int) *timelineBuilder {
	if maxPoints <= 0 {
		maxPoints = defaultMaxPoints
	}
	return &timelineBuilder{tl: &Timeline{Latency: map[string][]LatencyPoint{}, Disk: map[string][]ValuePoint{},
		Tablets: map[string][]ValuePoint{}, Utilization: map[string][]ValuePoint{}},
		maxPoints: maxPoints, phaseOpen: map[[2]string]time.Time{}, diskLast: map[string]time.Time{},
		gaugeLast: map[string]map[string]time.Time{},
		counters:  map[string]*counterRate{MetricMigrations: newCounterRate(), MetricReadTimeouts: newCounterRate(), MetricWriteTimeouts: newCounterRate()}}
}

func (b *timelineBuilder) see(t time.Time) {
	if t.IsZero() {
		return
	}
	if b.first.IsZero() || t.Before(b.first) {
		b.first = t
	}
	if t.After(b.last) {
		b.last = t
	}
}

func (b *timelineBuilder) Event(ev *results.Event) {
	b.see(ev.Time)
	switch ev.Type {
	case results.EventPhaseStart:
		b.phaseOpen[[2]string{string(ev.Phase), ev.Name}] = ev.Time
	case results.EventPhaseEnd:
		k := [2]string{string(ev.Phase), ev.Name}
		if s, ok := b.phaseOpen[k]; ok {
			delete(b.phaseOpen, k)
			b.phase(ev.Phase, ev.Name, s, ev.Time)
		}
	case results.EventStall:
		b.stalls = append(b.stalls, StallPoint{Time: ev.Time, Node: ev.Node, MS: ev.StallMS})
	}
}

func (b *timelineBuilder) phase(phase results.Phase, name string, start, end time.Time) {
	switch phase {
	case results.PhaseFill:
		b.tl.Spans = append(b.tl.Spans, Span{Name: name, Kind: SpanFill, Start: start, End: end})
	case results.PhaseHold:
		b.tl.Spans = append(b.tl.Spans, Span{Name: "hold " + name, Kind: SpanHold, Start: start, End: end})
	case results.PhaseCompactions:
		b.tl.Spans = append(b.tl.Spans, Span{Name: results.DurCompactions, Kind: SpanCompactions, Start: start, End: end})
	}
}

// Events fixes the width of a chart bucket from the span of the events, so
// that latency records can be bucketed in one pass.
func (b *timelineBuilder) Events(from, to time.Time) {
	b.tl.Start = from
	span := to.Sub(from)
	bucket := time.Second
	if span > 0 {
		if w := span / time.Duration(b.maxPoints); w > bucket {
			bucket = w.Round(time.Second)
			if bucket < span/time.Duration(b.maxPoints) {
				bucket += time.Second
			}
		}
	}
	b.tl.Bucket = bucket
	b.lat = &latencyBuckets{tl: b.tl, bucket: bucket, open: map[latKey]*latBucket{}}
}

func (b *timelineBuilder) Latency(iv *results.Interval) {
	b.see(iv.End)
	b.lat.add(iv)
}

// Sample keeps one disk point per node per bucket (the last sample of the bucket).
func (b *timelineBuilder) Sample(s *results.NodeSample) {
	if s.Error != "" || s.DiskTotalBytes <= 0 {
		return
	}
	b.see(s.Time)
	bt := s.Time.Truncate(b.tl.Bucket)
	pts := b.tl.Disk[s.Node]
	pct := 100 * s.DiskUsedBytes / s.DiskTotalBytes
	if lt, ok := b.diskLast[s.Node]; ok && lt.Equal(bt) && len(pts) > 0 {
		pts[len(pts)-1] = ValuePoint{s.Time, pct}
	} else {
		pts = append(pts, ValuePoint{s.Time, pct})
	}
	b.tl.Disk[s.Node] = pts
	b.diskLast[s.Node] = bt
	b.gauge(b.tl.Tablets, MetricTablets, s, bt)
	b.gauge(b.tl.Utilization, MetricUtilization, s, bt)
	for name, c := range b.counters {
		if v, ok := s.Metrics[name]; ok {
			c.add(s.Node, s.Time, v)
		}
	}
}

// gauge keeps one point per node per bucket of a gauge (the bucket's last sample).
func (b *timelineBuilder) gauge(dst map[string][]ValuePoint, metric string, s *results.NodeSample, bt time.Time) {
	v, ok := s.Metrics[metric]
	if !ok {
		return
	}
	last := b.gaugeLast[metric]
	if last == nil {
		last = map[string]time.Time{}
		b.gaugeLast[metric] = last
	}
	pts := dst[s.Node]
	if lt, ok := last[s.Node]; ok && lt.Equal(bt) && len(pts) > 0 {
		pts[len(pts)-1] = ValuePoint{s.Time, v}
	} else {
		pts = append(pts, ValuePoint{s.Time, v})
	}
	dst[s.Node] = pts
	last[s.Node] = bt
}

// counterRate turns per-node counters into one cluster-wide rate: each
// node's increase between its samples, per second (a decrease is a restart:
// the counter began again from zero, as Prometheus's rate() treats it),
// summed over the nodes on a grid of chart buckets, each node contributing
// its latest rate until its last sample (nodes are not sampled at the same
// instant).
type counterRate struct {
	prev  map[string]ValuePoint
	rates map[string][]ValuePoint
}

func newCounterRate() *counterRate {
	return &counterRate{prev: map[string]ValuePoint{}, rates: map[string][]ValuePoint{}}
}

func (c *counterRate) add(node string, t time.Time, v float64) {
	p, ok := c.prev[node]
	c.prev[node] = ValuePoint{t, v}
	if !ok || !t.After(p.Time) {
		return
	}
	inc := v - p.Value
	if inc < 0 {
		inc = v
	}
	c.rates[node] = append(c.rates[node], ValuePoint{t, inc / t.Sub(p.Time).Seconds()})
}

func (c *counterRate) points(bucket time.Duration) []ValuePoint {
	grid := map[int64]bool{}
	for _, pts := range c.rates {
		for _, p := range pts {
			grid[p.Time.UnixNano()/int64(bucket)] = true
		}
	}
	keys := make([]int64, 0, len(grid))
	for k := range grid {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	idx := map[string]int{} // per node: index of its first point after the grid time
	out := make([]ValuePoint, 0, len(keys))
	for _, k := range keys {
		at := time.Unix(0, (k+1)*int64(bucket)).UTC() // end of the bucket
		var sum float64
		for node, pts := range c.rates {
			i := idx[node]
			for i < len(pts) && !pts[i].Time.After(at) {
				i++
			}
			idx[node] = i
			if i > 0 && (i < len(pts) || !at.After(pts[len(pts)-1].Time.Add(bucket))) {
				sum += pts[i-1].Value
			}
		}
		out = append(out, ValuePoint{at, sum})
	}
	return out
}

// finish completes the series once the Result is known: the cycles are shaded.
func (b *timelineBuilder) finish(res *results.Result) *Timeline {
	tl := b.tl
	if b.lat != nil {
		b.lat.flushAll()
	}
	tl.Start, tl.End = b.first, b.last // first may have moved: latency or metrics before any event
	for _, c := range res.Cycles {
		kind := SpanCycle
		if c.Name == results.SteadyStateCycle {
			kind = SpanSteady
		}
		tl.Spans = append(tl.Spans, Span{Name: c.Name, Kind: kind, Start: c.Start, End: c.End})
	}
	// Phases still open at the end (interrupted) last until the end.
	for k, s := range b.phaseOpen {
		b.phase(results.Phase(k[0]), k[1], s, b.last)
	}
	sort.SliceStable(tl.Spans, func(i, j int) bool { return tl.Spans[i].Start.Before(tl.Spans[j].Start) })
	tl.Stalls = downsampleStalls(b.stalls, b.maxPoints)
	tl.Migrations = b.counters[MetricMigrations].points(tl.Bucket)
	tl.ReadTimeouts = b.counters[MetricReadTimeouts].points(tl.Bucket)
	tl.WriteTimeouts = b.counters[MetricWriteTimeouts].points(tl.Bucket)
	return tl
}

func downsampleStalls(s []StallPoint, max int) []StallPoint {
	if len(s) <= max {
		return s
	}
	// Keep the longest stall of each group: the chart shows the worst.
	group := (len(s) + max - 1) / max
	out := make([]StallPoint, 0, max)
	for i := 0; i < len(s); i += group {
		best := s[i]
		for _, p := range s[i:min(i+group, len(s))] {
			if p.MS > best.MS {
				best = p
			}
		}
		out = append(out, best)
	}
	return out
}

// latencyBuckets merges latency records into chart buckets.
type latencyBuckets struct {
	tl     *Timeline
	bucket time.Duration
	open   map[latKey]*latBucket
	free   []*results.Counts
	newest int64
}

type latKey struct {
	op string
	b  int64
}

type latBucket struct {
	c      *results.Counts
	count  int64
	errors int64
	p90max float64 // fallback when records carry no histogram
	p99max float64
	hasHDR bool
	from   time.Time // span of the records merged: rates are per second of it
	to     time.Time
}

func (l *latencyBuckets) add(iv *results.Interval) {
	bi := int64(iv.Mid().Sub(l.tl.Start) / l.bucket)
	k := latKey{iv.Class, bi} // charts show a model's operations by class
	b := l.open[k]
	if b == nil {
		b = &latBucket{}
		if n := len(l.free); n > 0 {
			b.c, l.free = l.free[n-1], l.free[:n-1]
		} else {
			b.c = results.NewCounts()
		}
		l.open[k] = b
	}
	iv.AddTo(b.c)
	b.hasHDR = b.hasHDR || iv.HasHistogram()
	if b.from.IsZero() || iv.Start.Before(b.from) {
		b.from = iv.Start
	}
	if iv.End.After(b.to) {
		b.to = iv.End
	}
	b.count += iv.Count
	b.errors += iv.ErrorCount()
	b.p90max = math.Max(b.p90max, iv.Response.P90)
	b.p99max = math.Max(b.p99max, iv.Response.P99)
	if bi > l.newest {
		l.newest = bi
		// Records arrive in time order, give or take a loader's lag: buckets
		// two widths behind the newest are complete.
		for k, ob := range l.open {
			if k.b < bi-2 {
				l.flush(k, ob)
			}
		}
	}
}

func (l *latencyBuckets) flush(k latKey, b *latBucket) {
	delete(l.open, k)
	secs := b.to.Sub(b.from).Seconds()
	if secs <= 0 {
		secs = l.bucket.Seconds()
	}
	p := LatencyPoint{Time: b.from.Add(b.to.Sub(b.from) / 2), OpsPerSec: float64(b.count) / secs, Errors: b.errors}
	if b.hasHDR {
		p.P90MS, p.P99MS = b.c.MS(90), b.c.MS(99)
	} else {
		p.P90MS, p.P99MS = b.p90max, b.p99max
	}
	b.c.Reset()
	l.free = append(l.free, b.c)
	b.c = nil
	l.tl.Latency[k.op] = append(l.tl.Latency[k.op], p)
}

func (l *latencyBuckets) flushAll() {
	keys := make([]latKey, 0, len(l.open))
	for k := range l.open {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].b < keys[j].b })
	for _, k := range keys {
		l.flush(k, l.open[k])
	}
	for op, pts := range l.tl.Latency {
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].Time.Before(pts[j].Time) })
		l.tl.Latency[op] = pts
	}
}
