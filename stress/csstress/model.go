package csstress

import (
	"fmt"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// Form is the spec form of a cassandra-stress command line: "cs:<line>".
const Form = "cs"

func init() { stress.RegisterModel(Form, parseModel) }

// Model is a cassandra-stress predefined command (write, read, mixed,
// counter_write, counter_read) as a stress.Model. It is also a
// stress.RateSetter (the command line's own rate and concurrency: Rate and
// Threads) and a stress.Validator (validate.go).
type Model struct {
	line string
	s    *settings
	ops  []stress.OpSpec
}

var _ stress.RateSetter = (*Model)(nil)

// Parse parses a cassandra-stress command line (with or without its leading
// "cassandra-stress") into a Model. A user command is an error wrapping
// ErrUserCommand: it is the profile form's (see ParseUser).
func Parse(line string) (*Model, error) {
	s, err := parseSettings(line)
	if err != nil {
		return nil, err
	}
	if s.user != nil {
		return nil, userError(s.user)
	}
	m := &Model{line: strings.TrimSpace(line), s: s}
	for _, o := range s.mix {
		class := results.OpRead
		if o.kind == kindWrite || o.kind == kindCounterWrite {
			class = results.OpWrite
		}
		m.ops = append(m.ops, stress.OpSpec{Name: o.kind, Class: class, Weight: o.weight, CL: s.cl})
	}
	return m, nil
}

func parseModel(text string) (stress.Model, error) {
	m, err := Parse(text)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Spec is "cs:" and the command line as given: ParseModel re-parses it.
func (m *Model) Spec() string { return Form + ":" + m.line }

// Rate is -rate fixed= or throttle=.
func (m *Model) Rate() (float64, bool) { return m.s.rate, m.s.rateGiven }

// Threads is -rate threads= (0 when -rate is not given).
func (m *Model) Threads() int { return m.s.threads }

// Ops are the command's operations, named as cassandra-stress names them
// (write, read, counter_write, counter_read), with the mix's ratios.
func (m *Model) Ops() []stress.OpSpec { return append([]stress.OpSpec(nil), m.ops...) }

// Regenerable: every key and cell value is a function of the population
// index (keys.go), so a row can be recomputed. Counter cells are not (they
// sum increments), so a model with counter operations is not.
func (m *Model) Regenerable() bool { return !m.hasCounters() }

// Keyspace is -schema keyspace= or cassandra-stress's keyspace1.
func (m *Model) Keyspace() string {
	if m.s.schema.keyspace != "" {
		return m.s.schema.keyspace
	}
	return "keyspace1"
}

// Table is the table the operations (and a fill) address: standard1, or
// counter1 when every operation is a counter's.
func (m *Model) Table() string {
	if m.onlyCounters() {
		return "counter1"
	}
	return "standard1"
}

func (m *Model) hasCounters() bool {
	for _, o := range m.s.mix {
		if o.kind == kindCounterWrite || o.kind == kindCounterRead {
			return true
		}
	}
	return false
}

func (m *Model) onlyCounters() bool {
	for _, o := range m.s.mix {
		if o.kind == kindWrite || o.kind == kindRead {
			return false
		}
	}
	return true
}

// Describe is the resolved command for plan and report.
func (m *Model) Describe() stress.ModelInfo {
	info := stress.ModelInfo{
		Kind:     "cassandra-stress " + m.s.command,
		Keyspace: m.Keyspace(),
		Table:    m.Table(),
		Ops:      m.Ops(),
		KeyUnit:  stress.UnitRow,
		Notes:    append([]string(nil), m.s.notes...),
	}
	if sch, err := m.Schema(stress.SchemaTarget{DC: "<dc>", RF: 3}); err == nil {
		info.Schema = sch
	}
	if m.hasCounters() {
		info.Notes = append(info.Notes, "counter operations: the keyspace is created with tablets disabled, whatever the scenario's tablets (ScyllaDB before 2026.1 refuses counters in a tablet keyspace)")
	}
	info.Notes = append(info.Notes, m.dataNote())
	return info
}

// dataNote says what keys and values are.
func (m *Model) dataNote() string {
	pop := "the scenario's rows"
	if m.s.pop.given {
		pop = "-pop dist=" + m.s.pop.dist.Text()
		if m.s.pop.seq && !strings.HasPrefix(strings.ToLower(m.s.pop.dist.Text()), "seq(") {
			pop = "-pop seq=" + m.s.pop.dist.Text()
		}
	}
	v := fmt.Sprintf("keys: %d hex characters from the population index (%s); %d blob columns %s of size %s, each a function of index and column (rows regenerable)",
		m.s.keysize, pop, len(m.s.colNames), strings.Join(m.s.colNames, ","), m.s.size.Text())
	if m.hasCounters() {
		v += fmt.Sprintf("; counters incremented by %s per column", m.s.add.Text())
	}
	return v + "; reads are not compared with the expected row"
}
