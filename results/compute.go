package results

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// FormatVersion is the result.json format this package writes and reads.
const FormatVersion = 1

// Names of the durations computed from nemesis step events.
const (
	DurAddNodes     = "Add new node(s)"   // step requested → all new nodes UN
	DurNodesReady   = "New node(s) ready" // new nodes UN → data balanced (they serve their share)
	DurRemoveNodes  = "Remove node(s)"    // shrink requested → nodes left
	DurDrainNodes   = "Drain node(s)"     // drain requested → nodes left
	DurDataBalanced = "Data balanced"     // step requested → no tablet migrations in flight
	DurLatencyRecov = "Latency recovered" // step requested → P99 back under its target
)

// Span kinds of the timeline's shaded phases.
const (
	SpanFill   = "fill"
	SpanHold   = "hold"
	SpanSteady = "steady"
	SpanCycle  = "cycle"
)

// Analysis is everything a report shows: the Result and the time series of
// the charts, computed in one pass over the run directory.
type Analysis struct {
	Result   *Result
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
}

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

// Options tune Analyze.
type Options struct {
	// MaxPoints bounds every chart series (default 2000).
	MaxPoints int
}

// Compute rebuilds the Result of a run from its .jsonl files alone, so that
// an interrupted run can be reported. Thresholds are not evaluated here
// (reporting.Evaluate does that).
func Compute(dir string) (*Result, error) {
	a, err := Analyze(dir, Options{})
	if err != nil {
		return nil, err
	}
	return a.Result, nil
}

type cycleAcc struct {
	c            Cycle
	open         bool
	write, read  *Counts
	wCount       int64
	rCount       int64
	stalls       []float64
	stallPerNode map[string]int64
}

type stepKey struct{ step, cycle string }

type phaseKey struct{ phase, name string }

// anchorSlack is how long after a phase a node's first sample may come and
// still describe the phase (monitors sample every few seconds).
const anchorSlack = 30 * time.Second

type anchor struct {
	name string
	t    time.Time
	// best sample per node: the last at or before t, else the first after.
	best map[string]NodeSample
}

