package stress

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// threeOps is a test-only model of three named operations on its own
// table: insert (a write), read1 and read2 (reads of two columns). Its
// spec's text is kept as given, so the round trip of awkward text (quotes,
// newlines, a profile's YAML) can be checked.
type threeOps struct{ text string }

func init() {
	RegisterModel("test3", func(text string) (Model, error) {
		if strings.Contains(text, "bad") {
			return nil, errors.New("unsupported option bad")
		}
		return threeOps{text: text}, nil
	})
}

func (m threeOps) Spec() string { return "test3:" + m.text }
func (m threeOps) Describe() ModelInfo {
	return ModelInfo{Kind: "three ops", Keyspace: "ks3", Table: "t3", Ops: m.Ops()}
}
func (m threeOps) Schema(t SchemaTarget) ([]string, error) {
	return []string{
		fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS ks3 WITH replication = {'class': 'NetworkTopologyStrategy', '%s': %d}", t.DC, t.RF),
		"CREATE TABLE IF NOT EXISTS ks3.t3 (key bigint PRIMARY KEY, a int, b text)",
	}, nil
}
func (m threeOps) Ops() []OpSpec {
	return []OpSpec{
		{Name: "insert", Class: results.OpWrite, Weight: 1, CL: gocql.One},
		{Name: "read1", Class: results.OpRead, Weight: 2, CL: gocql.One},
		{Name: "read2", Class: results.OpRead, Weight: 1, CL: gocql.One},
	}
}
func (m threeOps) Regenerable() bool { return false }

func (m threeOps) Bind(_ context.Context, s *gocql.Session, b Binding) (sched.Op, error) {
	n := max(b.Keys, 1)
	return func(ctx context.Context, typ int, seq uint64) error {
		key := int64(seq) % n
		switch typ {
		case 0:
			return s.Query("INSERT INTO ks3.t3 (key, a, b) VALUES (?, ?, ?)", key, int(key), "x").WithContext(ctx).Exec()
		case 1:
			var a int
			err := s.Query("SELECT a FROM ks3.t3 WHERE key = ?", key).WithContext(ctx).Scan(&a)
			if errors.Is(err, gocql.ErrNotFound) {
				return nil
			}
			return err
		}
		var v string
		err := s.Query("SELECT b FROM ks3.t3 WHERE key = ?", key).WithContext(ctx).Scan(&v)
		if errors.Is(err, gocql.ErrNotFound) {
			return nil
		}
		return err
	}, nil
}

func (m threeOps) Fill(_ context.Context, s *gocql.Session, b Binding) (sched.Op, error) {
	return func(ctx context.Context, _ int, seq uint64) error {
		key := b.StartKey + int64(seq)*b.Stride
		return s.Query("INSERT INTO ks3.t3 (key, a, b) VALUES (?, ?, ?)", key, int(key), "f").WithContext(ctx).Exec()
	}, nil
}

