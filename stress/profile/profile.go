package profile

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/elasticity-dev/elasticity/stress/csdist"
)

// Error is a profile problem, placed at its YAML line when it has one.
type Error struct {
	File  string // the profile's name
	Line  int    // 0: no line
	Field string // e.g. "columnspec[2].size", "queries.read1.cql"
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("profile " + e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Profile is a cassandra-stress user profile as StressProfile.java reads
// it (StressYaml.java: specname, keyspace, keyspace_definition, table,
// table_definition, extra_definitions, columnspec, insert, queries,
// token_range_queries).
type Profile struct {
	Name        string // the file's name, for messages
	SpecName    string
	Keyspace    string
	KeyspaceDef string // "" when the keyspace is the plan's
	Table       string
	TableDef    string
	Extra       []string
	Columns     map[string]ColumnSpec // by lower-case column name
	Queries     map[string]Query      // by lower-case query name
	Insert      Insert
	// TokenRangeQueries are the token_range_queries, by lower-case name.
	TokenRangeQueries map[string]TokenRangeQuery
	// Ignored are what cassandra-stress accepts and ignores (a columnspec
	// of a column the table lacks, a query named insert): plan notes.
	Ignored []string
	lines   map[string]int  // field path -> YAML line
	block   map[string]bool // field path -> a block scalar (| or >): its text starts on the next line
	table   *table
}

// ColumnSpec is one columnspec entry: the distributions of a column's
// values (GeneratorConfig.java); nil ones take the type's defaults.
type ColumnSpec struct {
	Name                      string
	Size, Population, Cluster csdist.Dist
}

// Query is one named query (StressYaml.QueryDef).
type Query struct {
	Name    string
	CQL     string
	SameRow bool // fields: samerow; default multirow (StressProfile.getQuery)
	CL      string
	Line    int
}

// Insert is the insert section (StressProfile.prepareQuery): partitions
// per batch (default fixed(1)), the ratio of a partition's rows each
// batch writes (select, default fixed(1)/1), the batch type (LOGGED by
// default) and consistency level.
type Insert struct {
	Partitions csdist.Dist
	Select     csdist.Ratio
	// RowPopulation is the share of a row's value columns an insert
	// writes (row-population, default fixed(1)/1: all of them), drawn per
	// partition; the others are bound null, as cassandra-stress binds them.
	RowPopulation csdist.Ratio
	BatchType     string // LOGGED, UNLOGGED or COUNTER
	CL            string
}

// topLevel are StressYaml's fields; SnakeYAML refuses any other.
var topLevel = map[string]bool{"specname": true, "keyspace": true, "keyspace_definition": true, "table": true,
	"table_definition": true, "extra_definitions": true, "columnspec": true, "insert": true, "queries": true,
	"token_range_queries": true}

// Parse reads a profile's YAML; name is its file name for messages. The
// CQL is checked too (see checkCQL).
func Parse(name string, data []byte) (*Profile, error) {
	p := &Profile{Name: name, Columns: map[string]ColumnSpec{}, Queries: map[string]Query{}, lines: map[string]int{}, block: map[string]bool{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.yamlErr(err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, p.errf(0, "", "not a YAML mapping (want keyspace:, table:, table_definition: ...)")
	}
	if err := p.decodeTop(doc.Content[0]); err != nil {
		return nil, err
	}
	if err := p.checkRequired(); err != nil {
		return nil, err
	}
	if err := p.checkCQL(); err != nil {
		return nil, err
	}
	return p, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *Profile) yamlErr(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return p.errf(line, "", "invalid YAML: %s", m[2])
	}
	return p.errf(0, "", "invalid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
}

func (p *Profile) errf(line int, field, format string, args ...any) *Error {
	return &Error{File: p.Name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// decodeTop reads the top-level mapping.
func (p *Profile) decodeTop(m *yaml.Node) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		if !topLevel[key] {
			return p.errf(k.Line, key, "unknown profile field (known: %s)", strings.Join(slices.Sorted(maps.Keys(topLevel)), ", "))
		}
		p.lines[key] = v.Line
		p.block[key] = v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
		var err error
		switch key {
		case "columnspec":
			err = p.decodeColumnspec(v)
		case "queries":
			err = p.decodeQueries(v)
		case "insert":
			err = p.decodeInsert(v)
		case "extra_definitions":
			err = p.decodeExtra(v)
		case "token_range_queries":
			err = p.decodeTokenRange(v)
		default:
			err = p.decodeString(key, v)
		}
		if err != nil {
			return err
		}
	}
	if p.Insert.Partitions.IsZero() {
		p.Insert.Partitions = csdist.Fixed(1)
	}
	if p.Insert.Select.IsZero() {
		p.Insert.Select, _ = csdist.ParseRatio("fixed(1)/1")
	}
	if p.Insert.BatchType == "" {
		p.Insert.BatchType = "LOGGED"
	}
	return nil
}

func (p *Profile) decodeString(key string, v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode {
		return p.errf(v.Line, key, "must be a string")
	}
	s := strings.TrimSpace(v.Value)
	switch key {
	case "specname":
		p.SpecName = s
	case "keyspace":
		p.Keyspace = s
	case "keyspace_definition":
		p.KeyspaceDef = s
	case "table":
		p.Table = s
	case "table_definition":
		p.TableDef = s
	}
	return nil
}

func (p *Profile) decodeExtra(v *yaml.Node) error {
	if v.Kind != yaml.SequenceNode {
		return p.errf(v.Line, "extra_definitions", "must be a list of CQL statements")
	}
	for i, n := range v.Content {
		if n.Kind != yaml.ScalarNode {
			return p.errf(n.Line, fmt.Sprintf("extra_definitions[%d]", i), "must be a CQL statement")
		}
		p.lines[fmt.Sprintf("extra_definitions[%d]", i)] = n.Line
		p.block[fmt.Sprintf("extra_definitions[%d]", i)] = n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
		p.Extra = append(p.Extra, strings.TrimSpace(n.Value))
	}
	return nil
}

// decodeTokenRange reads token_range_queries: names to {columns,
// page_size} (StressYaml.TokenRangeQueryDef: page_size defaults to 5000;
// columns has no default, and TokenRangeQuery fails without it).
func (p *Profile) decodeTokenRange(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return p.errf(v.Line, "token_range_queries", "must be a mapping of names to {columns, page_size}")
	}
	p.TokenRangeQueries = map[string]TokenRangeQuery{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		name, def := strings.ToLower(v.Content[i].Value), v.Content[i+1]
		field := "token_range_queries." + name
		if def.Kind != yaml.MappingNode {
			return p.errf(def.Line, field, "must be a mapping {columns, page_size}")
		}
		q := TokenRangeQuery{Name: name, PageSize: 5000, Line: v.Content[i].Line}
		for j := 0; j+1 < len(def.Content); j += 2 {
			k, val := def.Content[j], def.Content[j+1]
			switch k.Value {
			case "columns":
				q.Columns, q.columnsLine = strings.TrimSpace(val.Value), val.Line
			case "page_size":
				n, err := strconv.Atoi(val.Value)
				if err != nil || n < 1 {
					return p.errf(val.Line, field+".page_size", "%q is not a positive integer", val.Value)
				}
				q.PageSize = n
			default:
				return p.errf(k.Line, field+"."+k.Value, "unknown field (known: columns, page_size)")
			}
		}
		if q.Columns == "" {
			return p.errf(q.Line, field+".columns", "is required: the columns to read (* for all of them)")
		}
		p.TokenRangeQueries[name] = q
	}
	return nil
}

// decodeColumnspec reads columnspec: a list of {name, size, population,
// cluster}, keys case-insensitive (StressProfile.init lowerCase(spec)).
func (p *Profile) decodeColumnspec(v *yaml.Node) error {
	if v.Kind != yaml.SequenceNode {
		return p.errf(v.Line, "columnspec", "must be a list of {name, size, population, cluster}")
	}
	for i, n := range v.Content {
		field := fmt.Sprintf("columnspec[%d]", i)
		if n.Kind != yaml.MappingNode {
			return p.errf(n.Line, field, "must be a mapping {name, size, population, cluster}")
		}
		var cs ColumnSpec
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, val := strings.ToLower(n.Content[j].Value), n.Content[j+1]
			if val.Kind != yaml.ScalarNode {
				return p.errf(val.Line, field+"."+k, "must be a string")
			}
			var err error
			switch k {
			case "name":
				cs.Name = strings.TrimSpace(val.Value)
			case "size":
				cs.Size, err = csdist.Parse(val.Value)
			case "population":
				cs.Population, err = csdist.Parse(val.Value)
			case "cluster":
				cs.Cluster, err = csdist.Parse(val.Value)
			default:
				return p.errf(n.Content[j].Line, field+"."+k, "unrecognised column spec option (known: name, size, population, cluster)")
			}
			if err != nil {
				return p.errf(val.Line, field+"."+k, "%v", err)
			}
		}
		if cs.Name == "" {
			return p.errf(n.Line, field+".name", "missing: every column spec names its column")
		}
		key := strings.ToLower(cs.Name)
		if _, dup := p.Columns[key]; dup {
			return p.errf(n.Line, field+".name", "column %q has two column specs", cs.Name)
		}
		p.Columns[key] = cs
		p.lines["columnspec."+key] = n.Line
	}
	return nil
}

// decodeQueries reads queries: name -> {cql, fields, consistencyLevel, serialConsistencyLevel}.
func (p *Profile) decodeQueries(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return p.errf(v.Line, "queries", "must be a mapping of names to {cql, fields}")
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		name := strings.ToLower(strings.TrimSpace(v.Content[i].Value))
		field := "queries." + name
		n := v.Content[i+1]
		if name == "insert" {
			// StressProfile.init means to refuse it but compares strings
			// by identity, so cassandra-stress accepts it and ops(insert=…)
			// runs the profile's insert: the query is never run. Noted.
			p.Ignored = append(p.Ignored, fmt.Sprintf("line %d: query insert is shadowed by the profile's insert (ops insert= runs the insert section, as in cassandra-stress)", v.Content[i].Line))
			continue
		}
		if n.Kind != yaml.MappingNode {
			return p.errf(n.Line, field, "must be a mapping {cql, fields}")
		}
		q := Query{Name: name, Line: n.Line}
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, val := n.Content[j].Value, n.Content[j+1]
			if val.Kind != yaml.ScalarNode {
				return p.errf(val.Line, field+"."+k, "must be a string")
			}
			switch strings.ToLower(k) {
			case "cql":
				q.CQL, q.Line = strings.TrimSpace(val.Value), val.Line
				if val.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
					q.Line++
				}
			case "fields":
				switch strings.ToLower(strings.TrimSpace(val.Value)) {
				case "samerow":
					q.SameRow = true
				case "multirow", "":
				default:
					return p.errf(val.Line, field+".fields", "%q: want samerow or multirow", val.Value)
				}
			case "consistencylevel":
				q.CL = strings.ToUpper(strings.TrimSpace(val.Value))
				if _, err := parseCL(q.CL); err != nil {
					return p.errf(val.Line, field+"."+k, "%v", err)
				}
			case "serialconsistencylevel":
				// LWT queries only; the serial level is the driver's default (SERIAL).
			default:
				return p.errf(n.Content[j].Line, field+"."+k, "unknown query field (known: cql, fields, consistencyLevel, serialConsistencyLevel)")
			}
		}
		if q.CQL == "" {
			return p.errf(n.Line, field+".cql", "missing: a query needs its CQL")
		}
		p.Queries[name] = q
	}
	return nil
}

