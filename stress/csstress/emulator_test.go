package csstress

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/internal/stresstest"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// emulated starts a single emulated node and returns a session on it
// and its data centre.
func emulated(t *testing.T) (*gocql.Session, string) {
	t.Helper()
	s := stresstest.Memory(t, "test")
	return s, stresstest.DC(t, s)
}

// createSchema runs the model's schema for a one-node cluster.
func createSchema(t *testing.T, s *gocql.Session, m *Model, dc string) {
	t.Helper()
	stresstest.CreateSchema(t, s, m, stress.SchemaTarget{DC: dc, RF: 1})
}

// runModel binds m and runs it with the scheduler at rate for d.
func runModel(t *testing.T, s *gocql.Session, m *Model, b stress.Binding, rate float64, d time.Duration) sched.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	op, err := m.Bind(ctx, s, b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var weights []float64
	for _, o := range m.Ops() {
		names, weights = append(names, o.Name), append(weights, o.Weight)
	}
	threads := m.Threads()
	sch, err := sched.New(sched.Config{Ops: names, Weights: weights, Rate: rate, Concurrency: threads,
		Interval: 200 * time.Millisecond, Classify: stress.ClassifyError}, op)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := sch.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// The acceptance line's mix on an emulated node: writes and reads in a
// 1:2 ratio at the line's fixed rate, no errors, rows as regenerated.
func TestEmulatorMixed(t *testing.T) {
	s, dc := emulated(t)
	m, err := Parse(acceptanceLine)
	if err != nil {
		t.Fatal(err)
	}
	createSchema(t, s, m, dc)
	rate, _ := m.Rate()
	sum := runModel(t, s, m, stress.Binding{Seed: 1}, rate, 2*time.Second)
	w, _ := sum.Op("write")
	r, _ := sum.Op("read")
	t.Logf("intended %d succeeded %d errors %d dropped %d; write %d read %d", sum.Intended, sum.Succeeded, sum.Errors, sum.Dropped, w.Succeeded, r.Succeeded)
	if sum.Errors != 0 || sum.Dropped != 0 || w.Succeeded == 0 || r.Succeeded == 0 || sum.Intended != sum.Succeeded {
		t.Fatalf("summary %+v", sum)
	}
	if w.Succeeded > r.Succeeded {
		t.Errorf("ratio(write=1,read=2): %d writes, %d reads", w.Succeeded, r.Succeeded)
	}
	// Every stored row holds the values its index regenerates.
	iter := s.Query(`SELECT key, "C0" FROM "keyspace1"."standard1"`).Iter()
	vals := newCells(m.s.size)
	byKey := map[string]int64{}
	kb := make([]byte, m.s.keysize)
	for i := int64(1); i <= 20000; i++ {
		putKey(kb, i)
		byKey[string(kb)] = i
	}
	var key, c0 []byte
	rows := 0
	for iter.Scan(&key, &c0) {
		idx, ok := byKey[string(key)]
		if !ok || !bytes.Equal(c0, vals.value(idx, 0)) || len(c0) != 512 {
			t.Fatalf("row %q (index %d, %v) holds %d bytes not its regenerated value", key, idx, ok, len(c0))
		}
		rows++
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || int64(rows) > w.Succeeded {
		t.Fatalf("%d rows after %d writes", rows, w.Succeeded)
	}
}

// Counter operations: counter_write increments every column by add=, and
// counter_read reads them back; the sums match the increments.
func TestEmulatorCounters(t *testing.T) {
	s, dc := emulated(t)
	m, err := Parse("cassandra-stress mixed ratio(counter_write=3,counter_read=1) cl=ONE add=FIXED(2) -rate threads=8 -col n=FIXED(2) -pop seq=1..50")
	if err != nil {
		t.Fatal(err)
	}
	createSchema(t, s, m, dc)
	sum := runModel(t, s, m, stress.Binding{}, 0, time.Second)
	cw, _ := sum.Op("counter_write")
	cr, _ := sum.Op("counter_read")
	t.Logf("counter_write %d counter_read %d errors %d", cw.Succeeded, cr.Succeeded, sum.Errors)
	if sum.Errors != 0 || cw.Succeeded == 0 || cr.Succeeded == 0 {
		t.Fatalf("summary %+v", sum)
	}
	var total, c0, c1 int64
	iter := s.Query(`SELECT "C0", "C1" FROM "keyspace1"."counter1"`).Iter()
	for iter.Scan(&c0, &c1) {
		if c0 != c1 || c0%2 != 0 {
			t.Fatalf("counters %d and %d: each increment adds 2 to both", c0, c1)
		}
		total += c0
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if total != 2*cw.Succeeded {
		t.Fatalf("counters sum to %d after %d increments of 2", total, cw.Succeeded)
	}
}

// Fill writes population indexes 1..n, and reads without -pop find them.
func TestEmulatorFillThenRead(t *testing.T) {
	s, dc := emulated(t)
	m, err := Parse("cassandra-stress read cl=ONE -col size=UNIFORM(10..40) n=FIXED(3) -rate threads=4")
	if err != nil {
		t.Fatal(err)
	}
	createSchema(t, s, m, dc)
	ctx := context.Background()
	fill, err := m.Fill(ctx, s, stress.Binding{StartKey: 0, Stride: 1})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(0); seq < 200; seq++ {
		if err := fill(ctx, 0, seq); err != nil {
			t.Fatal(err)
		}
	}
	kb := make([]byte, 10)
	putKey(kb, 200)
	var c2 []byte
	if err := s.Query(`SELECT "C2" FROM "keyspace1"."standard1" WHERE key = ?`, kb).Scan(&c2); err != nil {
		t.Fatal(err)
	}
	if want := newCells(m.s.size).value(200, 2); !bytes.Equal(c2, want) || len(c2) < 10 || len(c2) > 40 {
		t.Fatalf("row 200 C2: %d bytes, want its %d regenerated bytes", len(c2), len(want))
	}
	sum := runModel(t, s, m, stress.Binding{Keys: 200}, 500, time.Second)
	if r, _ := sum.Op("read"); sum.Errors != 0 || r.Succeeded == 0 {
		t.Fatalf("summary %+v", sum)
	}

	// Data validation reads the rows back through the model: all there,
	// then one deleted and one overwritten are found.
	check := stress.Check{Keyspace: "keyspace1", Table: "standard1", Keys: 200, Rows: m, Sample: -1, Ranges: -1, CL: gocql.One}
	v, err := stress.Validate(ctx, s, check)
	if err != nil || v.Missing != 0 || v.Mismatched != 0 || v.ScannedRows != 200 {
		t.Fatalf("validation of intact rows: %v %+v", err, v)
	}
	putKey(kb, 17)
	if err := s.Query(`DELETE FROM "keyspace1"."standard1" WHERE key = ?`, kb).Exec(); err != nil {
		t.Fatal(err)
	}
	putKey(kb, 101)
	if err := s.Query(`UPDATE "keyspace1"."standard1" SET "C1" = 0x00 WHERE key = ?`, kb).Exec(); err != nil {
		t.Fatal(err)
	}
	v, err = stress.Validate(ctx, s, check)
	if err != nil || v.Missing != 1 || v.Mismatched != 1 {
		t.Fatalf("validation after a delete and an overwrite: %v missing %d mismatched %d examples %v", err, v.Missing, v.Mismatched, v.Examples)
	}
}
