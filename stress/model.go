package stress

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress/sched"
)

// A Model is a workload's data model and operations: the built-in
// key/value table, cassandra-stress's own tables driven by a command line
// (`stress_cmd`), a cassandra-stress user profile with its ops(...), or a
// scylla-bench mode. The engine is the same for all (package sched: the
// open-model schedule at the job's rate, HDR latencies per operation name,
// drops and errors counted); a model says what the schema is, which
// operations the mix draws from, and how one operation runs.
//
// A model travels to remote loaders as its Spec (the stress command's
// --model flag): ParseModel(m.Spec()) builds the same model anywhere, so a
// spec is self-contained (a profile's YAML included, not its path).
//
// How a spec travels: as one argument, --model=SPEC, of the loader's
// command (Job.Args). stress/fleet's SSH shell quotes every argument for sh
// ('...' with ' escaped), so any text passes as it is, newlines and quotes
// included: a form need not encode its text. Two limits, which
// Job.ResolveModel checks: no NUL byte, and at most MaxModelSpec bytes (Linux
// refuses an argument over 128 KiB). The built-in model's spec is "kv" alone:
// its settings are the job's own flags (Job.ResolveModel).
//
// Records: the scheduler names each latency record after its OpSpec.Name;
// the engine sets results.LatencyRecord.Class when the name is not the
// class, and results reduces a cycle's write and read figures by class.
type Model interface {
	// Spec is the model's encoding, "<form>:<form's own text>"; the
	// built-in key/value model is "kv".
	Spec() string
	// Describe is what `elasticity plan` and the report print about it:
	// the schema and the operations with their shares.
	Describe() ModelInfo
	// Schema is the CQL that creates what the operations use, in order
	// (keyspace first), each statement idempotent (IF NOT EXISTS).
	Schema(t SchemaTarget) ([]string, error)
	// Ops are the operations the mix draws from; an op's index is the
	// typ the bound sched.Op receives.
	Ops() []OpSpec
	// Bind prepares the operations on s. The returned op is called
	// concurrently by the scheduler's workers.
	Bind(ctx context.Context, s *gocql.Session, b Binding) (sched.Op, error)
	// Fill prepares the write a fill makes: seq-th new row of the fill
	// (the row of key b.StartKey + seq·b.Stride). A model that cannot fill
	// returns ErrNoFill.
	Fill(ctx context.Context, s *gocql.Session, b Binding) (sched.Op, error)
	// Regenerable says whether every row's content follows from its key,
	// so data validation can tell missing and wrong rows (the built-in
	// and scylla-bench-style models); the report says what was validated.
	Regenerable() bool
}

// ModelInfo describes a resolved model.
type ModelInfo struct {
	Kind     string   // "key/value", "cassandra-stress mixed", "profile timeseries.yaml", "scylla-bench write"
	Keyspace string   // the keyspace the operations address
	Table    string   // the table they address (validation, cleanup)
	Schema   []string // CQL as Schema would run it for the plan's target
	Ops      []OpSpec
	// KeyUnit is what one of the model's keys is, in the plan's and the
	// run's texts: "row" (the built-in, cassandra-stress's standard1) or
	// "partition" (scylla-bench, a profile: a key is a partition of rows).
	KeyUnit string
	// Notes are the model's own remarks for plan and report (options given
	// way to the scenario's phases, what validation covers ...).
	Notes []string
}

// OpSpec is one operation of a model.
type OpSpec struct {
	// Name is what latency records and result tables carry: write and read
	// for the built-in, cassandra-stress's command or ops(...) names
	// (insert, read1, counter_write ...), scylla-bench's mode names.
	Name string
	// Class is results.OpWrite or results.OpRead: which of a cycle's
	// write and read figures the operation counts in.
	Class string
	// Weight is the operation's relative share of the mix.
	Weight float64
	// CL is the operation's consistency level.
	CL gocql.Consistency
}

// Key units (ModelInfo.KeyUnit).
const (
	UnitRow       = "row"
	UnitPartition = "partition"
)

// Unit is i's KeyUnit, "row" when the model does not say.
func (i ModelInfo) Unit() string {
	if i.KeyUnit == "" {
		return UnitRow
	}
	return i.KeyUnit
}

// A Sizer is the optional interface of a model that says how much one of
// its keys stores, so that the plan's fill estimate (keys to reach a disk
// target, their bytes and write time) and the run's fill figures hold for
// it; a model without it is estimated as the built-in, dataset.value_size
// bytes a key in one write.
//
// The estimate is the mean of the model's own distributions (sizes,
// rows per partition), not a measurement: the bytes of the column values
// as the driver sends them, without the storage engine's per-cell and
// per-row overhead, compression or the sstables' indexes (the built-in's
// value_size is the same: its estimate counts the value alone).
type Sizer interface {
	// KeyBytes is the mean bytes of one key's rows as the fill writes
	// them (> 0).
	KeyBytes() float64
	// KeyWrites is the mean requests (statements or batches) the fill
	// makes for one key (>= 1).
	KeyWrites() float64
}

// SchemaTarget is what the plan decides about where the schema goes.
type SchemaTarget struct {
	Keyspace string // the plan's keyspace (a profile's own definition wins)
	Table    string
	DC       string
	RF       int
	Tablets  int // > 0 initial tablets, < 0 vnodes, 0 the cluster's default
}

