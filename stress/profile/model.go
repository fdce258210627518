// Package profile is the workload model of a cassandra-stress user
// profile (a YAML file: keyspace_definition, table_definition,
// columnspec, insert, queries) driven by ops(...), cassandra-stress's
// `user profile=... ops(insert=1,read1=2)`, on the framework's open-model
// engine. It mirrors apache/cassandra's tools/stress (StressProfile.java,
// generate/*, settings/OptionDistribution.java, operations/userdefined/*;
// read in scylladb/cassandra-stress).
//
// The model's spec is "profile:" and the base64url (no padding) of a JSON
// envelope {"name", "yaml", "ops"}: the profile travels inside the spec,
// one shell-safe word on a remote loader's command line. Spec builds it.
package profile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// Form is the model's spec form.
const Form = "profile"

func init() { stress.RegisterModel(Form, parseSpec) }

// envelope is what a spec encodes.
type envelope struct {
	Name string `json:"name"`
	YAML string `json:"yaml"`
	Ops  string `json:"ops"`
	stress.ProfileOptions
}

// Spec is the model spec of the profile yaml (named name, the file's base
// name for messages) with ops, cassandra-stress's ops(...) ("insert=1,read1=2";
// the ops( ) wrapper optional): "profile:<base64url of JSON {name, yaml, ops}>",
// stress.ProfileSpec's encoding, which the scenario loader builds for
// workload.profile and workload.ops; stress.ParseModel(Spec(...)) builds the model.
func Spec(name string, yaml []byte, ops string) string { return stress.ProfileSpec(name, yaml, ops) }

// parseSpec is the form's parser (the text after "profile:").
func parseSpec(text string) (stress.Model, error) {
	js, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("the spec is not base64url (build it with profile.Spec): %w", err)
	}
	var env envelope
	if err := json.Unmarshal(js, &env); err != nil {
		return nil, fmt.Errorf("the spec's envelope is not {name, yaml, ops} JSON: %w", err)
	}
	return LoadWith(env.Name, []byte(env.YAML), env.Ops, env.ProfileOptions)
}

// Model is a profile with its ops(...): a stress.Model.
type Model struct {
	prof    *Profile
	yaml    []byte
	opsText string
	opts    stress.ProfileOptions // a user command line's cl= and -rate
	ops     []op
	// misses counts, per operation, the queries that returned no row.
	misses []atomic.Int64
}

// op is one operation of the mix.
type op struct {
	stress.OpSpec
	query *boundQuery // nil: the insert or a token range query
	scan  *scanQuery  // a token range query
}

// Load parses the profile yaml (named name) and ops: the model, or an
// *Error (placed at its YAML line) or an ops error naming the operation.
func Load(name string, yaml []byte, ops string) (*Model, error) {
	return LoadWith(name, yaml, ops, stress.ProfileOptions{})
}

// LoadWith is Load with a `cassandra-stress user` line's options: its cl=
// is the consistency of every operation whose profile entry names none (a
// query's consistencyLevel wins, StressProfile.java getQuery; the insert's,
// selectConsistency), its -rate the model's rate (stress.RateSetter).
func LoadWith(name string, yaml []byte, ops string, opts stress.ProfileOptions) (*Model, error) {
	defaultCL := gocql.Quorum
	if opts.CL != "" {
		cl, err := parseCL(opts.CL)
		if err != nil {
			return nil, fmt.Errorf("profile %s: cl=%s: %w", name, opts.CL, err)
		}
		defaultCL = cl
	}
	if opts.Rate < 0 || opts.Threads < 0 {
		return nil, fmt.Errorf("profile %s: -rate fixed=%g threads=%d: must not be negative", name, opts.Rate, opts.Threads)
	}
	p, err := Parse(name, yaml)
	if err != nil {
		return nil, err
	}
	if err := p.applyInsertOptions(opts.Insert); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	weights, err := p.ParseOps(ops)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	m := &Model{prof: p, yaml: yaml, opsText: ops, opts: opts}
	for _, w := range weights {
		o := op{OpSpec: stress.OpSpec{Name: w.Name, Class: results.OpWrite, Weight: w.Weight, CL: defaultCL}}
		if tr, ok := p.TokenRangeQueries[w.Name]; ok {
			if o.scan, err = p.scanCQL(tr); err != nil { // checked by Parse already
				return nil, err
			}
			o.Class = results.OpRead
		} else if w.Name == "insert" {
			if p.Insert.CL != "" {
				o.CL, _ = parseCL(p.Insert.CL)
			}
		} else {
			q, err := p.bindQuery(p.Queries[w.Name])
			if err != nil { // checked by Parse already
				return nil, err
			}
			o.query = q
			if !q.write {
				o.Class = results.OpRead
			}
			if q.CL != "" {
				o.CL, _ = parseCL(q.CL)
			}
		}
		m.ops = append(m.ops, o)
	}
	m.misses = make([]atomic.Int64, len(m.ops))
	return m, nil
}

// Profile is the parsed profile.
func (m *Model) Profile() *Profile { return m.prof }

