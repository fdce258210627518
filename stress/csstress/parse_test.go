package csstress

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// The acceptance line.
const acceptanceLine = "cassandra-stress mixed ratio(write=1,read=2) duration=10m cl=QUORUM -rate threads=50 fixed=150/s -col size=FIXED(512) n=FIXED(1) -pop dist=UNIFORM(1..20000)"

// Real command lines, from scylla-cluster-tests' test-cases/ (quoted as SCT quotes them).
func TestParseRealLines(t *testing.T) {
	for _, c := range []struct {
		line    string
		ops     string // name:weight ...
		cl      gocql.Consistency
		threads int
		rate    float64
		cols    int
		pop     string // kind min max
		schema  string // a fragment of the schema
	}{
		{acceptanceLine, "write:1 read:2", gocql.Quorum, 50, 150, 1, "uniform 1 20000", `"C0" blob`},
		{`cassandra-stress write cl=QUORUM n=275050075 -schema 'replication(factor=3) compaction(strategy=LeveledCompactionStrategy)' -mode cql3 native -rate threads=150 -col 'size=FIXED(200) n=FIXED(25)' -pop seq=550100151..825150225`,
			"write:1", gocql.Quorum, 150, 0, 25, "seq 550100151 825150225", `'dc1': 3} AND durable_writes = true`},
		{`cassandra-stress mixed no-warmup cl=QUORUM duration=420m -schema 'replication(strategy=NetworkTopologyStrategy,replication_factor=3)' -mode cql3 native -rate 'threads=100 fixed=30000/s' -col 'size=FIXED(128) n=FIXED(8)' -pop 'dist=gauss(1..720000000,360000000,7200000)'`,
			"write:1 read:1", gocql.Quorum, 100, 30000, 8, "gaussian 1 720000000", `'dc1': 3}`},
		{`cassandra-stress read cl=QUORUM duration=5760m -schema 'keyspace=keyspace_deflate replication(strategy=NetworkTopologyStrategy,replication_factor=3) compression=DeflateCompressor compaction(strategy=IncrementalCompactionStrategy)' -mode cql3 native compression=none -rate threads=20 -pop seq=1..100000000 -log interval=5`,
			"read:1", gocql.Quorum, 20, 0, 5, "seq 1 100000000", `"keyspace_deflate"."standard1" (key blob PRIMARY KEY, "C0" blob, "C1" blob, "C2" blob, "C3" blob, "C4" blob) WITH compression = {'sstable_compression': 'DeflateCompressor'} AND compaction = {'class': 'IncrementalCompactionStrategy'}`},
		{`cassandra-stress write cl=ONE n=900000000 -schema 'replication(strategy=NetworkTopologyStrategy,replication_factor=3)' -mode connectionsPerHost=8 cql3 native -rate threads=300 -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=900000001..1800000000`,
			"write:1", gocql.One, 300, 0, 1, "seq 900000001 1800000000", `WITH compression = {}`},
		{`cassandra-stress mixed cl=QUORUM duration=800m -schema 'replication(strategy=NetworkTopologyStrategy,replication_factor=3)' -port jmx=6868 -mode cql3 native -rate 'threads=50 throttle=3500/s' -col 'size=FIXED(128) n=FIXED(8)' -pop 'dist=gauss(1..250000000,125000000,12500000)'`,
			"write:1 read:1", gocql.Quorum, 50, 3500, 8, "gaussian 1 250000000", ""},
		{`cassandra-stress read  cl=QUORUM duration=360m -schema 'replication(strategy=NetworkTopologyStrategy,replication_factor=3) compaction(strategy=SizeTieredCompactionStrategy)' -mode cql3 native -rate threads=30 -pop 'dist=uniform(1..20971520)' -col 'n=FIXED(10) size=FIXED(512)' -log interval=5`,
			"read:1", gocql.Quorum, 30, 0, 10, "uniform 1 20971520", `'class': 'SizeTieredCompactionStrategy'`},
		{`cassandra-stress read no-warmup cl=ALL n=200M -schema 'replication(strategy=NetworkTopologyStrategy,replication_factor=3)' -mode cql3 native -rate threads=3000 -col 'size=FIXED(128) n=FIXED(8)' -pop seq=601M..800M `,
			"read:1", gocql.All, 3000, 0, 8, "seq 601000000 800000000", ""},
		{`cassandra-stress mixed 'ratio(write=1,read=9)' cl=QUORUM duration=420m -schema 'replication(strategy=NetworkTopologyStrategy,replication_factor=3)' -mode connectionsPerHost=8 cql3 native -rate threads=50 -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=1..1800000000`,
			"write:1 read:9", gocql.Quorum, 50, 0, 1, "seq 1 1800000000", ""},
		{`cassandra-stress counter_write cl=QUORUM duration=30m -mode cql3 native -rate threads=20 -pop seq=1..10000 -errors ignore`,
			"counter_write:1", gocql.Quorum, 20, 0, 5, "seq 1 10000", `"C4" counter`},
		{`cassandra-stress counter_read cl=ONE duration=30m -rate threads=20`,
			"counter_read:1", gocql.One, 20, 0, 5, "", `CREATE TABLE IF NOT EXISTS "keyspace1"."counter1"`},
		{`cassandra-stress mixed ratio(counter_write=1,counter_read=1) -col names=a,b`,
			"counter_write:1 counter_read:1", gocql.LocalOne, 0, 0, 2, "", `"a" counter, "b" counter`},
		{`cassandra-stress write -node 10.0.0.1,10.0.0.2 -mode native cql3 user=cassandra password=cassandra -col size=UNIFORM(10..100) n=FIXED(3) -pop dist=EXP(1..1000000)`,
			"write:1", gocql.LocalOne, 0, 0, 3, "exp 1 1000000", ""},
	} {
		m, err := Parse(c.line)
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		var ops []string
		for _, o := range m.Ops() {
			ops = append(ops, o.Name+":"+strings.TrimRight(strings.TrimRight(fmtFloat(o.Weight), "0"), "."))
			if o.CL != c.cl {
				t.Errorf("%s: %s CL %v, want %v", c.line, o.Name, o.CL, c.cl)
			}
		}
		if got := strings.Join(ops, " "); got != c.ops {
			t.Errorf("%s: ops %q, want %q", c.line, got, c.ops)
		}
		rate, ok := m.Rate()
		if m.Threads() != c.threads || rate != c.rate || ok != (c.rate > 0) {
			t.Errorf("%s: threads %d rate %v %v, want %d %v", c.line, m.Threads(), rate, ok, c.threads, c.rate)
		}
		if len(m.s.colNames) != c.cols {
			t.Errorf("%s: %d columns, want %d", c.line, len(m.s.colNames), c.cols)
		}
		pop := ""
		if m.s.pop.given {
			lo, hi := m.s.pop.dist.Bounds()
			pop = m.s.pop.dist.Kind() + " " + itoa(lo) + " " + itoa(hi)
		}
		if pop != c.pop {
			t.Errorf("%s: pop %q, want %q", c.line, pop, c.pop)
		}
		sch, err := m.Schema(stress.SchemaTarget{DC: "dc1", RF: 3})
		if err != nil {
			t.Errorf("%s: schema: %v", c.line, err)
		} else if !strings.Contains(strings.Join(sch, "\n"), c.schema) {
			t.Errorf("%s: schema lacks %q:\n%s", c.line, c.schema, strings.Join(sch, "\n"))
		}
		// The spec is self-contained: it parses to the same model.
		m2, err := stress.ParseModel(m.Spec())
		if err != nil || m2.Spec() != m.Spec() || len(m2.Ops()) != len(m.Ops()) {
			t.Errorf("%s: spec %q does not parse back: %v", c.line, m.Spec(), err)
		}
	}
}

