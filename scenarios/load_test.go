package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/local"
	"github.com/elasticity-dev/elasticity/provision/static"
	"github.com/elasticity-dev/elasticity/results"
)

const minimal = "name: t\n"

// problemsOf parses src and returns its problems (failing the test if it parsed).
func problemsOf(t *testing.T, src string, sets ...string) []Problem {
	t.Helper()
	_, err := Parse([]byte(src), "x.yaml", sets)
	if err == nil {
		t.Fatalf("expected an error for:\n%s", src)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is %T, not *ValidationError: %v", err, err)
	}
	return ve.Problems
}

func TestBrokenScenarios(t *testing.T) {
	cases := []struct {
		name string
		src  string
		sets []string
		line int
		path string
		msg  string
	}{
		{"missing name", "backend: local\n", nil, 1, "name", "is required"},
		{"bad name", "name: 'a b'\n", nil, 1, "name", "letters, digits"},
		{"unknown top key", minimal + "clutser:\n  racks: 3\n", nil, 2, "clutser", `did you mean "cluster"`},
		{"unknown nested key", minimal + "cluster:\n  racks: 3\n  node_per_rack: 2\n", nil, 4, "cluster.node_per_rack", `did you mean "nodes_per_rack"`},
		{"duplicate key", minimal + "steady_state: 1m\nsteady_state: 2m\n", nil, 3, "steady_state", "duplicate"},
		{"bad backend", minimal + "backend: gce\n", nil, 2, "backend", `"gce" is not one of aws, docker, local, static`},
		{"bad flavour", minimal + "cluster:\n  flavour: mongo\n", nil, 3, "cluster.flavour", "not one of"},
		{"unknown instance type", minimal + "cluster:\n  instance_type: m5.large\n", nil, 3, "cluster.instance_type", "unknown instance type"},
		{"loader type as node", minimal + "cluster:\n  instance_type: c6i.2xlarge\n", nil, 3, "cluster.instance_type", "no local storage"},
		{"aws loader type", minimal + "backend: aws\naws:\n  loader_instance_type: t2.nano\n", nil, 4, "aws.loader_instance_type", "unknown instance type"},
		{"racks zero", minimal + "cluster:\n  racks: 0\n", nil, 3, "cluster.racks", "rack count 1..100"},
		{"duplicate rack", minimal + "cluster:\n  racks:\n    - a\n    - a\n", nil, 5, "cluster.racks.1", "duplicate rack"},
		{"nodes per rack not int", minimal + "cluster:\n  nodes_per_rack: many\n", nil, 3, "cluster.nodes_per_rack", "expected an integer"},
		{"nodes per rack zero", minimal + "cluster:\n  nodes_per_rack: 0\n", nil, 3, "cluster.nodes_per_rack", "must be >= 1"},
		{"cassandra tablets", minimal + "cluster:\n  flavour: cassandra\n  tablets_initial: 8\n", nil, 4, "cluster.tablets_initial", "cassandra has no tablets"},
		{"rf too big", minimal + "cluster:\n  racks: 1\ndataset:\n  rf: 3\n", nil, 5, "dataset.rf", "more than the 1 initial nodes"},
		{"bad keyspace", minimal + "dataset:\n  keyspace: 1abc\n", nil, 3, "dataset.keyspace", "not a valid CQL identifier"},
		{"bad value size", minimal + "dataset:\n  value_size: big\n", nil, 3, "dataset.value_size", "invalid size"},
		{"value range inverted", minimal + "dataset:\n  value_size:\n    min: 2KiB\n    max: 1KiB\n", nil, 5, "dataset.value_size.max", "less than min"},
		{"fill target over 100", minimal + "dataset:\n  fill:\n    - name: A\n      target_percent: 120%\n", nil, 5, "dataset.fill.0.target_percent", "between 0% and 100%"},
		{"fill targets not ascending", minimal + "dataset:\n  fill:\n    - {name: A, target_percent: 80}\n    - {name: B, target_percent: 70}\n", nil, 5, "dataset.fill.1.target_percent", "above the previous"},
		{"fill hold bad", minimal + "dataset:\n  fill:\n    - name: A\n      target_percent: 50\n      hold: soon\n", nil, 6, "dataset.fill.0.hold", "invalid duration"},
		{"fill unknown key", minimal + "dataset:\n  fill:\n    - name: A\n      target: 50\n", nil, 5, "dataset.fill.0.target", "unknown field"},
		{"mix negative", minimal + "workload:\n  mix:\n    write: -1\n    read: 1\n", nil, 4, "workload.mix.write", "must be >= 0"},
		{"mix string bad", minimal + "workload:\n  mix: half\n", nil, 3, "workload.mix", "write:read ratio"},
		{"mix zero", minimal + "workload:\n  mix: \"0:0\"\n", nil, 3, "workload.mix", "cannot both be 0"},
		{"rate and load", minimal + "workload:\n  rate: 100/s\n  load_percent: 50\n", nil, 3, "workload.rate", "either rate or load_percent"},
		{"bad rate", minimal + "workload:\n  rate: fast\n", nil, 3, "workload.rate", "invalid rate"},
		{"load percent zero", minimal + "workload:\n  load_percent: 0%\n", nil, 3, "workload.load_percent", "must be in (0%, 200%]"},
		{"bad consistency", minimal + "workload:\n  consistency:\n    write: MOST\n", nil, 4, "workload.consistency.write", "not one of"},
		{"bad distribution", minimal + "workload:\n  distribution: pareto\n", nil, 3, "workload.distribution", `unknown key distribution "pareto"`},
		// zipf was once listed as valid though nothing draws it: a run then failed at binding.
		{"zipf is not drawn", minimal + "workload:\n  distribution: zipf\n", nil, 3, "workload.distribution", `unknown key distribution "zipf"`},
		{"fixed gaussian without percent", minimal + "workload:\n  distribution: gaussian(50,1)\n", nil, 3, "workload.distribution", "want gaussian(M%,S%)"},
		{"fill distribution is sequential", minimal + "dataset:\n  key_distribution: uniform\n", nil, 3, "dataset.key_distribution", "not one of sequential"},
		{"steady state zero", minimal + "steady_state: 0\n", nil, 2, "steady_state", "must be > 0"},
		{"steady state list", minimal + "steady_state: [1m]\n", nil, 2, "steady_state", "expected a duration"},
		{"nemesis not list", minimal + "nemesis:\n  grow_cluster: {}\n", nil, 3, "nemesis", "expected a list"},
		{"step two keys", minimal + "nemesis:\n  - hold: 1m\n    hook: {command: x}\n", nil, 3, "nemesis.0", "exactly one key"},
		{"step unknown kind", minimal + "nemesis:\n  - grow: {}\n", nil, 3, "nemesis.0.grow", `did you mean "grow_cluster"`},
		{"step scalar", minimal + "nemesis:\n  - grow_cluster\n", nil, 3, "nemesis.0", "expected a step"},
		{"grow bad mode", minimal + "nemesis:\n  - grow_cluster:\n      mode: sideways\n", nil, 4, "nemesis.0.grow_cluster.mode", `"sideways" is not one of serial, parallel`},
		{"grow bad type", minimal + "nemesis:\n  - grow_cluster:\n      instance_type: i4i.huge\n", nil, 4, "nemesis.0.grow_cluster.instance_type", "unknown instance type"},
		{"grow unknown rack", minimal + "nemesis:\n  - grow_cluster:\n      racks: [rack9]\n", nil, 4, "nemesis.0.grow_cluster.racks.0", "unknown rack"},
		{"grow unknown field", minimal + "nemesis:\n  - grow_cluster:\n      count: 2\n", nil, 4, "nemesis.0.grow_cluster.count", "unknown field"},
		{"shrink below rf", minimal + "nemesis:\n  - shrink_cluster:\n      count_per_rack: 1\n", nil, 4, "nemesis.0.shrink_cluster.count_per_rack", "leaves 0 nodes"},
		{"decommission both", minimal + "cluster: {nodes_per_rack: 3}\nnemesis:\n  - decommission:\n      nodes: [node-1]\n      count_per_rack: 1\n", nil, 5, "nemesis.0.decommission.nodes", "either nodes or count_per_rack"},
		{"drain workers", minimal + "cluster: {nodes_per_rack: 2}\nnemesis:\n  - drain:\n      workers: 2\n", nil, 5, "nemesis.0.drain.workers", "how many nodes drain at once is the database version's"},
		{"drain mode", minimal + "cluster: {nodes_per_rack: 2}\nnemesis:\n  - drain:\n      mode: fast\n", nil, 5, "nemesis.0.drain.mode", `"fast" is not one of serial, parallel`},
		{"hold zero", minimal + "nemesis:\n  - hold: 0\n", nil, 3, "nemesis.0.hold.duration", "must be > 0"},
		{"hook no command", minimal + "nemesis:\n  - hook:\n      args: [a]\n", nil, 3, "nemesis.0.hook.command", "is required"},
		{"hook env not map", minimal + "nemesis:\n  - hook:\n      command: x\n      env: [A]\n", nil, 5, "nemesis.0.hook.env", "expected a mapping"},
		{"duplicate step names", minimal + "nemesis:\n  - hold: {name: h, duration: 1m}\n  - hold: {name: h, duration: 1m}\n", nil, 4, "nemesis.1.hold.name", "duplicate step name"},
		{"threshold negative", minimal + "thresholds:\n  cycles:\n    - write_p99_ms: -1\n", nil, 4, "thresholds.cycles.0.write_p99_ms", "must be > 0"},
		{"threshold empty", minimal + "thresholds:\n  cycles:\n    - cycle: \"*\"\n", nil, 4, "thresholds.cycles.0", "sets no limit"},
		{"threshold duration bad", minimal + "thresholds:\n  durations:\n    \"New node(s) ready\": 0\n", nil, 4, "thresholds.durations.New node(s) ready", "must be > 0"},
		{"threshold unknown cycle", minimal + "thresholds:\n  cycles:\n    - cycle: cycle1\n      read_p99_ms: 5\n", nil, 4, "thresholds.cycles.0.cycle", "is not \"*\", steady_state"},
		{"threshold unknown duration", minimal + "thresholds:\n  durations:\n    \"Node ready\": 10m\n", nil, 4, "thresholds.durations.Node ready", "unknown duration"},
		{"merge key not mapping", minimal + "cluster:\n  <<: 3\n", nil, 3, "cluster", "merge key"},
		{"report format", minimal + "report:\n  formats: [md, pdf]\n", nil, 3, "report.formats.1", `"pdf" is not one of md, html, json`},
		{"timeout zero", minimal + "timeouts:\n  node_ready: 0s\n", nil, 3, "timeouts.node_ready", "must be > 0"},
		{"time scale", minimal + "local:\n  time_scale: 2\n", nil, 3, "local.time_scale", "must be in (0, 1]"},
		{"base address not loopback", minimal + "local:\n  base_address: 10.0.0.1\n", nil, 3, "local.base_address", "not a loopback"},
		{"local loaders negative", minimal + "local:\n  loaders: -1\n", nil, 3, "local.loaders", "within 0..64"},
		{"local data dir a file", minimal + "local:\n  data_dir: /dev/null\n", nil, 3, "local.data_dir", `"/dev/null" is not a directory`},
		{"local process unknown", minimal + "local:\n  process: threads\n", nil, 3, "local.process", `must be "per-node" or "shared", got "threads"`},
		{"aws loader binary missing", minimal + "backend: aws\naws:\n  loader_binary: /nonexistent/elasticity\n", nil, 4, "aws.loader_binary", "no such file"},
		{"aws loader binary not executable", minimal + "backend: aws\naws:\n  loader_binary: /\n", nil, 4, "aws.loader_binary", "not an executable"},
		{"aws zones count", minimal + "backend: aws\ncluster: {racks: 3}\naws:\n  availability_zones: [a]\n", nil, 5, "aws.availability_zones", "1 zones for 3 racks"},
		{"docker memory", minimal + "docker:\n  memory: 1MiB\n", nil, 3, "docker.memory", "less than 256MiB"},
		{"static grow needs add_node", minimal + "backend: static\nstatic: {hosts: [10.0.0.1, 10.0.0.2, 10.0.0.3]}\nnemesis:\n  - grow_cluster: {}\n", nil, 5, "nemesis.0.grow_cluster", "static.add_node"},
		{"static hook without command", minimal + "static:\n  add_node:\n    args: [x]\n", nil, 3, "static.add_node.command", "is required"},
		{"static needs hosts", minimal + "backend: static\n", nil, 1, "static.hosts", "at least one host"},
		{"yaml syntax", minimal + "cluster:\n  racks: [a\n", nil, 2, // yaml.v3 reports the line before the unclosed '['
			"", "invalid YAML"},
		{"not a mapping", "- a\n- b\n", nil, 1, "", "a scenario is a mapping"},
		{"two documents", minimal + "---\nname: u\n", nil, 2, "", "more than one YAML document"},
		{"set bad type", minimal, []string{"workload.load_percent=lots"}, 0, "workload.load_percent", "invalid percentage"},
		{"set unknown field", minimal, []string{"workload.lod_percent=5"}, 0, "workload.lod_percent", `did you mean "load_percent"`},
		{"set index out of range", minimal + "nemesis:\n  - hold: 1m\n", []string{"nemesis.5.hold.duration=1m"}, 0, "nemesis.5.hold.duration", "index"},
		{"set no equals", minimal, []string{"workload.load_percent"}, 0, "", "expected path=value"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, problemsOf(t, tc.src, tc.sets...), tc.sets, tc.line, tc.path, tc.msg)
		})
	}
}

