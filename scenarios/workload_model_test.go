package scenarios

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
