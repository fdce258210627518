package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// replicaOpsPerOp is what one workload operation costs the cluster's
// replicas in replica operations (the unit of ops_per_vcpu): RF for a
// write, the replicas the read consistency level contacts for a read. Its
// coordinator's work comes on top (Model.CoordinatorOps).
func replicaOpsPerOp(s *scenarios.Scenario) float64 {
	rf := max(1, s.Dataset.RF)
	reads := rf/2 + 1
	switch strings.ToUpper(s.Workload.Consistency.Read) {
	case "ONE", "LOCAL_ONE", "ANY":
		reads = 1
	case "TWO":
		reads = min(2, rf)
	case "THREE":
		reads = min(3, rf)
	case "ALL":
		reads = rf
	}
	wf := s.Workload.Mix.WriteFraction()
	return wf*float64(rf) + (1-wf)*float64(reads)
}

// CalibrationSchedule is how a capacity probe of a (scaled) calibration
// time runs: levels of step each, a few of which fit the time, and levels
// shorter than a few seconds measure bursts, not a sustainable rate; the
// budget is at least five levels (concurrency 1 to 16).
func CalibrationSchedule(total time.Duration) (step, budget time.Duration) {
	step = max(total/4, 3*time.Second)
	return step, max(total, 5*step)
}

// warmCalibrationLevels is how many levels a probe that starts at a known
// knee usually measures (the plan's estimate).
const warmCalibrationLevels = 3

// estimator adds the plan's estimates to a resolved plan: it follows the
// node inventory through the nemesis for capacity and vCPUs, and the
// phases in order with their estimated start and length.
type estimator struct {
	p *Plan
	s *scenarios.Scenario
	m provision.Model
	// nodes is the inventory, the newest last.
	nodes []node
	// onDisk is the data on disk (all replicas) the fills leave.
	onDisk float64
	// t is the estimated start of the next phase.
	t                  float64
	streamBytesPerVCPU float64
}

// node is one node of the inventory.
type node struct {
	rack string
	it   provision.InstanceType
}

// estimate adds the node groups, data volumes, phases and durations the
// backend's model predicts, and the estimated wall time.
func estimate(p *Plan, s *scenarios.Scenario, m provision.Model) {
	e := &estimator{p: p, s: s, m: m, streamBytesPerVCPU: m.StreamMiBPerVCPU * (1 << 20)}
	it0, _ := provision.LookupInstanceType(s.Cluster.InstanceType)
	for _, r := range s.Cluster.Racks {
		p.Nodes = append(p.Nodes, Nodes{Rack: r, InstanceType: it0.Name, Count: s.Cluster.NodesPerRack, VCPUs: it0.VCPUs, DiskBytes: m.NodeDiskBytes(it0)})
	}
	// In the order the backends start them: interleaved over the racks.
	for range s.Cluster.NodesPerRack {
		for _, r := range s.Cluster.Racks {
			e.nodes = append(e.nodes, node{r, it0})
		}
	}
	capBytes, vcpus := e.capacity()
	p.InitialCapacityBytes = capBytes
	p.Workload.EstimatedCapacityOps = m.OpsPerVCPU * float64(vcpus) / (replicaOpsPerOp(s) + m.CoordinatorOps)
	p.Workload.EstimatedRateOpsPerS = p.Load.LoadPercent / 100 * p.Workload.EstimatedCapacityOps
	if p.Load.Rate > 0 { // the scenario's, or a workload model's own
		p.Workload.EstimatedRateOpsPerS = p.Load.Rate
	}

	e.add(Phase{Phase: "provision", Name: fmt.Sprintf("start %d × %s", len(e.nodes), it0.Name), Seconds: m.SetupSeconds, Estimated: true})
	e.add(Phase{Phase: "schema", Name: fmt.Sprintf("%s.%s RF=%d", p.Data.Keyspace, p.Data.Table, s.Dataset.RF), Seconds: 1, Estimated: true})
	e.fills(capBytes, vcpus)
	if c := p.Compactions; c.Wait {
		e.add(Phase{Phase: string(results.PhaseCompactions), Name: results.DurCompactions, Seconds: c.Quiet.Seconds(), Estimated: true,
			Detail: fmt.Sprintf("until no compaction has run for %s (up to %s)", c.Quiet.Round(100*time.Millisecond), s.Timeouts.Compactions)})
	}
	calStep, calibration := CalibrationSchedule(p.Load.Calibration)
	if p.Load.Rate == 0 {
		e.add(Phase{Phase: "calibrate", Name: "measure capacity", Seconds: calibration.Seconds(), Estimated: true,
			Detail: fmt.Sprintf("then run at %v of it", s.Workload.LoadPercent)})
	}
	e.add(Phase{Phase: "steady_state", Name: "Cycle #0", Cycles: 1, Seconds: p.SteadyState.Seconds()})
	for si, st := range s.Nemesis {
		e.add(e.nemesis(si, st))
	}
	if s.FinalHold > 0 {
		e.add(Phase{Phase: "final_hold", Name: "final hold", Seconds: p.FinalHold.Seconds(), Detail: "workload running"})
	}
	if p.Load.CapacityAfter {
		// It starts at the concurrency where the first probe peaked: that
		// level, and usually one or two above it.
		e.add(Phase{Phase: "calibrate", Name: "after", Seconds: min(calibration, warmCalibrationLevels*calStep).Seconds(), Estimated: true,
			Detail: "capacity after the last topology step, workload stopped, from the first probe's best concurrency"})
	}
	e.add(Phase{Phase: "teardown", Name: "destroy cluster", Seconds: m.SetupSeconds / 2, Estimated: true})
	p.EstimatedSeconds = e.t
}

