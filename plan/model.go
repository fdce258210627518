package plan

import (
	"fmt"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
	"github.com/elasticity-dev/elasticity/stress"
)

// ModelPlan is the workload model as the plan resolved it (the built-in
// key/value model too): what `elasticity plan` prints, and in result.json's
// setup what the report says about the workload.
type ModelPlan struct {
	// Form is the scenario field that chose the model (workload.stress_cmd,
	// workload.profile, workload.kind), "" for the built-in.
	Form     string   `json:"form,omitempty"`
	Kind     string   `json:"kind"`
	Keyspace string   `json:"keyspace"`
	Table    string   `json:"table"`
	Schema   []string `json:"schema,omitempty"`
	Ops      []OpPlan `json:"ops"`
	Notes    []string `json:"notes,omitempty"`
	// Regenerable: data validation can regenerate every row from its key.
	Regenerable bool `json:"regenerable"`
	// NotValidated says why data validation is not done for the model
	// ("" when it is): what the plan prints and the run records.
	NotValidated string `json:"not_validated,omitempty"`
	// KeyUnit is what one key of the model is: "row" or "partition"
	// (stress.ModelInfo.KeyUnit); the plan and the run count keys in it.
	KeyUnit string `json:"key_unit"`
	// KeyBytes and KeyWrites are the model's estimate of one key (its
	// rows' mean bytes, the fill's requests for it: stress.Sizer); 0 when
	// the model does not say (the estimate takes dataset.value_size a key).
	KeyBytes  float64 `json:"key_bytes,omitempty"`
	KeyWrites float64 `json:"key_writes,omitempty"`
	// GaveWay are the scenario settings given that the model's own replace
	// (a stress_cmd's ratio, cl=, -rate ...): noted, and warned about by validate.
	GaveWay []string `json:"gave_way,omitempty"`
}

// OpPlan is one operation of the model with its share of the mix.
type OpPlan struct {
	Name        string  `json:"name"`
	Class       string  `json:"class"`
	SharePct    float64 `json:"share_pct"`
	Consistency string  `json:"consistency"`
}

// IsBuiltin says whether the model is the built-in key/value one.
func (m *ModelPlan) IsBuiltin() bool { return m == nil || m.Form == "" }

// resolveModel parses the scenario's workload model and describes it with
// its schema for the plan's target.
func resolveModel(s *scenarios.Scenario, d Data) (stress.Model, *ModelPlan, error) {
	m, err := s.Workload.Model()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Workload.Form(), err)
	}
	if k, ok := m.(stress.KV); ok {
		k.Keyspace, k.Table, k.ValueMin, k.ValueMax = d.Keyspace, d.Table, d.ValueMin, d.ValueMax
		k.WriteRatio, k.ReadRatio = s.Workload.Mix.Write, s.Workload.Mix.Read
		k.WriteCL, _ = stress.ParseCL("write", s.Workload.Consistency.Write)
		k.ReadCL, _ = stress.ParseCL("read", s.Workload.Consistency.Read)
		m = k
	}
	info := m.Describe()
	mp := &ModelPlan{Form: s.Workload.Form(), Kind: info.Kind, Keyspace: info.Keyspace, Table: info.Table,
		Notes: append([]string(nil), info.Notes...), Regenerable: m.Regenerable(), KeyUnit: info.Unit()}
	if sz, ok := m.(stress.Sizer); ok {
		mp.KeyBytes, mp.KeyWrites = sz.KeyBytes(), max(1, sz.KeyWrites())
	}
	mp.Schema, err = m.Schema(stress.SchemaTarget{Keyspace: d.Keyspace, Table: d.Table, DC: d.DC, RF: d.RF, Tablets: d.Tablets})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the schema: %w", s.Workload.Form(), err)
	}
	var total float64
	for _, o := range m.Ops() {
		total += o.Weight
	}
	for _, o := range m.Ops() {
		share := 0.0
		if total > 0 {
			share = round2(100 * o.Weight / total)
		}
		mp.Ops = append(mp.Ops, OpPlan{Name: o.Name, Class: o.Class, SharePct: share, Consistency: o.CL.String()})
	}
	mp.NotValidated = ValidationNotDone(m, mp)
	return m, mp, nil
}

// ValidationNotDone says why data validation cannot cover model m
// (described by mp), "" when it can: its rows do not follow from their
// keys, or it does not read them back (stress.Validator). The plan prints
// it and the run records it as the validation's outcome.
func ValidationNotDone(m stress.Model, mp *ModelPlan) string {
	if mp.IsBuiltin() {
		return ""
	}
	_, reads := m.(stress.Validator)
	switch {
	case !m.Regenerable():
		return fmt.Sprintf("the rows of %s (%s.%s: %s) cannot be regenerated from their keys, so neither the fills' nor the operations' rows were read back",
			mp.Kind, mp.Keyspace, mp.Table, opNames(mp))
	case !reads:
		return fmt.Sprintf("%s does not read its rows back (no stress.Validator): the fills' rows of %s.%s were not read back", mp.Kind, mp.Keyspace, mp.Table)
	}
	return ""
}

