package profile

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/internal/stresstest"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// emulated connects to a one-node emulated cluster (the emulator's CQL
// server on an in-memory engine).
func emulated(t testing.TB) *gocql.Session {
	t.Helper()
	return stresstest.Memory(t, "profile")
}

// createSchema runs the model's schema on s.
func createSchema(t testing.TB, s *gocql.Session, m stress.Model) {
	t.Helper()
	stresstest.CreateSchema(t, s, m, stress.SchemaTarget{RF: 1})
}

// fillPartitions runs the model's fill for partitions 0..n-1.
func fillPartitions(t testing.TB, s *gocql.Session, m stress.Model, n int) {
	t.Helper()
	op, err := m.Fill(context.Background(), s, stress.Binding{Stride: 1, Failed: func(k int64) { t.Errorf("fill of partition %d failed", k) }})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := w; seq < n; seq += 4 {
				if err := op(context.Background(), 0, uint64(seq)); err != nil {
					t.Errorf("fill %d: %v", seq, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// runMix runs the model's ops on Keys partitions at rate for d.
func runMix(t testing.TB, s *gocql.Session, m stress.Model, keys int64, rate float64, d time.Duration) sched.Summary {
	t.Helper()
	op, err := m.Bind(context.Background(), s, stress.Binding{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return stresstest.Run(t, m, op, sched.Config{Rate: rate, Concurrency: 16}, d)
}

// The time-series profile on an emulated node: the fill writes whole
// partitions, then the mix runs every operation without errors and the
// latest-readings query finds rows.
func TestTimeseriesOnEmulator(t *testing.T) {
	s := emulated(t)
	m := load(t, timeseries, "insert=1,latest=2,slice=1")
	createSchema(t, s, m)
	fillPartitions(t, s, m, 40)
	var rows int
	if err := s.Query("SELECT COUNT(*) FROM sensors.readings").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows < 40*50 || rows > 40*150 {
		t.Fatalf("the fill of 40 partitions of 50..150 readings wrote %d rows", rows)
	}
	sum := runMix(t, s, m, 40, 300, 2*time.Second)
	t.Logf("intended %d succeeded %d errors %d dropped %d; misses latest %d slice %d", sum.Intended, sum.Succeeded, sum.Errors, sum.Dropped, m.Misses(1), m.Misses(2))
	if sum.Errors != 0 || sum.Succeeded == 0 {
		t.Fatalf("errors: %+v", sum.Ops)
	}
	for _, name := range []string{"insert", "latest", "slice"} {
		o, ok := sum.Op(name)
		if !ok || o.Succeeded == 0 {
			t.Errorf("no %s operations: %+v", name, sum.Ops)
		}
	}
	if m.Misses(1) != 0 {
		t.Errorf("latest found no row %d times", m.Misses(1))
	}
	if o, _ := sum.Op("slice"); m.Misses(2) >= o.Succeeded {
		t.Errorf("slice never found a row (%d of %d)", m.Misses(2), o.Succeeded)
	}
}

// Every generated type is accepted by the server and read back by the
// same-row query; counters take COUNTER batches.
func TestAllTypesAndCountersOnEmulator(t *testing.T) {
	s := emulated(t)
	for _, c := range []struct{ file, ops string }{
		{"testdata/alltypes.yaml", "insert=2,row=2,partition=1,touch=1"},
		{"testdata/counters.yaml", "insert=1,page=1"},
	} {
		m := load(t, c.file, c.ops)
		createSchema(t, s, m)
		fillPartitions(t, s, m, 20)
		sum := runMix(t, s, m, 20, 200, time.Second)
		if sum.Errors != 0 || sum.Succeeded == 0 {
			t.Fatalf("%s: %d errors: %+v", c.file, sum.Errors, sum.Ops)
		}
		for i, o := range m.Ops() {
			if o.Class == "read" && m.Misses(i) != 0 {
				t.Errorf("%s: %s found no row %d times", c.file, o.Name, m.Misses(i))
			}
		}
	}
}

// A token range query reads one page per operation, and one pass over the
// ring's ranges (every node's tokens) reads every row once: a composite
// partition key's token, pages carried from one operation to the next.
func TestTokenRangeQueriesOnEmulator(t *testing.T) {
	s := emulated(t)
	m := load(t, "testdata/scan.yaml", "insert=1,all_columns=1,values=1")
	createSchema(t, s, m)
	fillPartitions(t, s, m, 30)
	var want int64
	if err := s.Query("SELECT COUNT(*) FROM scan_profile.readings").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if want == 0 {
		t.Fatal("the fill wrote no rows")
	}
	e, err := m.newEngine(s, stress.Binding{Keys: 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.prepareScans(); err != nil {
		t.Fatal(err)
	}
	w := e.worker(context.Background())
	for _, typ := range []int{1, 2} {
		sc := e.scans[typ]
		ops := 0
		for started := false; !started || sc.next != 0 || len(sc.open) > 0; started = true {
			if err := e.scanOp(w, typ); err != nil {
				t.Fatalf("%s: %v", m.ops[typ].Name, err)
			}
			ops++
		}
		t.Logf("%s: %d ranges, %d operations, %d rows", m.ops[typ].Name, len(sc.ranges), ops, sc.rows.Load())
		if sc.rows.Load() != want {
			t.Errorf("%s: one pass over %d ranges read %d rows, want %d", m.ops[typ].Name, len(sc.ranges), sc.rows.Load(), want)
		}
	}
	if sum := runMix(t, s, m, 30, 200, time.Second); sum.Errors != 0 {
		t.Fatalf("mix with scans: %d errors: %+v", sum.Errors, sum.Ops)
	}
}

// Markers in an IN list are the column's (cassandra-stress binds a
// prepared statement's variables by name): with fields: multirow each
// comes from a row of its own, all of them rows the fill wrote.
func TestInListMarkersOnEmulator(t *testing.T) {
	s := emulated(t)
	m := load(t, "testdata/scan.yaml", "insert=1,several=1")
	if n := len(m.ops[1].query.binders); n != 5 {
		t.Fatalf("several binds %d markers, want 5 (site, sensor and three ts)", n)
	}
	createSchema(t, s, m)
	fillPartitions(t, s, m, 30)
	sum := runMix(t, s, m, 30, 200, time.Second)
	o, _ := sum.Op("several")
	if sum.Errors != 0 || o.Succeeded == 0 {
		t.Fatalf("%d errors: %+v", sum.Errors, sum.Ops)
	}
	if m.Misses(1) != 0 {
		t.Errorf("several found no row %d times of %d", m.Misses(1), o.Succeeded)
	}
}

// insert row-population: each row written with the first half of its
// value columns by name (a, b) and the others null, as cassandra-stress's
// PartitionIterator leaves the k-th of n out when k/n > the ratio.
func TestRowPopulationOnEmulator(t *testing.T) {
	s := emulated(t)
	m := load(t, "testdata/partial.yaml", "insert=1,row=1")
	createSchema(t, s, m)
	fillPartitions(t, s, m, 10)
	iter := s.Query("SELECT a, b, d, z FROM partial_profile.wide").Iter()
	var a, b, d *string
	var z *int
	rows := 0
	for iter.Scan(&a, &b, &d, &z) {
		rows++
		if a == nil || b == nil || d != nil || z != nil {
			t.Errorf("row %d: a %v b %v d %v z %v, want a and b only", rows, a, b, d, z)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if rows != 30 {
		t.Errorf("%d rows, want 10 partitions of 3", rows)
	}
	if sum := runMix(t, s, m, 10, 200, time.Second); sum.Errors != 0 || m.Misses(1) != 0 {
		t.Fatalf("%d errors, %d misses: %+v", sum.Errors, m.Misses(1), sum.Ops)
	}
}