// decodeInsert reads insert: partitions, select, batchtype, consistencyLevel
// (StressProfile.prepareQuery; unknown options are refused as it does).
func (p *Profile) decodeInsert(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return p.errf(v.Line, "insert", "must be a mapping {partitions, select, batchtype}")
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := strings.ToLower(v.Content[i].Value), v.Content[i+1]
		field := "insert." + k
		if val.Kind != yaml.ScalarNode {
			return p.errf(val.Line, field, "must be a string")
		}
		s := strings.TrimSpace(val.Value)
		if s == "" { // an empty option takes the default, as select() does
			continue
		}
		var err error
		switch k {
		case "partitions", "select", "row-population", "batchtype":
			err = p.Insert.set(k, s)
		case "consistencylevel":
			p.Insert.CL = strings.ToUpper(s)
			_, err = parseCL(p.Insert.CL)
		case "serialconsistencylevel":
		default:
			return p.errf(v.Content[i].Line, field, "unrecognised insert option (known: partitions, select, row-population, batchtype, consistencyLevel, serialConsistencyLevel)")
		}
		if err != nil {
			return p.errf(val.Line, field, "%v", err)
		}
	}
	return nil
}

// set sets the insert option name (partitions, select, row-population,
// batchtype) to v, as the profile's insert: section and a user command
// line's -insert (partitions=, select-ratio=, row-population-ratio=,
// batchtype=) both give them.
func (ins *Insert) set(name, v string) error {
	var err error
	switch name {
	case "partitions":
		var d csdist.Dist
		if d, err = csdist.Parse(v); err == nil {
			if lo, _ := d.Bounds(); lo < 1 {
				return fmt.Errorf("%s: a batch writes at least one partition", v)
			}
			ins.Partitions = d
		}
	case "select":
		ins.Select, err = csdist.ParseRatio(v)
	case "row-population":
		ins.RowPopulation, err = csdist.ParseRatio(v)
	case "batchtype":
		ins.BatchType = strings.ToUpper(v)
		if ins.BatchType != "LOGGED" && ins.BatchType != "UNLOGGED" && ins.BatchType != "COUNTER" {
			err = fmt.Errorf("%q: want LOGGED, UNLOGGED or COUNTER", v)
		}
	}
	return err
}