// Binding is what an operation needs from the job when it is bound.
type Binding struct {
	// Keys is the number of rows (keys 0..Keys-1) the run has written;
	// reads and overwrites draw among them. 0: writes add keys 0, 1, 2 ...
	Keys int64
	// StartKey and Stride place a fill's rows (loader i of n fills
	// StartKey+i, then every n-th key).
	StartKey, Stride int64
	// Distribution of keys (keygen.Parse); the model may have its own.
	Distribution string
	// Failed, when set, is told every fill key whose write failed.
	Failed func(key int64)
	// Seed makes values and key choices reproducible.
	Seed uint64
	// Loader and Loaders: this is loader Loader of Loaders that share one
	// job (Job.Share; Loaders 0 or 1: it runs alone). The seq an operation
	// receives is then already the job's global one (keygen.GlobalSeq), so
	// what a model draws from seq differs between loaders; what it counts
	// itself (new keys, sequential populations) it splits with Share and
	// keygen.ForLoader/Part (KeyPicker does for keys).
	Loader, Loaders int
}

// RateSetter is the optional interface of a model whose definition carries
// a rate and a concurrency (a stress_cmd's -rate fixed=/throttle= and
// threads=): they win over the scenario's rate and concurrency, and the
// plan notes the scenario settings that gave way.
type RateSetter interface {
	// Rate is the intended arrival rate in operations per second; ok is
	// false when the model does not say (the scenario's rate applies).
	Rate() (opsPerSec float64, ok bool)
	// Threads is the most operations in flight the model asks for; 0: the scenario's.
	Threads() int
}

// The specs a scenario's workload forms become (scenarios builds them with
// these, so it names no form package; each form's parser reads them):
//
//	workload.stress_cmd  →  CSSpec(line)                  "cs:<the command line as given>"
//	workload.profile+ops →  ProfileSpec(name, yaml, ops)  "profile:<base64url of JSON {name, yaml, ops}>"
//	workload.kind ...    →  SBSpec(options)               "sb:mode=write,partition-count=N,..."

// CSSpec is the spec of a cassandra-stress command line.
func CSSpec(line string) string { return "cs:" + line }

// ProfileSpec is the spec of a cassandra-stress user profile (its YAML,
// named name: the file's base name, for messages) driven by ops, the
// content of cassandra-stress's ops(...) ("insert=1,read1=2"): "profile:"
// and the base64url (no padding) of the JSON {"name","yaml","ops"}, one
// shell-safe word whatever the YAML holds.
func ProfileSpec(name string, yaml []byte, ops string) string {
	return ProfileSpecWith(name, yaml, ops, ProfileOptions{})
}

// ProfileOptions are the settings of a `cassandra-stress user` command
// line that the profile form applies beside its ops(...): cl= and -rate.
// Zero values: not given (the spec is then ProfileSpec's, byte for byte).
type ProfileOptions struct {
	// CL is the line's cl= (cassandra-stress's default LOCAL_ONE when the
	// line has none): the consistency of every operation whose profile
	// entry names none.
	CL string `json:"cl,omitempty"`
	// Rate (op/s) and Threads are -rate fixed=/throttle= and threads=.
	Rate    float64 `json:"rate,omitempty"`
	Threads int     `json:"threads,omitempty"`
	// Insert is -insert's parameters as given ("partitions=fixed(2)
	// batchtype=UNLOGGED"): they win over the profile's insert: section.
	Insert string `json:"insert,omitempty"`
}

// ProfileSpecWith is ProfileSpec with a user command line's options, in
// the same envelope ({name, yaml, ops, cl, rate, threads}).
func ProfileSpecWith(name string, yaml []byte, ops string, o ProfileOptions) string {
	js, _ := json.Marshal(struct {
		Name string `json:"name"`
		YAML string `json:"yaml"`
		Ops  string `json:"ops"`
		ProfileOptions
	}{name, string(yaml), ops, o})
	return "profile:" + base64.RawURLEncoding.EncodeToString(js)
}

// SBSpec is the spec of a scylla-bench mode: its options as name=value
// pairs (scylla-bench's flag names without the dash), comma separated.
func SBSpec(options ...string) string { return "sb:" + strings.Join(options, ",") }

// ErrNoFill is what Model.Fill returns for a model that cannot fill.
var ErrNoFill = fmt.Errorf("this workload has no fill")

// modelForms maps a spec's form (the text before the first colon) to its parser.
var (
	modelMu    sync.RWMutex
	modelForms = map[string]func(text string) (Model, error){}
)

// RegisterModel makes ParseModel understand specs "<form>:<text>". A form
// registers itself from its package's init, as provision's backends do.
func RegisterModel(form string, parse func(text string) (Model, error)) {
	modelMu.Lock()
	defer modelMu.Unlock()
	if _, dup := modelForms[form]; dup || form == "" || strings.Contains(form, ":") {
		panic(fmt.Sprintf("stress: workload model form %q registered twice or invalid", form))
	}
	modelForms[form] = parse
}

// ParseModel builds the model a Spec encodes.
func ParseModel(spec string) (Model, error) {
	form, text, _ := strings.Cut(spec, ":")
	modelMu.RLock()
	parse, ok := modelForms[form]
	modelMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("workload model %q: unknown form %q (known: %s)", spec, form, strings.Join(ModelForms(), ", "))
	}
	m, err := parse(text)
	if err != nil {
		return nil, fmt.Errorf("workload model %s: %w", form, err)
	}
	return m, nil
}

// ModelForms lists the registered forms, sorted.
func ModelForms() []string {
	modelMu.RLock()
	defer modelMu.RUnlock()
	out := make([]string, 0, len(modelForms))
	for f := range modelForms {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
