package reporting

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

var update = flag.Bool("update", false, "regenerate testdata/run1 and the golden files")

// fixture describes a synthetic 3 → 6 node serial scale-out run.
type fixture struct {
	interval time.Duration // latency and metrics interval
	steady   time.Duration // Cycle #0
	fill     time.Duration // each fill phase
	hold     time.Duration
	join     time.Duration // requested → normal
	balance  time.Duration // normal → balanced
	recover  time.Duration // balanced → recovered
	final    time.Duration
	perOp    int // values recorded per latency interval and operation (bounded for size)
	// pool > 0 reuses that many pre-encoded histograms per operation and
	// stress level (fast generation of big benchmark runs).
	pool int
	// metricsEvery writes disk samples every that many intervals (default 1).
	metricsEvery int
	// load > 0 is the offered load in percent of capacity (a matrix's
	// variant): the scale-out's latency rises with it, and the nodes export
	// their compaction backlog and scheduling lag; from 80 compaction falls
	// behind in Cycle #1 and Cycle #2 is host-bound. 0: the load of run1.
	load float64
}

// smallFixture is checked in as testdata/run1 (regenerate with -update).
var smallFixture = fixture{interval: 10 * time.Second, steady: 5 * time.Minute, fill: 3 * time.Minute, hold: time.Minute,
	join: 70 * time.Second, balance: 100 * time.Second, recover: 40 * time.Second, final: 2 * time.Minute, perOp: 300}

var t0 = time.Date(2026, 3, 2, 23, 41, 58, 0, time.UTC)

const gb = 1e9

type fixtureWriter struct {
	f       fixture
	dir     string
	r       *rand.Rand
	ev, lat *results.JSONLWriter
	met     *results.JSONLWriter
	now     time.Time
	lastLat time.Time
	// disk model: used bytes per node
	nodes []fixNode
	// latency multiplier and phase
	stress  float64
	filling bool
	// backlog is the nodes' normalized compaction backlog, stealMS their
	// scheduling lag counter and hostBusy whether it grows (load > 0 only).
	backlog, stealMS float64
	hostBusy         bool
	ticks            int
	cache            map[string][]results.LatencyRecord
}

type fixNode struct {
	name, rack, typ string
	total, used     float64
	// cluster-internal metrics: tablet replicas held, counters
	tablets, migrations, readTimeouts float64
}

func (w *fixtureWriter) emit(ev results.Event) {
	ev.Time = w.now
	if err := w.ev.Write(ev); err != nil {
		panic(err)
	}
}

// advance moves time forward, writing latency and metrics intervals.
func (w *fixtureWriter) advance(d time.Duration, diskTarget func(n *fixNode, frac float64)) {
	start := w.now
	end := w.now.Add(d)
	for w.now.Before(end) {
		next := w.now.Add(w.f.interval)
		if next.After(end) {
			next = end
		}
		frac := next.Sub(start).Seconds() / d.Seconds()
		ops := []string{}
		if w.filling {
			ops = append(ops, results.OpFill)
		} else if w.stress > 0 {
			ops = append(ops, results.OpWrite, results.OpRead)
		}
		for _, op := range ops {
			w.writeLatency(op, w.now, next)
		}
		if diskTarget != nil {
			for i := range w.nodes {
				diskTarget(&w.nodes[i], frac)
			}
		}
		w.now = next
		w.ticks++
		if w.f.metricsEvery > 1 && w.ticks%w.f.metricsEvery != 0 {
			continue
		}
		w.balance()
		w.host(w.f.interval)
		for _, n := range w.nodes {
			s := results.NodeSample{Time: w.now, Node: n.name, Rack: n.rack, InstanceType: n.typ, DiskTotalBytes: n.total, DiskUsedBytes: n.used, DiskAvailBytes: n.total - n.used, Source: "node_exporter",
				Metrics: map[string]float64{MetricTablets: math.Round(n.tablets), MetricUtilization: w.utilization(), MetricMigrations: math.Round(n.migrations),
					MetricReadTimeouts: n.readTimeouts, MetricWriteTimeouts: 0}}
			if w.f.load > 0 {
				s.Metrics["compaction_manager_normalized_backlog"] = w.backlog
				s.Metrics["reactor_cpu_steal_time_ms"] = w.stealMS
			}
			if err := w.met.Write(s); err != nil {
				panic(err)
			}
		}
	}
}

