package reporting

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/elasticity-dev/elasticity/results"
)

// DirArgus holds the run's tables in Argus's generic results format, one
// file per table, as `elasticity argus submit` sends them.
const DirArgus = "argus"

// Argus's generic results format (scylladb/argus argus/client/generic_result.py:
// GenericResultTable.as_dict, ColumnMetadata, ValidationRule, Cell).

// ArgusTable is one table as submit_results takes it.
type ArgusTable struct {
	Meta         ArgusMeta   `json:"meta"`
	SUTTimestamp int64       `json:"sut_timestamp"` // 0: Argus derives it from the SUT package
	Results      []ArgusCell `json:"results"`
}

// ArgusMeta describes a table.
type ArgusMeta struct {
	Name            string               `json:"name"`
	Description     string               `json:"description"`
	ColumnsMeta     []ArgusColumn        `json:"columns_meta"`
	RowsMeta        []string             `json:"rows_meta"`
	ValidationRules map[string]ArgusRule `json:"validation_rules"`
	SUTPackageName  string               `json:"sut_package_name"`
}

// Argus result types (argus/client/generic_result.py ResultType).
const (
	ArgusInteger  = "INTEGER"
	ArgusFloat    = "FLOAT"
	ArgusDuration = "DURATION"
	ArgusText     = "TEXT"
)

// Argus cell statuses (argus/client/generic_result.py Status).
const (
	ArgusPass  = "PASS"
	ArgusWarn  = "WARNING"
	ArgusError = "ERROR"
	ArgusUnset = "UNSET"
)

// ArgusColumn is ColumnMetadata.as_dict.
type ArgusColumn struct {
	Name           string `json:"name"`
	Unit           string `json:"unit"`
	Type           string `json:"type"`
	HigherIsBetter *bool  `json:"higher_is_better"`
	Visible        bool   `json:"visible"`
}

// ArgusRule is ValidationRule.as_dict: limits relative to the best previous
// result (percent or absolute) and a fixed limit; nil is unset.
type ArgusRule struct {
	BestPct    *float64 `json:"best_pct"`
	BestAbs    *float64 `json:"best_abs"`
	FixedLimit *float64 `json:"fixed_limit"`
}

// ArgusCell is Cell.as_dict: value for numbers, value_text for text.
type ArgusCell struct {
	Value     *float64 `json:"value,omitempty"`
	ValueText *string  `json:"value_text,omitempty"`
	Column    string   `json:"column"`
	Row       string   `json:"row"`
	Status    string   `json:"status"`
}

func boolp(b bool) *bool        { return &b }
func floatp(v float64) *float64 { return &v }

// argusBuilder collects one table.
type argusBuilder struct {
	t    ArgusTable
	cols map[string]ArgusColumn
	rows map[string]bool
	// rules holds per column the one validation rule every row has: a
	// value, ruleNone (no row is judged) or ruleMixed (rows differ, or a
	// limit Argus cannot express, such as a ratio to the steady state).
	rules map[string]argusRuleState
}

type argusRuleState struct {
	rule  ArgusRule
	key   string
	mixed bool
}

const ruleNone = ""

func ruleKey(r ArgusRule) string {
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return f(r.BestPct) + "/" + f(r.BestAbs) + "/" + f(r.FixedLimit)
}

// argusRuleOf is the validation rule a verdict applied, as Argus writes it
// (false when Argus has no such rule).
func argusRuleOf(v results.Verdict) (ArgusRule, bool) {
	switch {
	case v.Rule != nil:
		return ArgusRule{BestPct: v.Rule.BestPct, BestAbs: v.Rule.BestAbs, FixedLimit: v.Rule.FixedLimit}, true
	case v.Threshold.RatioToSteady || v.Threshold.RatioToPlan:
		return ArgusRule{}, false
	}
	return ArgusRule{FixedLimit: floatp(verdictLimit(v))}, true
}