// Refused and malformed options are errors naming the option.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"cassandra-stress write -sendto 10.0.0.1", "option -sendto is not supported"},
		{"cassandra-stress write -graph file=g.html", "option -graph is not supported"},
		{"cassandra-stress write -transport truststore=/x", "option -transport is not supported"},
		{"cassandra-stress write -insert partitions=fixed(1)", "option -insert is not supported"},
		{"cassandra-stress write -frobnicate", "option -frobnicate is not supported"},
		{"cassandra-stress mixed ratio(write=1,scan=2)", `ratio(...): "scan=2" is invalid`},
		{"cassandra-stress mixed ratio(write=0,read=0)", "non-zero ratio"},
		{"cassandra-stress mixed clustering=GAUSSIAN(1..10)", "option clustering= is not supported"},
		{"cassandra-stress read cl=QUORM", `option cl=: "QUORM" is invalid`},
		{"cassandra-stress read duration=10d", `option duration=: "10d" is invalid`},
		{"cassandra-stress read err<0.02", "option err<0.02 is not supported"},
		{"cassandra-stress write truncate=always", "option truncate=always is not supported"},
		{"cassandra-stress write -rate threads=10 fixed=100", `option -rate fixed=: "100" is invalid`},
		{"cassandra-stress write -rate threads=10 fixed=100/s throttle=50/s", "fixed= or throttle=, not both"},
		{"cassandra-stress write -rate fixed=100/s", "threads=N"},
		{"cassandra-stress write -rate auto threads<=200", "option -rate auto is not supported"},
		{"cassandra-stress write -pop seq=1..x", `option -pop seq=: "1..x" is invalid`},
		{"cassandra-stress write -pop dist=ZIPF(1..10)", `unknown distribution type "ZIPF"`},
		{"cassandra-stress write -pop dist=GAUSSIAN(10..1)", "min above max"},
		{"cassandra-stress write -pop seq=1..100 no-wrap", "option -pop no-wrap is not supported"},
		{"cassandra-stress write -pop dist=UNIFORM(1..100000000000000)", "keysize=10"},
		{"cassandra-stress write -col size=FIXED(x)", `option -col size=: "FIXED(x)" is invalid`},
		{"cassandra-stress write -col n=FIXED(2) names=a,b", "n= or names=, not both"},
		{"cassandra-stress write -col slice", "option -col slice is not supported"},
		{"cassandra-stress write -schema replication(factor=x)", `replication(factor=): "x" is invalid`},
		{"cassandra-stress write -schema compaction(min_threshold=2)", "strategy=ClassName"},
		{"cassandra-stress write -schema storage(type=S3)", "option -schema storage(...) is not supported"},
		{"cassandra-stress write -mode thrift", "option -mode thrift is not supported"},
		{"cassandra-stress write -mode cql3 native unprepared", "option -mode unprepared is not supported"},
		{"cassandra-stress write -errors retries=3", "option -errors retries=3 is not supported"},
		{"cassandra-stress write -log file=x hdrfile=y level=loud", `option -log level=: "loud" is invalid`},
		{"cassandra-stress write -rate threads=1 -rate threads=2", "-rate is given twice"},
		{"cassandra-stress legacy", `command "legacy" is not supported`},
		{"cassandra-stress", "no command"},
		{"cassandra-stress write -schema 'replication(factor=3)", "unterminated single quote"},
		{"cassandra-stress user profile=a.yaml", "ops(name=ratio"},
		{"cassandra-stress user profile=a.yaml ops(insert=1) -col n=FIXED(1)", "option -col is not supported"},
		{"cassandra-stress user profile=a.yaml ops(insert=1) -schema keyspace=x", "option -schema is not supported"},
	} {
		_, err := Parse(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.line, err, c.want)
		}
	}
}