// Analyze reads events.jsonl, latency.jsonl and metrics.jsonl of dir.
func Analyze(dir string, opt Options) (*Analysis, error) {
	if opt.MaxPoints <= 0 {
		opt.MaxPoints = 2000
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading results directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("results directory %s is not a directory", dir)
	}
	res := &Result{FormatVersion: FormatVersion, Status: StatusInterrupted, Nodes: []NodeInfo{}, Cycles: []Cycle{},
		Disk: []DiskPhase{}, Durations: []Duration{}, Steps: []StepTiming{}, Errors: []ErrorSummary{}, Verdicts: []Verdict{}}
	tl := &Timeline{Latency: map[string][]LatencyPoint{}, Disk: map[string][]ValuePoint{}}
	a := &Analysis{Result: res, Timeline: tl}

	var (
		first, last time.Time
		sawRunEnd   bool
		cycles      []*cycleAcc
		cycleByName = map[string]*cycleAcc{}
		steps       []*StepTiming
		stepBy      = map[stepKey]*StepTiming{}
		phaseOpen   = map[phaseKey]time.Time{}
		stalls      []StallPoint
		errIdx      = map[[2]string]int{}
		addedNodes  []NodeInfo
		nodeSeen    = map[string]bool{}
		addedAt     = map[string]time.Time{}
		snapshots   = map[string]bool{}
	)
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	evPath := filepath.Join(dir, FileEvents)
	err = ReadJSONL(evPath, func(line int, ev *Event) error {
		see(ev.Time)
		switch ev.Type {
		case EventRunStart:
			res.StartedAt = ev.Time
			if ev.Setup != nil {
				res.Setup = *ev.Setup
			}
		case EventProgress:
			if ev.Setup != nil { // e.g. "calibrated": the setup again, with the rate known
				res.Setup = *ev.Setup
			}
		case EventRunEnd:
			sawRunEnd = true
			res.Status, res.Reason, res.EndedAt = ev.Status, ev.Message, ev.Time
		case EventPhaseStart:
			phaseOpen[phaseKey{ev.Phase, ev.Name}] = ev.Time
		case EventPhaseEnd:
			k := phaseKey{ev.Phase, ev.Name}
			if s, ok := phaseOpen[k]; ok {
				delete(phaseOpen, k)
				addPhase(res, tl, ev.Phase, ev.Name, s, ev.Time)
			}
		case EventCycleStart:
			c := &cycleAcc{c: Cycle{Name: ev.Cycle, Step: ev.Step, Start: ev.Time}, open: true, write: NewCounts(), read: NewCounts(), stallPerNode: map[string]int64{}}
			if old, ok := cycleByName[ev.Cycle]; ok { // a restarted cycle: keep the later one
				*old = *c
			} else {
				cycleByName[ev.Cycle] = c
				cycles = append(cycles, c)
			}
		case EventCycleEnd:
			if c, ok := cycleByName[ev.Cycle]; ok && c.open {
				c.c.End, c.open = ev.Time, false
			}
		case EventDiskSnapshot:
			snapshots[ev.Name] = true
			res.Disk = append(res.Disk, diskPhase(ev.Name, ev.Time, ev.Disk, "snapshot"))
		case EventStepRequested, EventNodesNormal, EventDataBalanced, EventLatencyRecov, EventStepEnd:
			k := stepKey{ev.Step, ev.Cycle}
			s := stepBy[k]
			if s == nil {
				s = &StepTiming{Step: ev.Step, Cycle: ev.Cycle, Kind: ev.Kind, Mode: ev.Mode, RequestedAt: ev.Time}
				stepBy[k] = s
				steps = append(steps, s)
			}
			if s.Kind == "" {
				s.Kind = ev.Kind
			}
			if s.Mode == "" {
				s.Mode = ev.Mode
			}
			t := ev.Time
			switch ev.Type {
			case EventStepRequested:
				s.RequestedAt = t
				if len(ev.Nodes) > 0 {
					s.Nodes = ev.Nodes
				}
			case EventNodesNormal:
				s.NormalAt = &t
				if len(ev.Nodes) > 0 {
					s.Nodes = ev.Nodes
				}
				if s.Kind == "grow" {
					for _, n := range ev.Nodes {
						if !nodeSeen[n] {
							nodeSeen[n] = true
							addedAt[n] = t
							addedNodes = append(addedNodes, NodeInfo{Name: n, AddedBy: ev.Step})
						}
					}
				}
			case EventDataBalanced:
				s.BalancedAt = &t
			case EventLatencyRecov:
				s.RecoveredAt = &t
			case EventStepEnd:
				s.EndedAt = &t
			}
		case EventStall:
			stalls = append(stalls, StallPoint{Time: ev.Time, Node: ev.Node, MS: ev.StallMS})
		case EventDBError:
			typ := ev.ErrorType
			if typ == "" {
				typ = "DATABASE_ERROR"
			}
			k := [2]string{typ, ev.Node}
			if i, ok := errIdx[k]; ok {
				res.Errors[i].Count++
				if ev.Time.Before(res.Errors[i].First) {
					res.Errors[i].First, res.Errors[i].Line = ev.Time, ev.Line
				}
			} else {
				errIdx[k] = len(res.Errors)
				res.Errors = append(res.Errors, ErrorSummary{Type: typ, Node: ev.Node, Severity: ev.Severity, Count: 1, First: ev.Time, Line: ev.Line})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the timeline: %w", err)
	}
	for _, n := range res.Setup.InitialNodes {
		nodeSeen[n.Name] = true
	}

	// Span of the charts: known from the events before the latency pass, so
	// that points can be bucketed in one pass.
	tl.Start = first
	span := last.Sub(first)
	bucket := time.Second
	if span > 0 && opt.MaxPoints > 0 {
		if b := span / time.Duration(opt.MaxPoints); b > bucket {
			bucket = b.Round(time.Second)
			if bucket < span/time.Duration(opt.MaxPoints) {
				bucket += time.Second
			}
		}
	}
	tl.Bucket = bucket

	// Anchors of disk phases that have no snapshot event: read them from metrics.
	var anchors []*anchor
	for _, f := range res.Setup.FillTargets {
		if snapshots[f.Name] {
			continue
		}
		for _, d := range res.Durations {
			if d.Name == f.Name && d.Step == "" {
				anchors = append(anchors, &anchor{name: f.Name, t: d.End, best: map[string]NodeSample{}})
			}
		}
	}
	if !snapshots["Scale out"] {
		var at time.Time
		for _, s := range steps {
			if s.Kind == "grow" || s.Kind == "shrink" || s.Kind == "drain" {
				if s.EndedAt != nil && s.EndedAt.After(at) {
					at = *s.EndedAt
				}
			}
		}
		if !at.IsZero() {
			anchors = append(anchors, &anchor{name: "Scale out", t: at, best: map[string]NodeSample{}})
		}
	}
	var final *anchor
	if !snapshots["Final"] {
		final = &anchor{name: "Final", best: map[string]NodeSample{}} // last sample of every node
		anchors = append(anchors, final)
	}

	// Latency: one pass, every record decoded once into its cycle and its chart bucket.
	lat := &latencyPass{tl: tl, bucket: bucket, cycles: cycles, open: map[latKey]*latBucket{}}
	latPath := filepath.Join(dir, FileLatency)
	err = readLatency(latPath, func(line int, d *decodedLine) error {
		see(d.rec.End)
		lat.add(d)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading latencies: %w", err)
	}
	lat.flushAll()

	// Metrics: disk per node for the charts and for missing snapshots.
	metPath := filepath.Join(dir, FileMetrics)
	nodeMeta := map[string]NodeSample{}
	diskLast := map[string]time.Time{}
	err = ReadJSONL(metPath, func(line int, s *NodeSample) error {
		if s.Error != "" || s.DiskTotalBytes <= 0 {
			return nil
		}
		see(s.Time)
		if _, ok := nodeMeta[s.Node]; !ok {
			nodeMeta[s.Node] = NodeSample{Node: s.Node, Rack: s.Rack, InstanceType: s.InstanceType, Address: s.Address, DiskTotalBytes: s.DiskTotalBytes}
		}
		for _, an := range anchors {
			b, ok := an.best[s.Node]
			switch {
			case an == final:
				if !ok || !s.Time.Before(b.Time) {
					an.best[s.Node] = *s
				}
			case !ok:
				an.best[s.Node] = *s
			case !s.Time.After(an.t) && s.Time.After(b.Time):
				an.best[s.Node] = *s
			case b.Time.After(an.t) && s.Time.Before(b.Time):
				an.best[s.Node] = *s
			}
		}
		// Chart: one point per node per bucket (the last sample of the bucket).
		bt := s.Time.Truncate(bucket)
		pts := tl.Disk[s.Node]
		pct := 100 * s.DiskUsedBytes / s.DiskTotalBytes
		if lt, ok := diskLast[s.Node]; ok && lt.Equal(bt) && len(pts) > 0 {
			pts[len(pts)-1] = ValuePoint{s.Time, pct}
		} else {
			pts = append(pts, ValuePoint{s.Time, pct})
		}
		tl.Disk[s.Node] = pts
		diskLast[s.Node] = bt
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	if final != nil && !last.IsZero() {
		final.t = last
	}
	for _, an := range anchors {
		if len(an.best) == 0 {
			continue
		}
		var disk []NodeDisk
		for _, s := range an.best {
			// A node first seen well after the phase did not exist then.
			if an != final && s.Time.After(an.t.Add(anchorSlack)) {
				continue
			}
			if at, ok := addedAt[s.Node]; ok && an != final && at.After(an.t) {
				continue // joined after the phase
			}
			disk = append(disk, sampleDisk(s))
		}
		if len(disk) == 0 {
			continue
		}
		sort.Slice(disk, func(i, j int) bool { return nodeLess(disk[i].Node, disk[j].Node) })
		res.Disk = append(res.Disk, diskPhase(an.name, an.t, disk, "metrics"))
	}
	sortDisk(res.Disk, res.Setup.FillTargets)

	// End of the run.
	if res.StartedAt.IsZero() {
		res.StartedAt = first
	}
	if !sawRunEnd {
		res.Status, res.EndedAt = StatusInterrupted, last
		if res.Reason == "" {
			res.Reason = "the run did not record its end (interrupted or still running)"
		}
	}
	if res.EndedAt.IsZero() {
		res.EndedAt = last
	}
	tl.Start, tl.End = first, last // first may have moved: latency or metrics before any event

	// Cycles.
	for _, c := range cycles {
		if c.open || c.c.End.IsZero() {
			c.c.End = last
		}
		c.c.DurationS = c.c.End.Sub(c.c.Start).Seconds()
		if d := c.c.DurationS; d > 0 {
			c.c.WriteOpsPerS = float64(c.wCount) / d
			c.c.ReadOpsPerS = float64(c.rCount) / d
		}
		c.c.WriteP90MS, c.c.WriteP99MS = c.write.MS(90), c.write.MS(99)
		c.c.ReadP90MS, c.c.ReadP99MS = c.read.MS(90), c.read.MS(99)
		for _, s := range stalls {
			if !s.Time.Before(c.c.Start) && s.Time.Before(c.c.End) {
				c.stalls = append(c.stalls, s.MS)
				c.stallPerNode[s.Node]++
			}
		}
		c.c.Stalls = stallsOf(c.stalls, c.stallPerNode)
		res.Cycles = append(res.Cycles, c.c)
		kind := SpanCycle
		if c.c.Name == SteadyStateCycle {
			kind = SpanSteady
		}
		tl.Spans = append(tl.Spans, Span{Name: c.c.Name, Kind: kind, Start: c.c.Start, End: c.c.End})
	}
	sort.SliceStable(res.Cycles, func(i, j int) bool { return res.Cycles[i].Start.Before(res.Cycles[j].Start) })
	all := make([]float64, len(stalls))
	perNode := map[string]int64{}
	for i, s := range stalls {
		all[i] = s.MS
		perNode[s.Node]++
	}
	res.Stalls = stallsOf(all, perNode)
	tl.Stalls = downsampleStalls(stalls, opt.MaxPoints)

	// Phases still open at the end (interrupted) last until the end.
	for k, s := range phaseOpen {
		if k.phase == "fill" || k.phase == "hold" {
			addPhase(res, tl, k.phase, k.name, s, last)
		}
	}
	sort.SliceStable(tl.Spans, func(i, j int) bool { return tl.Spans[i].Start.Before(tl.Spans[j].Start) })

	// Steps and their durations.
	for _, s := range steps {
		res.Steps = append(res.Steps, *s)
		res.Durations = append(res.Durations, stepDurations(s)...)
	}

	// Nodes: the initial ones, then those the nemesis added.
	res.Nodes = append(res.Nodes, res.Setup.InitialNodes...)
	for _, n := range addedNodes {
		if m, ok := nodeMeta[n.Name]; ok {
			n.Rack, n.InstanceType, n.Address, n.DiskBytes = m.Rack, m.InstanceType, m.Address, m.DiskTotalBytes
		}
		if n.InstanceType == "" {
			for _, st := range res.Setup.Nemesis {
				if st.Name == n.AddedBy {
					n.InstanceType = st.InstanceType
				}
			}
		}
		res.Nodes = append(res.Nodes, n)
	}
	for i := range res.Nodes {
		if res.Nodes[i].VCPUs == 0 {
			for _, o := range res.Nodes {
				if o.InstanceType == res.Nodes[i].InstanceType && o.VCPUs > 0 {
					res.Nodes[i].VCPUs = o.VCPUs
				}
			}
		}
	}
	return a, nil
}

// SteadyStateCycle is the name of the steady-state cycle.
const SteadyStateCycle = "Cycle #0"

func addPhase(res *Result, tl *Timeline, phase, name string, start, end time.Time) {
	switch phase {
	case "fill":
		res.Durations = append(res.Durations, Duration{Name: name, Start: start, End: end, Seconds: end.Sub(start).Seconds()})
		tl.Spans = append(tl.Spans, Span{Name: name, Kind: SpanFill, Start: start, End: end})
	case "hold":
		tl.Spans = append(tl.Spans, Span{Name: "hold " + name, Kind: SpanHold, Start: start, End: end})
	}
}

func stepDurations(s *StepTiming) []Duration {
	d := func(name string, from time.Time, to *time.Time) []Duration {
		if to == nil || from.IsZero() {
			return nil
		}
		return []Duration{{Name: name, Step: s.Step, Cycle: s.Cycle, Start: from, End: *to, Seconds: to.Sub(from).Seconds()}}
	}
	var out []Duration
	switch s.Kind {
	case "grow":
		out = append(out, d(DurAddNodes, s.RequestedAt, s.NormalAt)...)
		if s.NormalAt != nil {
			out = append(out, d(DurNodesReady, *s.NormalAt, s.BalancedAt)...)
		}
	case "shrink":
		out = append(out, d(DurRemoveNodes, s.RequestedAt, s.NormalAt)...)
	case "drain":
		out = append(out, d(DurDrainNodes, s.RequestedAt, s.NormalAt)...)
	case "hook":
		return d("Hook "+s.Step, s.RequestedAt, s.EndedAt)
	default:
		return nil
	}
	out = append(out, d(DurDataBalanced, s.RequestedAt, s.BalancedAt)...)
	out = append(out, d(DurLatencyRecov, s.RequestedAt, s.RecoveredAt)...)
	return out
}

func stallsOf(ms []float64, perNode map[string]int64) Stalls {
	s := Stalls{Total: int64(len(ms)), Buckets: make([]StallBucket, len(StallThresholdsMS))}
	for i, t := range StallThresholdsMS {
		s.Buckets[i].ThresholdMS = t
		for _, m := range ms {
			if m >= float64(t) {
				s.Buckets[i].Count++
			}
		}
	}
	if len(perNode) > 0 {
		s.PerNode = perNode
	}
	return s
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

func sampleDisk(s NodeSample) NodeDisk {
	const gb = 1e9
	d := NodeDisk{Node: s.Node, Rack: s.Rack, InstanceType: s.InstanceType, TotalGB: s.DiskTotalBytes / gb, UsedGB: s.DiskUsedBytes / gb, AvailGB: s.DiskAvailBytes / gb}
	if d.AvailGB == 0 && d.TotalGB > d.UsedGB {
		d.AvailGB = d.TotalGB - d.UsedGB
	}
	if d.TotalGB > 0 {
		d.UsagePercent = 100 * d.UsedGB / d.TotalGB
	}
	return d
}

// diskPhase splits a snapshot into nodes and the cluster row, computing the
// cluster row when the writer did not include one.
func diskPhase(name string, t time.Time, disk []NodeDisk, source string) DiskPhase {
	p := DiskPhase{Phase: name, Time: t, Source: source}
	var sum NodeDisk
	haveCluster := false
	for _, d := range disk {
		if d.Node == "cluster" {
			p.Cluster, haveCluster = d, true
			continue
		}
		p.Nodes = append(p.Nodes, d)
		sum.TotalGB += d.TotalGB
		sum.UsedGB += d.UsedGB
		sum.AvailGB += d.AvailGB
	}
	if !haveCluster {
		sum.Node = "cluster"
		if sum.TotalGB > 0 {
			sum.UsagePercent = 100 * sum.UsedGB / sum.TotalGB
		}
		p.Cluster = sum
	}
	return p
}

// sortDisk orders phases: fill targets in scenario order, then by time.
func sortDisk(d []DiskPhase, fills []FillTarget) {
	rank := func(p DiskPhase) int {
		for i, f := range fills {
			if f.Name == p.Phase {
				return i
			}
		}
		switch p.Phase {
		case "Scale out":
			return len(fills) + 1
		case "Final":
			return len(fills) + 2
		}
		return len(fills)
	}
	sort.SliceStable(d, func(i, j int) bool {
		ri, rj := rank(d[i]), rank(d[j])
		if ri != rj {
			return ri < rj
		}
		return d[i].Time.Before(d[j].Time)
	})
}

// nodeLess orders node-2 before node-10.
func nodeLess(a, b string) bool {
	na, nb := trailingNumber(a), trailingNumber(b)
	pa, pb := strings.TrimRight(a, "0123456789"), strings.TrimRight(b, "0123456789")
	if pa != pb || na < 0 || nb < 0 {
		return a < b
	}
	return na < nb
}

func trailingNumber(s string) int {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return -1
	}
	n := 0
	for _, c := range s[i:] {
		n = n*10 + int(c-'0')
	}
	return n
}

// latencyPass accumulates latency records into cycles and chart buckets.
type latencyPass struct {
	tl     *Timeline
	bucket time.Duration
	cycles []*cycleAcc
	open   map[latKey]*latBucket
	free   []*Counts
	newest int64
}

type latKey struct {
	op string
	b  int64
}

type latBucket struct {
	c      *Counts
	count  int64
	errors int64
	p90max float64 // fallback when records carry no histogram
	p99max float64
	hasHDR bool
	from   time.Time // span of the records merged: rates are per second of it
	to     time.Time
}

func (l *latencyPass) add(d *decodedLine) {
	r := &d.rec
	mid := r.Start.Add(r.End.Sub(r.Start) / 2)
	var dst [3]*Counts
	dsts := dst[:0]
	for _, c := range l.cycles {
		if mid.Before(c.c.Start) || (!c.open && !mid.Before(c.c.End)) {
			continue
		}
		switch r.Op {
		case OpWrite:
			dsts = append(dsts, c.write)
			c.wCount += r.Count
		case OpRead:
			dsts = append(dsts, c.read)
			c.rCount += r.Count
		default:
			continue
		}
		var errs int64
		for _, n := range r.Errors {
			errs += n
		}
		c.c.Errors += errs
		c.c.Dropped += r.Dropped
		break
	}
	bi := int64(mid.Sub(l.tl.Start) / l.bucket)
	k := latKey{r.Op, bi}
	b := l.open[k]
	if b == nil {
		b = &latBucket{}
		if n := len(l.free); n > 0 {
			b.c, l.free = l.free[n-1], l.free[:n-1]
		} else {
			b.c = NewCounts()
		}
		l.open[k] = b
	}
	dsts = append(dsts, b.c)
	for _, c := range dsts {
		c.addPacked(d.pairs)
	}
	b.hasHDR = b.hasHDR || d.pairs != nil
	if b.from.IsZero() || r.Start.Before(b.from) {
		b.from = r.Start
	}
	if r.End.After(b.to) {
		b.to = r.End
	}
	b.count += r.Count
	for _, n := range r.Errors {
		b.errors += n
	}
	b.p90max = math.Max(b.p90max, r.Response.P90)
	b.p99max = math.Max(b.p99max, r.Response.P99)
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

func (l *latencyPass) flush(k latKey, b *latBucket) {
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

func (l *latencyPass) flushAll() {
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