func newArgusTable(name, description, sut string, cols ...ArgusColumn) *argusBuilder {
	b := &argusBuilder{cols: map[string]ArgusColumn{}, rows: map[string]bool{}, rules: map[string]argusRuleState{}}
	b.t.Meta = ArgusMeta{Name: ascii(name), Description: ascii(description), ColumnsMeta: cols, RowsMeta: []string{},
		ValidationRules: map[string]ArgusRule{}, SUTPackageName: sut}
	b.t.Results = []ArgusCell{}
	for _, c := range cols {
		b.cols[c.Name] = c
	}
	return b
}

func (b *argusBuilder) row(r string) string {
	r = ascii(r)
	if !b.rows[r] {
		b.rows[r] = true
		b.t.Meta.RowsMeta = append(b.t.Meta.RowsMeta, r)
	}
	return r
}

func (b *argusBuilder) text(col, row, v string) {
	v = ascii(v)
	b.t.Results = append(b.t.Results, ArgusCell{ValueText: &v, Column: col, Row: b.row(row), Status: ArgusUnset})
}

// num adds a number; verdicts are the thresholds judging it.
func (b *argusBuilder) num(col, row string, v float64, verdicts []results.Verdict) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if b.cols[col].Type == ArgusInteger {
		v = math.Round(v)
	}
	c := ArgusCell{Value: floatp(v), Column: col, Row: b.row(row), Status: ArgusUnset}
	st := argusRuleState{key: ruleNone}
	for _, vd := range verdicts {
		if c.Status != ArgusError {
			c.Status = ArgusPass
		}
		if !vd.Passed {
			c.Status = ArgusError
		}
		r, ok := argusRuleOf(vd)
		st = argusRuleState{rule: r, key: ruleKey(r), mixed: !ok || len(verdicts) > 1}
	}
	if prev, ok := b.rules[col]; ok && (prev.mixed || prev.key != st.key) {
		st.mixed = true
	}
	b.rules[col] = st
	b.t.Results = append(b.t.Results, c)
}

// done turns a rule shared by every row of a column into the column's
// validation rule (fixed_limit, or a baseline rule's best_pct, best_abs and
// fixed_limit) and leaves those cells UNSET, for Argus to judge them as
// SCT's tables are judged (a best_* rule against Argus's own best of the
// test); cells of other judged columns keep our verdict.
func (b *argusBuilder) done() ArgusTable {
	for col, st := range b.rules {
		if st.mixed || st.key == ruleNone || b.cols[col].HigherIsBetter == nil {
			continue
		}
		b.t.Meta.ValidationRules[col] = st.rule
		for i := range b.t.Results {
			if b.t.Results[i].Column == col {
				b.t.Results[i].Status = ArgusUnset
			}
		}
	}
	return b.t
}

// verdictsOn returns the verdicts on subject of the given metrics.
func verdictsOn(res *results.Result, subject string, metrics ...string) []results.Verdict {
	var out []results.Verdict
	for _, v := range res.Verdicts {
		if v.Subject != subject {
			continue
		}
		for _, m := range metrics {
			if v.Threshold.Metric == m {
				out = append(out, v)
			}
		}
	}
	return out
}

// sutPackage is the package Argus derives sut_timestamp from.
func sutPackage(res *results.Result) string {
	if res.Setup.Flavour == "cassandra" {
		return "cassandra"
	}
	return "scylla-server"
}

// ArgusResults returns the run's tables in Argus's generic results format:
// the latencies and REACTOR_STALLED counts of the steady state and of every
// nemesis step, disk usage and durations.
func ArgusResults(res *results.Result) []ArgusTable {
	w := WorkloadName(&res.Setup)
	sut := sutPackage(res)
	var out []ArgusTable
	var steady []results.Cycle
	for _, c := range res.Cycles {
		if c.Name == results.SteadyStateCycle {
			steady = append(steady, c)
		}
	}
	groups := []stepGroup{}
	if len(steady) > 0 {
		groups = append(groups, stepGroup{step: SteadyStateName, cycles: steady})
	}
	groups = append(groups, nemesisGroups(res)...)
	for _, g := range groups {
		out = append(out, argusLatency(res, w, g, sut), argusStalls(w, g, sut))
	}
	out = append(out, argusDisk(res, sut), argusDurations(res, sut))
	return out
}