// balance moves a third of every node's distance to an even share of the
// 48 tablet replicas (16 tablets × RF 3) per tick, counting the moves as
// migrations; overloaded reads time out. Deterministic: the latency
// generator's random stream is left alone.
func (w *fixtureWriter) balance() {
	share := 48 / float64(len(w.nodes))
	for i := range w.nodes {
		n := &w.nodes[i]
		if n.tablets == 0 && n.typ == "i4i.large" && w.ticks <= 1 {
			n.tablets = share
		}
		d := (share - n.tablets) / 3
		if math.Abs(d) < 0.5 {
			d = share - n.tablets
		}
		n.tablets += d
		n.migrations += math.Abs(d) / 2
		if w.stress > 3 {
			n.readTimeouts += 1
		}
	}
}

// host moves the compaction backlog and the scheduling lag of a variant
// with a load: the backlog grows while the scale-out overloads a cluster at
// 80% or more and drains otherwise; a busy host lags 30 ms per second.
func (w *fixtureWriter) host(d time.Duration) {
	if w.f.load <= 0 {
		return
	}
	if w.f.load >= 80 && w.stress > 3 {
		w.backlog += 1.5
	} else {
		w.backlog = math.Max(1, w.backlog*0.9)
	}
	if w.hostBusy {
		w.stealMS += 30 * d.Seconds()
	}
}

func (w *fixtureWriter) utilization() float64 {
	if w.filling {
		return 85
	}
	return math.Min(95, 18*math.Max(w.stress, 0.3))
}

func (w *fixtureWriter) writeLatency(op string, from, to time.Time) {
	if w.f.pool > 0 {
		key := fmt.Sprintf("%s/%g", op, w.stress)
		if w.cache == nil {
			w.cache = map[string][]results.LatencyRecord{}
		}
		if len(w.cache[key]) < w.f.pool {
			w.cache[key] = append(w.cache[key], w.makeLatency(op, from, to))
		}
		rec := w.cache[key][w.r.Intn(len(w.cache[key]))]
		rec.Start, rec.End = from, to
		if err := w.lat.Write(rec); err != nil {
			panic(err)
		}
		return
	}
	if err := w.lat.Write(w.makeLatency(op, from, to)); err != nil {
		panic(err)
	}
}

func (w *fixtureWriter) makeLatency(op string, from, to time.Time) results.LatencyRecord {
	base := map[string]float64{results.OpWrite: 600, results.OpRead: 1400, results.OpFill: 2500}[op]
	h, s := results.NewHDR(), results.NewHDR()
	n := w.f.perOp
	mult := math.Max(w.stress, 1)
	for i := 0; i < n; i++ {
		v := base * (0.6 + w.r.ExpFloat64()*0.5) * mult
		if w.r.Intn(200) == 0 {
			v *= 4 // a tail
		}
		_ = h.RecordValue(int64(v))
		_ = s.RecordValue(int64(v * 0.8))
	}
	rh, _ := results.EncodeHDR(h)
	sh, _ := results.EncodeHDR(s)
	secs := to.Sub(from).Seconds()
	count := int64(1000 * secs) // 1,000 op/s of each type (the histogram holds a sample)
	if w.f.load > 0 {
		count = int64(1000 * secs * w.f.load / 50)
	}
	if op == results.OpFill {
		count = int64(5000 * secs)
	}
	rec := results.LatencyRecord{Start: from, End: to, Op: op, Count: count, Response: results.SummarizeHDR(h), Service: results.SummarizeHDR(s), ResponseHDR: rh, ServiceHDR: sh}
	if w.stress > 3 && op == results.OpRead {
		rec.Errors = map[string]int64{"timeout": 3}
	}
	return rec
}