// applyInsertOptions applies a user command line's -insert parameters
// (settings/SettingsInsert.java's options: partitions=, select-ratio=,
// row-population-ratio=, batchtype=, visits=, revisit=), which win over
// the profile's insert: section as StressProfile's select() lets them.
func (p *Profile) applyInsertOptions(text string) error {
	for _, param := range strings.Fields(text) {
		k, v, ok := strings.Cut(param, "=")
		k = strings.ToLower(k)
		if !ok || v == "" {
			return fmt.Errorf("-insert %s: want name=value (partitions=, select-ratio=, row-population-ratio=, batchtype=, visits=, revisit=)", param)
		}
		var err error
		switch k {
		case "partitions", "batchtype":
			err = p.Insert.set(k, v)
		case "select-ratio":
			err = p.Insert.set("select", v)
		case "row-population-ratio":
			if err = p.Insert.set("row-population", v); err == nil {
				err = p.checkRowPopulation()
			}
		case "visits":
			if !strings.EqualFold(v, "fixed(1)") {
				err = fmt.Errorf("not supported: a partition is written in one insert here (visits=fixed(1), the default)")
			}
		case "revisit": // no effect with one visit per partition, as in cassandra-stress
		default:
			err = fmt.Errorf("unknown -insert option (SettingsInsert has partitions=, select-ratio=, row-population-ratio=, batchtype=, visits=, revisit=)")
		}
		if err != nil {
			return fmt.Errorf("-insert %s: %w", param, err)
		}
	}
	return nil
}

