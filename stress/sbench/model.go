// Package sbench is scylla-bench's modes as a workload model (form "sb"):
// its keyspace scylla_bench with the table test (pk bigint, ck bigint,
// v blob) or test_counters, its write, read (and its read variants),
// counter_update, counter_read, scan and mixed modes, its options, and its
// values (modes.go GenerateData: with validate-data self-checking, so reads
// verify what they read). The spec text is the options, comma-separated:
//
//	sb:mode=write,partition-count=10000,clustering-row-count=100,clustering-row-size=uniform:64..128,validate-data
//
// A key of the model is a partition: key k is pk partition-offset+k with
// its clustering-row-count rows (ck 0..n-1), as scylla-bench's sequential
// workload writes them; a fill writes them in that order (in batches of up
// to 64 KiB: fillRowsPerRequest), and data
// validation reads a key's partition back and regenerates every row.
//
// Mirrored from github.com/scylladb/scylla-bench: main.go (flags,
// PrepareDatabase, GetMode), modes.go (the modes, GenerateData,
// ValidateData, BuildReadQueryString), random/random.go (distributions),
// pkg/workloads/workloads.go (SequentialVisitAll, RandomUniform, RangeScan).
package sbench

import (
	"fmt"
	"strings"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// Form is the model's spec form: "sb:<options>".
const Form = "sb"

func init() {
	stress.RegisterModel(Form, func(text string) (stress.Model, error) { return Parse(text) })
}

// Model is one scylla-bench mode with its options.
type Model struct {
	given Options // as given: the spec
	o     Options // checked, defaults filled
	size  sizeDist
	cl    gocql.Consistency
}

// Parse builds the model of spec text (see the package comment).
func Parse(text string) (*Model, error) {
	o, err := ParseOptions(text)
	if err != nil {
		return nil, err
	}
	return New(o)
}

// New checks o and builds its model.
func New(o Options) (*Model, error) {
	n, err := o.check()
	if err != nil {
		return nil, err
	}
	m := &Model{given: o, o: n}
	m.size, _ = parseSizeDist(n.ClusteringRowSize, n.ValidateData) // checked
	m.cl, _ = parseCL(n.ConsistencyLevel)
	return m, nil
}

// Options are the model's options, defaults filled in.
func (m *Model) Options() Options { return m.o }

// Spec implements stress.Model.
func (m *Model) Spec() string { return m.given.Spec() }

// counters says whether the mode uses the counter table.
func (m *Model) counters() bool {
	return m.o.Mode == ModeCounterUpdate || m.o.Mode == ModeCounterRead
}

// table is the table the mode addresses (PrepareDatabase's choice).
func (m *Model) table() string {
	if m.counters() {
		return counterTable
	}
	return m.o.Table
}

// Describe implements stress.Model.
func (m *Model) Describe() stress.ModelInfo {
	o := m.o
	notes := []string{
		fmt.Sprintf("%d clustering rows of %s per partition (key k is pk %d+k), %d per request", o.ClusteringRowCount, m.size, o.PartitionOffset, o.RowsPerRequest),
		m.populationNote(),
	}
	switch {
	case m.counters():
		notes = append(notes, "counters: every update adds ck, ck+1 ... ck+4 to c1..c5, which validation checks (modes.go)",
			"counters: the keyspace is created with tablets disabled when the scenario asks for tablets (ScyllaDB before 2026.1 refuses counters with tablets)")
	case o.ValidateData:
		notes = append(notes, "validate-data: values carry their size, pk, ck and a CRC32C; reads check every row they read (a corrupt row fails the read)")
	}
	if v := m.readVariant(); v != "" {
		notes = append(notes, "reads: "+v)
	}
	if o.Mode == ModeScan {
		notes = append(notes, fmt.Sprintf("scan: the ring in %d token ranges, one per operation, in order", o.RangeCount))
	}
	notes = append(notes, "data validation reads back each key's partition and regenerates its rows",
		fmt.Sprintf("the mode, consistency-level (%s) and clustering-row-size stand for the scenario's mix, consistency and value size", strings.ToUpper(o.ConsistencyLevel)))
	return stress.ModelInfo{Kind: "scylla-bench " + o.Mode, Keyspace: o.Keyspace, Table: m.table(), Ops: m.Ops(),
		KeyUnit: stress.UnitPartition, Notes: notes}
}

func (m *Model) populationNote() string {
	o := m.o
	keys := "scylla-bench's default 10000 without a fill"
	if o.PartitionCount > 0 {
		return fmt.Sprintf("operations address partitions %d..%d (partition-count %d); the fill writes partitions until the disk target", o.PartitionOffset, o.PartitionOffset+o.PartitionCount-1, o.PartitionCount)
	}
	return "operations address the partitions the fill wrote (" + keys + "); the fill writes partitions until the disk target"
}

// readVariant describes the read query (modes.go BuildReadQueryString).
func (m *Model) readVariant() string {
	o := m.o
	if o.Mode != ModeRead && o.Mode != ModeCounterRead && o.Mode != ModeMixed {
		return ""
	}
	var v string
	switch {
	case o.InRestriction:
		v = fmt.Sprintf("ck IN (%d keys)", o.RowsPerRequest)
	case o.ProvideUpperBound:
		v = fmt.Sprintf("ck >= ? AND ck < ?+%d", o.RowsPerRequest)
	case o.NoLowerBound:
		v = fmt.Sprintf("no lower bound, LIMIT %d", o.RowsPerRequest)
	default:
		v = fmt.Sprintf("ck >= ? LIMIT %d", o.RowsPerRequest)
	}
	if len(o.SelectOrderBy) > 1 || o.SelectOrderBy[0] != "none" {
		v += ", order by " + strings.Join(o.SelectOrderBy, "/")
	}
	if o.BypassCache {
		v += ", BYPASS CACHE"
	}
	return v
}

// Schema implements stress.Model: PrepareDatabase's keyspace and the
// mode's table, the keyspace with the scenario's DC, RF and tablets.
func (m *Model) Schema(t stress.SchemaTarget) ([]string, error) {
	if m.counters() && t.Tablets > 0 {
		t.Tablets = -1 // ScyllaDB before 2026.1 refuses counters with tablets (noted by Describe)
	}
	ks, err := stress.Schema{Keyspace: m.o.Keyspace, Table: m.o.Table, DC: t.DC, RF: t.RF, Tablets: t.Tablets}.Statements()
	if err != nil {
		return nil, err
	}
	// ks[0] is the keyspace; the table is scylla-bench's, not the built-in one.
	return []string{ks[0], m.tableCQL()}, nil
}

// tableCQL is PrepareDatabase's table (main.go), compression off as there.
func (m *Model) tableCQL() string {
	if m.counters() {
		return "CREATE TABLE IF NOT EXISTS " + m.o.Keyspace + "." + counterTable +
			" (pk bigint, ck bigint, c1 counter, c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY(pk, ck)) WITH compression = { }"
	}
	return "CREATE TABLE IF NOT EXISTS " + m.o.Keyspace + "." + m.o.Table + " (pk bigint, ck bigint, v blob, PRIMARY KEY(pk, ck)) WITH compression = { }"
}

// Ops implements stress.Model: the mode, named as scylla-bench names it;
// mixed is write and read at 1:1 (scylla-bench alternates them).
func (m *Model) Ops() []stress.OpSpec {
	op := func(name, class string) stress.OpSpec {
		return stress.OpSpec{Name: name, Class: class, Weight: 1, CL: m.cl}
	}
	switch m.o.Mode {
	case ModeWrite, ModeCounterUpdate:
		return []stress.OpSpec{op(m.o.Mode, results.OpWrite)}
	case ModeMixed:
		return []stress.OpSpec{op(ModeWrite, results.OpWrite), op(ModeRead, results.OpRead)}
	}
	return []stress.OpSpec{op(m.o.Mode, results.OpRead)}
}

// Regenerable implements stress.Model: every row follows from its pk and
// ck (counters from the invariant every update keeps).
func (m *Model) Regenerable() bool { return true }

var (
	_ stress.Model     = (*Model)(nil)
	_ stress.Validator = (*Model)(nil)
)