func argusLatency(res *results.Result, w string, g stepGroup, sut string) ArgusTable {
	lower, higher := boolp(false), boolp(true)
	var cols []ArgusColumn
	add := func(name, unit, typ string, hib *bool) {
		cols = append(cols, ArgusColumn{Name: name, Unit: unit, Type: typ, HigherIsBetter: hib, Visible: true})
	}
	writes, reads := w != WorkloadRead, w != WorkloadWrite
	if writes {
		add("P90 write", "ms", ArgusFloat, lower)
	}
	if reads {
		add("P90 read", "ms", ArgusFloat, lower)
	}
	if writes {
		add("P99 write", "ms", ArgusFloat, lower)
	}
	if reads {
		add("P99 read", "ms", ArgusFloat, lower)
	}
	if writes {
		add("Throughput write", "op/s", ArgusInteger, higher)
	}
	if reads {
		add("Throughput read", "op/s", ArgusInteger, higher)
	}
	add("errors", "count", ArgusInteger, lower)
	add("dropped", "count", ArgusInteger, lower)
	add("duration", "HH:MM:SS", ArgusDuration, lower)
	add("start time", "", ArgusText, nil)
	if res.Setup.DashboardURL != "" {
		add("QA dashboard", "", ArgusText, nil)
	}
	b := newArgusTable(w+" - "+g.step+" - latencies", w+" workload - "+g.step, sut, cols...)
	for _, c := range g.cycles {
		n := c.Name
		if writes {
			b.num("P90 write", n, c.WriteP90MS, verdictsOn(res, n, results.MetricWriteP90))
		}
		if reads {
			b.num("P90 read", n, c.ReadP90MS, verdictsOn(res, n, results.MetricReadP90))
		}
		if writes {
			b.num("P99 write", n, c.WriteP99MS, verdictsOn(res, n, results.MetricWriteP99))
		}
		if reads {
			b.num("P99 read", n, c.ReadP99MS, verdictsOn(res, n, results.MetricReadP99))
		}
		if writes {
			b.num("Throughput write", n, c.WriteOpsPerS, verdictsOn(res, n, results.MetricWriteOps))
		}
		if reads {
			b.num("Throughput read", n, c.ReadOpsPerS, verdictsOn(res, n, results.MetricReadOps))
		}
		b.num("errors", n, float64(c.Errors), nil)
		b.num("dropped", n, float64(c.Dropped), nil)
		b.num("duration", n, c.DurationS, nil)
		b.text("start time", n, c.Start.UTC().Format("15:04:05"))
		if res.Setup.DashboardURL != "" {
			b.text("QA dashboard", n, results.DashboardLink(res.Setup.DashboardURL, c.Start, c.End))
		}
		argusOpRows(b, c, writes, reads)
	}
	return b.done()
}

// argusOpRows adds a cycle's rows per operation of a workload model, as
// SCT's send_result_to_argus adds one row per HDR tag (a cassandra-stress
// user profile's operation): "Cycle #N (HDR tag: read1)", its P90, P99 and
// throughput in its class's columns. None when the operations are the
// classes themselves (the built-in write and read, cassandra-stress mixed:
// SCT skips the tags of a mixed command's two as well), whose figures the
// cycle's row already holds. The per-operation cells carry no verdict, so
// the columns they share keep the cycle rows' own statuses instead of one
// Argus validation rule.
func argusOpRows(b *argusBuilder, c results.Cycle, writes, reads bool) {
	if !distinctOps(c.Ops) {
		return
	}
	for _, o := range c.Ops {
		if (o.Class == results.OpWrite && !writes) || (o.Class == results.OpRead && !reads) {
			continue
		}
		row := c.Name + " (HDR tag: " + o.Name + ")"
		b.num("P90 "+o.Class, row, o.P90MS, nil)
		b.num("P99 "+o.Class, row, o.P99MS, nil)
		b.num("Throughput "+o.Class, row, o.OpsPerS, nil)
		b.num("errors", row, float64(o.Errors), nil)
		b.num("dropped", row, float64(o.Dropped), nil)
	}
}