// add appends a phase at the estimated time.
func (e *estimator) add(ph Phase) {
	ph.StartSeconds = e.t
	e.t += ph.Seconds
	e.p.Phases = append(e.p.Phases, ph)
}

// capacity is the inventory's raw disk and vCPUs.
func (e *estimator) capacity() (bytes float64, vcpus int) {
	for _, n := range e.nodes {
		bytes += e.m.NodeDiskBytes(n.it)
		vcpus += n.it.VCPUs
	}
	return
}

// keySize is what one key of the fill stores and costs: the mean bytes of
// its rows and the write requests the fill makes for it. The built-in's key
// is a value of dataset.value_size in one write; a workload model's is its
// own estimate (stress.Sizer: a profile's or scylla-bench's partition of
// rows, a cassandra-stress row of n columns), else value_size's.
func (e *estimator) keySize() (bytes, writes float64) {
	if mp := e.p.Workload.Model; !mp.IsBuiltin() && mp.KeyBytes > 0 {
		return mp.KeyBytes, max(1, mp.KeyWrites)
	}
	return e.s.Dataset.ValueSize.Mean(), 1
}

// fillKeysPerSec is the fill's estimated rate in keys a second. The
// workload is not running yet, so a fill gets the cluster's capacity (or
// fill_rate, keys a second); each write request lands on RF replicas and
// costs its coordinator CoordinatorOps more.
func (e *estimator) fillKeysPerSec(vcpus int, keyBytes, keyWrites float64) float64 {
	s, m := e.s, e.m
	rf := float64(s.Dataset.RF)
	fillOps := m.OpsPerVCPU * float64(vcpus) / (float64(max(1, s.Dataset.RF)) + m.CoordinatorOps) / keyWrites
	if m.FillMiBPerVCPU > 0 && keyBytes > 0 {
		// Real nodes take bulk writes far more cheaply than the mixed workload:
		// estimate from on-disk bandwidth instead.
		fillOps = m.FillMiBPerVCPU * (1 << 20) * float64(vcpus) / (keyBytes * rf)
	}
	if s.Dataset.FillRate > 0 {
		fillOps = min(fillOps, float64(s.Dataset.FillRate))
	}
	return fillOps
}

// fills estimates each fill phase's data volume, keys and time.
func (e *estimator) fills(capBytes float64, vcpus int) {
	s := e.s
	rf := float64(s.Dataset.RF)
	mean, writes := e.keySize()
	fillOps := e.fillKeysPerSec(vcpus, mean, writes)
	for i, f := range s.Dataset.Fill {
		pf := &e.p.Fill[i]
		pf.TargetBytes = f.TargetPercent.Fraction() * capBytes
		pf.WriteBytes = max(0, pf.TargetBytes-e.onDisk)
		pf.UniqueBytes = pf.WriteBytes / rf
		if mean > 0 {
			pf.Rows = int64(pf.UniqueBytes / mean)
		}
		if fillOps > 0 {
			pf.EstimatedSeconds = float64(pf.Rows) / fillOps
		}
		e.onDisk = max(e.onDisk, pf.TargetBytes)
		e.add(Phase{Phase: "fill", Name: f.Name, Seconds: pf.EstimatedSeconds, Estimated: true, Detail: e.fillDetail(pf, f.TargetPercent)})
		if f.Hold > 0 {
			e.add(Phase{Phase: "hold", Name: f.Name, Seconds: pf.HoldSeconds, Detail: "let compactions settle"})
		}
	}
}

