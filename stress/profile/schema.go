package profile

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
)

// The profile's CQL is checked with the emulator's CQL parser
// (emulator/cql/cqlparse, a pure parser of ScyllaDB's grammar, no emulator
// behaviour): `validate` refuses a profile whose definitions or queries do
// not parse, and the table definition gives the columns, their types and
// the primary key without a cluster (cassandra-stress reads them from the
// driver's table metadata, StressProfile.maybeLoadSchemaInfo).

// table is the profile's table as its definition declares it.
type table struct {
	cols       []*column          // partition key, clustering, then the others, in definition order
	byName     map[string]*column // by lower-case name
	pk, ck     []*column
	regular    []*column // neither key nor static: what a row's insert sets
	static     []*column // written with the partition's first row
	counter    bool      // the table's values are counters
	clusterDsc []bool    // CLUSTERING ORDER ... DESC per clustering column
}

// column is one column of the table and its value generator.
type column struct {
	name string // as the definition spells it (quoted when needed in CQL)
	typ  *ctype
	spec ColumnSpec
	gen  *generator
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

// checkCQL parses the profile's CQL and builds its table.
func (p *Profile) checkCQL() error {
	if !identRE.MatchString(strings.ToLower(p.Keyspace)) {
		return p.errf(p.lines["keyspace"], "keyspace", "%q is not a plain CQL identifier", p.Keyspace)
	}
	if !identRE.MatchString(strings.ToLower(p.Table)) {
		return p.errf(p.lines["table"], "table", "%q is not a plain CQL identifier", p.Table)
	}
	if p.KeyspaceDef != "" {
		st, err := parseCQL(p.KeyspaceDef)
		ks, ok := st.(*cqlparse.CreateKeyspace)
		switch {
		case err != nil:
			return p.cqlErr("keyspace_definition", err)
		case !ok:
			return p.errf(p.lines["keyspace_definition"], "keyspace_definition", "is a %s statement, not CREATE KEYSPACE", st.Name())
		case !strings.EqualFold(ks.Keyspace, p.Keyspace):
			return p.errf(p.lines["keyspace_definition"], "keyspace_definition", "creates keyspace %q, not the profile's keyspace %q", ks.Keyspace, p.Keyspace)
		}
	}
	for i, x := range p.Extra {
		field := fmt.Sprintf("extra_definitions[%d]", i)
		if _, err := parseCQL(x); err != nil {
			return p.cqlErr(field, err)
		}
		if _, err := p.qualifyExtra(x); err != nil {
			return p.errf(p.lines[field], field, "%v", err)
		}
	}
	if err := p.buildTable(); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(p.Queries)) {
		q := p.Queries[name]
		if _, err := p.bindQuery(q); err != nil {
			return p.cqlErrAt(q.Line, false, "queries."+name+".cql", err)
		}
	}
	if err := p.checkRowPopulation(); err != nil {
		return p.errf(p.lines["insert"], "insert.row-population", "%v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(p.TokenRangeQueries)) {
		q := p.TokenRangeQueries[name]
		if _, ok := p.Queries[name]; ok {
			// StressProfile.init asserts the names apart.
			return p.errf(q.Line, "token_range_queries."+name, "%s is in both queries and token_range_queries: use different names", name)
		}
		if _, err := p.scanCQL(q); err != nil {
			return p.errf(q.columnsLine, "token_range_queries."+name+".columns", "%v", err)
		}
	}
	return nil
}

// cqlLineRE is the parser's position in its errors ("line 12:2 ...").
var cqlLineRE = regexp.MustCompile(`\bline (\d+):\d+`)

// cqlErr places a CQL error of field at the YAML line of the CQL's line.
func (p *Profile) cqlErr(field string, err error) *Error {
	return p.cqlErrAt(p.lines[field], p.block[field], field, err)
}

// cqlErrAt places err at the YAML line of its CQL line, the CQL starting
// at line (or the line after, for a block scalar).
func (p *Profile) cqlErrAt(line int, block bool, field string, err error) *Error {
	if block {
		line++
	}
	if m := cqlLineRE.FindStringSubmatch(err.Error()); m != nil && line > 0 {
		n, _ := strconv.Atoi(m[1])
		line += n - 1
	}
	return p.errf(line, field, "%v", err)
}

// parseCQL parses one statement (a trailing ';' allowed).
func parseCQL(src string) (cqlparse.Statement, error) {
	st, _, err := cqlparse.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("CQL does not parse: %v", err)
	}
	return st, nil
}

