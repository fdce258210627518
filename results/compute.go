package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// FormatVersion is the result.json format this package writes and reads.
//
// Version 2: stall buckets are SCT's (each stall once, labelled by its
// exclusive upper bound; label and below_ms instead of threshold_ms).
const FormatVersion = 2

// Observer sees every record Reduce folds, in file order: events.jsonl
// first, then latency.jsonl, then metrics.jsonl. Reporting builds its
// charts from them without reading the files a second time.
type Observer interface {
	Event(ev *Event)
	// Events is called once events.jsonl has been read: from and to span its events.
	Events(from, to time.Time)
	Latency(iv *Interval)
	Sample(s *NodeSample)
}

// Interval is one latency.jsonl record as Reduce reads it: its numbers and
// its decoded response histogram (the service histogram is not read).
type Interval struct {
	Start, End time.Time
	Op         string
	Class      string // OpWrite or OpRead (LatencyRecord.OpClass); OpFill for fills
	Count      int64
	Errors     map[string]int64
	Dropped    int64
	Response   Summary
	Source     string
	LoaderLag  float64 // ms (LatencyRecord.LoaderLagMS)
	pairs      []packedCount
}

// HasHistogram reports whether the record carried a response histogram.
func (iv *Interval) HasHistogram() bool { return iv.pairs != nil }

// AddTo adds the response histogram to every dst.
func (iv *Interval) AddTo(dst ...*Counts) {
	for _, c := range dst {
		c.addPacked(iv.pairs)
	}
}

// ErrorCount is the number of failed operations of the interval.
func (iv *Interval) ErrorCount() int64 {
	var n int64
	for _, v := range iv.Errors {
		n += v
	}
	return n
}

// Mid is the interval's midpoint: a record belongs to the window holding it.
func (iv *Interval) Mid() time.Time { return iv.Start.Add(iv.End.Sub(iv.Start) / 2) }

// Compute rebuilds the Result of a run from its .jsonl files alone, so that
// an interrupted run can be reported. Thresholds are not evaluated here
// (reporting.Evaluate does that).
func Compute(dir string) (*Result, error) { return Reduce(dir) }

