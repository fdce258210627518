package scenarios

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/profile"
)

// The workload forms' fields: one form at most, ops only with a profile,
// scylla-bench's options only with a kind, and a form's own error at the
// field's line.
func TestWorkloadFormErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		sets []string
		line int
		want string
	}{
		{minimal + "workload:\n  stress_cmd: cassandra-stress write\n  kind: write\n", nil, 4, "workload.kind: cannot be combined with workload.stress_cmd"},
		{minimal + "workload:\n  ops: insert=1\n", nil, 3, "workload.ops: is the ops(...) of a user profile: it needs workload.profile"},
		{minimal + "workload:\n  partition_count: 10\n", nil, 3, "workload.partition_count: is a scylla-bench option: it needs workload.kind"},
		{minimal + "workload:\n  profile: no-such-profile.yaml\n  ops: insert=1\n", nil, 3, "workload.profile: cannot read the profile no-such-profile.yaml"},
		{minimal + "workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress write -foo\n", nil, 4, "workload.stress_cmd: workload model"},
		{minimal + "workload:\n  rate: 10/s\n", []string{"workload.stress_cmd=cassandra-stress write -foo"}, 0, "workload.stress_cmd: workload model"},
	} {
		ps := problemsOf(t, c.src, c.sets...)
		found := false
		for _, p := range ps {
			if strings.Contains(p.String(), c.want) {
				found = true
				if c.line > 0 && p.Line != c.line {
					t.Errorf("%q: line %d, want %d", p.String(), p.Line, c.line)
				}
			}
		}
		if !found {
			t.Errorf("%q: problems %v, want %q", c.src, ps, c.want)
		}
	}
}

// A profile is read relative to the scenario file and travels in the spec.
func TestWorkloadProfileSpec(t *testing.T) {
	dir := t.TempDir()
	prof := "keyspace: ks\ntable: t\n"
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "profiles", "ts.yaml"), []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(minimal+"workload:\n  rate: 10/s\n  profile: profiles/ts.yaml\n  ops: insert=1,read1=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the profile form registered the spec cannot parse: check the
	// spec itself (what the form's parser gets), not the load's outcome.
	s, err := Load(path, nil)
	w := Workload{Profile: filepath.Join(dir, "profiles", "ts.yaml"), Ops: "insert=1,read1=2", profileYAML: []byte(prof)}
	if err == nil {
		w = s.Workload
	}
	spec := w.ModelSpec()
	text, ok := strings.CutPrefix(spec, "profile:")
	if !ok {
		t.Fatalf("spec %q", spec)
	}
	js, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Name, YAML, Ops string }
	if err := json.Unmarshal(js, &env); err != nil || env.Name != "ts.yaml" || env.YAML != prof || env.Ops != "insert=1,read1=2" {
		t.Fatalf("%+v %v", env, err)
	}
}

// scylla-bench's options become the sb spec's, under scylla-bench's names.
func TestWorkloadKindSpec(t *testing.T) {
	w := Workload{Kind: "write", PartitionCount: 1000, ClusteringRowCount: 10, ClusteringRowSize: "uniform:64..128"}
	if got, want := w.ModelSpec(), "sb:mode=write,partition-count=1000,clustering-row-count=10,clustering-row-size=uniform:64..128"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := (Workload{StressCmd: " cassandra-stress write n=10 "}).ModelSpec(); got != "cs:cassandra-stress write n=10" {
		t.Fatal(got)
	}
	if got := (Workload{}).ModelSpec(); got != "kv" {
		t.Fatal(got)
	}
}

// userProfile is a small user profile: one key, one blob, a read query.
const userProfile = `keyspace: ks
table: kv
table_definition: |
  CREATE TABLE kv (key bigint PRIMARY KEY, value blob)
columnspec:
  - name: value
    size: fixed(64)
queries:
  read1:
    cql: SELECT value FROM kv WHERE key = ?
    fields: samerow
  read2:
    cql: SELECT value FROM kv WHERE key = ?
    fields: samerow
    consistencyLevel: ONE
`