// distinctOps says whether a cycle's operations are more than its classes:
// an operation named otherwise than its class, or two of one class.
func distinctOps(ops []results.OpFigures) bool {
	seen := map[string]bool{}
	for _, o := range ops {
		if o.Name != o.Class || seen[o.Class] {
			return true
		}
		seen[o.Class] = true
	}
	return false
}

// argusStalls is SCT's ReactorStallStatsResult: total and one column per
// bucket; only the non-empty buckets get a cell.
func argusStalls(w string, g stepGroup, sut string) ArgusTable {
	cols := []ArgusColumn{{Name: "total", Unit: "count", Type: ArgusInteger, Visible: true}}
	for _, l := range results.StallLabels() {
		cols = append(cols, ArgusColumn{Name: l, Unit: "count", Type: ArgusInteger, Visible: true})
	}
	b := newArgusTable(w+" - "+g.step+" - stalls - REACTOR_STALLED", "REACTOR_STALLED event counts", sut, cols...)
	for _, c := range g.cycles {
		b.num("total", c.Name, float64(c.Stalls.Total), nil)
		for _, bk := range c.Stalls.Buckets {
			if bk.Count > 0 {
				b.num(bk.Label, c.Name, float64(bk.Count), nil)
			}
		}
	}
	return b.done()
}

func argusDisk(res *results.Result, sut string) ArgusTable {
	cols := []ArgusColumn{
		{Name: "Total", Unit: "GB", Type: ArgusFloat, Visible: true},
		{Name: "Used", Unit: "GB", Type: ArgusFloat, Visible: true},
		{Name: "Available", Unit: "GB", Type: ArgusFloat, Visible: true},
		{Name: "Usage", Unit: "%", Type: ArgusFloat, Visible: true},
	}
	b := newArgusTable("Disk usage", "disk usage per node and for the cluster at each phase", sut, cols...)
	add := func(d results.NodeDisk, phase string) {
		r := fmt.Sprintf("%s [%s]", d.Node, phase)
		b.num("Total", r, d.TotalGB, nil)
		b.num("Used", r, d.UsedGB, nil)
		b.num("Available", r, d.AvailGB, nil)
		b.num("Usage", r, d.UsagePercent, nil)
	}
	for _, p := range res.Disk {
		for _, n := range p.Nodes {
			add(n, p.Phase)
		}
		cl := p.Cluster
		cl.Node = "cluster"
		add(cl, p.Phase)
	}
	return b.done()
}

func argusDurations(res *results.Result, sut string) ArgusTable {
	b := newArgusTable("Durations", "fill phases and nemesis step durations", sut,
		ArgusColumn{Name: "duration", Unit: "HH:MM:SS", Type: ArgusDuration, HigherIsBetter: boolp(false), Visible: true})
	for _, d := range res.Durations {
		subj := d.Subject()
		b.num("duration", subj, d.Seconds, verdictsOn(res, subj, results.MetricDurationSeconds))
	}
	return b.done()
}

// ascii keeps Argus's names ASCII: the few non-ASCII characters reports use
// are spelled out, anything else becomes '?'.
func ascii(s string) string {
	if isASCII(s) {
		return s
	}
	s = strings.NewReplacer("×", "x", "—", "-", "–", "-", "→", "->", "≤", "<=", "≥", ">=", "µ", "u", "…", "...").Replace(s)
	return strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII {
			return '?'
		}
		return r
	}, s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > unicode.MaxASCII {
			return false
		}
	}
	return true
}

// argusFileName names a table's file: its position and a slug of its name.
func argusFileName(i int, name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimSuffix(b.String(), "-")
	if len(slug) > 80 {
		slug = slug[:80]
	}
	return fmt.Sprintf("%02d-%s.json", i+1, slug)
}