// expectProblem checks that ps has a problem at path whose message contains
// msg, at line of x.yaml (or naming the --set when sets were given).
func expectProblem(t *testing.T, ps []Problem, sets []string, line int, path, msg string) {
	t.Helper()
	for _, p := range ps {
		if p.Path == path && strings.Contains(p.Msg, msg) {
			if p.Line != line {
				t.Errorf("%q: line %d, want %d", p.String(), p.Line, line)
			}
			if len(sets) > 0 && !strings.HasPrefix(p.File, "--set ") {
				t.Errorf("%q: should name the --set", p.String())
			}
			if len(sets) == 0 && p.File != "x.yaml" {
				t.Errorf("%q: file %q, want x.yaml", p.String(), p.File)
			}
			return
		}
	}
	t.Errorf("no problem with path %q and message containing %q; got:\n%v", path, msg, (&ValidationError{ps}).Error())
}

func TestAllProblemsAtOnce(t *testing.T) {
	src := `name: t
cluster:
  flavour: mongo
  nodes_per_rack: 0
workload:
  mix:
    write: -1
    read: 1
  bogus: 1
nemesis:
  - grow_cluster:
      mode: sideways
`
	ps := problemsOf(t, src)
	got := (&ValidationError{ps}).Error()
	for _, want := range []string{
		"x.yaml:3: cluster.flavour:",
		"x.yaml:4: cluster.nodes_per_rack: must be >= 1",
		"x.yaml:7: workload.mix.write: must be >= 0",
		"x.yaml:9: workload.bogus: unknown field",
		"x.yaml:12: nemesis.0.grow_cluster.mode:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	// File order.
	for i := 1; i < len(ps); i++ {
		if ps[i].Line < ps[i-1].Line {
			t.Errorf("problems not in line order:\n%s", got)
		}
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse([]byte(minimal+"nemesis:\n  - grow_cluster:\n  - hold: 10m\n  - grow_cluster: {mode: parallel}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend != provision.DefaultBackend || s.Cluster.Flavour != FlavourScylla || len(s.Cluster.Racks) != 3 || s.Cluster.NodesPerRack != 1 {
		t.Errorf("cluster defaults: %+v backend %s", s.Cluster, s.Backend)
	}
	if s.Cluster.InstanceType != "i4i.large" || s.Cluster.TabletsInitial != DefaultTabletsScylla {
		t.Errorf("cluster defaults: %+v", s.Cluster)
	}
	if s.Dataset.RF != 3 || len(s.Dataset.Fill) != 2 || s.Dataset.Fill[1].Name != "Hard Limit" || s.Dataset.Fill[1].TargetPercent != 90 {
		t.Errorf("dataset defaults: %+v", s.Dataset)
	}
	if s.Workload.LoadPercent != 50 || s.Workload.Rate != 0 || s.Workload.Mix != (Mix{1, 1}) || s.Workload.Consistency.Read != "QUORUM" {
		t.Errorf("workload defaults: %+v", s.Workload)
	}
	if l := s.Backends["local"].(*local.Settings); *l != local.DefaultSettings {
		t.Errorf("local defaults: %+v", l)
	}
	// The latency recovery wait is scaled like the scenario: 1h × 0.0025
	// = 9s, at least 10s; the wait for compactions too (80m × 0.0025 =
	// 12s), at least 30s.
	want := DefaultTimeoutsLocal
	want.LatencyRecovered = Duration(MinLocalLatencyRecovered)
	want.Compactions = Duration(MinLocalCompactions)
	if s.Timeouts != want {
		t.Errorf("timeouts: %+v", s.Timeouts)
	}
	// The sustained recovery rule's intervals are 1 s of wall time: 10 of
	// them on real clusters, 5 on the local backend's scaled phases.
	if s.Thresholds.Recovery.Intervals != DefaultRecoveryIntervalsLocal {
		t.Errorf("local recovery intervals %d, want %d", s.Thresholds.Recovery.Intervals, DefaultRecoveryIntervalsLocal)
	}
	if d, err := Parse([]byte(minimal+"backend: docker\n"), "x.yaml", nil); err != nil || d.Thresholds.Recovery.Intervals != results.DefaultRecoveryIntervals {
		t.Errorf("docker recovery intervals: %v %v, want %d", d, err, results.DefaultRecoveryIntervals)
	}
	if d, err := Parse([]byte(minimal+"thresholds: {recovery: {intervals: 7}}\n"), "x.yaml", nil); err != nil || d.Thresholds.Recovery.Intervals != 7 {
		t.Errorf("explicit recovery intervals: %v", err)
	}
	names := []string{s.Nemesis[0].Name, s.Nemesis[1].Name, s.Nemesis[2].Name}
	if !reflect.DeepEqual(names, []string{"grow_cluster #1", "hold #1", "grow_cluster #2"}) {
		t.Errorf("step names %v", names)
	}
	g := s.Nemesis[0].Grow
	if g == nil || g.InstanceType != "i4i.large" || g.CountPerRack != 1 || g.Mode != ModeSerial {
		t.Errorf("grow defaults: %+v", g)
	}
	if s.Nemesis[1].Kind() != KindHold || s.Nemesis[1].Hold.Duration.D() != 10*time.Minute {
		t.Errorf("hold: %+v", s.Nemesis[1])
	}
	if s.Nemesis[2].Grow.Mode != ModeParallel {
		t.Errorf("mode: %+v", s.Nemesis[2].Grow)
	}
	// Explicit zero values are kept, not replaced by defaults.
	s, err = Parse([]byte(minimal+"cluster: {tablets_initial: 0}\ndataset: {fill: []}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster.TabletsInitial != 0 || len(s.Dataset.Fill) != 0 {
		t.Errorf("explicit zeros replaced: tablets %d fill %v", s.Cluster.TabletsInitial, s.Dataset.Fill)
	}
	// The local recovery wait follows local.time_scale unless set, with a
	// floor for the sustained rule's intervals.
	for _, c := range []struct {
		sets []string
		want time.Duration
	}{
		{[]string{"local.time_scale=0.01"}, 36 * time.Second},
		{[]string{"local.time_scale=0.001"}, MinLocalLatencyRecovered},
		{[]string{"local.time_scale=0.01", "timeouts.latency_recovered=2m"}, 2 * time.Minute},
	} {
		s, err = Parse([]byte(minimal), "x.yaml", c.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Timeouts.LatencyRecovered.D(); got != c.want {
			t.Errorf("%v: latency_recovered %s, want %s", c.sets, got, c.want)
		}
	}
	// Real backends get real timeouts (their time scale is the plan's:
	// plan.TestRealBackendsTimeScale).
	for _, backend := range []string{"docker", "static"} {
		src := minimal + "backend: " + backend + "\n"
		if backend == "static" {
			src += "static:\n  hosts: [127.0.0.1]\n"
		}
		s, err = Parse([]byte(src), "x.yaml", nil)
		if err != nil || s.Timeouts != DefaultTimeoutsReal {
			t.Errorf("%s timeouts %+v (%v)", backend, s.Timeouts, err)
		}
	}
}

func TestSets(t *testing.T) {
	src := minimal + "workload:\n  load_percent: 50\nnemesis:\n  - grow_cluster:\n      instance_type: i4i.4xlarge\n"
	s, err := Parse([]byte(src), "x.yaml", []string{
		"nemesis.0.grow_cluster.mode=parallel",
		"workload.load_percent=70",
		"cluster.racks=[a, b, c, d]",
		"nemesis.1.hold.duration=5m",
		"dataset.fill.0.target_percent=60%",
		"description=set from CI",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Nemesis[0].Grow.Mode != ModeParallel || s.Nemesis[0].Grow.InstanceType != "i4i.4xlarge" {
		t.Errorf("grow %+v", s.Nemesis[0].Grow)
	}
	if s.Workload.LoadPercent != 70 {
		t.Errorf("load %v", s.Workload.LoadPercent)
	}
	if !reflect.DeepEqual([]string(s.Cluster.Racks), []string{"a", "b", "c", "d"}) {
		t.Errorf("racks %v", s.Cluster.Racks)
	}
	if len(s.Nemesis) != 2 || s.Nemesis[1].Hold == nil || s.Nemesis[1].Hold.Duration.D() != 5*time.Minute {
		t.Errorf("appended hold %+v", s.Nemesis)
	}
	// A --set into a defaulted list creates it: fill then has just that phase.
	if len(s.Dataset.Fill) != 1 || s.Dataset.Fill[0].TargetPercent != 60 {
		t.Errorf("fill %+v", s.Dataset.Fill)
	}
	if s.Description != "set from CI" {
		t.Errorf("description %q", s.Description)
	}
	// Switching rate/load_percent by --set: both set is an error naming the file line.
	ps := problemsOf(t, src, "workload.rate=100/s")
	if !strings.Contains((&ValidationError{ps}).Error(), "either rate or load_percent") {
		t.Errorf("got %v", ps)
	}
}

func TestConfigsValidAndRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("configs: %v %v", files, err)
	}
	for _, f := range files {
		s, err := Load(f, nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		y, err := s.YAML()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s2, err := Parse(y, "resolved.yaml", nil)
		if err != nil {
			t.Fatalf("%s: resolved scenario does not load back: %v\n%s", f, err, y)
		}
		s2.source, s2.lines, s2.sets = s.source, s.lines, s.sets // positions differ by design
		if !reflect.DeepEqual(s, s2) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", f, s, s2)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "nope.yaml: cannot read scenario") {
		t.Fatalf("got %v", err)
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(minimal+"workload:\n  concurrency: -3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p, nil)
	if err == nil || !strings.Contains(err.Error(), p+":3: workload.concurrency: must be >= 1") {
		t.Fatalf("got %v", err)
	}
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]Size{"1KiB": 1024, "468GB": 468e9, "512B": 512, "1.5MiB": 1572864, "100": 100, "2 GiB": 2 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]Rate{"3400/s": 3400, "3400": 3400, "120/m": 2, "7200/h": 2} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]Percent{"90%": 90, "90": 90, "12.5%": 12.5} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]time.Duration{"30m": 30 * time.Minute, "1h30m": 90 * time.Minute, "1d": 24 * time.Hour, "0": 0, "1d2h": 26 * time.Hour} {
		if got, err := ParseDuration(in); err != nil || got.D() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1m", "soon", "1x"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "-1KiB", "lots", "1PB", "NaN"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	if Duration(90*time.Minute).String() != "1h30m" || Size(1<<30).String() != "1GiB" || Size(1000).String() != "1000B" {
		t.Errorf("formatting: %v %v %v", Duration(90*time.Minute), Size(1<<30), Size(1000))
	}
}

func TestAliasBomb(t *testing.T) {
	// Aliases are expanded while decoding; a small file must not expand into
	// an unbounded amount of work.
	args := strings.Repeat("a,", 1000)
	items := strings.Repeat("  - *s\n", 300)
	src := minimal + "nemesis:\n  - &s {hook: {command: x, args: [" + args + "]}}\n" + items
	_, err := Parse([]byte(src), "x.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Fatalf("alias bomb: %.300v", err)
	}
}

func TestMergeKeysAndExtensions(t *testing.T) {
	src := `name: t
x-grow: &grow
  instance_type: i4i.4xlarge
  count_per_rack: 1
nemesis:
  - grow_cluster:
      <<: *grow
      name: serial
  - grow_cluster:
      <<: *grow
      name: parallel
      mode: parallel
      instance_type: i4i.2xlarge
thresholds:
  cycles:
    - cycle: parallel
      read_p99_ms: 5
  durations:
    "Soft Limit": 3h
    serial: 1h
`
	s, err := Parse([]byte(src), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Nemesis[0], s.Nemesis[1]
	if a.Name != "serial" || a.Grow.InstanceType != "i4i.4xlarge" || a.Grow.Mode != ModeSerial {
		t.Errorf("first %+v %+v", a, a.Grow)
	}
	if b.Name != "parallel" || b.Grow.InstanceType != "i4i.2xlarge" || b.Grow.Mode != ModeParallel || b.Grow.CountPerRack != 1 {
		t.Errorf("second %+v %+v", b, b.Grow)
	}
}

func TestMergeBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: t\nx-0: &m0 {name: a}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "x-%d: &m%d {<<: [", i, i)
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&b, "*m%d,", i-1)
		}
		b.WriteString("]}\n")
	}
	b.WriteString("cluster: {<<: *m8}\n")
	start := time.Now()
	_, err := Parse([]byte(b.String()), "x.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Fatalf("merge bomb: %.300v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("merge bomb took %v", d)
	}
}

func TestStaticBackendHooks(t *testing.T) {
	s, err := Parse([]byte(minimal+`backend: static
static:
  hosts: [10.0.0.1, 10.0.0.2, 10.0.0.3]
  add_node: {command: ./add.sh, args: [--zone, a]}
  remove_node: {command: ./remove.sh, timeout: 1m}
nemesis:
  - grow_cluster: {}
  - decommission: {}
`), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Backends["static"].(*static.Settings); st.AddNode == nil || st.AddNode.Timeout != static.DefaultCommandTimeout || st.RemoveNode.Timeout.D() != time.Minute || st.StopNode != nil {
		t.Errorf("static %+v", st)
	}
}

func TestDashboardURL(t *testing.T) {
	if _, err := Parse([]byte(minimal+"report:\n  dashboard_url: https://grafana.example/d/overview?from={from_ms}&to={to_ms}\n"), "x.yaml", nil); err != nil {
		t.Fatal(err)
	}
	for bad, want := range map[string]string{
		"grafana.example/d?from={from_ms}":          "not an http(s) URL",
		"https://grafana.example/d?from={start_ms}": "the only placeholders are {from_ms} and {to_ms}",
	} {
		_, err := Parse([]byte(minimal+"report:\n  dashboard_url: \""+bad+"\"\n"), "x.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), "report.dashboard_url") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", bad, err)
		}
	}
}