// writeUserScenario writes profiles/kv.yaml and a scenario s.yaml holding
// body under a temporary directory, and returns the scenario's path.
func writeUserScenario(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "profiles", "kv.yaml"), []byte(userProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(minimal+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A `cassandra-stress user` stress_cmd is read as workload.profile and
// workload.ops are: the profile relative to the scenario file, its ops,
// cl= (a query's own consistencyLevel wins) and -rate for the profile form.
func TestWorkloadUserCommand(t *testing.T) {
	path := writeUserScenario(t, "workload:\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml 'ops(insert=1,read1=2,read2=1)' cl=LOCAL_QUORUM -rate threads=20 fixed=300/s -insert partitions=fixed(2) batchtype=UNLOGGED\n")
	s, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(filepath.Dir(path), "profiles", "kv.yaml")
	if !strings.Contains(s.Workload.StressCmd, "profile="+abs) {
		t.Fatalf("resolved stress_cmd %q does not name %s", s.Workload.StressCmd, abs)
	}
	m, err := s.Workload.Model()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range m.Ops() {
		got = append(got, fmt.Sprintf("%s=%g@%v", o.Name, o.Weight, o.CL))
	}
	if g := strings.Join(got, " "); g != "insert=1@LOCAL_QUORUM read1=2@LOCAL_QUORUM read2=1@ONE" {
		t.Fatalf("ops %s", g)
	}
	if ins := m.(*profile.Model).Profile().Insert; ins.BatchType != "UNLOGGED" || fmt.Sprint(ins.Partitions) != "fixed(2)" {
		t.Fatalf("-insert not applied: %+v", ins)
	}
	rs, ok := m.(stress.RateSetter)
	if !ok {
		t.Fatalf("%T carries no -rate", m)
	}
	if rate, ok := rs.Rate(); !ok || rate != 300 || rs.Threads() != 20 {
		t.Fatalf("-rate: %v %v threads %d", rate, ok, rs.Threads())
	}
	// The resolved scenario loads again from anywhere.
	data, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data, "-", nil); err != nil {
		t.Fatalf("the resolved scenario does not load: %v", err)
	}
	// Without cl=, cassandra-stress's default LOCAL_ONE, as for other lines.
	s, err = Load(writeUserScenario(t, "workload:\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml ops(insert=1)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.Workload.Model(); err != nil || m.Ops()[0].CL != gocql.LocalOne {
		t.Fatalf("no cl=: %v", err)
	}
}

// What the profile form cannot honour, and a profile that cannot be read
// or has no such operation, fail at stress_cmd's line, naming the option.
func TestWorkloadUserCommandErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml ops(insert=1) -pop seq=1..100\n", "workload.stress_cmd: -pop seq=1..100: not supported with a user profile"},
		{"workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress user profile=profiles/none.yaml ops(insert=1)\n", "workload.stress_cmd: user profile=profiles/none.yaml: cannot read the profile"},
		{"workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml ops(insert=1,read9=1)\n", "read9"},
		{"workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml ops(insert=1) clustering=fixed(2)\n", "clustering="},
		{"workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml ops(insert=1) cl=SERIAL\n", "cl=SERIAL"},
		{"workload:\n  rate: 10/s\n  stress_cmd: cassandra-stress user profile=profiles/kv.yaml ops(insert=1) -insert visits=fixed(3)\n", "-insert visits=fixed(3): not supported"},
	} {
		_, err := Load(writeUserScenario(t, c.body), nil)
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%q: %v", c.body, err)
		}
		found := false
		for _, p := range ve.Problems {
			if strings.Contains(p.String(), c.want) {
				found = true
				if p.Line != 4 {
					t.Errorf("%q at line %d, want 4", p.String(), p.Line)
				}
			}
		}
		if !found {
			t.Errorf("%q: problems %v, want %q", c.body, ve.Problems, c.want)
		}
	}
}
