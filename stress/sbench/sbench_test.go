package sbench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/internal/stresstest"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// node starts one emulated CQL node (in-memory engine) and connects to it.
func node(t *testing.T) *gocql.Session {
	t.Helper()
	return stresstest.Memory(t, "test")
}

func mustParse(t *testing.T, text string) *Model {
	t.Helper()
	m, err := Parse(text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return m
}

// prepare creates m's schema and fills partitions 0..n-1 with m's fill.
func prepare(t *testing.T, s *gocql.Session, m *Model, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Tablets asked for: counter modes create a vnodes keyspace, the emulated
	// release refusing counters in tablet keyspaces as ScyllaDB before 2026.1.
	stresstest.CreateSchema(t, s, m, stress.SchemaTarget{RF: 1, Tablets: 4})
	fill, err := m.Fill(ctx, s, stress.Binding{Stride: 1})
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Int64
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	sch, err := sched.New(sched.Config{Ops: []string{results.OpFill}, Concurrency: 8, MaxLag: -1, Classify: stress.ClassifyError}, func(ctx context.Context, typ int, seq uint64) error {
		if int64(seq) >= n {
			stop()
			return nil
		}
		err := fill(ctx, typ, seq)
		if err == nil && done.Add(1) == n {
			stop()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := sch.Run(fctx)
	if err != nil || sum.Errors != 0 || done.Load() != n {
		t.Fatalf("fill of %d partitions: %d written, %v, %+v", n, done.Load(), err, sum.Ops)
	}
}

// runOps runs m's operations at a fixed rate for d among keys partitions;
// it returns their summary and the rows they read.
func runOps(t *testing.T, s *gocql.Session, m *Model, keys int64, d time.Duration) (sched.Summary, int64) {
	t.Helper()
	op, ws, err := m.bind(s, stress.Binding{Keys: keys, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	sum := stresstest.Run(t, m, op, sched.Config{Rate: 300, Concurrency: 16}, d)
	return sum, ws.rows.Load()
}

func validate(t *testing.T, s *gocql.Session, m *Model, keys int64, unacked func(int64) bool) results.Validation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := stress.Validate(ctx, s, stress.Check{Rows: m, Keys: keys, Sample: -1, Ranges: -1, CL: gocql.One, After: "final", Unacked: unacked})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	testPartitions = 40
	testRows       = 12
)

// Every mode runs on what the fill wrote: its operations under its own
// names, no errors, validate-data reads every row they read without
// finding one wrong, and data validation afterwards finds every
// partition whole by the sample and by scanning the whole ring.
func TestModesRunAndValidate(t *testing.T) {
	base := "partition-count=" + strconv.Itoa(testPartitions) + ",clustering-row-count=" + strconv.Itoa(testRows) +
		",clustering-row-size=uniform:1..90,validate-data"
	for _, tc := range []struct {
		spec string
		ops  map[string]string // name: class
	}{
		{"mode=write,rows-per-request=5", map[string]string{"write": results.OpWrite}},
		{"mode=write,workload=sequential", map[string]string{"write": results.OpWrite}},
		{"mode=read,rows-per-request=4", map[string]string{"read": results.OpRead}},
		{"mode=read,provide-upper-bound,rows-per-request=3,select-order-by=asc,desc", map[string]string{"read": results.OpRead}},
		{"mode=read,in-restriction,rows-per-request=3,workload=sequential", map[string]string{"read": results.OpRead}},
		{"mode=read,no-lower-bound,rows-per-request=20,bypass-cache,select-order-by=desc", map[string]string{"read": results.OpRead}},
		{"mode=mixed,workload=uniform,consistency-level=one", map[string]string{"write": results.OpWrite, "read": results.OpRead}},
		{"mode=counter_update", map[string]string{"counter_update": results.OpWrite}},
		{"mode=counter_read,rows-per-request=5", map[string]string{"counter_read": results.OpRead}},
		{"mode=scan,range-count=9", map[string]string{"scan": results.OpRead}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			m := mustParse(t, tc.spec+","+base)
			for _, o := range m.Ops() {
				if tc.ops[o.Name] != o.Class {
					t.Fatalf("op %s class %s, want %v", o.Name, o.Class, tc.ops)
				}
			}
			s := node(t)
			prepare(t, s, m, testPartitions)
			sum, rows := runOps(t, s, m, 0, time.Second)
			for _, o := range sum.Ops {
				if o.Succeeded == 0 || o.ErrorCount() != 0 {
					t.Errorf("%s: %d succeeded, errors %v", o.Op, o.Succeeded, o.Errors)
				}
				if o.Op != "write" && o.Op != "counter_update" && rows == 0 {
					t.Errorf("%s: no row read", o.Op)
				}
			}
			t.Logf("%+v; %d rows read", sum.Ops, rows)
			if len(sum.Ops) != len(tc.ops) || sum.Errors != 0 {
				t.Fatalf("ops %+v, errors %d", sum.Ops, sum.Errors)
			}
			v := validate(t, s, m, testPartitions, nil)
			if v.Lost() != 0 || v.ReadErrors != 0 || v.SampleKeys != testPartitions || v.ScannedRanges != results.RingParts ||
				v.ScanExpected != testPartitions || v.ScannedRows != testPartitions {
				t.Fatalf("validation: %+v", v)
			}
		})
	}
}

// A scan of range-count ranges reads every row once, whatever the count,
// twice over (the reused queries start again at the first page).
func TestScanReadsEveryRowOnce(t *testing.T) {
	s := node(t)
	m := mustParse(t, "mode=scan,clustering-row-count=7,clustering-row-size=16")
	prepare(t, s, m, 30)
	for _, n := range []int{1, 2, 5, 64} {
		m := mustParse(t, "mode=scan,clustering-row-count=7,clustering-row-size=16,page-size=50,range-count="+strconv.Itoa(n)) // pages of 50 rows: reused queries page
		op, ws, err := m.bind(s, stress.Binding{})
		if err != nil {
			t.Fatal(err)
		}
		for seq := uint64(0); seq < 2*uint64(n); seq++ {
			if err := op(context.Background(), 0, seq); err != nil {
				t.Fatal(err)
			}
		}
		if got := ws.rows.Load(); got != 2*30*7 {
			t.Errorf("range-count %d: %d rows read in two rounds, want %d", n, got, 2*30*7)
		}
	}
}

// RangeScan's ranges (workloads.go) tile the ring: the first starts at the
// minimum token, each starts after the previous, the last ends at the maximum.
func TestTokenRangesTileTheRing(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 32, 1000} {
		var prev int64
		for i := 0; i < n; i++ {
			first, last := tokenRange(i, n)
			switch {
			case i == 0 && first != -1<<63:
				t.Fatalf("n %d: starts at %d", n, first)
			case i > 0 && first != prev+1:
				t.Fatalf("n %d: range %d starts at %d after %d", n, i, first, prev)
			case last < first:
				t.Fatalf("n %d: range %d is %d..%d", n, i, first, last)
			}
			prev = last
		}
		if prev != 1<<63-1 {
			t.Fatalf("n %d: ends at %d", n, prev)
		}
	}
}

// Data validation tells a missing partition from a wrong one (a corrupt
// value, a deleted row), and does not count a partition whose fill write
// failed; a read with validate-data fails on the corrupt row.
func TestValidationFindsCorruptAndMissingRows(t *testing.T) {
	s := node(t)
	m := mustParse(t, "mode=read,partition-count=40,clustering-row-count=10,clustering-row-size=uniform:20..100,validate-data,rows-per-request=10,no-lower-bound")
	prepare(t, s, m, 40)
	for _, q := range []struct {
		cql  string
		args []any
	}{
		{"UPDATE scylla_bench.test SET v = ? WHERE pk = ? AND ck = ?", []any{[]byte("corrupt"), int64(3), int64(5)}},
		{"DELETE FROM scylla_bench.test WHERE pk = ? AND ck = ?", []any{int64(7), int64(0)}},
		{"DELETE FROM scylla_bench.test WHERE pk = ?", []any{int64(11)}},
		{"DELETE FROM scylla_bench.test WHERE pk = ?", []any{int64(12)}},
	} {
		if err := s.Query(q.cql, q.args...).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	v := validate(t, s, m, 40, func(k int64) bool { return k == 12 })
	if v.Missing != 1 || v.Mismatched != 2 || v.Unacked != 1 || len(v.Examples) != 3 || v.Examples[0] != 3 || v.Examples[1] != 7 || v.Examples[2] != 11 {
		t.Fatalf("after corrupting 3, deleting a row of 7 and partitions 11 and 12 (unacknowledged): %+v", v)
	}
	if v.ScannedRows != 38 || v.ScanExpected != 39 {
		t.Fatalf("scans: %d rows found, %d expected", v.ScannedRows, v.ScanExpected)
	}
	// Reads of the whole of partition 3 fail on its corrupt row.
	bad := mustParse(t, "mode=read,partition-offset=3,partition-count=1,clustering-row-count=10,clustering-row-size=uniform:20..100,validate-data,rows-per-request=10,no-lower-bound")
	sum, _ := runOps(t, s, bad, 0, 500*time.Millisecond)
	if sum.Succeeded != 0 || sum.Errors == 0 {
		t.Fatalf("reads of a corrupt partition: %d succeeded, %d errors", sum.Succeeded, sum.Errors)
	}
}

// A counter row that broke the updates' invariant is wrong.
func TestValidationFindsWrongCounters(t *testing.T) {
	s := node(t)
	m := mustParse(t, "mode=counter_read,clustering-row-count=6,validate-data")
	prepare(t, s, m, 20)
	if err := s.Query("UPDATE scylla_bench.test_counters SET c3 = c3 + 1 WHERE pk = 4 AND ck = 2").Exec(); err != nil {
		t.Fatal(err)
	}
	v := validate(t, s, m, 20, nil)
	if v.Missing != 0 || v.Mismatched != 1 || len(v.Examples) != 1 || v.Examples[0] != 4 {
		t.Fatalf("after breaking a counter of partition 4: %+v", v)
	}
}

// The options are scylla-bench's flags; the spec round-trips; what cannot
// be honoured is refused by name.
func TestOptions(t *testing.T) {
	m := mustParse(t, "-mode=read, partition-count=10000,clustering-row-count=100,clustering-row-size=uniform(64..128),validate-data,select-order-by=none,asc,consistency-level=one")
	o := m.Options()
	if o.Mode != "read" || o.PartitionCount != 10000 || !o.ValidateData || strings.Join(o.SelectOrderBy, "/") != "none/asc" ||
		o.Keyspace != "scylla_bench" || o.Table != "test" || o.RowsPerRequest != 1 || m.cl != gocql.One || m.size != (sizeDist{64, 128}) {
		t.Fatalf("options %+v", o)
	}
	spec := m.Spec()
	if spec != "sb:mode=read,partition-count=10000,clustering-row-size=uniform(64..128),validate-data,select-order-by=none,asc,consistency-level=one" {
		t.Fatalf("spec %q", spec)
	}
	again, err := stress.ParseModel(spec)
	if err != nil || again.Spec() != spec {
		t.Fatalf("re-parsed: %v, %v", again, err)
	}
	if (Options{Mode: "write", PartitionCount: 5, ClusteringRowSize: "64"}).Spec() != "sb:mode=write,partition-count=5,clustering-row-size=64" {
		t.Fatal("Options.Spec")
	}
	for spec, want := range map[string]string{
		"":                                                     "option mode: required",
		"mode=delete":                                          `option mode: "delete" is not one of`,
		"mode=write,duration=10m":                              "option duration is not supported: the scenario's phases",
		"mode=write,max-rate=100":                              "option max-rate is not supported",
		"mode=write,frobnicate=1":                              "option frobnicate is not supported (supported: mode,",
		"mode=write,workload=timeseries":                       "option workload: timeseries is not supported",
		"mode=write,provide-upper-bound":                       "option provide-upper-bound makes sense only in the read modes",
		"mode=read,in-restriction,no-lower-bound":              "options in-restriction and no-lower-bound are mutually exclusive",
		"mode=write,clustering-row-size=uniform:10..5":         "option clustering-row-size: interval for uniform distribution is invalid",
		"mode=write,clustering-row-size=0":                     "option clustering-row-size: value for fixed distribution is invalid",
		"mode=write,clustering-row-size=normal:5":              "unsupported distribution: normal",
		"mode=write,validate-data,clustering-row-size=fixed:0": "validate-data needs rows of at least 1 byte",
		"mode=scan,partition-offset=5":                         "option partition-offset: is not supported by the 'scan' workload",
		"mode=scan,workload=uniform":                           "option workload: cannot be given with mode=scan",
		"mode=read,select-order-by=sideways":                   `select-order-by[0] "sideways"`,
		"mode=write,partition-count=x":                         "option partition-count=x: not an integer",
		"mode=write,rows-per-request=0":                        "", // 0 is the default
		"mode=write,rows-per-request=-1":                       "option rows-per-request: -1 must be at least 1",
		"mode=write,consistency-level=most":                    `option consistency-level: unknown consistency level "most"`,
		"mode=write,keyspace=a-b":                              `option keyspace: "a-b" is not a valid CQL identifier`,
		"mode=write,partition-count":                           "option partition-count needs a value",
		"mode=counter_update,rows-per-request=2":               "option rows-per-request: counter_update and scan",
		"mode=write,range-count=4":                             "option range-count: makes sense only in scan mode",
	} {
		_, err := stress.ParseModel("sb:" + spec)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", spec, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want %q", spec, err, want)
		}
	}
}

// The sequential workload visits rows in pk, ck order, a request never
// crossing a partition's end, wrapping after the last partition.
func TestSequentialRows(t *testing.T) {
	m := mustParse(t, "mode=write,workload=sequential,partition-count=2,partition-offset=10,clustering-row-count=5,rows-per-request=3")
	p, err := m.newPicker(stress.Binding{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	cks := make([]int64, 3)
	for i := 0; i < 5; i++ {
		pk, n := p.pick(0, cks)
		got = append(got, fmt.Sprintf("%d:%d+%d", pk, cks[0], n))
	}
	if s := strings.Join(got, " "); s != "10:0+3 10:3+2 11:0+3 11:3+2 10:0+3" {
		t.Fatalf("sequential rows %s", s)
	}
}

// The values are scylla-bench's (modes.go GenerateData): small, medium and
// full layouts validate, and a flipped byte does not.
func TestValuesMirrorScyllaBench(t *testing.T) {
	var scratch []byte
	for _, size := range []int{1, 2, 8, 23, 24, 40, 56, 57, 64, 1000} {
		buf := make([]byte, size)
		generateData(buf, 42, 7, true, false)
		if err := validateData(42, 7, buf, &scratch); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if err := validateData(42, 8, buf, &scratch); err == nil && size > 1 {
			t.Errorf("size %d: row (42, 7)'s value passes as (42, 8)'s", size)
		}
		buf[size-1] ^= 0x40
		if err := validateData(42, 7, buf, &scratch); err == nil {
			t.Errorf("size %d: a flipped byte passes", size)
		}
	}
	// The full layout: size, pk, ck little-endian, CRC32C of the payload last.
	buf := make([]byte, 64)
	generateData(buf, 1, 2, true, false)
	if buf[0] != 64 || buf[8] != 1 || buf[16] != 2 {
		t.Fatalf("header % x", buf[:24])
	}
	// Without validate-data the value is fillPayload's, never all zeros; with no-random-data all zeros.
	small := make([]byte, 3)
	generateData(small, 0, 0, false, false)
	if small[0] == 0 && small[1] == 0 && small[2] == 0 {
		t.Fatal("random data is all zeros")
	}
	generateData(small, 5, 6, false, true)
	if small[0] != 0 || small[1] != 0 || small[2] != 0 {
		t.Fatal("no-random-data is not zeros")
	}
}

// The fill writes a partition's rows in batches under 64 KiB, or one by
// one when a row alone is larger; either way validation finds them whole.
func TestFillRequests(t *testing.T) {
	for spec, per := range map[string]int64{
		"mode=write,clustering-row-count=3,clustering-row-size=70000":      1,
		"mode=write,clustering-row-count=1000,clustering-row-size=fixed:4": fillBatchRows,
		"mode=write,clustering-row-count=300,clustering-row-size=1024":     64,
		"mode=counter_update,clustering-row-count=30":                      30,
	} {
		m := mustParse(t, spec)
		if got := m.fillRowsPerRequest(); got != per {
			t.Errorf("%s: %d rows a fill request, want %d", spec, got, per)
		}
	}
	s := node(t)
	m := mustParse(t, "mode=write,clustering-row-count=3,clustering-row-size=70000,validate-data")
	prepare(t, s, m, 5)
	if v := validate(t, s, m, 5, nil); v.Lost() != 0 || v.ScannedRows != 5 || v.SampleKeys != 5 {
		t.Fatalf("validation: %+v", v)
	}
}

// Two loaders of a sequential workload visit their own partitions, as SCT
// runs scylla-bench with a -partition-offset per loader, and cover them once.
func TestLoadersSplitSequentialPartitions(t *testing.T) {
	m := mustParse(t, "mode=write,workload=sequential,partition-count=5,partition-offset=10,clustering-row-count=1,rows-per-request=1")
	var all []int64
	for i, ops := range []int{2, 3} {
		p, err := m.newPicker(stress.Binding{Loader: i, Loaders: 2})
		if err != nil {
			t.Fatal(err)
		}
		cks := make([]int64, 1)
		for range ops {
			pk, _ := p.pick(0, cks)
			all = append(all, pk)
		}
	}
	slices.Sort(all)
	if !slices.Equal(all, []int64{10, 11, 12, 13, 14}) {
		t.Fatalf("two loaders wrote partitions %v, want 10..14 once", all)
	}
}
