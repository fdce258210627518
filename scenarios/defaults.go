package scenarios

import (
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// The defaults live here, in one place; `elasticity plan` shows them resolved.

// DefaultTimeoutsLocal are the waits' limits on a backend whose scenario
// time is scaled by its own section (provision.ScaledTime: local, small
// scaled data).
var DefaultTimeoutsLocal = Timeouts{
	NodeReady:        Duration(3 * time.Minute),
	DataBalanced:     Duration(15 * time.Minute),
	LatencyRecovered: 0, // scenario time: DefaultTimeoutsReal's × local.time_scale (applyDefaults)
	Fill:             Duration(30 * time.Minute),
	Step:             Duration(30 * time.Minute),
	Teardown:         Duration(2 * time.Minute),
	Compactions:      0, // scenario time: DefaultTimeoutsReal's × local.time_scale (applyDefaults)
}

// MinLocalLatencyRecovered is the shortest latency recovery wait on the
// local backend: the sustained rule needs DefaultRecoveryIntervalsLocal
// one-second intervals in a row, and a few more to find them.
const MinLocalLatencyRecovered = 10 * time.Second

// DefaultRecoveryIntervalsLocal is thresholds.recovery.intervals on the
// local backend. The rule's intervals are one second of wall time whatever
// the time scale, so on real clusters 10 of them are seconds of a 30-minute
// phase, while a scaled local steady state lasts 4.5 s: 5 intervals there
// are already longer than the phase they are compared with.
const DefaultRecoveryIntervalsLocal = 5

// MinLocalCompactions is the shortest wait for compactions on the local
// backend: a few quiet periods (MinLocalCompactionsQuiet) after the fills'
// last compactions.
const MinLocalCompactions = 30 * time.Second

// MinLocalCompactionsQuiet is the shortest quiet period on the local
// backend: a few scrapes in a row that see no compaction (the emulator's
// compactions of a scaled disk take milliseconds, between scrapes).
const MinLocalCompactionsQuiet = 3 * time.Second

// DefaultTimeoutsReal are the waits' limits on docker, aws and static (real-sized data).
var DefaultTimeoutsReal = Timeouts{
	NodeReady:        Duration(30 * time.Minute),
	DataBalanced:     Duration(4 * time.Hour),
	LatencyRecovered: Duration(1 * time.Hour),
	Fill:             Duration(12 * time.Hour),
	Step:             Duration(6 * time.Hour),
	Teardown:         Duration(30 * time.Minute),
	// SCT's wait_no_compactions_running: 80 tries a minute apart.
	Compactions: Duration(80 * time.Minute),
}

// Other defaults.
var (
	DefaultFill = []FillPhase{
		{Name: "Soft Limit", TargetPercent: 70, Hold: Duration(30 * time.Minute)},
		{Name: "Hard Limit", TargetPercent: 90, Hold: Duration(30 * time.Minute)},
	}
	DefaultReport = []string{"md", "html", "json"}
)

const (
	DefaultInstanceType    = "i4i.large"
	DefaultRacks           = 3
	DefaultRF              = 3
	DefaultTabletsScylla   = 1024
	DefaultValueSize       = Size(1 << 10)
	DefaultLoadPercent     = Percent(50)
	DefaultConcurrency     = 150
	DefaultFillConcurrency = 64
	DefaultConsistency     = "QUORUM"
	DefaultSteadyState     = Duration(30 * time.Minute)
	// SCT's is_compaction_running looks at the last 60 s of the gauge.
	DefaultCompactionsQuiet = Duration(time.Minute)
	DefaultCalibration      = Duration(10 * time.Minute)
	DefaultHookTimeout      = Duration(10 * time.Minute)
	// Data validation: SCT's verification reads use ALL-like strictness;
	// 10,000 keys and 4 of 32 ranges take seconds on the emulator.
	DefaultValidateSample      = CountOrAll(10000)
	DefaultValidateConsistency = "ALL"
	DefaultValidateTokenRanges = CountOrAll(4)
	// Rack balance (SCT's PeriodicDiskUsageToArgus: interval 600, threshold 5).
	DefaultDiskBalanceEvery  = Duration(10 * time.Minute)
	DefaultRackBalanceSpread = Percent(5)
	RackBalanceWarn          = "warn"
	RackBalanceFail          = "fail"
)

// applyDefaults fills every field that the file and the overrides left unset,
// section by section in an order that puts what a default depends on first
// (the racks before the RF, local.time_scale before the timeouts). Where
// zero is a meaningful value (tablets_initial: 0, fill: []) it looks at
// whether the field was given rather than at its value.
func applyDefaults(s *Scenario, d *decoder) {
	defaultCluster(s, d)
	defaultDataset(s, d)
	defaultWorkload(s, d)
	defaultNemesis(s, d)
	defaultVerdicts(s, d)
	defaultBackends(s, d)
	defaultTimeouts(s, d)
}

// defaultCluster fills in the backend and the initial cluster.
func defaultCluster(s *Scenario, d *decoder) {
	defStr(&s.Backend, provision.DefaultBackend)

	c := &s.Cluster
	defStr(&c.Flavour, FlavourScylla)
	defStr(&c.Name, "elasticity")
	defStr(&c.DC, "dc1")
	if !d.isSet("cluster.racks") {
		c.Racks = RackNames(DefaultRacks)
		if rn, ok := s.Backends[s.Backend].(provision.RackNamer); ok && len(rn.RackNames()) > 0 {
			c.Racks = RackList(rn.RackNames())
		}
	}
	d.defInt(&c.NodesPerRack, "cluster.nodes_per_rack", 1)
	defStr(&c.InstanceType, DefaultInstanceType)
	if c.Flavour == FlavourScylla {
		d.defInt(&c.TabletsInitial, "cluster.tablets_initial", DefaultTabletsScylla)
	}
}

// defaultDataset fills in the schema and the fill phases.
func defaultDataset(s *Scenario, d *decoder) {
	c := &s.Cluster
	ds := &s.Dataset
	d.defInt(&ds.RF, "dataset.rf", min(DefaultRF, max(1, len(c.Racks)*c.NodesPerRack)))
	defStr(&ds.Keyspace, "elasticity")
	defStr(&ds.Table, "standard1")
	if !d.isSet("dataset.value_size") {
		ds.ValueSize = ValueSize{Min: DefaultValueSize, Max: DefaultValueSize}
	}
	defStr(&ds.KeyDistribution, "sequential")
	if !d.isSet("dataset.fill") {
		ds.Fill = append([]FillPhase(nil), DefaultFill...)
	}
	if ds.Fill == nil {
		ds.Fill = []FillPhase{}
	}
	for i := range ds.Fill {
		defStr(&ds.Fill[i].Name, fmt.Sprintf("Fill %d", i+1))
		defStr(&ds.Fill[i].By, FillByMax)
	}
	d.defInt(&ds.FillConcurrency, "dataset.fill_concurrency", DefaultFillConcurrency)
}

// defaultWorkload fills in the workload, the steady state and the wait for compactions.
func defaultWorkload(s *Scenario, d *decoder) {
	w := &s.Workload
	if !d.isSet("workload.mix") {
		w.Mix = Mix{Write: 1, Read: 1}
	}
	if !d.isSet("workload.rate") && !d.isSet("workload.load_percent") {
		w.LoadPercent = DefaultLoadPercent
	}
	d.defDur(&w.Calibration, "workload.calibration", DefaultCalibration)
	d.defInt(&w.Concurrency, "workload.concurrency", DefaultConcurrency)
	defStr(&w.Consistency.Write, DefaultConsistency)
	defStr(&w.Consistency.Read, DefaultConsistency)
	defStr(&w.Distribution, "uniform")

	d.defDur(&s.SteadyState, "steady_state", DefaultSteadyState)
	if !d.isSet("compactions.wait") {
		s.Compactions.Wait = true
	}
	d.defDur(&s.Compactions.Quiet, "compactions.quiet", DefaultCompactionsQuiet)
}

// defaultNemesis fills in the nemesis steps: names, and each kind's fields.
func defaultNemesis(s *Scenario, d *decoder) {
	c := &s.Cluster
	if s.Nemesis == nil {
		s.Nemesis = []Step{}
	}
	counts := map[string]int{}
	for i := range s.Nemesis {
		st := &s.Nemesis[i]
		if st.kind == "" {
			continue // decoding failed; already reported
		}
		counts[st.kind]++
		if st.Name == "" {
			st.Name = fmt.Sprintf("%s #%d", st.kind, counts[st.kind])
		}
		p := fmt.Sprintf("nemesis.%d.%s.", i, st.kind)
		switch {
		case st.Grow != nil:
			defStr(&st.Grow.InstanceType, c.InstanceType)
			d.defInt(&st.Grow.CountPerRack, p+"count_per_rack", 1)
			defStr(&st.Grow.Mode, ModeSerial)
		case st.Shrink != nil:
			if len(st.Shrink.Nodes) == 0 {
				d.defInt(&st.Shrink.CountPerRack, p+"count_per_rack", 1)
			}
			defStr(&st.Shrink.Mode, ModeSerial)
		case st.Drain != nil:
			if len(st.Drain.Nodes) == 0 {
				d.defInt(&st.Drain.CountPerRack, p+"count_per_rack", 1)
			}
			defStr(&st.Drain.Mode, ModeSerial)
		case st.Hook != nil:
			d.defDur(&st.Hook.Timeout, p+"timeout", DefaultHookTimeout)
		}
	}
}

// defaultVerdicts fills in the thresholds, the report and the data validation.
func defaultVerdicts(s *Scenario, d *decoder) {
	for i := range s.Thresholds.Cycles {
		defStr(&s.Thresholds.Cycles[i].Cycle, "*")
	}
	for i := range s.Thresholds.Baseline.Cycles {
		defStr(&s.Thresholds.Baseline.Cycles[i].Cycle, "*")
	}
	intervals := results.DefaultRecoveryIntervals
	if _, _, scaled := s.TimeScaled(); scaled {
		intervals = DefaultRecoveryIntervalsLocal
	}
	d.defInt(&s.Thresholds.Recovery.Intervals, "thresholds.recovery.intervals", intervals)
	if !d.isSet("report.formats") {
		s.Report.Formats = append([]string(nil), DefaultReport...)
	}
	d.defDur(&s.Report.DiskBalanceEvery, "report.disk_balance_every", DefaultDiskBalanceEvery)
	if !d.isSet("thresholds.rack_balance.max_spread") {
		s.Thresholds.RackBalance.MaxSpread = DefaultRackBalanceSpread
	}
	defStr(&s.Thresholds.RackBalance.Action, RackBalanceWarn)
	if !d.isSet("workload.capacity_after") {
		s.Workload.CapacityAfter = true
	}
	if !d.isSet("validate.sample") {
		s.Validate.Sample = DefaultValidateSample
	}
	if !d.isSet("validate.token_ranges") {
		s.Validate.TokenRanges = DefaultValidateTokenRanges
	}
	defStr(&s.Validate.Consistency, DefaultValidateConsistency)
}

// defaultTimeouts fills in the waits' limits, by backend: scenario time
// where the backend's section scales it (provision.ScaledTime: local,
// local.time_scale), once the sections have their defaults.
func defaultTimeouts(s *Scenario, d *decoder) {
	timeScale, _, scaled := s.TimeScaled()
	tdef := DefaultTimeoutsReal
	if scaled {
		tdef = DefaultTimeoutsLocal
	}
	t := &s.Timeouts
	d.defDur(&t.NodeReady, "timeouts.node_ready", tdef.NodeReady)
	d.defDur(&t.DataBalanced, "timeouts.data_balanced", tdef.DataBalanced)
	recovered := tdef.LatencyRecovered
	if scaled {
		// The latency recovery wait is scenario time: the real default
		// scaled as the scenario's durations are, but long enough for the
		// sustained rule's intervals.
		recovered = Duration(max(MinLocalLatencyRecovered, time.Duration(float64(DefaultTimeoutsReal.LatencyRecovered)*timeScale)))
	}
	d.defDur(&t.LatencyRecovered, "timeouts.latency_recovered", recovered)
	d.defDur(&t.Fill, "timeouts.fill", tdef.Fill)
	d.defDur(&t.Step, "timeouts.step", tdef.Step)
	d.defDur(&t.Teardown, "timeouts.teardown", tdef.Teardown)
	compactions := tdef.Compactions
	if scaled {
		// Scenario time too: the fills' compactions are scaled down with the disks.
		compactions = Duration(max(MinLocalCompactions, time.Duration(float64(DefaultTimeoutsReal.Compactions)*timeScale)))
	}
	d.defDur(&t.Compactions, "timeouts.compactions", compactions)
}

// defaultBackends has every backend fill in its own section.
func defaultBackends(s *Scenario, d *decoder) {
	for _, name := range s.SectionNames() {
		s.Backends[name].Default(s.section(name, d.isSet, func(path, msg string) { d.problem(path, "%s", msg) }))
	}
}

// defStr sets an empty string to its default.
func defStr(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// defInt and defDur set a field the file and --set left out.
func (d *decoder) defInt(p *int, path string, v int) {
	if !d.isSet(path) {
		*p = v
	}
}

func (d *decoder) defDur(p *Duration, path string, v Duration) {
	if !d.isSet(path) {
		*p = v
	}
}