func (w *fixtureWriter) snapshot(name string) {
	var disk []results.NodeDisk
	var cl results.NodeDisk
	for _, n := range w.nodes {
		d := results.NodeDisk{Node: n.name, Rack: n.rack, InstanceType: n.typ, TotalGB: n.total / gb, UsedGB: n.used / gb, AvailGB: (n.total - n.used) / gb, UsagePercent: 100 * n.used / n.total}
		disk = append(disk, d)
		cl.TotalGB += d.TotalGB
		cl.UsedGB += d.UsedGB
		cl.AvailGB += d.AvailGB
	}
	cl.Node, cl.UsagePercent = "cluster", 100*cl.UsedGB/cl.TotalGB
	w.emit(results.Event{Type: results.EventDiskSnapshot, Name: name, Disk: append(disk, cl)})
}

// writeFixture synthesises a complete run directory.
func writeFixture(dir string, f fixture) error {
	if err := os.MkdirAll(filepath.Join(dir, results.DirLogs), 0o755); err != nil {
		return err
	}
	for _, name := range []string{results.FileEvents, results.FileLatency, results.FileMetrics} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	w := &fixtureWriter{f: f, dir: dir, r: rand.New(rand.NewSource(42)), now: t0}
	var err error
	open := func(name string) *results.JSONLWriter {
		if err != nil {
			return nil
		}
		var j *results.JSONLWriter
		j, err = results.OpenJSONL(filepath.Join(dir, name))
		return j
	}
	w.ev, w.lat, w.met = open(results.FileEvents), open(results.FileLatency), open(results.FileMetrics)
	if err != nil {
		return err
	}
	defer w.ev.Close()
	defer w.lat.Close()
	defer w.met.Close()
	scenario := "name: 90pct-scaleout\nbackend: local\ncluster:\n  instance_type: i4i.large\n  racks: [rack1, rack2, rack3]\n"
	if err := os.WriteFile(filepath.Join(dir, results.FileScenario), []byte(scenario), 0o644); err != nil {
		return err
	}
	logLine := "INFO  2026-03-02 23:42:00,000 [shard 0:main] init - Scylla version 2025.1.0 initialization completed.\n"
	if err := os.WriteFile(filepath.Join(dir, results.DirLogs, "node-1.log"), []byte(logLine), 0o644); err != nil {
		return err
	}

	racks := []string{"rack1", "rack2", "rack3"}
	var initial []results.NodeInfo
	for i, r := range racks {
		n := fmt.Sprintf("node-%d", i+1)
		initial = append(initial, results.NodeInfo{Name: n, Address: fmt.Sprintf("127.0.0.%d", i+2), Rack: r, InstanceType: "i4i.large", VCPUs: 2, DiskBytes: 468 * gb})
		w.nodes = append(w.nodes, fixNode{name: n, rack: r, typ: "i4i.large", total: 468 * gb, used: 2 * gb})
	}
	setup := &results.Setup{
		Scenario: "90pct-scaleout", Description: "3 × i4i.large filled to 90%, grow by one i4i.4xlarge per rack", RunID: "fixture-run1",
		Backend: "local", Emulated: true, Flavour: "scylla", DatabaseVersion: "2025.1.0",
		InitialNodes: initial, Racks: racks, RF: 3, Tablets: 16,
		FillTargets: []results.FillTarget{{Name: "Soft Limit", TargetPercent: 70, HoldSeconds: f.hold.Seconds()}, {Name: "Hard Limit", TargetPercent: 90, HoldSeconds: f.hold.Seconds()}},
		WriteRatio:  0.5, ReadRatio: 0.5, RateOpsPerSec: 2000, LoadPercent: 50, CapacityOps: 4000, ValueSizeBytes: 1024,
		Nemesis: []results.NemesisInfo{{Name: "grow", Kind: "grow", Mode: "serial", InstanceType: "i4i.4xlarge", CountPerRack: 1, VCPUs: 16}},
		Thresholds: []results.Threshold{
			{Cycle: "*", Metric: "write_p99_ms", Limit: 10},
			{Cycle: "steady_state", Metric: "read_p99_ms", Limit: 20},
			{Cycle: "nemesis", Metric: "read_p90_ms", Limit: 5}, // fails in Cycle #1
			{Cycle: "*", Metric: "total_ops_per_sec", Limit: 1900, Floor: true},
			{Cycle: "Add new node(s)", Metric: "duration_seconds", Limit: 600},
		},
		TimeScale:   1,
		Limitations: []string{"emulated nodes: capacity scaled down from the instance catalog"},
	}
	if f.load > 0 {
		setup.LoadPercent, setup.RateOpsPerSec = f.load, setup.CapacityOps*f.load/100
		setup.RunID = fmt.Sprintf("fixture-load%.0f", f.load)
	}
	w.emit(results.Event{Type: results.EventRunStart, Setup: setup, Message: "run fixture-run1 of 90pct-scaleout"})
	phase := func(p results.Phase, name string, fn func()) {
		w.emit(results.Event{Type: results.EventPhaseStart, Phase: p, Name: name})
		fn()
		w.emit(results.Event{Type: results.EventPhaseEnd, Phase: p, Name: name})
	}
	phase("provision", "", func() { w.advance(20*time.Second, nil) })
	phase("schema", "", func() { w.advance(5*time.Second, nil) })
	for _, ft := range setup.FillTargets {
		starts := make([]float64, len(w.nodes))
		for i, n := range w.nodes {
			starts[i] = n.used
		}
		target := ft.TargetPercent
		w.filling = true
		phase("fill", ft.Name, func() {
			w.advance(f.fill, func(n *fixNode, frac float64) {
				i := int(n.name[len(n.name)-1] - '1')
				goal := n.total * (target + float64(i)) / 100
				n.used = starts[i] + (goal-starts[i])*frac
			})
		})
		w.filling = false
		w.snapshot(ft.Name)
		phase("hold", ft.Name, func() { w.advance(f.hold, nil) })
	}
	w.stress = 1
	phase("steady_state", "", func() {
		w.emit(results.Event{Type: results.EventCycleStart, Cycle: "Cycle #0"})
		w.advance(f.steady/2, nil)
		w.emit(results.Event{Type: results.EventStall, Node: "node-2", StallMS: 12, Line: "Reactor stalled for 12 ms on shard 1"})
		w.advance(f.steady/2, nil)
		w.emit(results.Event{Type: results.EventCycleEnd, Cycle: "Cycle #0"})
	})
	phase("nemesis", "", func() {
		for i := 1; i <= 3; i++ {
			cyc := fmt.Sprintf("Cycle #%d", i)
			name := fmt.Sprintf("node-%d", 3+i)
			base := results.Event{Step: "grow", Cycle: cyc, Kind: "grow", Mode: "serial"}
			w.emit(results.Event{Type: results.EventCycleStart, Cycle: cyc, Step: "grow"})
			ev := base
			ev.Type = results.EventStepRequested
			w.emit(ev)
			w.stress = []float64{0, 4.5, 2, 1.3}[i]
			if f.load > 0 {
				w.stress = 1 + (w.stress-1)*f.load/50
				w.hostBusy = f.load >= 80 && i == 2
			}
			w.emit(results.Event{Type: results.EventNodeState, Node: name, State: "started"})
			w.advance(f.join/2, nil)
			w.emit(results.Event{Type: results.EventNodeState, Node: name, State: "joining"})
			switch i {
			case 1:
				for _, ms := range []float64{25, 35, 60, 150} {
					w.emit(results.Event{Type: results.EventStall, Node: "node-1", StallMS: ms, Line: fmt.Sprintf("Reactor stalled for %.0f ms on shard 0", ms)})
				}
				w.emit(results.Event{Type: results.EventDBError, Node: "node-1", ErrorType: "DATABASE_ERROR", Severity: "ERROR",
					Line: "!ERR | scylla[5313]:  [shard 0: gms] raft - <script>alert(1)</script> Transferring snapshot failed with: seastar::rpc::remote_verb_error"})
			case 2:
				w.emit(results.Event{Type: results.EventStall, Node: name, StallMS: 250, Line: "Reactor stalled for 250 ms on shard 3"})
				w.emit(results.Event{Type: results.EventStall, Node: name, StallMS: 1200, Line: "Reactor stalled for 1200 ms on shard 3"})
				for k := 0; k < 2; k++ {
					w.emit(results.Event{Type: results.EventDBError, Node: name, ErrorType: "STARTUP_FAILED", Severity: "CRITICAL",
						Line: "!ERR | scylla[5596]:  [shard  0:main] init - Startup failed: service::raft_operation_timeout_error (raft operation [read_barrier] timed out)"})
				}
			case 3:
				w.emit(results.Event{Type: results.EventStall, Node: "node-3", StallMS: 2500, Line: "Reactor stalled for 2500 ms on shard 0"})
			}
			w.advance(f.join-f.join/2, nil)
			w.nodes = append(w.nodes, fixNode{name: name, rack: fmt.Sprintf("rack%d", i), typ: "i4i.4xlarge", total: 3750 * gb, used: 0})
			w.emit(results.Event{Type: results.EventNodeState, Node: name, State: "normal"})
			ev = base
			ev.Type, ev.Nodes = results.EventNodesNormal, []string{name}
			w.emit(ev)
			// Data moves: the rack's old node hands tablets to the new node.
			old := w.nodes[i-1].used
			w.advance(f.balance, func(n *fixNode, frac float64) {
				switch n.name {
				case name:
					n.used = old * 0.55 * frac
				case fmt.Sprintf("node-%d", i):
					n.used = old - old*0.5*frac
				}
			})
			ev = base
			ev.Type = results.EventDataBalanced
			w.emit(ev)
			w.stress = 1
			w.advance(f.recover, nil)
			ev = base
			ev.Type = results.EventLatencyRecov
			w.emit(ev)
			ev = base
			ev.Type = results.EventStepEnd
			w.emit(ev)
			w.emit(results.Event{Type: results.EventCycleEnd, Cycle: cyc, Step: "grow"})
			w.hostBusy = false
		}
		w.snapshot("Scale out")
	})
	phase("final_hold", "", func() { w.advance(f.final, nil) })
	w.snapshot("Final")
	w.stress = 0
	if f.load == 0 {
		// The probe after the last step on a host with no CPU left: 9,200
		// op/s on 54 vCPUs is the host's figure, not a drop per vCPU.
		phase(results.PhaseCalibrate, results.ProbeAfter, func() {
			start := w.now
			w.advance(30*time.Second, nil)
			w.emit(results.Event{Type: results.EventCapacity, Phase: results.PhaseCalibrate, Name: results.ProbeAfter, CapacityOps: 9200,
				Probe: &results.CapacityProbe{Name: results.ProbeAfter, Start: start, End: w.now, CapacityOps: 9200, MachineBusyPct: 99, LoaderLagMSPerS: 3}})
		})
	}
	phase("teardown", "", func() { w.advance(10*time.Second, nil) })
	w.emit(results.Event{Type: results.EventRunEnd, Status: results.StatusPassed})
	return nil
}

func TestFixtureUpToDate(t *testing.T) {
	dir := filepath.Join("testdata", "run1")
	if *update {
		if err := writeFixture(dir, smallFixture); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, results.FileEvents)); err != nil {
		t.Fatalf("fixture missing (run go test ./reporting -update): %v", err)
	}
}