// A user command is parsed and handed over: ParseUser gives the profile's
// path and ops, the cs form refuses to build it itself.
func TestUserHandOver(t *testing.T) {
	line := `cassandra-stress user no-warmup profile=/tmp/cdc_profile.yaml ops'(insert=2,read1=1,update_number=1)' cl=QUORUM duration=200m -mode cql3 native -rate 'threads=100 fixed=500/s' -insert partitions=fixed(1)`
	u, err := ParseUser(line)
	if err != nil {
		t.Fatal(err)
	}
	if u.Profile != "/tmp/cdc_profile.yaml" || u.Ops != "insert=2,read1=1,update_number=1" || u.CL != gocql.Quorum ||
		u.Threads != 100 || u.Rate != 500 || !u.RateGiven || u.Insert != "partitions=fixed(1)" || !IsUser(line) {
		t.Fatalf("%+v", u)
	}
	_, err = stress.ParseModel("cs:" + line)
	if !errors.Is(err, ErrUserCommand) || !strings.Contains(err.Error(), "profile=/tmp/cdc_profile.yaml") {
		t.Fatalf("cs form on a user command: %v", err)
	}
	if _, err := ParseUser(acceptanceLine); err == nil {
		t.Fatal("ParseUser accepted a mixed command")
	}
}

// Keys are distinct for distinct indexes (the permutation is a bijection)
// and written with HexBytes's digits.
func TestKeys(t *testing.T) {
	seen := map[string]int64{}
	buf := make([]byte, 2)
	for i := int64(0); i <= maxIndex(2); i++ {
		putKey(buf, i)
		if j, dup := seen[string(buf)]; dup {
			t.Fatalf("indexes %d and %d share key %q", j, i, buf)
		}
		seen[string(buf)] = i
		for _, c := range buf {
			if !(c >= '0' && c <= '9' || c >= 'K' && c <= 'P') {
				t.Fatalf("key %q has a digit outside HexBytes's 0-9, K-P", buf)
			}
		}
	}
	if len(seen) != 256 {
		t.Fatalf("%d keys", len(seen))
	}
	// indexOf inverts putKey (validation's scans map keys back to rows).
	for _, ks := range []int{1, 2, 10, 16, 20} {
		kb := make([]byte, ks)
		for _, i := range []int64{0, 1, 2, 15, 12345, 1 << 39, maxIndex(ks)} {
			i = min(i, maxIndex(ks))
			putKey(kb, i)
			if got, ok := indexOf(kb, ks); !ok || got != i {
				t.Fatalf("keysize %d: index %d -> %q -> %d %v", ks, i, kb, got, ok)
			}
		}
	}
	if _, ok := indexOf([]byte("0123ABCDEF"), 10); ok {
		t.Fatal("a key with digits A-J decoded")
	}
}

