package scenarios

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

var (
	reName       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	reCycle      = regexp.MustCompile(`^Cycle #[0-9]+$`)
	reIdentifier = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,47}$`)

	backends       = []string{BackendLocal, BackendDocker, BackendAWS, BackendStatic}
	flavours       = []string{FlavourScylla, FlavourCassandra}
	distributions  = []string{"sequential", "uniform", "gaussian", "zipf"}
	modes          = []string{ModeSerial, ModeParallel}
	reportFormats  = []string{"md", "html", "json"}
	consistencyCLs = []string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE"}
	// validateCLs are the read levels (ANY and EACH_QUORUM are for writes).
	validateCLs = []string{"ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "LOCAL_ONE"}
)

// validate checks the resolved scenario and records every problem.
func validate(s *Scenario, d *decoder) {
	oneOf := func(path, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			d.problem(path, "%q is not one of %s", v, strings.Join(allowed, ", "))
		}
	}
	positive := func(path string, v float64) {
		if v <= 0 {
			d.problem(path, "must be > 0")
		}
	}
	nonNegative := func(path string, v float64) {
		if v < 0 {
			d.problem(path, "must be >= 0")
		}
	}
	instanceType := func(path, name string) {
		it, err := provision.LookupInstanceType(name)
		if err != nil {
			d.problem(path, "%v", err)
		} else if it.StorageGB <= 0 {
			d.problem(path, "%s has no local storage and cannot be a database node", name)
		}
	}

	if s.Name == "" {
		d.problem("name", "is required")
	} else if !reName.MatchString(s.Name) {
		d.problem("name", "%q must be 1-100 letters, digits, '.', '_' or '-' (it names run directories)", s.Name)
	}
	oneOf("backend", s.Backend, backends)

	// cluster
	c := s.Cluster
	oneOf("cluster.flavour", c.Flavour, flavours)
	if !reIdentifier.MatchString(c.DC) {
		d.problem("cluster.dc", "%q is not a valid data centre name (letters, digits, _)", c.DC)
	}
	if len(c.Racks) == 0 {
		d.problem("cluster.racks", "at least one rack is required")
	}
	seenRack := map[string]bool{}
	for i, r := range c.Racks {
		p := fmt.Sprintf("cluster.racks.%d", i)
		if r == "" || strings.ContainsAny(r, " \t\n'\"") {
			d.problem(p, "rack name %q must be non-empty without spaces or quotes", r)
		} else if seenRack[r] {
			d.problem(p, "duplicate rack %q", r)
		}
		seenRack[r] = true
	}
	if c.NodesPerRack < 1 {
		d.problem("cluster.nodes_per_rack", "must be >= 1")
	} else if c.NodesPerRack > 100 {
		d.problem("cluster.nodes_per_rack", "must be <= 100")
	}
	instanceType("cluster.instance_type", c.InstanceType)
	if c.TabletsInitial < 0 {
		d.problem("cluster.tablets_initial", "must be >= 0 (0 = vnodes)")
	} else if c.TabletsInitial > 0 && c.Flavour == FlavourCassandra {
		d.problem("cluster.tablets_initial", "cassandra has no tablets; use 0")
	}
	initialNodes := len(c.Racks) * c.NodesPerRack

	// dataset
	ds := s.Dataset
	if ds.RF < 1 {
		d.problem("dataset.rf", "must be >= 1")
	} else if initialNodes > 0 && ds.RF > initialNodes {
		d.problem("dataset.rf", "%d is more than the %d initial nodes", ds.RF, initialNodes)
	}
	if !reIdentifier.MatchString(ds.Keyspace) {
		d.problem("dataset.keyspace", "%q is not a valid CQL identifier (a letter, then letters, digits or _; at most 48)", ds.Keyspace)
	}
	if !reIdentifier.MatchString(ds.Table) {
		d.problem("dataset.table", "%q is not a valid CQL identifier (a letter, then letters, digits or _; at most 48)", ds.Table)
	}
	vs := ds.ValueSize
	switch {
	case vs.Min < 1:
		d.problem(vsPath(d, "min"), "must be at least 1B")
	case vs.Max < vs.Min:
		d.problem("dataset.value_size.max", "%s is less than min %s", vs.Max, vs.Min)
	case vs.Max > 16<<20:
		d.problem(vsPath(d, "max"), "%s is more than 16MiB", vs.Max)
	}
	oneOf("dataset.key_distribution", ds.KeyDistribution, distributions)
	seenFill := map[string]bool{}
	var prev Percent
	for i, f := range ds.Fill {
		p := fmt.Sprintf("dataset.fill.%d", i)
		if seenFill[f.Name] {
			d.problem(p+".name", "duplicate fill phase name %q", f.Name)
		}
		seenFill[f.Name] = true
		oneOf(p+".by", f.By, []string{FillByMax, FillByAverage})
		switch {
		case f.TargetPercent <= 0 || f.TargetPercent >= 100:
			d.problem(p+".target_percent", "must be between 0%% and 100%% (exclusive), got %v", f.TargetPercent)
		case f.TargetPercent <= prev:
			d.problem(p+".target_percent", "%v must be above the previous phase's %v", f.TargetPercent, prev)
		}
		if f.TargetPercent > prev {
			prev = f.TargetPercent
		}
	}
	if ds.FillConcurrency < 1 {
		d.problem("dataset.fill_concurrency", "must be >= 1")
	}
	nonNegative("dataset.fill_rate", float64(ds.FillRate))

	// workload
	w := s.Workload
	nonNegative("workload.mix.write", w.Mix.Write)
	nonNegative("workload.mix.read", w.Mix.Read)
	if w.Mix.Write >= 0 && w.Mix.Read >= 0 && w.Mix.Write+w.Mix.Read == 0 {
		d.problem("workload.mix", "write and read cannot both be 0")
	}
	switch {
	case d.isSet("workload.rate") && d.isSet("workload.load_percent"):
		d.problem("workload.rate", "set either rate or load_percent, not both")
	case d.isSet("workload.rate"):
		positive("workload.rate", float64(w.Rate))
	default:
		if w.LoadPercent <= 0 || w.LoadPercent > 200 {
			d.problem("workload.load_percent", "must be in (0%%, 200%%], got %v", w.LoadPercent)
		}
	}
	positive("workload.calibration", float64(w.Calibration))
	if w.Concurrency < 1 {
		d.problem("workload.concurrency", "must be >= 1")
	}
	oneOf("workload.consistency.write", strings.ToUpper(w.Consistency.Write), consistencyCLs)
	oneOf("workload.consistency.read", strings.ToUpper(w.Consistency.Read), consistencyCLs)
	oneOf("workload.distribution", w.Distribution, distributions)

	positive("steady_state", float64(s.SteadyState))
	if s.Compactions.Wait {
		positive("compactions.quiet", float64(s.Compactions.Quiet))
	}
	nonNegative("final_hold", float64(s.FinalHold))

	validateNemesis(s, d, instanceType, oneOf, positive)

	// thresholds
	for i, t := range s.Thresholds.Cycles {
		p := fmt.Sprintf("thresholds.cycles.%d", i)
		if !validCycle(s, t.Cycle) {
			d.problem(p+".cycle", "%q is not \"*\", steady_state, nemesis, \"Cycle #N\" or a nemesis step name", t.Cycle)
		}
		n := 0
		for _, m := range t.metrics() {
			mp := p + "." + m.key()
			if d.isSet(mp) {
				positive(mp, m.v)
				n++
			}
		}
		if n == 0 {
			d.problem(p, "sets no limit (write_p90_ms, write_p99_ms, read_p90_ms, read_p99_ms, write_ops_per_sec, read_ops_per_sec, total_ops_per_sec, or *_ratio_to_steady)")
		}
	}
	for _, l := range s.Thresholds.Durations {
		p := "thresholds.durations." + l.Name
		switch {
		case !validDurationName(s, l.Name):
			d.problem(p, "unknown duration %q%s", l.Name, Suggest(l.Name, durationNames(s)))
		case l.PlanFactor > 0 && !plannedDuration(s, l.Name):
			d.problem(p, "%q has no plan estimate (a hook or hold step, the wait for compactions): give a duration such as 30m", l.Name)
		case l.PlanFactor == 0:
			positive(p, float64(l.Max))
		}
	}
	if n := s.Thresholds.Recovery.Intervals; n < 1 || n > 3600 {
		d.problem("thresholds.recovery.intervals", "must be within 1..3600 (consecutive intervals within target), got %d", n)
	}
	validateBaselineRules(s, d)

	positive("report.disk_balance_every", float64(s.Report.DiskBalanceEvery))
	positive("thresholds.rack_balance.max_spread", float64(s.Thresholds.RackBalance.MaxSpread))
	if a := s.Thresholds.RackBalance.Action; a != RackBalanceWarn && a != RackBalanceFail {
		d.problem("thresholds.rack_balance.action", "%q is not warn or fail%s", a, Suggest(a, []string{RackBalanceWarn, RackBalanceFail}))
	}
	if cl := strings.ToUpper(s.Validate.Consistency); !slices.Contains(validateCLs, cl) {
		d.problem("validate.consistency", "%q is not a read consistency level%s", s.Validate.Consistency, Suggest(cl, validateCLs))
	}
	if r := s.Validate.TokenRanges; r > results.RingParts {
		d.problem("validate.token_ranges", "the ring is cut into %d ranges: at most %d, or \"all\"", results.RingParts, results.RingParts)
	}

	seenFmt := map[string]bool{}
	for i, f := range s.Report.Formats {
		p := fmt.Sprintf("report.formats.%d", i)
		oneOf(p, f, reportFormats)
		if seenFmt[f] {
			d.problem(p, "duplicate format %q", f)
		}
		seenFmt[f] = true
	}

	if u := s.Report.DashboardURL; u != "" {
		if err := results.CheckDashboardURL(u); err != nil {
			d.problem("report.dashboard_url", "%v", err)
		}
	}

	t := s.Timeouts
	positive("timeouts.node_ready", float64(t.NodeReady))
	positive("timeouts.data_balanced", float64(t.DataBalanced))
	positive("timeouts.latency_recovered", float64(t.LatencyRecovered))
	positive("timeouts.fill", float64(t.Fill))
	positive("timeouts.step", float64(t.Step))
	positive("timeouts.teardown", float64(t.Teardown))
	positive("timeouts.compactions", float64(t.Compactions))

	l := s.Local
	positive("local.storage_scale_mib_per_gb", l.StorageScaleMiBPerGB)
	positive("local.ops_per_vcpu", l.OpsPerVCPU)
	positive("local.stream_mib_per_vcpu", l.StreamMiBPerVCPU)
	if l.TimeScale <= 0 || l.TimeScale > 1 {
		d.problem("local.time_scale", "must be in (0, 1], got %v", l.TimeScale)
	}
	if ip := net.ParseIP(l.BaseAddress); ip == nil || ip.To4() == nil {
		d.problem("local.base_address", "%q is not an IPv4 address", l.BaseAddress)
	} else if s.Backend == BackendLocal && !ip.IsLoopback() {
		d.problem("local.base_address", "%q is not a loopback address (127.0.0.0/8)", l.BaseAddress)
	}
	if s.Backend == BackendLocal {
		if err := provision.CheckLocalDataDir(l.DataDir); err != nil {
			d.problem("local.data_dir", "%v", err)
		}
	}
	if l.Loaders < 0 || l.Loaders > 64 {
		d.problem("local.loaders", "must be within 0..64")
	}
	if l.BlockedReactorNotifyMS < 1 {
		d.problem("local.blocked_reactor_notify_ms", "must be >= 1")
	}

	if s.Docker.SMP < 1 {
		d.problem("docker.smp", "must be >= 1")
	}
	if s.Docker.Memory < 256<<20 {
		d.problem("docker.memory", "%s is less than 256MiB", s.Docker.Memory)
	}
	if s.Docker.StorageScaleMiBPerGB < 0 {
		d.problem("docker.storage_scale_mib_per_gb", "must be >= 0 (0: the image's default), got %v", s.Docker.StorageScaleMiBPerGB)
	}
	if s.Docker.TimeScale < 0 || s.Docker.TimeScale > 1 {
		d.problem("docker.time_scale", "must be in [0, 1] (0: the image's default), got %v", s.Docker.TimeScale)
	}
	if err := provision.CheckDockerDataMount(s.Docker.DataMount); err != nil {
		d.problem("docker.data_mount", "%v", err)
	}

	if s.Backend == BackendAWS {
		a := s.AWS
		if a.Region == "" {
			d.problem("aws.region", "is required")
		}
		if len(a.AvailabilityZones) != len(c.Racks) {
			d.problem("aws.availability_zones", "has %d zones for %d racks; give one zone per rack", len(a.AvailabilityZones), len(c.Racks))
		}
		if a.LoaderCount < 0 {
			d.problem("aws.loader_count", "must be >= 0")
		}
		if _, err := provision.LookupInstanceType(a.LoaderInstanceType); err != nil && a.LoaderCount > 0 {
			d.problem("aws.loader_instance_type", "%v", err)
		}
		if a.LoaderCount > 0 && a.LoaderBinary != "" {
			if st, err := os.Stat(a.LoaderBinary); err != nil {
				d.problem("aws.loader_binary", "%v", err)
			} else if st.IsDir() || st.Mode()&0o111 == 0 {
				d.problem("aws.loader_binary", "%s is not an executable file", a.LoaderBinary)
			}
		}
		positive("aws.ttl", float64(a.TTL))
	}
	if s.Backend == BackendStatic && len(s.Static.Hosts) == 0 {
		d.problem("static.hosts", "the static backend needs at least one host")
	}
	for i, h := range s.Static.Hosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " \t/") {
			d.problem(fmt.Sprintf("static.hosts.%d", i), "%q is not a host address", h)
		}
	}
	for _, c := range []struct {
		key string
		cmd *Command
	}{{"add_node", s.Static.AddNode}, {"remove_node", s.Static.RemoveNode}, {"stop_node", s.Static.StopNode}, {"kill_node", s.Static.KillNode}, {"start_node", s.Static.StartNode}} {
		if c.cmd == nil {
			continue
		}
		p := "static." + c.key
		if strings.TrimSpace(c.cmd.Command) == "" {
			d.problem(p+".command", "is required")
		}
		positive(p+".timeout", float64(c.cmd.Timeout))
	}
	validateErrors(s, d)
}

// validateErrors checks expected_errors and severities.
func validateErrors(s *Scenario, d *decoder) {
	types := results.ErrorTypes()
	knownType := func(path, t string) {
		if !slices.Contains(types, t) {
			d.problem(path, "unknown error type %q%s", t, Suggest(t, types))
		}
	}
	for i, f := range s.ExpectedErrors {
		p := fmt.Sprintf("expected_errors.%d", i)
		if f.Type == "" && f.Regex == "" {
			d.problem(p, "needs a type or a regex")
		}
		if f.Type != "" {
			knownType(p+".type", f.Type)
		}
		if f.Regex != "" {
			if _, err := regexp.Compile(f.Regex); err != nil {
				d.problem(p+".regex", "%q is not a regular expression: %v", f.Regex, err)
			}
		}
		if f.During != "" && !validDuring(s, f.During) {
			d.problem(p+".during", "%q is not a nemesis step, cycle or phase%s", f.During, Suggest(f.During, duringNames(s)))
		}
		if f.MaxCount < 0 {
			d.problem(p+".max_count", "must be >= 0")
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
			d.problem("severities."+k, "%q is not one of %s", v, strings.Join(results.Severities, ", "))
		}
	}
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
func vsPath(d *decoder, sub string) string {
	if d.isSet("dataset.value_size." + sub) {
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

func validateNemesis(s *Scenario, d *decoder, instanceType func(string, string), oneOf func(string, string, []string), positive func(string, float64)) {
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
				d.problem(fmt.Sprintf("%s.racks.%d", p, i), "unknown rack %q (cluster.racks: %s)", r, strings.Join(s.Cluster.Racks, ", "))
			}
		}
		return racks
	}
	// remove takes nodes off the inventory: the named ones, or countPerRack newest in each rack.
	remove := func(p string, names []string, countPerRack int, racks []string) {
		racks = racksOf(p, racks)
		switch {
		case len(names) > 0 && d.isSet(p+".count_per_rack"):
			d.problem(p+".nodes", "set either nodes or count_per_rack, not both")
		case len(names) > 0:
			checkNodeNames(d, p+".nodes", names)
			if left := total() - len(names); left < s.Dataset.RF {
				d.problem(p+".nodes", "removing %d node(s) leaves %d, fewer than rf=%d", len(names), left, s.Dataset.RF)
			}
			// A name does not say which rack it is in; count it against the first.
			if len(racks) > 0 {
				perRack[racks[0]] -= len(names)
			}
		case countPerRack < 1:
			d.problem(p+".count_per_rack", "must be >= 1")
		default:
			for _, r := range racks {
				n, ok := perRack[r]
				if !ok {
					continue
				}
				if n-countPerRack < 1 {
					d.problem(p+".count_per_rack", "removing %d from rack %s leaves %d nodes there", countPerRack, r, n-countPerRack)
				}
				perRack[r] = n - countPerRack
			}
			if total() < s.Dataset.RF {
				d.problem(p+".count_per_rack", "leaves %d nodes, fewer than rf=%d", total(), s.Dataset.RF)
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
			d.problem(p+".name", "duplicate step name %q", st.Name)
		}
		seenName[st.Name] = true
		if s.Backend == BackendStatic && st.Grow != nil && s.Static.AddNode == nil {
			d.problem(p, "the static backend adds nodes only through static.add_node (a command that starts one)")
		}
		switch {
		case st.Grow != nil:
			g := st.Grow
			instanceType(p+".instance_type", g.InstanceType)
			if g.CountPerRack < 1 || g.CountPerRack > 100 {
				d.problem(p+".count_per_rack", "must be 1..100")
			}
			oneOf(p+".mode", g.Mode, modes)
			for _, r := range racksOf(p, g.Racks) {
				if _, ok := perRack[r]; ok {
					perRack[r] += g.CountPerRack
				}
			}
		case st.Shrink != nil:
			oneOf(p+".mode", st.Shrink.Mode, modes)
			remove(p, st.Shrink.Nodes, st.Shrink.CountPerRack, st.Shrink.Racks)
		case st.Drain != nil:
			remove(p, st.Drain.Nodes, st.Drain.CountPerRack, st.Drain.Racks)
			oneOf(p+".mode", st.Drain.Mode, modes)
			if st.Drain.Workers != 0 {
				d.problem(p+".workers", "is not a ScyllaDB setting: how many nodes drain at once is the database version's (before 2026.1 the topology coordinator executes one node request at a time, scylladb service/topology_coordinator.cc; from 2026.1 every node requested to leave is drained in parallel); use mode: parallel to request every removal at once")
			}
		case st.Hold != nil:
			positive(p+".duration", float64(st.Hold.Duration))
		case st.Hook != nil:
			h := st.Hook
			if strings.TrimSpace(h.Command) == "" {
				d.problem(p+".command", "is required")
			}
			positive(p+".timeout", float64(h.Timeout))
			for k := range h.Env {
				if k == "" || strings.ContainsAny(k, "= \t") {
					d.problem(p+".env."+k, "invalid environment variable name %q", k)
				}
			}
		}
	}
}

func checkNodeNames(d *decoder, path string, names []string) {
	seen := map[string]bool{}
	for i, n := range names {
		p := fmt.Sprintf("%s.%d", path, i)
		if strings.TrimSpace(n) == "" {
			d.problem(p, "node name must not be empty")
		} else if seen[n] {
			d.problem(p, "duplicate node %q", n)
		}
		seen[n] = true
	}
}

// Cycle selectors of thresholds besides "Cycle #N" and step names (the results vocabulary).
const (
	CycleAll         = results.SelectAll
	CycleSteadyState = results.SelectSteady
	CycleNemesis     = results.SelectNemesis
)

func validCycle(s *Scenario, c string) bool {
	if c == CycleAll || c == CycleSteadyState || c == CycleNemesis || reCycle.MatchString(c) {
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
func validateBaselineRules(s *Scenario, d *decoder) {
	rule := func(p string, r *Rule, floor bool) {
		if r.BestPct == nil && r.BestAbs == nil && r.FixedLimit == nil {
			d.problem(p, "sets no limit (best_pct, best_abs, fixed_limit)")
			return
		}
		if v := r.BestPct; v != nil {
			switch {
			case *v < 0:
				d.problem(p+".best_pct", "must be >= 0 (percent of the best previous value)")
			case floor && *v >= 100:
				d.problem(p+".best_pct", "must be below 100 for a throughput: the limit is best × (1 - best_pct/100)")
			}
		}
		if v := r.BestAbs; v != nil && *v < 0 {
			d.problem(p+".best_abs", "must be >= 0 (in the metric's unit)")
		}
		if v := r.FixedLimit; v != nil && *v <= 0 {
			d.problem(p+".fixed_limit", "must be > 0")
		}
	}
	for i, c := range s.Thresholds.Baseline.Cycles {
		p := fmt.Sprintf("thresholds.baseline.cycles.%d", i)
		if !validCycle(s, c.Cycle) {
			d.problem(p+".cycle", "%q is not \"*\", steady_state, nemesis, \"Cycle #N\" or a nemesis step name", c.Cycle)
		}
		n := 0
		for _, m := range c.rules() {
			if m.r != nil {
				rule(p+"."+m.name, m.r, m.floor)
				n++
			}
		}
		if n == 0 {
			d.problem(p, "sets no rule (write_p90_ms, write_p99_ms, read_p90_ms, read_p99_ms, write_ops_per_sec, read_ops_per_sec, total_ops_per_sec: {best_pct, best_abs, fixed_limit})")
		}
	}
	for _, bd := range s.Thresholds.Baseline.Durations {
		p := "thresholds.baseline.durations." + bd.Name
		if !validDurationName(s, bd.Name) {
			d.problem(p, "unknown duration %q%s", bd.Name, Suggest(bd.Name, durationNames(s)))
		}
		rule(p, &bd.Rule, false)
	}
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