// fillDetail is a fill phase's line in the phases table; a workload
// model's names its keys (rows or partitions).
func (e *estimator) fillDetail(pf *Fill, target scenarios.Percent) string {
	d := fmt.Sprintf("write %s (%s unique) to reach %v", scenarios.HumanBytes(pf.WriteBytes), scenarios.HumanBytes(pf.UniqueBytes), target)
	if mp := e.p.Workload.Model; !mp.IsBuiltin() {
		d += fmt.Sprintf(": ≈%d %ss", pf.Rows, mp.Unit())
	}
	return d
}

// nemesis estimates one nemesis step's phase and, for a topology step,
// each batch's durations (the plan's step estimates).
func (e *estimator) nemesis(si int, st scenarios.Step) Phase {
	ph := Phase{Phase: "nemesis", Name: st.Name, Kind: st.Kind(), Estimated: true}
	switch {
	case st.Grow != nil:
		e.grow(si, st, &ph)
	case st.Shrink != nil, st.Drain != nil:
		e.remove(si, st, &ph)
	case st.Hold != nil:
		ph.Seconds = e.p.Steps[si].Duration.Seconds()
		ph.Estimated = false
		ph.Detail = "workload running"
	case st.Hook != nil:
		ph.Detail = fmt.Sprintf("run %s (up to %s)", st.Hook.Command, st.Hook.Timeout)
	}
	return ph
}

// grow adds the step's nodes. Each new node takes its shards' share of its
// rack's data from the rack's old nodes, and the side with fewer shards
// bounds the streaming (placement.go); racks stream in parallel. Batches
// (one node serially, all in parallel) also wait for balance and latency
// recovery.
func (e *estimator) grow(si int, st scenarios.Step, ph *Phase) {
	g, m := st.Grow, e.m
	it, _ := provision.LookupInstanceType(g.InstanceType)
	racks := g.Racks
	if len(racks) == 0 {
		racks = e.s.Cluster.Racks
	}
	n := len(racks) * g.CountPerRack
	for _, r := range racks {
		e.p.Nodes = append(e.p.Nodes, Nodes{Rack: r, InstanceType: it.Name, Count: g.CountPerRack, VCPUs: it.VCPUs, DiskBytes: m.NodeDiskBytes(it), AddedBy: st.Name})
	}
	batch := n
	if g.Mode != scenarios.ModeParallel {
		batch = 1
	}
	var moved float64
	for added := 0; added < n; added += batch {
		old := rackShards(e.nodes)
		var joining []node
		for i := 0; i < batch; i++ {
			joining = append(joining, node{racks[(added+i)%len(racks)], it})
		}
		e.nodes = append(e.nodes, joining...)
		stream, mv := batchSeconds(joinMoves(old, joining, e.rackData()), e.streamBytesPerVCPU)
		moved += mv
		ph.Seconds += m.SetupSeconds + m.RecoverySeconds + stream
		ph.Cycles++
		e.p.Steps[si].Estimates = append(e.p.Steps[si].Estimates, map[string]float64{
			results.DurAddNodes: m.SetupSeconds, results.DurNodesReady: stream,
			results.DurDataBalanced: m.SetupSeconds + stream, results.DurLatencyRecov: m.SetupSeconds + stream + m.RecoverySeconds,
		})
	}
	ph.Mode = g.Mode
	ph.Detail = fmt.Sprintf("add %d × %s (%d per rack, %s); ≈%s to move", n, it.Name, g.CountPerRack, g.Mode, scenarios.HumanBytes(moved))
}