// A model's spec survives the job's encoding, whatever its text holds.
func TestJobModelRoundTrip(t *testing.T) {
	for _, spec := range []string{"kv", "test3:", "test3:keyspace: ks\ntable_definition: |\n  CREATE TABLE t (k int PRIMARY KEY) -- it's \"quoted\"\n  -x=1,y=2"} {
		j := DefaultJob()
		j.Hosts, j.Model = []string{"h"}, spec
		got, err := ParseJob(j.Args())
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if !reflect.DeepEqual(got, j) {
			t.Fatalf("%q does not round-trip: got %q", spec, got.Model)
		}
		m, err := got.ResolveModel()
		if err != nil || m.Spec() != spec {
			t.Fatalf("%q: resolved %v %v", spec, m, err)
		}
	}
	j := DefaultJob()
	j.Hosts = []string{"h"}
	for spec, want := range map[string]string{
		"nosuch:x":    `unknown form "nosuch"`,
		"test3:a bad": "workload model test3: unsupported option bad",
		"kv:extra":    "takes no text",
		"test3:\x00":  "NUL",
	} {
		j.Model = spec
		if err := j.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
	j.Model = "test3:" + strings.Repeat("x", MaxModelSpec)
	if err := j.Validate(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a long spec: %v", err)
	}
}

// The built-in model of the job's flags is the workload the job ran before
// models: write then read, the job's mix, consistency levels and values.
func TestJobKVModel(t *testing.T) {
	j := DefaultJob()
	j.Keyspace, j.Table, j.WriteRatio, j.ReadRatio, j.WriteCL, j.ReadCL, j.ValueMin, j.ValueMax = "ks", "t", 3, 1, "ONE", "ALL", 10, 20
	m, err := j.ResolveModel()
	if err != nil {
		t.Fatal(err)
	}
	want := []OpSpec{{Name: "write", Class: "write", Weight: 3, CL: gocql.One}, {Name: "read", Class: "read", Weight: 1, CL: gocql.All}}
	if !reflect.DeepEqual(m.Ops(), want) || !m.Regenerable() || m.Spec() != "kv" || m.Describe().Table != "t" {
		t.Fatalf("%+v", m)
	}
	st, err := m.Schema(SchemaTarget{DC: "dc1", RF: 3, Tablets: -1})
	if err != nil || len(st) != 2 || !strings.Contains(st[1], "CREATE TABLE IF NOT EXISTS ks.t (key bigint PRIMARY KEY, value blob)") {
		t.Fatalf("%q %v", st, err)
	}
}

// A model of three named operations runs through the engine on an emulated
// node: its schema, a fill with its own writes, then the workload, whose
// records carry each operation's name and class.
func TestModelThreeOpsOnEmulator(t *testing.T) {
	s := session(t, enginetest.NewMemory("three"))
	ctx := context.Background()
	j := DefaultJob()
	j.Hosts, j.Model = []string{"h"}, "test3:"
	w, err := j.Workload()
	if err != nil {
		t.Fatal(err)
	}
	if err := CreateModelSchema(ctx, s, w.Model, SchemaTarget{RF: 1}); err != nil {
		t.Fatal(err)
	}
	var fillRecs []results.LatencyRecord
	var written atomic.Int64
	f, err := j.FillSpec()
	if err != nil {
		t.Fatal(err)
	}
	f.CheckEvery = 20 * time.Millisecond
	n, err := RunFill(ctx, s, f, func() bool { return written.Load() >= 200 },
		func(r results.LatencyRecord) { fillRecs = append(fillRecs, r) }, func(k int64) { written.Store(k) })
	if err != nil || n < 200 {
		t.Fatalf("fill: %d keys, %v", n, err)
	}
	var count int
	if err := s.Query("SELECT count(*) FROM ks3.t3").Scan(&count); err != nil || count < 200 {
		t.Fatalf("the fill wrote %d rows of its model's table (%v)", count, err)
	}
	path := filepath.Join(t.TempDir(), results.FileLatency)
	out, err := results.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Rate, w.KeyCount, w.Interval, w.Concurrency = 400, n, 250*time.Millisecond, 16
	rctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	sum, err := Run(rctx, s, w, func(r results.LatencyRecord) {
		if err := out.Write(r); err != nil {
			t.Error(err)
		}
	})
	if err != nil || sum.Errors > 0 {
		t.Fatalf("%v %+v", err, sum.Ops)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	classes := map[string]string{}
	counts := map[string]int64{}
	err = results.ReadJSONL(path, func(_ int, r *results.LatencyRecord) error {
		classes[r.Op], counts[r.Op] = r.OpClass(), counts[r.Op]+r.Count
		if r.Class == "" {
			return fmt.Errorf("record of %s without its class", r.Op)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"insert": "write", "read1": "read", "read2": "read"}
	if !reflect.DeepEqual(classes, want) {
		t.Fatalf("records' operations and classes %v, want %v", classes, want)
	}
	// read1 has twice read2's weight.
	if counts["read1"] < counts["read2"] || counts["insert"] == 0 {
		t.Fatalf("counts %v", counts)
	}
	for _, r := range fillRecs {
		if r.Op != results.OpFill || r.Class != "" {
			t.Fatalf("fill record %s/%s", r.Op, r.Class)
		}
	}
}