// The per-operation code (key choice, key bytes, cell values) allocates nothing.
func TestNoAllocationsPerOperation(t *testing.T) {
	m, err := Parse(acceptanceLine)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := m.newPicker(stress.Binding{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	vals := newCells(m.s.size)
	kb := make([]byte, m.s.keysize)
	seq := uint64(0)
	n := testing.AllocsPerRun(1000, func() {
		seq++
		idx := pk.index(seq, seq%3 == 0)
		putKey(kb, idx)
		_ = vals.value(idx, 0)
	})
	if n != 0 {
		t.Fatalf("%.1f allocations per operation", n)
	}
}

// Parse never panics, whatever the line; a parsed model's Schema and
// distributions do not either.
func FuzzParse(f *testing.F) {
	for _, s := range []string{acceptanceLine, "write -pop dist=EXP(1..2)", "mixed ratio(", "mixed ratio()", "read -col size=GAUSSIAN(0..9223372036854775807) -pop dist=~EXTREME(1..10,0.0001)",
		"counter_write add=UNIFORM(-9223372036854775808..9223372036854775807)", "user profile=x ops(", `write -schema "replication(factor=3"`, "write keysize=1 -pop seq=1..15"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := Parse(line)
		if err != nil {
			return
		}
		if _, err := m.Schema(stress.SchemaTarget{DC: "dc1", RF: 3}); err != nil {
			return
		}
		for i := uint64(0); i < 20; i++ {
			_ = m.s.size.Sample(i)
			_ = m.s.add.Sample(i)
			if m.s.pop.given {
				p := m.s.pop.dist
				_ = p.Sample(i)
			}
		}
		_ = m.Describe()
	})
}

// Counters get a keyspace without tablets even when the scenario asks for them.
func TestCounterSchemaWithoutTablets(t *testing.T) {
	m, err := Parse("cassandra-stress counter_write -rate threads=4")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := m.Schema(stress.SchemaTarget{DC: "dc1", RF: 3, Tablets: 32})
	if err != nil || !strings.HasSuffix(sch[0], "AND tablets = {'enabled': false}") || len(sch) != 3 {
		t.Fatalf("%v %q", err, sch)
	}
	w, _ := Parse("cassandra-stress write -rate threads=4")
	sch, _ = w.Schema(stress.SchemaTarget{DC: "dc1", RF: 3, Tablets: 32})
	if !strings.HasSuffix(sch[0], "AND tablets = {'initial': 32}") || len(sch) != 2 {
		t.Fatalf("%q", sch)
	}
}

// Two loaders sharing a line with -pop seq= each walk their own part of
// the range, as SCT splits it between its loaders, and cover it once;
// with a random -pop they draw different indexes.
func TestLoadersSplitThePopulation(t *testing.T) {
	m, err := Parse("write -pop seq=1..11")
	if err != nil {
		t.Fatal(err)
	}
	var all []int64
	for i, ops := range []int{5, 6} {
		pk, err := m.newPicker(stress.Binding{Loader: i, Loaders: 2})
		if err != nil {
			t.Fatal(err)
		}
		for seq := range uint64(ops) {
			all = append(all, pk.index(keygen.GlobalSeq(seq, i, 2), true))
		}
	}
	slices.Sort(all)
	for k, idx := range all {
		if idx != int64(k+1) {
			t.Fatalf("two loaders of -pop seq=1..11 wrote %v, want each of 1..11 once", all)
		}
	}
	m, err = Parse("write -pop dist=UNIFORM(1..1000000)")
	if err != nil {
		t.Fatal(err)
	}
	draws := func(i, n int) []int64 {
		pk, err := m.newPicker(stress.Binding{Loader: i, Loaders: n})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for seq := range uint64(8) {
			got = append(got, pk.index(keygen.GlobalSeq(seq, i, n), true))
		}
		return got
	}
	if a, b := draws(0, 2), draws(1, 2); slices.Equal(a, b) {
		t.Fatalf("both loaders drew %v", a)
	}
	if a, b := draws(0, 1), draws(0, 0); !slices.Equal(a, b) {
		t.Fatalf("a loader alone drew %v, unshared %v", a, b)
	}
}