// buildTable reads the table definition into p's table.
func (p *Profile) buildTable() error {
	line := p.lines["table_definition"]
	st, err := parseCQL(p.TableDef)
	if err != nil {
		return p.cqlErr("table_definition", err)
	}
	ct, ok := st.(*cqlparse.CreateTable)
	switch {
	case !ok:
		return p.errf(line, "table_definition", "is a %s statement, not CREATE TABLE", st.Name())
	case !strings.EqualFold(ct.Table, p.Table):
		return p.errf(line, "table_definition", "creates table %q, not the profile's table %q", ct.Table, p.Table)
	case ct.Keyspace != "" && !strings.EqualFold(ct.Keyspace, p.Keyspace):
		return p.errf(line, "table_definition", "creates its table in keyspace %q, not the profile's %q", ct.Keyspace, p.Keyspace)
	}
	t, err := newTable(ct, p.Columns)
	if err != nil {
		return p.errf(line, "table_definition", "%v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Columns)) {
		if t.byName[name] == nil {
			// StressProfile keeps column specs by name and uses those of
			// the table's columns: others are ignored, here with a note.
			p.Ignored = append(p.Ignored, fmt.Sprintf("line %d: columnspec of %q ignored: table %s has no such column", p.lines["columnspec."+name], name, p.Table))
		}
	}
	p.table = t
	return nil
}

// newTable builds the table of a CREATE TABLE with the column specs.
func newTable(ct *cqlparse.CreateTable, specs map[string]ColumnSpec) (*table, error) {
	t := &table{byName: map[string]*column{}}
	key := map[string]bool{}
	for _, c := range ct.Columns {
		typ, err := parseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		col := &column{name: c.Name, typ: typ, spec: specs[strings.ToLower(c.Name)]}
		col.gen = newGenerator(col.typ, col.spec)
		t.byName[strings.ToLower(c.Name)] = col
		if c.Static {
			t.static = append(t.static, col)
		}
		if typ.kind == kCounter {
			t.counter = true
		}
	}
	for _, names := range [][]string{ct.PartitionKey, ct.Clustering} {
		for _, n := range names {
			col := t.byName[strings.ToLower(n)]
			if col == nil {
				return nil, fmt.Errorf("primary key column %s is not defined", n)
			}
			key[strings.ToLower(n)] = true
		}
	}
	for _, n := range ct.PartitionKey {
		t.pk = append(t.pk, t.byName[strings.ToLower(n)])
	}
	for _, n := range ct.Clustering {
		t.ck = append(t.ck, t.byName[strings.ToLower(n)])
		t.clusterDsc = append(t.clusterDsc, ct.ClusteringOrder[n] || ct.ClusteringOrder[strings.ToLower(n)])
	}
	t.cols = append(append(t.cols, t.pk...), t.ck...)
	for _, c := range ct.Columns {
		col := t.byName[strings.ToLower(c.Name)]
		if key[strings.ToLower(c.Name)] {
			if col.typ.kind == kCounter || col.typ.isCollection() && !col.typ.frozen {
				return nil, fmt.Errorf("key column %s cannot be a counter or a non-frozen collection", c.Name)
			}
			continue
		}
		t.cols = append(t.cols, col)
		if !c.Static {
			t.regular = append(t.regular, col)
		}
	}
	return t, nil
}

// quoteIdent quotes a name unless it is a plain lower-case identifier
// (StressProfile.quoteIdentifier).
func quoteIdent(s string) string {
	if identRE.MatchString(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// insertCQL is the insert's statement (StressProfile.prepareQuery): an
// UPDATE setting every non-key column (counters and non-frozen lists and
// sets added to, as cassandra-stress does; maps, which it cannot generate,
// merged likewise), or an INSERT of the key when the table has no other
// column. Static columns are set by the partition's first row only
// (staticCQL).
func (p *Profile) insertCQL(cols []*column) (string, []*column) {
	t := p.table
	name := quoteIdent(strings.ToLower(p.Keyspace)) + "." + quoteIdent(strings.ToLower(p.Table))
	keys := append(append([]*column{}, t.pk...), t.ck...)
	if len(cols) == 0 {
		var names, marks []string
		for _, c := range keys {
			names, marks = append(names, quoteIdent(c.name)), append(marks, "?")
		}
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", name, strings.Join(names, ", "), strings.Join(marks, ", ")), keys
	}
	var set, where []string
	for _, c := range cols {
		q := quoteIdent(c.name)
		if c.typ.kind == kCounter || c.typ.isCollection() && !c.typ.frozen {
			set = append(set, q+" = "+q+" + ?")
		} else {
			set = append(set, q+" = ?")
		}
	}
	for _, c := range keys {
		where = append(where, quoteIdent(c.name)+" = ?")
	}
	return fmt.Sprintf("UPDATE %s SET %s WHERE %s", name, strings.Join(set, ", "), strings.Join(where, " AND ")),
		append(append([]*column{}, cols...), keys...)
}

// Schema statements: the profile's definitions, made idempotent and
// qualified with the keyspace (cassandra-stress runs them after `USE ks`,
// which a pooled driver session cannot).
var (
	createKeyspaceRE = regexp.MustCompile(`(?is)^\s*CREATE\s+KEYSPACE\s+(IF\s+NOT\s+EXISTS\s+)?`)
	createTableRE    = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:TABLE|COLUMNFAMILY)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:"?\w+"?\s*\.\s*)?"?\w+"?`)
	createIndexRE    = regexp.MustCompile(`(?is)^(\s*CREATE\s+(?:CUSTOM\s+)?INDEX\s+)(IF\s+NOT\s+EXISTS\s+)?(.*?\bON\s+)("?\w+"?)(\s*\()`)
	createViewRE     = regexp.MustCompile(`(?is)^(\s*CREATE\s+MATERIALIZED\s+VIEW\s+)(IF\s+NOT\s+EXISTS\s+)?("?\w+"?)(\s.*?\bFROM\s+)("?\w+"?)(\s)`)
	createTypeRE     = regexp.MustCompile(`(?is)^(\s*CREATE\s+TYPE\s+)(IF\s+NOT\s+EXISTS\s+)?("?\w+"?)(\s*\()`)
)

func (p *Profile) keyspaceStatement() string {
	return createKeyspaceRE.ReplaceAllLiteralString(p.KeyspaceDef, "CREATE KEYSPACE IF NOT EXISTS ")
}

func (p *Profile) tableStatement() string {
	head := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s", strings.ToLower(p.Keyspace), quoteIdent(p.table.nameOf(p.Table)))
	return createTableRE.ReplaceAllLiteralString(p.TableDef, head)
}

func (t *table) nameOf(s string) string { return strings.ToLower(strings.Trim(s, `"`)) }

// qualifyExtra makes an extra definition idempotent and names its
// keyspace where it names none: CREATE INDEX, MATERIALIZED VIEW and TYPE
// are rewritten; any other statement must name its keyspace itself.
func (p *Profile) qualifyExtra(src string) (string, error) {
	st, err := parseCQL(src)
	if err != nil {
		return "", err
	}
	ks := strings.ToLower(p.Keyspace)
	switch s := st.(type) {
	case *cqlparse.CreateIndex:
		if s.Keyspace != "" {
			return addIfNotExists(createIndexRE, src, 2), nil
		}
		return createIndexRE.ReplaceAllString(src, "${1}IF NOT EXISTS ${3}"+ks+".${4}${5}"), nil
	case *cqlparse.CreateView:
		if s.Keyspace != "" && s.BaseKeyspace != "" {
			return addIfNotExists(createViewRE, src, 2), nil
		}
		if s.Keyspace != "" || s.BaseKeyspace != "" {
			return "", errors.New("name the keyspace of both the view and its base table, or of neither")
		}
		return createViewRE.ReplaceAllString(src, "${1}IF NOT EXISTS "+ks+".${3}${4}"+ks+".${5}${6}"), nil
	case *cqlparse.CreateType:
		if s.Keyspace != "" {
			return addIfNotExists(createTypeRE, src, 2), nil
		}
		return createTypeRE.ReplaceAllString(src, "${1}IF NOT EXISTS "+ks+".${3}${4}"), nil
	case *cqlparse.AlterTable:
		if s.Keyspace == "" {
			return "", fmt.Errorf("name the keyspace (ALTER TABLE %s.%s): the schema runs without USE", ks, s.Table)
		}
	}
	return src, nil
}

// addIfNotExists inserts IF NOT EXISTS where re's group g is empty.
func addIfNotExists(re *regexp.Regexp, src string, g int) string {
	m := re.FindStringSubmatchIndex(src)
	if m == nil || m[2*g] >= 0 {
		return src
	}
	at := m[3] // end of group 1
	return src[:at] + "IF NOT EXISTS " + src[at:]
}

// parseCL reads a consistency level name.
func parseCL(s string) (gocql.Consistency, error) {
	switch strings.ToUpper(s) {
	case "ANY":
		return gocql.Any, nil
	case "ONE":
		return gocql.One, nil
	case "TWO":
		return gocql.Two, nil
	case "THREE":
		return gocql.Three, nil
	case "QUORUM":
		return gocql.Quorum, nil
	case "ALL":
		return gocql.All, nil
	case "LOCAL_QUORUM":
		return gocql.LocalQuorum, nil
	case "EACH_QUORUM":
		return gocql.EachQuorum, nil
	case "LOCAL_ONE":
		return gocql.LocalOne, nil
	}
	return 0, fmt.Errorf("unknown consistency level %q", s)
}

// checkRowPopulation refuses partial rows of a counter table: a null
// counter increment is refused by the database.
func (p *Profile) checkRowPopulation() error {
	if rp := p.Insert.RowPopulation; !rp.IsZero() && p.table.counter && rp.Min() < 1 {
		return fmt.Errorf("%s: a counter table's rows are written whole (its increments cannot be null)", rp)
	}
	return nil
}