// writeArgus replaces dir/argus/ with one file per table.
func writeArgus(dir string, tables []ArgusTable) error {
	ad := filepath.Join(dir, DirArgus)
	if err := os.MkdirAll(ad, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", ad, err)
	}
	old, _ := filepath.Glob(filepath.Join(ad, "*.json"))
	keep := map[string]bool{}
	for i, t := range tables {
		name := argusFileName(i, t.Meta.Name)
		keep[name] = true
		if err := writeJSON(filepath.Join(ad, name), t); err != nil {
			return err
		}
	}
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			_ = os.Remove(f) // a table of an earlier render that is gone
		}
	}
	return nil
}

// ReadArgus reads the tables of a run's argus/ directory in file order.
func ReadArgus(dir string) ([]ArgusTable, error) {
	files, err := filepath.Glob(filepath.Join(dir, DirArgus, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no %s/*.json: render it first with `elasticity report %s`", dir, DirArgus, dir)
	}
	var out []ArgusTable
	for _, f := range files {
		var t ArgusTable
		if err := readJSONFile(f, &t); err != nil {
			return nil, err
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Validate checks a table against Argus's format: what GenericResultTable
// and the server require (known columns and types, a value of the column's
// kind, rules only on non-TEXT columns, ASCII names).
func (t *ArgusTable) Validate() error {
	if t.Meta.Name == "" {
		return fmt.Errorf("meta.name is empty")
	}
	if !isASCII(t.Meta.Name) {
		return fmt.Errorf("meta.name %q is not ASCII", t.Meta.Name)
	}
	types := map[string]string{}
	for i, c := range t.Meta.ColumnsMeta {
		switch c.Type {
		case ArgusInteger, ArgusFloat, ArgusDuration, ArgusText:
		default:
			return fmt.Errorf("meta.columns_meta.%d (%s): type %q is not INTEGER, FLOAT, DURATION or TEXT", i, c.Name, c.Type)
		}
		if c.Name == "" || !isASCII(c.Name) {
			return fmt.Errorf("meta.columns_meta.%d: name %q is empty or not ASCII", i, c.Name)
		}
		if _, dup := types[c.Name]; dup {
			return fmt.Errorf("meta.columns_meta.%d: duplicate column %q", i, c.Name)
		}
		types[c.Name] = c.Type
	}
	for col := range t.Meta.ValidationRules {
		typ, ok := types[col]
		if !ok {
			return fmt.Errorf("meta.validation_rules: ValidationRule column %s not found in the table", col)
		}
		if typ == ArgusText {
			return fmt.Errorf("meta.validation_rules.%s: validation rules don't apply to TEXT columns", col)
		}
	}
	rows := map[string]bool{}
	for _, r := range t.Meta.RowsMeta {
		if !isASCII(r) {
			return fmt.Errorf("meta.rows_meta: row %q is not ASCII", r)
		}
		rows[r] = true
	}
	for i, c := range t.Results {
		typ, ok := types[c.Column]
		switch {
		case !ok:
			return fmt.Errorf("results.%d: column %s not found in the table", i, c.Column)
		case !rows[c.Row]:
			return fmt.Errorf("results.%d: row %q is not in meta.rows_meta", i, c.Row)
		case (c.Value == nil) == (c.ValueText == nil):
			return fmt.Errorf("results.%d (%s, %s): exactly one of value and value_text must be set", i, c.Row, c.Column)
		case c.ValueText != nil && typ != ArgusText:
			return fmt.Errorf("results.%d: column %s is not of type TEXT", i, c.Column)
		case c.Value != nil && typ == ArgusText:
			return fmt.Errorf("results.%d: column %s is TEXT but the cell has a number", i, c.Column)
		}
		switch c.Status {
		case ArgusPass, ArgusWarn, ArgusError, ArgusUnset:
		default:
			return fmt.Errorf("results.%d: status %q is not PASS, WARNING, ERROR or UNSET", i, c.Status)
		}
	}
	return nil
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}