// opNames lists a model's operations.
func opNames(mp *ModelPlan) string {
	var out []string
	for _, o := range mp.Ops {
		out = append(out, o.Name)
	}
	return "operations " + strings.Join(out, ", ")
}

// Unit is the model's key unit, "row" for a plan without a model.
func (m *ModelPlan) Unit() string {
	if m == nil || m.KeyUnit == "" {
		return stress.UnitRow
	}
	return m.KeyUnit
}

// applyModel makes the load what a non-built-in model says: its mix by
// class (for the estimates), its consistency levels, its own rate and
// concurrency (stress.RateSetter) over the scenario's, its keyspace and
// table for cleanup and validation; and notes the scenario settings that
// gave way.
func applyModel(p *Plan, s *scenarios.Scenario, m stress.Model, mp *ModelPlan) {
	p.Load.ModelSpec = m.Spec()
	p.Workload.Model = mp
	if mp.IsBuiltin() {
		return
	}
	p.Data.Keyspace, p.Data.Table, p.Keyspace, p.Table = mp.Keyspace, mp.Table, mp.Keyspace, mp.Table
	var write, read float64
	for _, o := range m.Ops() {
		switch o.Class {
		case results.OpWrite:
			write += o.Weight
			p.Load.WriteCL = o.CL.String()
		case results.OpRead:
			read += o.Weight
			p.Load.ReadCL = o.CL.String()
		}
	}
	p.Load.MixWrite, p.Load.MixRead = write, read
	if write+read > 0 {
		p.Workload.WriteRatio, p.Workload.ReadRatio = write/(write+read), read/(write+read)
	}
	p.Workload.WriteConsistency, p.Workload.ReadConsistency = p.Load.WriteCL, p.Load.ReadCL
	// What the keys and values are is the model's (its notes say).
	p.ValueSize, p.Workload.Distribution = "the workload model's", "the workload model's"
	if mp.KeyBytes > 0 {
		p.ValueSize = fmt.Sprintf("the workload model's (≈%s a %s)", scenarios.HumanBytes(mp.KeyBytes), mp.Unit())
	}
	if rs, ok := m.(stress.RateSetter); ok {
		if rate, ok := rs.Rate(); ok && rate > 0 {
			p.Load.Rate, p.Load.LoadPercent, p.Load.CapacityAfter = rate, 0, false
			p.Workload.RateOpsPerS, p.Workload.LoadPercent = rate, 0
		}
		if th := rs.Threads(); th > 0 {
			p.Load.Concurrency, p.Workload.Concurrency = th, th
		}
	}
	gave := s.Replaced(m, s.Given)
	mp.GaveWay = gave
	for _, g := range gave {
		mp.Notes = append(mp.Notes, fmt.Sprintf("%s gives way to %s", g, mp.Form))
	}
}

// textModel prints a model that is not the built-in one: what it is, its
// operations and their shares, its schema and its notes.
func (p *Plan) textModel(pf func(string, ...any)) {
	mp := p.Workload.Model
	pf("Workload model: %s (%s), on %s.%s\n", mp.Kind, mp.Form, mp.Keyspace, mp.Table)
	var ops []string
	for _, o := range mp.Ops {
		ops = append(ops, fmt.Sprintf("%s %g%% (%s, %s)", o.Name, o.SharePct, o.Class, o.Consistency))
	}
	pf("  operations: %s\n", strings.Join(ops, ", "))
	for _, st := range mp.Schema {
		pf("  schema: %s\n", oneLine(st))
	}
	if mp.KeyBytes > 0 {
		pf("  a key is a %s of ≈%s (the means of the model's sizes), written in ≈%.3g request(s) by the fill\n", mp.Unit(), scenarios.HumanBytes(mp.KeyBytes), mp.KeyWrites)
	}
	for _, n := range mp.Notes {
		pf("  note: %s\n", n)
	}
}

// oneLine folds a statement's whitespace (a profile's multi-line CQL).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FillKeyBytes is the plan's estimate of one fill key's bytes: the
// workload model's (stress.Sizer), else dataset.value_size's mean.
func (p *Plan) FillKeyBytes() float64 {
	if mp := p.Workload.Model; !mp.IsBuiltin() && mp.KeyBytes > 0 {
		return mp.KeyBytes
	}
	return (float64(p.Data.ValueMin) + float64(max(p.Data.ValueMin, p.Data.ValueMax))) / 2
}