// Reduce reads events.jsonl, latency.jsonl and metrics.jsonl of dir once,
// folding every record into the Result and showing it to every observer.
func Reduce(dir string, obs ...Observer) (*Result, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading results directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("results directory %s is not a directory", dir)
	}
	r := newReducer()
	err = ReadJSONL(filepath.Join(dir, FileEvents), func(line int, ev *Event) error {
		r.event(ev)
		for _, o := range obs {
			o.Event(ev)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the timeline: %w", err)
	}
	r.eventsDone()
	for _, o := range obs {
		o.Events(r.first, r.last)
	}
	err = readLatency(filepath.Join(dir, FileLatency), func(line int, d *decodedLine) error {
		iv := Interval{Start: d.rec.Start, End: d.rec.End, Op: d.rec.Op, Class: d.rec.OpClass(), Count: d.rec.Count, Errors: d.rec.Errors,
			Dropped: d.rec.Dropped, Response: d.rec.Response, Source: d.rec.Source, LoaderLag: d.rec.LoaderLagMS, pairs: d.pairs}
		r.latency(&iv)
		for _, o := range obs {
			o.Latency(&iv)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading latencies: %w", err)
	}
	err = ReadJSONL(filepath.Join(dir, FileMetrics), func(line int, s *NodeSample) error {
		r.sample(s)
		for _, o := range obs {
			o.Sample(s)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	return r.finish(), nil
}

// reducer folds a run's records into its Result: one method per event type,
// then one per latency record and metrics sample, then finish.
type reducer struct {
	// usage is every node's disk usage over time (the rack balance table).
	usage       map[string][]usagePoint
	res         *Result
	first, last time.Time
	sawRunEnd   bool
	cycles      []*cycleAcc
	cycleByName map[string]*cycleAcc
	steps       []*StepTiming
	stepBy      map[stepKey]*StepTiming
	phaseOpen   map[phaseKey]time.Time
	stalls      []stall
	suppressed  []stall
	errIdx      map[[2]string]int
	errEvents   []ErrorEvent
	phaseSpans  []phaseSpan
	addedNodes  []NodeInfo
	nodeSeen    map[string]bool
	addedAt     map[string]time.Time
	snapshots   map[string]bool
	// Disk phases without a snapshot event are read from metrics.jsonl.
	anchors  []*anchor
	final    *anchor
	nodeMeta map[string]NodeSample
	recov    RecoverySeries
	// phasePlan holds the plan's estimates of fill phases by name.
	phasePlan map[string]float64
	fallback  map[string]bool // nodes whose disk usage came from REST load
	hostFS    map[string]bool // nodes whose disk figures are the host's file system
	// thresholds: each node's stall threshold from its command line.
	thresholds map[string]float64
	steal      map[string][]counterSample // the nodes' reactor_cpu_steal_time_ms
	cpu        map[string][]counterSample // their machines' steal seconds of all CPU seconds
	backlog    map[string][]counterSample // the nodes' normalized compaction backlog (a gauge)
	reactor    map[string][]counterSample // the nodes' busiest shard's reactor utilization (a gauge)
	cache      map[string][]counterSample // the nodes' row cache hits (v) and look-ups (of), counters
	lat        map[string][]latencySample // the nodes' coordinator latency histograms
	// compactionNotes are the warnings of the compactions phase (not
	// settled, not exported): limitations of the steady state.
	compactionNotes []string
}

type cycleAcc struct {
	c           Cycle
	open        bool
	write, read *Counts
	wCount      int64
	rCount      int64
	ops         map[string]*opAcc          // per operation name
	opOrder     []string                   // in the order the records first name them
	loaderLag   map[loaderInterval]float64 // ms per loader interval
	// lagged are the intervals in which a loader lagged HostBoundLagMSPerS
	// per second or more (seconds per loader interval), laggedW and laggedR
	// their write and read records (made with the first).
	lagged           map[loaderInterval]float64
	laggedW, laggedR *Counts
	// from, to span the intervals counted in the cycle: its throughput is
	// per second of them, since a cycle holds the whole intervals whose
	// midpoint it holds (four or five in a 4.5 s cycle), not its wall time.
	from, to time.Time
}

// opAcc is one operation's records in a cycle.
type opAcc struct {
	class           string
	counts          *Counts
	count, errs, dr int64
}

// addOp folds iv into its operation's figures.
func (c *cycleAcc) addOp(iv *Interval) {
	o := c.ops[iv.Op]
	if o == nil {
		if c.ops == nil {
			c.ops = map[string]*opAcc{}
		}
		o = &opAcc{class: iv.Class, counts: NewCounts()}
		c.ops[iv.Op] = o
		c.opOrder = append(c.opOrder, iv.Op)
	}
	iv.AddTo(o.counts)
	o.count += iv.Count
	o.errs += iv.ErrorCount()
	o.dr += iv.Dropped
}

// opFigures are the cycle's figures per operation over d seconds.
func (c *cycleAcc) opFigures(d float64) []OpFigures {
	var out []OpFigures
	for _, name := range c.opOrder {
		o := c.ops[name]
		f := OpFigures{Name: name, Class: o.class, Count: o.count, Errors: o.errs, Dropped: o.dr,
			P50MS: o.counts.MS(50), P90MS: o.counts.MS(90), P99MS: o.counts.MS(99)}
		if d > 0 {
			f.OpsPerS = float64(o.count) / d
		}
		out = append(out, f)
	}
	return out
}

type stall struct {
	t    time.Time
	node string
	ms   float64
	n    int64 // suppressed reports (stall_reports_suppressed)
}

type stepKey struct{ step, cycle string }

type phaseSpan struct {
	phase      Phase
	start, end time.Time
}

type phaseKey struct {
	phase Phase
	name  string
}

// anchorSlack is how long after a phase a node's first sample may come and
// still describe the phase (monitors sample every few seconds).
const anchorSlack = 30 * time.Second

type anchor struct {
	name string
	t    time.Time
	// best sample per node: the last at or before t, else the first after.
	best map[string]NodeSample
}

func newReducer() *reducer {
	return &reducer{
		res: &Result{FormatVersion: FormatVersion, Status: StatusInterrupted, Nodes: []NodeInfo{}, Cycles: []Cycle{},
			Disk: []DiskPhase{}, Durations: []Duration{}, Steps: []StepTiming{}, Errors: []ErrorSummary{}, Verdicts: []Verdict{}},
		cycleByName: map[string]*cycleAcc{}, stepBy: map[stepKey]*StepTiming{}, phaseOpen: map[phaseKey]time.Time{},
		errIdx: map[[2]string]int{}, nodeSeen: map[string]bool{}, addedAt: map[string]time.Time{}, snapshots: map[string]bool{},
		nodeMeta: map[string]NodeSample{},
	}
}

// see widens the run's span.
func (r *reducer) see(t time.Time) {
	if t.IsZero() {
		return
	}
	if r.first.IsZero() || t.Before(r.first) {
		r.first = t
	}
	if t.After(r.last) {
		r.last = t
	}
}

func (r *reducer) event(ev *Event) {
	r.see(ev.Time)
	switch ev.Type {
	case EventRunStart:
		r.runStart(ev)
	case EventProgress:
		r.progress(ev)
	case EventRunEnd:
		r.runEnd(ev)
	case EventPhaseStart:
		r.phaseStart(ev)
	case EventPhaseEnd:
		r.phaseEnd(ev)
	case EventCycleStart:
		r.cycleStart(ev)
	case EventCycleEnd:
		r.cycleEnd(ev)
	case EventDiskSnapshot:
		r.diskSnapshot(ev)
	case EventStepRequested:
		r.stepRequested(ev)
	case EventNodesNormal:
		r.nodesNormal(ev)
	case EventDataBalanced:
		r.step(ev).BalancedAt = timePtr(ev.Time)
	case EventLatencyRecov:
		r.step(ev).RecoveredAt = timePtr(ev.Time)
	case EventStepEnd:
		r.step(ev).EndedAt = timePtr(ev.Time)
	case EventCleanupStart:
		r.step(ev).CleanupStartAt = timePtr(ev.Time)
	case EventCleanupEnd:
		r.step(ev).CleanupEndAt = timePtr(ev.Time)
	case EventCleanupSkipped:
		r.step(ev).CleanupSkipped = ev.Message
	case EventNodeOp:
		r.nodeOp(ev)
	case EventStall:
		r.stalls = append(r.stalls, stall{t: ev.Time, node: ev.Node, ms: ev.StallMS})
	case EventStallsSuppressed:
		r.suppressed = append(r.suppressed, stall{t: ev.Time, node: ev.Node, n: ev.Count})
	case EventStallThreshold:
		if r.thresholds == nil {
			r.thresholds = map[string]float64{}
		}
		r.thresholds[ev.Node] = ev.StallMS
	case EventDBError:
		r.dbError(ev)
	case EventCapacity:
		r.res.CapacityAfterOps = ev.CapacityOps
		r.probe(ev)
	case EventWarning:
		if ev.Phase == PhaseCompactions && ev.Message != "" {
			r.compactionNotes = append(r.compactionNotes, "Warning: "+ev.Message)
		}
	case EventValidation:
		if ev.Validation != nil {
			r.res.Validations = append(r.res.Validations, *ev.Validation)
		}
	}
}

func timePtr(t time.Time) *time.Time { return &t }

func (r *reducer) runStart(ev *Event) {
	r.res.StartedAt = ev.Time
	if ev.Setup != nil {
		r.res.Setup = *ev.Setup
	}
}

// progress: e.g. "calibrated" carries the setup again, with the rate known.
func (r *reducer) progress(ev *Event) {
	if ev.Setup != nil {
		r.res.Setup = *ev.Setup
	}
	r.probe(ev)
}

// probe keeps the capacity probe an event carries; finishProbes judges it.
func (r *reducer) probe(ev *Event) {
	if ev.Probe != nil {
		r.res.CapacityProbes = append(r.res.CapacityProbes, *ev.Probe)
	}
}

// finishProbes measures the nodes' lag, CPU steal and reactor utilization
// during each capacity probe and judges whether the host bounded it, as a
// cycle's, and whether the nodes' CPU could have (ProbeReactorSaturatedPct).
func (r *reducer) finishProbes() {
	for i := range r.res.CapacityProbes {
		p := &r.res.CapacityProbes[i]
		p.HostLagMSPerS = hostLag(r.steal, p.Start, p.End)
		p.CPUStealPct = cpuSteal(r.cpu, p.Start, p.End)
		p.HostBound = hostBound(p.HostLagMSPerS, p.LoaderLagMSPerS, p.CPUStealPct) || p.MachineBusyPct >= HostBoundBusyPct
		p.ReactorUtilizationPct = peakGauge(r.reactor, p.Start, p.End)
		p.ReactorsUnsaturated = p.ReactorUtilizationPct != nil && *p.ReactorUtilizationPct < ProbeReactorSaturatedPct
		p.LowerBound = p.HostBound || p.Unsaturated || p.ReactorsUnsaturated
	}
}

// peakGauge is the highest reading of a gauge over the nodes' samples
// taken during [start, end]; nil when there is none.
func peakGauge(g map[string][]counterSample, start, end time.Time) *float64 {
	var peak *float64
	for _, ss := range g {
		for i := range ss {
			if ss[i].t.Before(start) || ss[i].t.After(end) {
				continue
			}
			if peak == nil || ss[i].v > *peak {
				peak = &ss[i].v
			}
		}
	}
	if peak == nil {
		return nil
	}
	v := *peak
	return &v
}

// busiestReactor is the node whose busiest shard read the highest
// utilization during [start, end] (on a tie, the one saturated longer, then
// the first by name), with how long it read ReactorSaturatedPct or more;
// nil without readings. A reading stands for the time since the node's
// reading before it (the gauge averages the time before it): it counts
// for the time of that interval inside [start, end], and for the peak when
// at least half the interval is, so that the first readings of a cycle
// that follows a busier phase (a calibration, the previous step) do not
// carry that phase into it.
func busiestReactor(g map[string][]counterSample, start, end time.Time) *ReactorPeak {
	var best *ReactorPeak
	for node, ss := range g {
		p := ReactorPeak{Node: node, PeakPct: -1}
		for i := range ss {
			from := ss[max(i-1, 0)].t // the first reading stands for an instant
			if from.After(end) {
				break
			}
			span := ss[i].t.Sub(from)
			in := timeMin(ss[i].t, end).Sub(timeMax(from, start))
			if in < 0 || 2*in < span {
				continue
			}
			p.PeakPct = max(p.PeakPct, ss[i].v)
			if ss[i].v >= ReactorSaturatedPct {
				p.SaturatedS += in.Seconds()
			}
		}
		if p.PeakPct < 0 {
			continue
		}
		if best == nil || p.PeakPct > best.PeakPct ||
			p.PeakPct == best.PeakPct && (p.SaturatedS > best.SaturatedS || p.SaturatedS == best.SaturatedS && node < best.Node) {
			best = &p
		}
	}
	return best
}

func timeMin(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func timeMax(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (r *reducer) runEnd(ev *Event) {
	r.sawRunEnd = true
	r.res.Status, r.res.Reason, r.res.EndedAt = ev.Status, ev.Message, ev.Time
}

func (r *reducer) phaseStart(ev *Event) {
	r.phaseOpen[phaseKey{ev.Phase, ev.Name}] = ev.Time
	if p, ok := ev.PlanSeconds[ev.Name]; ok && ev.Phase == PhaseFill {
		if r.phasePlan == nil {
			r.phasePlan = map[string]float64{}
		}
		r.phasePlan[ev.Name] = p
	}
}

func (r *reducer) phaseEnd(ev *Event) {
	k := phaseKey{ev.Phase, ev.Name}
	if s, ok := r.phaseOpen[k]; ok {
		delete(r.phaseOpen, k)
		r.phase(ev.Phase, ev.Name, s, ev.Time)
	}
}

// phase records a finished phase: a fill phase is a named duration, and
// so is the wait for compactions (DurCompactions).
func (r *reducer) phase(phase Phase, name string, start, end time.Time) {
	r.phaseSpans = append(r.phaseSpans, phaseSpan{phase, start, end})
	switch phase {
	case PhaseFill:
		r.res.Durations = append(r.res.Durations, Duration{Name: name, Start: start, End: end, Seconds: end.Sub(start).Seconds(), PlanSeconds: r.phasePlan[name]})
	case PhaseCompactions:
		r.res.Durations = append(r.res.Durations, Duration{Name: DurCompactions, Start: start, End: end, Seconds: end.Sub(start).Seconds()})
	}
}

func (r *reducer) cycleStart(ev *Event) {
	c := &cycleAcc{c: Cycle{Name: ev.Cycle, Step: ev.Step, Start: ev.Time}, open: true, write: NewCounts(), read: NewCounts()}
	if old, ok := r.cycleByName[ev.Cycle]; ok { // a restarted cycle: keep the later one
		*old = *c
		return
	}
	r.cycleByName[ev.Cycle] = c
	r.cycles = append(r.cycles, c)
}

func (r *reducer) cycleEnd(ev *Event) {
	if c, ok := r.cycleByName[ev.Cycle]; ok && c.open {
		c.c.End, c.open = ev.Time, false
	}
}

func (r *reducer) diskSnapshot(ev *Event) {
	r.snapshots[ev.Name] = true
	r.res.Disk = append(r.res.Disk, diskPhase(ev.Name, ev.Time, ev.Disk, "snapshot"))
}

// step returns the timing of the event's step and cycle, created by the
// first event that names them.
func (r *reducer) step(ev *Event) *StepTiming {
	k := stepKey{ev.Step, ev.Cycle}
	s := r.stepBy[k]
	if s == nil {
		s = &StepTiming{Step: ev.Step, Cycle: ev.Cycle, Kind: ev.Kind, Mode: ev.Mode, RequestedAt: ev.Time}
		r.stepBy[k] = s
		r.steps = append(r.steps, s)
	}
	if s.Kind == "" {
		s.Kind = ev.Kind
	}
	if s.Mode == "" {
		s.Mode = ev.Mode
	}
	return s
}

func (r *reducer) stepRequested(ev *Event) {
	s := r.step(ev)
	s.RequestedAt = ev.Time
	if len(ev.Nodes) > 0 {
		s.Nodes = ev.Nodes
	}
	if len(ev.PlanSeconds) > 0 {
		s.PlanSeconds = ev.PlanSeconds
	}
}

// nodesNormal: the new nodes are UN (grow) or the leaving ones are gone.
func (r *reducer) nodesNormal(ev *Event) {
	s := r.step(ev)
	s.NormalAt = timePtr(ev.Time)
	if len(ev.Nodes) > 0 {
		s.Nodes = ev.Nodes
	}
	if s.Kind != KindGrow {
		return
	}
	for _, n := range ev.Nodes {
		if !r.nodeSeen[n] {
			r.nodeSeen[n] = true
			r.addedAt[n] = ev.Time
			r.addedNodes = append(r.addedNodes, NodeInfo{Name: n, AddedBy: ev.Step})
		}
	}
}

// nodeOp records one node's request, join or leave within its step.
func (r *reducer) nodeOp(ev *Event) {
	s := r.step(ev)
	var op *NodeOp
	for i := range s.NodeOps {
		if s.NodeOps[i].Node == ev.Node {
			op = &s.NodeOps[i]
		}
	}
	if op == nil {
		s.NodeOps = append(s.NodeOps, NodeOp{Node: ev.Node, RequestedAt: ev.Time})
		op = &s.NodeOps[len(s.NodeOps)-1]
	}
	switch ev.State {
	case NodeOpRequested:
		op.RequestedAt = ev.Time
	case NodeOpJoined:
		op.JoinedAt = timePtr(ev.Time)
	case NodeOpLeft:
		op.LeftAt = timePtr(ev.Time)
	}
}

// dbError groups database errors by type and node.
func (r *reducer) dbError(ev *Event) {
	typ := ev.ErrorType
	if typ == "" {
		typ = "DATABASE_ERROR"
	}
	k := [2]string{typ, ev.Node}
	if i, ok := r.errIdx[k]; ok {
		r.errEvents = append(r.errEvents, ErrorEvent{Time: ev.Time, Node: ev.Node, Type: typ, Severity: ev.Severity, Phase: ev.Phase, Step: ev.Step, Cycle: ev.Cycle, Line: ev.Line})
		e := &r.res.Errors[i]
		e.Count++
		if ev.Time.Before(e.First) {
			e.First, e.Line = ev.Time, ev.Line
		}
		return
	}
	r.errEvents = append(r.errEvents, ErrorEvent{Time: ev.Time, Node: ev.Node, Type: typ, Severity: ev.Severity, Phase: ev.Phase, Step: ev.Step, Cycle: ev.Cycle, Line: ev.Line})
	r.errIdx[k] = len(r.res.Errors)
	r.res.Errors = append(r.res.Errors, ErrorSummary{Type: typ, Node: ev.Node, Severity: ev.Severity, Count: 1, First: ev.Time, Line: ev.Line})
}

// eventsDone prepares the latency and metrics passes: the disk phases that
// have no snapshot event are anchored in time, to be read from metrics.
func (r *reducer) eventsDone() {
	for _, n := range r.res.Setup.InitialNodes {
		r.nodeSeen[n.Name] = true
	}
	for _, f := range r.res.Setup.FillTargets {
		if r.snapshots[f.Name] {
			continue
		}
		for _, d := range r.res.Durations {
			if d.Name == f.Name && d.Step == "" {
				r.anchors = append(r.anchors, &anchor{name: f.Name, t: d.End, best: map[string]NodeSample{}})
			}
		}
	}
	if !r.snapshots["Scale out"] {
		var at time.Time
		for _, s := range r.steps {
			if s.Kind.IsTopology() && s.EndedAt != nil && s.EndedAt.After(at) {
				at = *s.EndedAt
			}
		}
		if !at.IsZero() {
			r.anchors = append(r.anchors, &anchor{name: "Scale out", t: at, best: map[string]NodeSample{}})
		}
	}
	if !r.snapshots["Final"] {
		r.final = &anchor{name: "Final", best: map[string]NodeSample{}} // last sample of every node
		r.anchors = append(r.anchors, r.final)
	}
}

// latency adds a record to the cycle holding its midpoint.
func (r *reducer) latency(iv *Interval) {
	r.see(iv.End)
	r.recov.Add(iv.Class, iv.Start, iv.End, iv.Count, iv.ErrorCount()+iv.Dropped, iv.Response.P99)
	mid := iv.Mid()
	for _, c := range r.cycles {
		if mid.Before(c.c.Start) || (!c.open && !mid.Before(c.c.End)) {
			continue
		}
		switch iv.Class { // a model's operations count in their class
		case OpWrite:
			iv.AddTo(c.write)
			c.wCount += iv.Count
		case OpRead:
			iv.AddTo(c.read)
			c.rCount += iv.Count
		default:
			continue
		}
		c.addLagged(iv)
		c.addOp(iv)
		c.c.Errors += iv.ErrorCount()
		c.c.Dropped += iv.Dropped
		if c.from.IsZero() || iv.Start.Before(c.from) {
			c.from = iv.Start
		}
		if iv.End.After(c.to) {
			c.to = iv.End
		}
		if iv.LoaderLag > 0 {
			// One figure per loader and interval, on each op's record.
			if c.loaderLag == nil {
				c.loaderLag = map[loaderInterval]float64{}
			}
			k := loaderInterval{iv.Source, iv.Start.UnixNano()}
			c.loaderLag[k] = max(c.loaderLag[k], iv.LoaderLag)
		}
		break
	}
}

// addLagged keeps iv apart too when its loader lagged HostBoundLagMSPerS
// per second or more in it.
func (c *cycleAcc) addLagged(iv *Interval) {
	secs := iv.End.Sub(iv.Start).Seconds()
	if secs <= 0 || iv.LoaderLag < HostBoundLagMSPerS*secs {
		return
	}
	if c.lagged == nil {
		c.lagged = map[loaderInterval]float64{}
		c.laggedW, c.laggedR = NewCounts(), NewCounts()
	}
	c.lagged[loaderInterval{iv.Source, iv.Start.UnixNano()}] = secs
	if iv.Class == OpWrite {
		iv.AddTo(c.laggedW)
	} else {
		iv.AddTo(c.laggedR)
	}
}

// loaderLagged is the cycle's P99 without its lagged intervals, and
// whether they set it; nil when none lagged.
func (c *cycleAcc) loaderLagged() *LoaderLagged {
	if len(c.lagged) == 0 {
		return nil
	}
	l := &LoaderLagged{WriteP99MS: c.write.Less(c.laggedW).MS(99), ReadP99MS: c.read.Less(c.laggedR).MS(99)}
	for _, s := range c.lagged {
		l.Seconds += s
	}
	set := func(without, with float64) bool { return with > 0 && without <= LaggedSetP99Share*with }
	l.SetP99 = set(l.WriteP99MS, c.c.WriteP99MS) || set(l.ReadP99MS, c.c.ReadP99MS)
	return l
}

// loaderInterval is one loader's interval (LatencyRecord.LoaderLagMS).
type loaderInterval struct {
	source string
	start  int64
}

// loaderLagRate is the most-lagged loader's lag over the cycle, ms per second.
func loaderLagRate(lags map[loaderInterval]float64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	per := map[string]float64{}
	for k, ms := range lags {
		per[k.source] += ms
	}
	var worst float64
	for _, ms := range per {
		worst = max(worst, ms/seconds)
	}
	return worst
}

// addSample appends a node's reading to its series in *m (made on first use).
func addSample(m *map[string][]counterSample, node string, c counterSample) {
	if *m == nil {
		*m = map[string][]counterSample{}
	}
	(*m)[node] = append((*m)[node], c)
}

// sample keeps, for every disk phase read from metrics, each node's sample
// nearest to it, and what the node is (rack, instance type, disk size).
func (r *reducer) sample(s *NodeSample) {
	if s.Error != "" {
		return
	}
	if v, ok := s.Metrics["reactor_cpu_steal_time_ms"]; ok {
		addSample(&r.steal, s.Node, counterSample{t: s.Time, v: v})
	}
	if v, ok := s.Metrics["compaction_manager_normalized_backlog"]; ok {
		addSample(&r.backlog, s.Node, counterSample{t: s.Time, v: v})
	}
	if v, ok := s.Metrics[SampleReactorUtilizationBusiest]; ok {
		addSample(&r.reactor, s.Node, counterSample{t: s.Time, v: v})
	}
	if h, ok := s.Metrics[SampleCacheHits]; ok {
		if m, ok := s.Metrics[SampleCacheMisses]; ok {
			addSample(&r.cache, s.Node, counterSample{t: s.Time, v: h, of: h + m})
		}
	}
	if s.CPUSeconds > 0 {
		addSample(&r.cpu, s.Node, counterSample{t: s.Time, v: s.CPUStealSeconds, of: s.CPUSeconds})
	}
	if s.CoordinatorLatency != nil {
		if r.lat == nil {
			r.lat = map[string][]latencySample{}
		}
		r.lat[s.Node] = append(r.lat[s.Node], latencySample{s.Time, s.CoordinatorLatency})
	}
	if s.DiskTotalBytes <= 0 {
		return
	}
	switch s.Source {
	case DiskSourceRESTLoadFallback:
		if r.fallback == nil {
			r.fallback = map[string]bool{}
		}
		r.fallback[s.Node] = true
	case DiskSourceContainerDFHost:
		if r.hostFS == nil {
			r.hostFS = map[string]bool{}
		}
		r.hostFS[s.Node] = true
	}
	r.see(s.Time)
	if r.usage == nil {
		r.usage = map[string][]usagePoint{}
	}
	if pts := r.usage[s.Node]; len(pts) == 0 || !s.Time.Before(pts[len(pts)-1].t) {
		r.usage[s.Node] = append(pts, usagePoint{t: s.Time, pct: 100 * s.DiskUsedBytes / s.DiskTotalBytes, rack: s.Rack})
	}
	if _, ok := r.nodeMeta[s.Node]; !ok {
		r.nodeMeta[s.Node] = NodeSample{Node: s.Node, Rack: s.Rack, InstanceType: s.InstanceType, Address: s.Address, DiskTotalBytes: s.DiskTotalBytes}
	}
	for _, an := range r.anchors {
		b, ok := an.best[s.Node]
		switch {
		case an == r.final:
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
}

func (r *reducer) finish() *Result {
	res := r.res
	r.finishDisk()
	if res.StartedAt.IsZero() {
		res.StartedAt = r.first
	}
	if !r.sawRunEnd {
		res.Status, res.EndedAt = StatusInterrupted, r.last
		if res.Reason == "" {
			res.Reason = "the run did not record its end (interrupted or still running)"
		}
	}
	if res.EndedAt.IsZero() {
		res.EndedAt = r.last
	}
	r.finishCycles()
	r.finishProbes()
	// Fill phases still open at the end (interrupted) last until the end.
	for k, s := range r.phaseOpen {
		r.phase(k.phase, k.name, s, r.last)
	}
	r.recovery()
	r.placeErrors()
	for _, s := range r.steps {
		res.Steps = append(res.Steps, *s)
		res.Durations = append(res.Durations, stepDurations(s)...)
	}
	r.finishNodes()
	// After the last setup event (calibrated), which replaces the setup.
	res.Setup.Limitations = append(res.Setup.Limitations, r.compactionNotes...)
	if rb := res.Setup.RackBalance; rb != nil {
		res.RackBalance = rackBalance(r.usage, time.Duration(rb.EverySeconds*float64(time.Second)))
	}
	return res
}

func (r *reducer) finishDisk() {
	if r.final != nil && !r.last.IsZero() {
		r.final.t = r.last
	}
	for _, an := range r.anchors {
		var disk []NodeDisk
		for _, s := range an.best {
			// A node first seen well after the phase did not exist then.
			if an != r.final && s.Time.After(an.t.Add(anchorSlack)) {
				continue
			}
			if at, ok := r.addedAt[s.Node]; ok && an != r.final && at.After(an.t) {
				continue // joined after the phase
			}
			disk = append(disk, sampleDisk(s))
		}
		if len(disk) == 0 {
			continue
		}
		sort.Slice(disk, func(i, j int) bool { return nodeLess(disk[i].Node, disk[j].Node) })
		r.res.Disk = append(r.res.Disk, diskPhase(an.name, an.t, disk, "metrics"))
	}
	sortDisk(r.res.Disk, r.res.Setup.FillTargets)
	if len(r.fallback) > 0 {
		r.res.Setup.Limitations = append(r.res.Setup.Limitations, fmt.Sprintf("Warning: disk usage of %s came from the REST load fallback "+
			"(live SSTable bytes against the instance type's disk size; commitlog, compaction space and filesystem overhead not counted): "+
			"node_exporter (port 9100) could not be read.", strings.Join(sortedNodeNames(r.fallback), ", ")))
	}
	if len(r.hostFS) > 0 {
		r.res.Setup.Limitations = append(r.res.Setup.Limitations, fmt.Sprintf("Warning: disk figures of %s are the host's file system, "+
			"the same for every node: nothing was mounted at their /var/lib/scylla (docker.data_mount none).", strings.Join(sortedNodeNames(r.hostFS), ", ")))
	}
}

func sortedNodeNames(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return nodeLess(out[i], out[j]) })
	return out
}

func (r *reducer) finishCycles() {
	res := r.res
	for _, c := range r.cycles {
		if c.open || c.c.End.IsZero() {
			c.c.End = r.last
		}
		c.c.DurationS = c.c.End.Sub(c.c.Start).Seconds()
		d := c.c.DurationS
		if span := c.to.Sub(c.from).Seconds(); span > 0 {
			d = span
		}
		if d > 0 {
			c.c.WriteOpsPerS = float64(c.wCount) / d
			c.c.ReadOpsPerS = float64(c.rCount) / d
		}
		c.c.WriteP90MS, c.c.WriteP99MS = c.write.MS(90), c.write.MS(99)
		c.c.ReadP90MS, c.c.ReadP99MS = c.read.MS(90), c.read.MS(99)
		c.c.Ops = c.opFigures(d)
		var ms []float64
		perNode := map[string]int64{}
		for _, s := range r.stalls {
			if !s.t.Before(c.c.Start) && s.t.Before(c.c.End) {
				ms = append(ms, s.ms)
				perNode[s.node]++
			}
		}
		c.c.Stalls = stallsOf(ms, perNode)
		c.c.Stalls.SuppressedReports = suppressedIn(r.suppressed, c.c.Start, c.c.End)
		c.c.HostLagMSPerS = hostLag(r.steal, c.c.Start, c.c.End)
		c.c.LoaderLagMSPerS = loaderLagRate(c.loaderLag, d)
		c.c.CPUStealPct = cpuSteal(r.cpu, c.c.Start, c.c.End)
		c.c.LoaderLagged = c.loaderLagged()
		c.c.HostBound = hostBound(c.c.HostLagMSPerS, c.c.LoaderLagMSPerS, c.c.CPUStealPct) || c.c.LoaderLagged != nil && c.c.LoaderLagged.SetP99
		c.c.NodeWriteP99MS, c.c.NodeReadP99MS = nodeP99(r.lat, c.c.Start, c.c.End)
		c.c.CompactionBacklog = backlogGrowth(r.backlog, c.c.Start, c.c.End)
		c.c.CompactionBehind = c.c.CompactionBacklog != nil && c.c.CompactionBacklog.behind()
		c.c.BusiestReactor = busiestReactor(r.reactor, c.c.Start, c.c.End)
		c.c.Cache = cacheHits(r.cache, c.c.Start, c.c.End)
		res.Cycles = append(res.Cycles, c.c)
	}
	sort.SliceStable(res.Cycles, func(i, j int) bool { return res.Cycles[i].Start.Before(res.Cycles[j].Start) })
	if l := hostLagNote(res.Cycles); l != "" {
		res.Setup.Limitations = append(res.Setup.Limitations, l)
	}
	if l := nodeLatencyNote(res.Cycles); l != "" {
		res.Setup.Limitations = append(res.Setup.Limitations, l)
	}
	all := make([]float64, len(r.stalls))
	perNode := map[string]int64{}
	for i, s := range r.stalls {
		all[i] = s.ms
		perNode[s.node]++
	}
	res.Stalls = stallsOf(all, perNode)
	res.Stalls.SuppressedReports = suppressedIn(r.suppressed, time.Time{}, time.Time{})
	if len(r.thresholds) > 0 {
		res.Stalls.ThresholdMS = r.thresholds
	}
}

// finishNodes lists the initial nodes, then those the nemesis added.
func (r *reducer) finishNodes() {
	res := r.res
	res.Nodes = append(res.Nodes, res.Setup.InitialNodes...)
	for _, n := range r.addedNodes {
		if m, ok := r.nodeMeta[n.Name]; ok {
			n.Rack, n.InstanceType, n.Address, n.DiskBytes = m.Rack, m.InstanceType, m.Address, m.DiskTotalBytes
		}
		for _, st := range res.Setup.Nemesis {
			if st.Name != n.AddedBy {
				continue
			}
			if n.InstanceType == "" {
				n.InstanceType = st.InstanceType
			}
			if n.InstanceType == st.InstanceType {
				n.VCPUs = st.VCPUs
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
}

func stepDurations(s *StepTiming) []Duration {
	d := func(name string, from time.Time, to *time.Time) []Duration {
		if to == nil || from.IsZero() {
			return nil
		}
		return []Duration{{Name: name, Step: s.Step, Cycle: s.Cycle, Start: from, End: *to, Seconds: to.Sub(from).Seconds(), PlanSeconds: s.PlanSeconds[name]}}
	}
	var out []Duration
	switch s.Kind {
	case KindGrow:
		out = append(out, d(DurAddNodes, s.RequestedAt, s.NormalAt)...)
		if s.NormalAt != nil {
			out = append(out, d(DurNodesReady, *s.NormalAt, s.BalancedAt)...)
		}
	case KindShrink:
		out = append(out, d(DurRemoveNodes, s.RequestedAt, s.NormalAt)...)
	case KindDrain:
		out = append(out, d(DurDrainNodes, s.RequestedAt, s.NormalAt)...)
	case KindHook:
		return d(DurHookPrefix+s.Step, s.RequestedAt, s.EndedAt)
	default:
		return nil
	}
	out = append(out, d(DurDataBalanced, s.RequestedAt, s.BalancedAt)...)
	out = append(out, d(DurLatencyRecov, s.RequestedAt, s.RecoveredAt)...)
	if s.CleanupStartAt != nil {
		out = append(out, d(DurCleanup, *s.CleanupStartAt, s.CleanupEndAt)...)
	}
	return out
}

// suppressedIn sums the suppressed stall reports printed in [from, to)
// (all of them when to is zero). Seastar prints the count after its minute,
// so a cycle gets the reports its log says were suppressed, which may be
// the previous cycle's.
func suppressedIn(s []stall, from, to time.Time) int64 {
	var n int64
	for _, x := range s {
		if to.IsZero() || (!x.t.Before(from) && x.t.Before(to)) {
			n += x.n
		}
	}
	return n
}

func stallsOf(ms []float64, perNode map[string]int64) Stalls {
	labels := StallLabels()
	s := Stalls{Total: int64(len(ms)), Buckets: make([]StallBucket, len(labels))}
	for i, l := range labels {
		s.Buckets[i].Label = l
		if i < len(StallIntervalsMS) {
			s.Buckets[i].BelowMS = StallIntervalsMS[i]
		}
	}
	for _, m := range ms {
		s.Buckets[StallBucketIndex(m)].Count++
	}
	if len(perNode) > 0 {
		s.PerNode = perNode
	}
	return s
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

// counterSample is a counter's value v at t, and for a share the counter
// of all (of) it is a part of.
type counterSample struct {
	t     time.Time
	v, of float64
}

// window picks a counter's samples around [start, end]: the last at or
// before start (else the first after it) and the last at or before end;
// false when there are not two, or the counter went back (a restarted node).
func window(ss []counterSample, start, end time.Time) (from, to *counterSample, ok bool) {
	var before, first *counterSample
	for i := range ss {
		s := &ss[i]
		switch {
		case !s.t.After(start):
			before = s
		case first == nil && !s.t.After(end):
			first = s
		}
		if !s.t.After(end) {
			to = s
		}
	}
	from = before
	if from == nil {
		from = first
	}
	if from == nil || to == nil || !to.t.After(from.t) || to.v < from.v || to.of < from.of {
		return nil, nil, false
	}
	return from, to, true
}

// hostBound: the nodes' and the loader's lag and the CPU steal (1% is
// 10 ms/s) add up to HostBoundLagMSPerS or more.
func hostBound(nodeLagMSPerS, loaderLagMSPerS, stealPct float64) bool {
	return nodeLagMSPerS+loaderLagMSPerS+10*stealPct >= HostBoundLagMSPerS
}

// hostLag is the highest rate over the nodes of their steal-time counter
// during [start, end], in ms per second.
func hostLag(steal map[string][]counterSample, start, end time.Time) float64 {
	best := 0.0
	for _, ss := range steal {
		if from, to, ok := window(ss, start, end); ok {
			best = max(best, (to.v-from.v)/to.t.Sub(from.t).Seconds())
		}
	}
	return best
}

// backlogGrowth is the compaction backlog of the node whose backlog grew
// the most during [start, end]: its last reading before the cycle (or its
// first in it) and its last in it; nil when no node has two readings.
func backlogGrowth(backlog map[string][]counterSample, start, end time.Time) *BacklogGrowth {
	var best *BacklogGrowth
	for node, ss := range backlog {
		var from, to *counterSample
		for i := range ss {
			s := &ss[i]
			if s.t.After(end) {
				break
			}
			if !s.t.After(start) || from == nil {
				from = s
			}
			to = s
		}
		if from == nil || to == from || to.t.Before(start) {
			continue
		}
		g := &BacklogGrowth{Node: node, Start: from.v, End: to.v}
		if best == nil || g.End-g.Start > best.End-best.Start || (g.End-g.Start == best.End-best.Start && nodeLess(g.Node, best.Node)) {
			best = g
		}
	}
	return best
}

// cacheHits is the row cache's hit rate during [start, end] over the
// nodes, and the coldest node's: each node's hits over its look-ups
// (counterSample.of) between its readings around the window; nil when no
// node has two readings with look-ups between them.
func cacheHits(cache map[string][]counterSample, start, end time.Time) *CacheHits {
	var hits, lookups float64
	var c *CacheHits
	for node, ss := range cache {
		from, to, ok := window(ss, start, end)
		if !ok || to.of <= from.of {
			continue
		}
		h, n := to.v-from.v, to.of-from.of
		hits, lookups = hits+h, lookups+n
		if c == nil {
			c = &CacheHits{}
		}
		pct := 100 * h / n
		if n >= MinCacheLookups && (c.ColdestNode == "" || pct < c.ColdestHitPct || pct == c.ColdestHitPct && nodeLess(node, c.ColdestNode)) {
			c.ColdestNode, c.ColdestHitPct, c.ColdestLookupsPerS = node, pct, n/to.t.Sub(from.t).Seconds()
		}
	}
	if c != nil {
		c.HitPct = 100 * hits / lookups
	}
	return c
}

// cpuSteal is the highest share over the node machines of their CPU time
// that was steal during [start, end], in percent.
func cpuSteal(cpu map[string][]counterSample, start, end time.Time) float64 {
	best := 0.0
	for _, ss := range cpu {
		if from, to, ok := window(ss, start, end); ok && to.of > from.of {
			best = max(best, 100*(to.v-from.v)/(to.of-from.of))
		}
	}
	return best
}

// hostLagNote says how much host lag each cycle had, on the nodes and in
// the load generator, how much CPU the hypervisor stole, and which cycles
// are host-bound; "" when none of them was measured.
func hostLagNote(cycles []Cycle) string {
	var nodes, loaders, steal, bound []string
	seenNodes, seenLoaders, seenSteal := false, false, false
	for _, c := range cycles {
		seenNodes = seenNodes || c.HostLagMSPerS > 0
		seenLoaders = seenLoaders || c.LoaderLagMSPerS > 0
		seenSteal = seenSteal || c.CPUStealPct > 0
		nodes = append(nodes, fmt.Sprintf("%s %.1f ms/s", c.Name, c.HostLagMSPerS))
		loaders = append(loaders, fmt.Sprintf("%s %.1f ms/s", c.Name, c.LoaderLagMSPerS))
		steal = append(steal, fmt.Sprintf("%s %.1f%%", c.Name, c.CPUStealPct))
		if c.HostBound {
			bound = append(bound, c.Name)
		}
	}
	var parts []string
	if seenNodes {
		parts = append(parts, "Host lag (the most-lagged node's scheduling lag, scylla_reactor_cpu_steal_time_ms: time it was runnable but did not run): "+strings.Join(nodes, ", ")+".")
	}
	if seenLoaders {
		parts = append(parts, "Load generator lag (the most-lagged loader process's own scheduling lag: operations due while it did not run were sent late, and their latency counts it): "+strings.Join(loaders, ", ")+".")
	}
	if seenSteal {
		parts = append(parts, "CPU steal (the most-stolen node machine's share of CPU time its hypervisor gave to something else while a vCPU had work, node_exporter's node_cpu_seconds_total{mode=\"steal\"}; no process on the machine sees it as lag): "+strings.Join(steal, ", ")+".")
	}
	if len(parts) == 0 {
		return ""
	}
	if len(bound) > 0 {
		parts = append(parts, fmt.Sprintf("Host-bound (the nodes' and the load generator's lag and the CPU steal, 1%% = 10 ms/s, together ≥ %d ms/s, 1%% of the time: an operation waits while its loader or its coordinator does not run, and 1%% of them delayed sets P99; or the seconds in which the load generator lagged ≥ %d ms/s set the P99: without them it is at most %.0f%% of itself): %s — these latencies are this machine's, not the model's.", HostBoundLagMSPerS, HostBoundLagMSPerS, 100*LaggedSetP99Share, strings.Join(bound, ", ")))
	}
	return strings.Join(parts, " ")
}

// placeErrors puts every database error in the phase, cycle and nemesis
// step whose window holds its time (the log line's own), and judges them by
// the scenario's severities and expected_errors.
func (r *reducer) placeErrors() {
	for i := range r.errEvents {
		e := &r.errEvents[i]
		if e.Phase == "" {
			var best *phaseSpan
			for j := range r.phaseSpans {
				ps := &r.phaseSpans[j]
				// the innermost (latest-starting) phase holding the time
				if !e.Time.Before(ps.start) && !e.Time.After(ps.end) && (best == nil || ps.start.After(best.start)) {
					best = ps
				}
			}
			if best != nil {
				e.Phase = best.phase
			}
		}
		if e.Cycle == "" {
			for _, c := range r.res.Cycles {
				if !e.Time.Before(c.Start) && !e.Time.After(c.End) {
					e.Cycle, e.Step = c.Name, c.Step
				}
			}
		}
		if e.Step == "" {
			for _, s := range r.steps {
				end := r.last
				if s.EndedAt != nil {
					end = *s.EndedAt
				}
				if !e.Time.Before(s.RequestedAt) && !e.Time.After(end) {
					e.Step = s.Step
				}
			}
		}
	}
	r.res.ErrorEvents = r.errEvents
	if r.res.ErrorEvents == nil {
		r.res.ErrorEvents = []ErrorEvent{}
	}
	JudgeErrors(r.res.ErrorEvents, r.res.Setup.Severities, r.res.Setup.ExpectedErrors)
}
