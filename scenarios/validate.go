package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

var (
	reName       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	reCycle      = regexp.MustCompile(`^Cycle #[0-9]+$`)
	reIdentifier = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,47}$`)

	flavours = []string{FlavourScylla, FlavourCassandra}
	// fillDistributions: the fill writes new keys in order (stress.Fill).
	fillDistributions = []string{"sequential"}
	modes             = []string{ModeSerial, ModeParallel}
	reportFormats     = []string{"md", "html", "json"}
	consistencyCLs    = []string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE"}
	// validateCLs are the read levels (ANY and EACH_QUORUM are for writes).
	validateCLs = []string{"ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "LOCAL_ONE"}
)

// validate checks the resolved scenario and records every problem.
// Check validates the scenario section by section and returns every
// problem as a *FieldError, in the order of the sections (k6's
// options.Validate: a []error, not the first error; the name Validate is
// the validate: section's). given says which
// fields the file or --set gave (nil: none); loading places each problem
// at its field's line.
func (s *Scenario) Check(given Given) []error {
	if given == nil {
		given = func(string) bool { return false }
	}
	var errs checks
	if s.Name == "" {
		errs.add("name", "is required")
	} else if !reName.MatchString(s.Name) {
		errs.add("name", "%q must be 1-100 letters, digits, '.', '_' or '-' (it names run directories)", s.Name)
	}
	errs.oneOf("backend", s.Backend, provision.Names())
	errs = append(errs, s.Cluster.Validate()...)
	errs = append(errs, s.Dataset.Validate(len(s.Cluster.Racks)*s.Cluster.NodesPerRack, given)...)
	errs = append(errs, s.Workload.Validate(given)...)
	errs.positive("steady_state", float64(s.SteadyState))
	if s.Compactions.Wait {
		errs.positive("compactions.quiet", float64(s.Compactions.Quiet))
	}
	errs.nonNegative("final_hold", float64(s.FinalHold))
	errs = append(errs, s.validateNemesis(given)...)
	errs = append(errs, s.validateThresholds(given)...)
	errs.positive("report.disk_balance_every", float64(s.Report.DiskBalanceEvery))
	errs = append(errs, s.Thresholds.RackBalance.Validate()...)
	errs = append(errs, s.Validate.Validate()...)
	errs = append(errs, s.Report.Validate()...)
	errs = append(errs, s.Timeouts.Validate()...)
	errs = append(errs, s.validateBackends(given)...)
	errs = append(errs, s.validateErrors()...)
	return errs
}

// validate records the scenario's problems in the decoder, each at its
// field's line (a field that could not be decoded is not judged again).
func validate(s *Scenario, d *decoder) {
	for _, err := range s.Check(d.isSet) {
		fe := err.(*FieldError)
		d.problem(fe.Path, "%s", fe.Msg)
	}
}

// Validate checks the initial cluster.
func (c Cluster) Validate() []error {
	var errs checks
	errs.oneOf("cluster.flavour", c.Flavour, flavours)
	if !reIdentifier.MatchString(c.DC) {
		errs.add("cluster.dc", "%q is not a valid data centre name (letters, digits, _)", c.DC)
	}
	if len(c.Racks) == 0 {
		errs.add("cluster.racks", "at least one rack is required")
	}
	seenRack := map[string]bool{}
	for i, r := range c.Racks {
		p := fmt.Sprintf("cluster.racks.%d", i)
		if r == "" || strings.ContainsAny(r, " \t\n'\"") {
			errs.add(p, "rack name %q must be non-empty without spaces or quotes", r)
		} else if seenRack[r] {
			errs.add(p, "duplicate rack %q", r)
		}
		seenRack[r] = true
	}
	if c.NodesPerRack < 1 {
		errs.add("cluster.nodes_per_rack", "must be >= 1")
	} else if c.NodesPerRack > 100 {
		errs.add("cluster.nodes_per_rack", "must be <= 100")
	}
	errs.instanceType("cluster.instance_type", c.InstanceType)
	if c.TabletsInitial < 0 {
		errs.add("cluster.tablets_initial", "must be >= 0 (0 = vnodes)")
	} else if c.TabletsInitial > 0 && c.Flavour == FlavourCassandra {
		errs.add("cluster.tablets_initial", "cassandra has no tablets; use 0")
	}
	return errs
}

// Validate checks the dataset; initialNodes bounds the replication factor.
func (ds Dataset) Validate(initialNodes int, given Given) []error {
	var errs checks
	if ds.RF < 1 {
		errs.add("dataset.rf", "must be >= 1")
	} else if initialNodes > 0 && ds.RF > initialNodes {
		errs.add("dataset.rf", "%d is more than the %d initial nodes", ds.RF, initialNodes)
	}
	if !reIdentifier.MatchString(ds.Keyspace) {
		errs.add("dataset.keyspace", "%q is not a valid CQL identifier (a letter, then letters, digits or _; at most 48)", ds.Keyspace)
	}
	if !reIdentifier.MatchString(ds.Table) {
		errs.add("dataset.table", "%q is not a valid CQL identifier (a letter, then letters, digits or _; at most 48)", ds.Table)
	}
	vs := ds.ValueSize
	switch {
	case vs.Min < 1:
		errs.add(vsPath(given, "min"), "must be at least 1B")
	case vs.Max < vs.Min:
		errs.add("dataset.value_size.max", "%s is less than min %s", vs.Max, vs.Min)
	case vs.Max > 16<<20:
		errs.add(vsPath(given, "max"), "%s is more than 16MiB", vs.Max)
	}
	errs.oneOf("dataset.key_distribution", ds.KeyDistribution, fillDistributions)
	seenFill := map[string]bool{}
	var prev Percent
	for i, f := range ds.Fill {
		p := fmt.Sprintf("dataset.fill.%d", i)
		if seenFill[f.Name] {
			errs.add(p+".name", "duplicate fill phase name %q", f.Name)
		}
		seenFill[f.Name] = true
		errs.oneOf(p+".by", f.By, []string{FillByMax, FillByAverage})
		switch {
		case f.TargetPercent <= 0 || f.TargetPercent >= 100:
			errs.add(p+".target_percent", "must be between 0%% and 100%% (exclusive), got %v", f.TargetPercent)
		case f.TargetPercent <= prev:
			errs.add(p+".target_percent", "%v must be above the previous phase's %v", f.TargetPercent, prev)
		}
		if f.TargetPercent > prev {
			prev = f.TargetPercent
		}
	}
	if ds.FillConcurrency < 1 {
		errs.add("dataset.fill_concurrency", "must be >= 1")
	}
	errs.nonNegative("dataset.fill_rate", float64(ds.FillRate))
	return errs
}

// Validate checks the workload.
func (w Workload) Validate(given Given) []error {
	var errs checks
	errs.nonNegative("workload.mix.write", w.Mix.Write)
	errs.nonNegative("workload.mix.read", w.Mix.Read)
	if w.Mix.Write >= 0 && w.Mix.Read >= 0 && w.Mix.Write+w.Mix.Read == 0 {
		errs.add("workload.mix", "write and read cannot both be 0")
	}
	switch {
	case given("workload.rate") && given("workload.load_percent"):
		errs.add("workload.rate", "set either rate or load_percent, not both")
	case given("workload.rate"):
		errs.positive("workload.rate", float64(w.Rate))
	default:
		if w.LoadPercent <= 0 || w.LoadPercent > 200 {
			errs.add("workload.load_percent", "must be in (0%%, 200%%], got %v", w.LoadPercent)
		}
	}
	errs.positive("workload.calibration", float64(w.Calibration))
	if w.Concurrency < 1 {
		errs.add("workload.concurrency", "must be >= 1")
	}
	errs.oneOf("workload.consistency.write", strings.ToUpper(w.Consistency.Write), consistencyCLs)
	errs.oneOf("workload.consistency.read", strings.ToUpper(w.Consistency.Read), consistencyCLs)
	if _, err := keygen.Parse(w.Distribution); err != nil {
		errs.add("workload.distribution", "%v", err)
	}
	errs = append(errs, w.validateModel(given)...)
	return errs
}

// validateThresholds checks thresholds: cycle limits, duration ceilings,
// the recovery rule and the baseline rules, which name the scenario's
// cycles, steps and fills.
func (s *Scenario) validateThresholds(given Given) []error {
	var errs checks
	for i, t := range s.Thresholds.Cycles {
		p := fmt.Sprintf("thresholds.cycles.%d", i)
		if !validCycle(s, t.Cycle) {
			errs.add(p+".cycle", "%q is not \"*\", steady_state, nemesis, \"Cycle #N\" or a nemesis step name", t.Cycle)
		}
		n := 0
		for _, m := range t.metrics() {
			mp := p + "." + m.key()
			if given(mp) {
				errs.positive(mp, m.v)
				n++
			}
		}
		if n == 0 {
			errs.add(p, "sets no limit (write_p90_ms, write_p99_ms, read_p90_ms, read_p99_ms, write_ops_per_sec, read_ops_per_sec, total_ops_per_sec, or *_ratio_to_steady)")
		}
	}
	for _, l := range s.Thresholds.Durations {
		p := "thresholds.durations." + l.Name
		switch {
		case !validDurationName(s, l.Name):
			errs.add(p, "unknown duration %q%s", l.Name, Suggest(l.Name, durationNames(s)))
		case l.PlanFactor > 0 && !plannedDuration(s, l.Name):
			errs.add(p, "%q has no plan estimate (a hook or hold step, the wait for compactions): give a duration such as 30m", l.Name)
		case l.PlanFactor == 0:
			errs.positive(p, float64(l.Max))
		}
	}
	if n := s.Thresholds.Recovery.Intervals; n < 1 || n > 3600 {
		errs.add("thresholds.recovery.intervals", "must be within 1..3600 (consecutive intervals within target), got %d", n)
	}
	errs = append(errs, s.validateBaselineRules()...)
	return errs
}

// Validate checks the rack balance threshold.
func (r RackBalance) Validate() []error {
	var errs checks
	errs.positive("thresholds.rack_balance.max_spread", float64(r.MaxSpread))
	if a := r.Action; a != RackBalanceWarn && a != RackBalanceFail {
		errs.add("thresholds.rack_balance.action", "%q is not warn or fail%s", a, Suggest(a, []string{RackBalanceWarn, RackBalanceFail}))
	}
	return errs
}

// Validate checks the data validation.
func (v Validate) Validate() []error {
	var errs checks
	if cl := strings.ToUpper(v.Consistency); !slices.Contains(validateCLs, cl) {
		errs.add("validate.consistency", "%q is not a read consistency level%s", v.Consistency, Suggest(cl, validateCLs))
	}
	if r := v.TokenRanges; r > results.RingParts {
		errs.add("validate.token_ranges", "the ring is cut into %d ranges: at most %d, or \"all\"", results.RingParts, results.RingParts)
	}
	return errs
}

// Validate checks the report's formats and dashboard link.
func (r Report) Validate() []error {
	var errs checks
	seenFmt := map[string]bool{}
	for i, f := range r.Formats {
		p := fmt.Sprintf("report.formats.%d", i)
		errs.oneOf(p, f, reportFormats)
		if seenFmt[f] {
			errs.add(p, "duplicate format %q", f)
		}
		seenFmt[f] = true
	}

	if u := r.DashboardURL; u != "" {
		if err := results.CheckDashboardURL(u); err != nil {
			errs.add("report.dashboard_url", "%v", err)
		}
	}
	return errs
}

// Validate checks that every wait has a limit.
func (t Timeouts) Validate() []error {
	var errs checks
	errs.positive("timeouts.node_ready", float64(t.NodeReady))
	errs.positive("timeouts.data_balanced", float64(t.DataBalanced))
	errs.positive("timeouts.latency_recovered", float64(t.LatencyRecovered))
	errs.positive("timeouts.fill", float64(t.Fill))
	errs.positive("timeouts.step", float64(t.Step))
	errs.positive("timeouts.teardown", float64(t.Teardown))
	errs.positive("timeouts.compactions", float64(t.Compactions))
	return errs
}

// validateErrors checks expected_errors and severities.
func (s *Scenario) validateErrors() []error {
	var errs checks
	types := results.ErrorTypes()
	knownType := func(path, t string) {
		if !slices.Contains(types, t) {
			errs.add(path, "unknown error type %q%s", t, Suggest(t, types))
		}
	}
	for i, f := range s.ExpectedErrors {
		p := fmt.Sprintf("expected_errors.%d", i)
		if f.Type == "" && f.Regex == "" {
			errs.add(p, "needs a type or a regex")
		}
		if f.Type != "" {
			knownType(p+".type", f.Type)
		}
		if f.Regex != "" {
			if _, err := regexp.Compile(f.Regex); err != nil {
				errs.add(p+".regex", "%q is not a regular expression: %v", f.Regex, err)
			}
		}
		if f.During != "" && !validDuring(s, f.During) {
			errs.add(p+".during", "%q is not a nemesis step, cycle or phase%s", f.During, Suggest(f.During, duringNames(s)))
		}
		if f.MaxCount < 0 {
			errs.add(p+".max_count", "must be >= 0")
		}
	}
	keys := make([]string, 0, len(s.Severities))
	for k := range s.Severities {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		knownType("severities."+k, k)
		if v := s.Severities[k]; !slices.Contains(results.Severities, v) {
			errs.add("severities."+k, "%q is not one of %s", v, strings.Join(results.Severities, ", "))
		}
	}
	return errs
}

// duringNames are what expected_errors[].during may name.
func duringNames(s *Scenario) []string {
	names := []string{}
	for _, st := range s.Nemesis {
		names = append(names, st.Name)
	}
	for _, ph := range results.Phases {
		names = append(names, string(ph))
	}
	return names
}

func validDuring(s *Scenario, v string) bool {
	return reCycle.MatchString(v) || slices.Contains(duringNames(s), v)
}

// vsPath names value_size itself when it was a scalar, else its min/max key.
func vsPath(given Given, sub string) string {
	if given("dataset.value_size." + sub) {
		return "dataset.value_size." + sub
	}
	return "dataset.value_size"
}

type metricValue struct {
	name  string // the results metric
	v     float64
	floor bool
	ratio bool // relative to the steady state: the YAML key is <metric without its unit>_ratio_to_steady
}

// key is the YAML key of the limit.
func (m metricValue) key() string {
	if !m.ratio {
		return m.name
	}
	return strings.TrimSuffix(strings.TrimSuffix(m.name, "_ms"), "_per_sec") + "_ratio_to_steady"
}

// metrics lists the limits of a cycle threshold by results metric name.
func (t CycleThreshold) metrics() []metricValue {
	return []metricValue{
		{results.MetricWriteP90, t.WriteP90MS, false, false},
		{results.MetricWriteP99, t.WriteP99MS, false, false},
		{results.MetricReadP90, t.ReadP90MS, false, false},
		{results.MetricReadP99, t.ReadP99MS, false, false},
		{results.MetricWriteOps, t.WriteOpsPerSec, true, false},
		{results.MetricReadOps, t.ReadOpsPerSec, true, false},
		{results.MetricTotalOps, t.TotalOpsPerSec, true, false},
		{results.MetricWriteP90, t.WriteP90Ratio, false, true},
		{results.MetricWriteP99, t.WriteP99Ratio, false, true},
		{results.MetricReadP90, t.ReadP90Ratio, false, true},
		{results.MetricReadP99, t.ReadP99Ratio, false, true},
		{results.MetricTotalOps, t.TotalOpsRatio, true, true},
	}
}

func (s *Scenario) validateNemesis(given Given) []error {
	var errs checks
	// Track nodes per rack through the sequence to catch shrinking below RF or to nothing.
	perRack := map[string]int{}
	for _, r := range s.Cluster.Racks {
		perRack[r] += s.Cluster.NodesPerRack
	}
	total := func() int {
		n := 0
		for _, v := range perRack {
			n += v
		}
		return n
	}
	racksOf := func(p string, racks []string) []string {
		if len(racks) == 0 {
			return s.Cluster.Racks
		}
		for i, r := range racks {
			if _, ok := perRack[r]; !ok {
				errs.add(fmt.Sprintf("%s.racks.%d", p, i), "unknown rack %q (cluster.racks: %s)", r, strings.Join(s.Cluster.Racks, ", "))
			}
		}
		return racks
	}
	// remove takes nodes off the inventory: the named ones, or countPerRack newest in each rack.
	remove := func(p string, names []string, countPerRack int, racks []string) {
		racks = racksOf(p, racks)
		switch {
		case len(names) > 0 && given(p+".count_per_rack"):
			errs.add(p+".nodes", "set either nodes or count_per_rack, not both")
		case len(names) > 0:
			checkNodeNames(&errs, p+".nodes", names)
			if left := total() - len(names); left < s.Dataset.RF {
				errs.add(p+".nodes", "removing %d node(s) leaves %d, fewer than rf=%d", len(names), left, s.Dataset.RF)
			}
			// A name does not say which rack it is in; count it against the first.
			if len(racks) > 0 {
				perRack[racks[0]] -= len(names)
			}
		case countPerRack < 1:
			errs.add(p+".count_per_rack", "must be >= 1")
		default:
			for _, r := range racks {
				n, ok := perRack[r]
				if !ok {
					continue
				}
				if n-countPerRack < 1 {
					errs.add(p+".count_per_rack", "removing %d from rack %s leaves %d nodes there", countPerRack, r, n-countPerRack)
				}
				perRack[r] = n - countPerRack
			}
			if total() < s.Dataset.RF {
				errs.add(p+".count_per_rack", "leaves %d nodes, fewer than rf=%d", total(), s.Dataset.RF)
			}
		}
	}
	seenName := map[string]bool{}
	for i, st := range s.Nemesis {
		if st.kind == "" {
			continue
		}
		p := fmt.Sprintf("nemesis.%d.%s", i, st.kind)
		if seenName[st.Name] {
			errs.add(p+".name", "duplicate step name %q", st.Name)
		}
		seenName[st.Name] = true
		switch {
		case st.Grow != nil:
			g := st.Grow
			errs.instanceType(p+".instance_type", g.InstanceType)
			if g.CountPerRack < 1 || g.CountPerRack > 100 {
				errs.add(p+".count_per_rack", "must be 1..100")
			}
			errs.oneOf(p+".mode", g.Mode, modes)
			for _, r := range racksOf(p, g.Racks) {
				if _, ok := perRack[r]; ok {
					perRack[r] += g.CountPerRack
				}
			}
		case st.Shrink != nil:
			errs.oneOf(p+".mode", st.Shrink.Mode, modes)
			remove(p, st.Shrink.Nodes, st.Shrink.CountPerRack, st.Shrink.Racks)
		case st.Drain != nil:
			remove(p, st.Drain.Nodes, st.Drain.CountPerRack, st.Drain.Racks)
			errs.oneOf(p+".mode", st.Drain.Mode, modes)
			if st.Drain.Workers != 0 {
				errs.add(p+".workers", "is not a ScyllaDB setting: how many nodes drain at once is the database version's (before 2026.1 the topology coordinator executes one node request at a time, scylladb service/topology_coordinator.cc; from 2026.1 every node requested to leave is drained in parallel); use mode: parallel to request every removal at once")
			}
		case st.Hold != nil:
			errs.positive(p+".duration", float64(st.Hold.Duration))
		case st.Hook != nil:
			h := st.Hook
			if strings.TrimSpace(h.Command) == "" {
				errs.add(p+".command", "is required")
			}
			errs.positive(p+".timeout", float64(h.Timeout))
			for k := range h.Env {
				if k == "" || strings.ContainsAny(k, "= \t") {
					errs.add(p+".env."+k, "invalid environment variable name %q", k)
				}
			}
		}
	}
	return errs
}

func checkNodeNames(errs *checks, path string, names []string) {
	seen := map[string]bool{}
	for i, n := range names {
		p := fmt.Sprintf("%s.%d", path, i)
		if strings.TrimSpace(n) == "" {
			errs.add(p, "node name must not be empty")
		} else if seen[n] {
			errs.add(p, "duplicate node %q", n)
		}
		seen[n] = true
	}
}

func validCycle(s *Scenario, c string) bool {
	if c == results.SelectAll || c == results.SelectSteady || c == results.SelectNemesis || reCycle.MatchString(c) {
		return true
	}
	for _, st := range s.Nemesis {
		if st.Name == c {
			return true
		}
	}
	return false
}

// durationNames lists what a duration ceiling may name: the standard
// durations (the wait for compactions among them), the fill phases and
// the nemesis steps.
func durationNames(s *Scenario) []string {
	names := append([]string(nil), results.StandardDurations...)
	for _, f := range s.Dataset.Fill {
		names = append(names, f.Name)
	}
	for _, st := range s.Nemesis {
		names = append(names, st.Name)
	}
	return names
}

func validDurationName(s *Scenario, name string) bool {
	return name != "" && slices.Contains(durationNames(s), name)
}

// plannedDuration reports whether the plan estimates the durations a
// duration ceiling names (a "1.5x plan" ceiling needs an estimate): fill
// phases and topology steps have one; holds, hooks, the wait for
// compactions and the cleanup after a grow do not.
func plannedDuration(s *Scenario, name string) bool {
	if name == results.DurCompactions || name == results.DurCleanup {
		return false
	}
	for _, st := range s.Nemesis {
		if st.Name == name {
			return st.ResultKind().IsTopology()
		}
	}
	return true
}

// validateBaselineRules checks thresholds.baseline: every rule names a
// known cycle or duration and sets a sound limit.
func (s *Scenario) validateBaselineRules() []error {
	var errs checks
	rule := func(p string, r *Rule, floor bool) {
		if r.BestPct == nil && r.BestAbs == nil && r.FixedLimit == nil {
			errs.add(p, "sets no limit (best_pct, best_abs, fixed_limit)")
			return
		}
		if v := r.BestPct; v != nil {
			switch {
			case *v < 0:
				errs.add(p+".best_pct", "must be >= 0 (percent of the best previous value)")
			case floor && *v >= 100:
				errs.add(p+".best_pct", "must be below 100 for a throughput: the limit is best × (1 - best_pct/100)")
			}
		}
		if v := r.BestAbs; v != nil && *v < 0 {
			errs.add(p+".best_abs", "must be >= 0 (in the metric's unit)")
		}
		if v := r.FixedLimit; v != nil && *v <= 0 {
			errs.add(p+".fixed_limit", "must be > 0")
		}
	}
	for i, c := range s.Thresholds.Baseline.Cycles {
		p := fmt.Sprintf("thresholds.baseline.cycles.%d", i)
		if !validCycle(s, c.Cycle) {
			errs.add(p+".cycle", "%q is not \"*\", steady_state, nemesis, \"Cycle #N\" or a nemesis step name", c.Cycle)
		}
		n := 0
		for _, m := range c.rules() {
			if m.r != nil {
				rule(p+"."+m.name, m.r, m.floor)
				n++
			}
		}
		if n == 0 {
			errs.add(p, "sets no rule (write_p90_ms, write_p99_ms, read_p90_ms, read_p99_ms, write_ops_per_sec, read_ops_per_sec, total_ops_per_sec: {best_pct, best_abs, fixed_limit})")
		}
	}
	for _, bd := range s.Thresholds.Baseline.Durations {
		p := "thresholds.baseline.durations." + bd.Name
		if !validDurationName(s, bd.Name) {
			errs.add(p, "unknown duration %q%s", bd.Name, Suggest(bd.Name, durationNames(s)))
		}
		rule(p, &bd.Rule, false)
	}
	return errs
}

type baselineMetric struct {
	name  string // the results metric (and YAML key)
	r     *Rule
	floor bool // higher is better
}

// rules lists the rules of a baseline entry by results metric name.
func (c BaselineCycle) rules() []baselineMetric {
	return []baselineMetric{
		{results.MetricWriteP90, c.WriteP90MS, false},
		{results.MetricWriteP99, c.WriteP99MS, false},
		{results.MetricReadP90, c.ReadP90MS, false},
		{results.MetricReadP99, c.ReadP99MS, false},
		{results.MetricWriteOps, c.WriteOpsPerSec, true},
		{results.MetricReadOps, c.ReadOpsPerSec, true},
		{results.MetricTotalOps, c.TotalOpsPerSec, true},
	}
}