// removal is what a shrink or drain step asks for: its mode, the rack of
// each node it removes, rack by rack ("": a named node, planned as the
// newest of the cluster), and how the plan names it.
func (e *estimator) removal(st scenarios.Step) (mode string, from []string, detail string) {
	racks, nodes, perRack := []string(nil), []string(nil), 0
	if st.Shrink != nil {
		mode, racks, nodes, perRack = st.Shrink.Mode, st.Shrink.Racks, st.Shrink.Nodes, st.Shrink.CountPerRack
	} else {
		mode, racks, nodes, perRack = st.Drain.Mode, st.Drain.Racks, st.Drain.Nodes, st.Drain.CountPerRack
	}
	from = make([]string, len(nodes))
	if len(nodes) == 0 {
		if len(racks) == 0 {
			racks = e.s.Cluster.Racks
		}
		for _, r := range racks {
			for range perRack {
				from = append(from, r)
			}
		}
	}
	if st.Shrink != nil {
		return mode, from, fmt.Sprintf("decommission %d node(s), newest first", len(from))
	}
	return mode, from, fmt.Sprintf("drain %d node(s), %s", len(from), mode)
}

// pick is the inventory positions of the nodes a removal takes, newest
// first as the nemesis removes them (nemesis.ShrinkTargets): for each rack
// in from, the newest node of that rack not yet picked ("" or none left
// there: of the cluster).
func (e *estimator) pick(from []string) []int {
	taken := map[int]bool{}
	newest := func(rack string) int {
		for i := len(e.nodes) - 1; i >= 0; i-- {
			if !taken[i] && (rack == "" || e.nodes[i].rack == rack) {
				return i
			}
		}
		return -1
	}
	var picked []int
	for _, r := range from {
		i := newest(r)
		if i < 0 {
			i = newest("")
		}
		if i < 0 {
			break
		}
		taken[i] = true
		picked = append(picked, i)
	}
	slices.SortFunc(picked, func(a, b int) int { return b - a })
	return picked
}

// remove takes the newest node of each rack the step names off (of the
// cluster for named nodes: best effort); each holds its shards' share of
// its rack's data, which goes to the rest of the rack, the side with fewer
// shards bounding the streaming (placement.go). Serially, one node per
// cycle.
// Requested together, the coordinator drains them one after another
// before 2026.1 and all at once from 2026.1 (results.ScaleIn; an unknown
// version is planned as the longer, queued way).
func (e *estimator) remove(si int, st scenarios.Step, ph *Phase) {
	m, version := e.m, e.s.Cluster.Version
	var from []string
	var detail string
	ph.Mode, from, detail = e.removal(st)
	picked := e.pick(from)
	count := len(picked)
	// Each removal's streaming time: one per node removed in turn, one for
	// the whole batch when the coordinator drains them all at once.
	var perNode []float64
	var moved float64
	drain := func(idx []int) { // positions, descending
		all, data := rackShards(e.nodes), e.rackData()
		var leaving []node
		for _, i := range idx {
			leaving = append(leaving, e.nodes[i])
			e.nodes = slices.Delete(e.nodes, i, i+1)
		}
		t, b := batchSeconds(leaveMoves(all, leaving, data), e.streamBytesPerVCPU)
		perNode, moved = append(perNode, t), moved+b
	}
	if ph.Mode == scenarios.ModeParallel && results.ScaleIn(version) == results.ScaleInParallel {
		drain(picked)
	} else {
		for _, i := range picked {
			drain([]int{i})
		}
	}
	ph.Cycles = 1
	if ph.Mode == scenarios.ModeSerial && count > 1 {
		ph.Cycles = count
	}
	stream := 0.0
	for _, t := range perNode {
		stream += t
	}
	ph.Seconds = float64(ph.Cycles)*m.RecoverySeconds + stream
	leave := results.DurRemoveNodes
	if st.Drain != nil {
		leave = results.DurDrainNodes
	}
	for c := 0; c < ph.Cycles; c++ {
		per := stream
		if ph.Cycles > 1 && c < len(perNode) {
			per = perNode[c]
		}
		e.p.Steps[si].Estimates = append(e.p.Steps[si].Estimates, map[string]float64{leave: per, results.DurDataBalanced: per, results.DurLatencyRecov: per + m.RecoverySeconds})
	}
	if ph.Mode == scenarios.ModeParallel && count > 1 {
		detail += scaleInDetail(version)
	}
	ph.Detail = fmt.Sprintf("%s; ≈%s to move", detail, scenarios.HumanBytes(moved))
}

// scaleInDetail says how a parallel removal of several nodes goes on the
// database version.
func scaleInDetail(version string) string {
	switch results.ScaleIn(version) {
	case results.ScaleInParallel:
		return ", drained all at once (ScyllaDB 2026.1+)"
	case results.ScaleInQueued:
		return ", drained one after another (ScyllaDB before 2026.1)"
	}
	return ", planned as drained one after another (before 2026.1; from 2026.1 all at once)"
}