// Spec implements stress.Model.
func (m *Model) Spec() string {
	return stress.ProfileSpecWith(m.prof.Name, m.yaml, m.opsText, m.opts)
}

// Rate implements stress.RateSetter: a user command line's -rate
// fixed=/throttle=, when it has one.
func (m *Model) Rate() (float64, bool) { return m.opts.Rate, m.opts.Rate > 0 }

// Threads implements stress.RateSetter: a user command line's -rate threads=.
func (m *Model) Threads() int { return m.opts.Threads }

// Ops implements stress.Model: ops(...)'s operations in its order, insert
// a write, each query a read unless it is an INSERT, UPDATE or DELETE.
// Consistency: the query's or insert's consistencyLevel, else a user
// command line's cl= (LOCAL_ONE, cassandra-stress's default, when the line
// has none), else QUORUM (workload.profile: the framework's default for
// its workloads).
func (m *Model) Ops() []stress.OpSpec {
	out := make([]stress.OpSpec, len(m.ops))
	for i, o := range m.ops {
		out[i] = o.OpSpec
	}
	return out
}

// Regenerable implements stress.Model: no. A row's content follows from
// its partition and row number, but a profile's population distributions
// may give two partitions one key, so a read cannot tell a lost row from
// an overwritten one; data validation does not cover profiles.
func (m *Model) Regenerable() bool { return false }

// Misses is the number of times operation i (an index of Ops) read no row.
func (m *Model) Misses(i int) int64 { return m.misses[i].Load() }

// Describe implements stress.Model.
func (m *Model) Describe() stress.ModelInfo {
	p := m.prof
	stmts, _ := m.Schema(stress.SchemaTarget{Keyspace: p.Keyspace, DC: "<dc>", RF: 3})
	ins := p.Insert
	notes := []string{
		fmt.Sprintf("insert: %s partitions per batch, select %s of each partition's rows, %s batches; rows per partition from the clustering columns' cluster distributions",
			ins.Partitions, ins.Select, ins.BatchType),
		"fill: the insert writing the whole of each new partition (the seq-th partition of the fill), in batches of the insert's size",
		"validated: the profile's YAML and every CQL statement parse (ScyllaDB's grammar), the queries' markers name table columns, values are generated for every column type; " +
			"not validated: the data (not regenerable: populations may give partitions one key) and whether the cluster accepts the schema (checked when it is created)",
	}
	if rp := ins.RowPopulation; !rp.IsZero() {
		notes = append(notes, fmt.Sprintf("insert: row-population %s of each row's value columns (in name order), drawn per partition; the rest bound null, as cassandra-stress binds them (a null cell: a tombstone)", rp))
	}
	for _, o := range m.ops {
		if o.scan != nil {
			notes = append(notes, fmt.Sprintf("%s: a token range scan, one page of %d rows per operation (%s); the ring's ranges in order, re-used once all are read (cassandra-stress's -tokenrange wrap)",
				o.Name, o.scan.PageSize, o.scan.CQL))
		}
	}
	notes = append(notes, p.Ignored...)
	if p.KeyspaceDef == "" {
		notes = append(notes, "keyspace: the plan's replication (the profile has no keyspace_definition)")
	} else {
		notes = append(notes, "keyspace: the profile's keyspace_definition (its replication, not the plan's rf)")
	}
	return stress.ModelInfo{Kind: "profile " + p.Name, Keyspace: p.Keyspace, Table: p.Table,
		Schema: stmts, Ops: m.Ops(), KeyUnit: stress.UnitPartition, Notes: notes}
}

// Schema implements stress.Model: the profile's keyspace_definition (or
// the plan's replication for its keyspace), its table_definition and
// extra_definitions, made idempotent and qualified with the keyspace.
func (m *Model) Schema(t stress.SchemaTarget) ([]string, error) {
	p := m.prof
	var out []string
	if p.KeyspaceDef != "" {
		out = append(out, p.keyspaceStatement())
	} else {
		ks, err := stress.Schema{Keyspace: strings.ToLower(p.Keyspace), Table: "unused", RF: t.RF, DC: t.DC, Tablets: t.Tablets}.Statements()
		if err != nil {
			return nil, fmt.Errorf("profile %s: keyspace %s: %w", p.Name, p.Keyspace, err)
		}
		out = append(out, ks[0])
	}
	out = append(out, p.tableStatement())
	for _, x := range p.Extra {
		q, err := p.qualifyExtra(x)
		if err != nil {
			return nil, fmt.Errorf("profile %s: extra_definitions: %w", p.Name, err)
		}
		out = append(out, q)
	}
	return out, nil
}

// Bind implements stress.Model.
func (m *Model) Bind(_ context.Context, s *gocql.Session, b stress.Binding) (sched.Op, error) {
	return m.bind(s, b)
}

// Fill implements stress.Model.
func (m *Model) Fill(_ context.Context, s *gocql.Session, b stress.Binding) (sched.Op, error) {
	return m.fill(s, b)
}
