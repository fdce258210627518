package profile

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// timeseries is the shipped time-series profile (configs/).
const timeseries = "../../configs/profiles/sensor-readings.yaml"

func load(t testing.TB, path, ops string) *Model {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(filepath.Base(path), data, ops)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTimeseriesProfile(t *testing.T) {
	m := load(t, timeseries, "ops(insert=2,latest=3,slice=1)")
	ops := m.Ops()
	want := []stress.OpSpec{{Name: "insert", Class: results.OpWrite, Weight: 2}, {Name: "latest", Class: results.OpRead, Weight: 3},
		{Name: "slice", Class: results.OpRead, Weight: 1}}
	if len(ops) != len(want) {
		t.Fatalf("ops %+v", ops)
	}
	for i, o := range ops {
		if o.Name != want[i].Name || o.Class != want[i].Class || o.Weight != want[i].Weight {
			t.Errorf("op %d = %+v, want %+v", i, o, want[i])
		}
	}
	stmts, err := m.Schema(stress.SchemaTarget{DC: "dc1", RF: 3, Tablets: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 2 || !strings.Contains(stmts[0], "'dc1': 3") || !strings.Contains(stmts[0], "'initial': 16") ||
		!strings.HasPrefix(stmts[1], "CREATE TABLE IF NOT EXISTS sensors.readings") {
		t.Fatalf("schema %q", stmts)
	}
	for _, s := range stmts {
		if _, _, err := cqlparse.Parse(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	q := m.ops[1].query
	if q.CQL != "SELECT ts, temperature, humidity, status FROM sensors.readings WHERE sensor_id = ? AND day = ? LIMIT 10" {
		t.Errorf("qualified query %q", q.CQL)
	}
	if info := m.Describe(); info.Keyspace != "sensors" || info.Table != "readings" || len(info.Notes) < 3 {
		t.Errorf("describe %+v", info)
	}
}

// The spec carries the whole profile: parsing it gives the same model.
func TestSpecRoundTrip(t *testing.T) {
	data, err := os.ReadFile(timeseries)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec("sensor-readings.yaml", data, "insert=1,latest=2")
	if strings.ContainsAny(strings.TrimPrefix(spec, "profile:"), " '\"$`\\;&|<>*?()\n") {
		t.Fatalf("spec is not shell-safe: %s", spec)
	}
	m, err := stress.ParseModel(spec)
	if err != nil {
		t.Fatal(err)
	}
	if m.Spec() != spec || m.Describe().Kind != "profile sensor-readings.yaml" || len(m.Ops()) != 2 {
		t.Fatalf("round trip: %+v", m.Describe())
	}
	if _, err := stress.ParseModel("profile:!!"); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Errorf("bad spec: %v", err)
	}
}

func TestTestdataProfiles(t *testing.T) {
	m := load(t, "testdata/alltypes.yaml", "insert=1,row=1,partition=1,touch=1")
	stmts, err := m.Schema(stress.SchemaTarget{DC: "dc1", RF: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CREATE KEYSPACE IF NOT EXISTS types_ks", "CREATE TABLE IF NOT EXISTS types_ks.everything",
		"CREATE INDEX IF NOT EXISTS everything_by_double ON types_ks.everything (v_double)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS types_ks.everything_by_int AS SELECT k1, k2, c1, c2, v_tinyint FROM types_ks.everything WHERE"}
	for i, w := range want {
		if i >= len(stmts) || !strings.HasPrefix(stmts[i], w) {
			t.Errorf("statement %d: got %q, want prefix %q", i, stmts[i], w)
		}
	}
	if got := m.Ops()[3].Class; got != results.OpWrite {
		t.Errorf("an UPDATE query is a %s, want write", got)
	}
	cas := load(t, "testdata/alltypes.yaml", "cas=1").ops[0].query
	var bound []string
	for _, b := range cas.binders {
		bound = append(bound, b.col.name)
	}
	if strings.Join(bound, ",") != "v_varchar,k1,k2,c1,c2,v_double" || !cas.write {
		t.Errorf("an LWT update binds %v (write %v)", bound, cas.write)
	}
	c := load(t, "testdata/counters.yaml", "insert=1,page=1")
	cql, _ := c.prof.insertCQL(c.prof.table.regular)
	if cql != "UPDATE counters_ks.hits SET views = views + ?, clicks = clicks + ? WHERE page = ? AND day = ?" {
		t.Errorf("counter insert %q", cql)
	}
}

func TestProfileErrors(t *testing.T) {
	base, err := os.ReadFile(timeseries)
	if err != nil {
		t.Fatal(err)
	}
	// The shipped profile without its token_range_queries, which cases add.
	noScan := strings.TrimRight(string(base)[:strings.Index(string(base), "\ntoken_range_queries:")], "\n") + "\n"
	cases := []struct {
		name, yaml, ops, want string
	}{
		{"yaml", "keyspace: a\ntable: [b\n", "insert=1", "line 1: invalid YAML"},
		{"unknown field", "keyspace: a\ntables: b\n", "insert=1", "line 2: tables: unknown profile field"},
		{"missing table", "keyspace: a\n", "insert=1", "table: missing"},
		{"bad dist", strings.Replace(string(base), "uniform(50..150)", "uniform(50..)", 1), "insert=1", "line 34: columnspec[2].cluster"},
		{"unknown dist", strings.Replace(string(base), "uniform(50..150)", "zipf(1..5)", 1), "insert=1", `unknown distribution type "zipf"`},
		{"bad table cql", strings.Replace(string(base), "PRIMARY KEY ((sensor_id, day), ts)", "PRIMARY KEY ((sensor_id, day), ts", 1), "insert=1", "line 23: table_definition: CQL does not parse"},
		{"bad query cql", strings.Replace(string(base), "LIMIT 10", "LIMIT", 1), "insert=1", "line 58: queries.latest.cql: CQL does not parse"},
		{"query column", strings.Replace(string(base), "day = ? LIMIT", "dya = ? LIMIT", 1), "insert=1", "which table readings does not have"},
		{"batchtype", strings.Replace(string(base), "batchtype: UNLOGGED", "batchtype: SOMETIMES", 1), "insert=1", "insert.batchtype"},
		{"insert option", strings.Replace(string(base), "batchtype: UNLOGGED", "pertype: x", 1), "insert=1", "unrecognised insert option"},
		{"fields", strings.Replace(string(base), "fields: samerow", "fields: somerow", 1), "insert=1", "queries.latest.fields"},
		{"type", strings.Replace(string(base), "payload blob,", "payload tuple<int, int>,", 1), "insert=1", "tuple<int, int> is not supported"},
		{"ops name", string(base), "insert=1,read1=2", "unknown operation read1 (the profile has: insert, latest, slice, scan)"},
		{"ops weight", string(base), "insert=x", "weight of insert"},
		{"keyspace name", strings.Replace(string(base), "CREATE TABLE readings", "CREATE TABLE other.readings", 1), "insert=1", `keyspace "other"`},
		{"limit marker", strings.Replace(string(base), "LIMIT 10", "LIMIT ?", 1), "insert=1", "line 58: queries.latest.cql: a LIMIT marker cannot be bound from the profile's columns (cassandra-stress cannot either"},
		{"in marker", strings.Replace(string(base), "ts >= ? AND ts <= ?", "ts IN ?", 1), "insert=1", "bind marker 3 is not compared with or assigned to a column"},
		{"token range columns", noScan + "token_range_queries:\n  scan:\n    page_size: 10\n", "scan=1", "line 64: token_range_queries.scan.columns: is required"},
		{"token range page", noScan + "token_range_queries:\n  scan:\n    columns: ts\n    page_size: many\n", "scan=1", "line 66: token_range_queries.scan.page_size"},
		{"token range field", noScan + "token_range_queries:\n  scan:\n    columns: ts\n    wrap: true\n", "scan=1", "line 66: token_range_queries.scan.wrap: unknown field"},
		{"token range cql", noScan + "token_range_queries:\n  scan:\n    columns: ts,,\n", "scan=1", "line 65: token_range_queries.scan.columns: columns \"ts,,\": CQL does not parse"},
		{"token range name", noScan + "token_range_queries:\n  latest:\n    columns: ts\n", "insert=1", "latest is in both queries and token_range_queries"},
	}
	for _, c := range cases {
		_, err := Load("p.yaml", []byte(c.yaml), c.ops)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// What cassandra-stress accepts and ignores is accepted with a note.
func TestIgnoredWithNotes(t *testing.T) {
	base, err := os.ReadFile(timeseries)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(base), "name: payload", "name: paylod", 1)
	y = strings.Replace(y, "queries:\n", "queries:\n  insert:\n    cql: SELECT * FROM readings WHERE sensor_id = ? AND day = ?\n", 1)
	m, err := Load("p.yaml", []byte(y), "insert=1,latest=1")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(m.Describe().Notes, "\n")
	for _, want := range []string{`columnspec of "paylod" ignored`, "query insert is shadowed"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{{0, "00"}, {1, "01"}, {127, "7f"}, {128, "0080"}, {-1, "ff"}, {-128, "80"}, {-129, "ff7f"}, {1 << 40, "010000000000"}} {
		if got := strings.TrimSpace(hexOf(appendVarint(nil, c.v))); got != c.want {
			t.Errorf("varint %d = %s, want %s", c.v, got, c.want)
		}
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&15])
	}
	return string(out)
}

// A user command line's options travel in the spec and back; without them
// the spec is ProfileSpec's, byte for byte.
func TestUserOptionsRoundTrip(t *testing.T) {
	yaml, err := os.ReadFile("testdata/keyvalue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := stress.ProfileOptions{CL: "LOCAL_QUORUM", Rate: 250, Threads: 8, Insert: "partitions=fixed(2) batchtype=UNLOGGED"}
	spec := stress.ProfileSpecWith("kv.yaml", yaml, "insert=1,read=1", opts)
	m, err := stress.ParseModel(spec)
	if err != nil {
		t.Fatal(err)
	}
	if m.Spec() != spec {
		t.Fatal("the spec does not round-trip")
	}
	rs := m.(stress.RateSetter)
	if r, ok := rs.Rate(); !ok || r != 250 || rs.Threads() != 8 || m.Ops()[1].CL != gocql.LocalQuorum {
		t.Fatalf("rate %v %v threads %d ops %+v", r, ok, rs.Threads(), m.Ops())
	}
	if stress.ProfileSpecWith("kv.yaml", yaml, "insert=1", stress.ProfileOptions{}) != stress.ProfileSpec("kv.yaml", yaml, "insert=1") {
		t.Fatal("a spec without options changed")
	}
	for _, bad := range []stress.ProfileOptions{{Insert: "partitions=fixed(0)"}, {Insert: "visits=fixed(2)"}, {Insert: "cl=ONE"}, {CL: "SERIAL"}} {
		if _, err := stress.ParseModel(stress.ProfileSpecWith("kv.yaml", yaml, "insert=1", bad)); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The loaders of one job scan their own token ranges and the ring once
// between them; one loader alone scans every range.
func TestLoaderRangesSplitTheRing(t *testing.T) {
	ring := ringRanges([]int64{-300, -100, 0, 100, 200})
	if got := loaderRanges(ring, 0, 1); !slices.Equal(got, ring) {
		t.Fatalf("alone: %v, want %v", got, ring)
	}
	for _, n := range []int{2, 3, len(ring)} {
		var all []tokenRange
		for i := range n {
			all = append(all, loaderRanges(ring, i, n)...)
		}
		slices.SortFunc(all, func(a, b tokenRange) int { return cmp.Compare(a.start, b.start) })
		if !slices.Equal(all, ring) {
			t.Fatalf("%d loaders scan %v, the ring is %v", n, all, ring)
		}
	}
	if got := loaderRanges(ring[:2], 3, 4); len(got) != 1 || got[0] != ring[1] {
		t.Fatalf("loader 3 of 4 over 2 ranges: %v", got)
	}
}

// A counter table's rows cannot be partial (a null increment is refused),
// from the profile's insert or a user line's -insert.
func TestRowPopulationOfCounters(t *testing.T) {
	data, err := os.ReadFile("testdata/counters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	partial := strings.Replace(string(data), "batchtype: COUNTER", "batchtype: COUNTER\n  row-population: uniform(1..2)/2", 1)
	if _, err := Load("counters.yaml", []byte(partial), "insert=1"); err == nil || !strings.Contains(err.Error(), "line 17: insert.row-population: uniform(1..2)/2: a counter table's rows are written whole") {
		t.Errorf("partial counter rows: %v", err)
	}
	_, err = LoadWith("counters.yaml", data, "insert=1", stress.ProfileOptions{Insert: "row-population-ratio=fixed(1)/3"})
	if err == nil || !strings.Contains(err.Error(), "-insert row-population-ratio=fixed(1)/3: fixed(1)/3: a counter table's rows are written whole") {
		t.Errorf("-insert row-population-ratio on counters: %v", err)
	}
	if _, err := Load("counters.yaml", []byte(strings.Replace(partial, "uniform(1..2)/2", "fixed(2)/2", 1)), "insert=1"); err != nil {
		t.Errorf("whole counter rows: %v", err)
	}
}