func (p *Profile) checkRequired() error {
	var errs []error
	for _, f := range []struct{ name, val string }{{"keyspace", p.Keyspace}, {"table", p.Table}, {"table_definition", p.TableDef}} {
		if f.val == "" {
			errs = append(errs, p.errf(p.lines[f.name], f.name, "missing or empty: a profile needs keyspace, table and table_definition here"))
		}
	}
	return errors.Join(errs...)
}

// ParseOps reads cassandra-stress's ops(...) ("insert=1,read1=2", the
// ops( ) wrapper optional) against the profile's names.
func (p *Profile) ParseOps(ops string) ([]OpWeight, error) {
	s := strings.TrimSpace(ops)
	if strings.HasPrefix(strings.ToLower(s), "ops(") && strings.HasSuffix(s, ")") {
		s = s[4 : len(s)-1]
	}
	if s == "" {
		return nil, fmt.Errorf("ops %q: empty; want e.g. insert=1,read1=2", ops)
	}
	var out []OpWeight
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("ops %q: %q is not name=weight", ops, part)
		}
		weight, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || !(weight > 0) || weight > 1e9 {
			return nil, fmt.Errorf("ops %q: weight of %s %q must be a positive number", ops, name, w)
		}
		if seen[name] {
			return nil, fmt.Errorf("ops %q: %s named twice", ops, name)
		}
		seen[name] = true
		if err := p.checkOpName(name); err != nil {
			return nil, fmt.Errorf("ops %q: %w", ops, err)
		}
		out = append(out, OpWeight{Name: name, Weight: weight})
	}
	return out, nil
}

// OpWeight is one operation of ops(...).
type OpWeight struct {
	Name   string
	Weight float64
}

func (p *Profile) checkOpName(name string) error {
	if name == "insert" {
		return nil
	}
	if _, ok := p.Queries[name]; ok {
		return nil
	}
	if _, ok := p.TokenRangeQueries[name]; ok {
		return nil
	}
	return fmt.Errorf("unknown operation %s (the profile has: %s)", name, strings.Join(p.opNames(), ", "))
}

func (p *Profile) opNames() []string {
	names := []string{"insert"}
	return append(append(names, slices.Sorted(maps.Keys(p.Queries))...), slices.Sorted(maps.Keys(p.TokenRangeQueries))...)
}
