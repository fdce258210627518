package cqlparse

// IndexTarget is one target of CREATE INDEX (cql3/Cql.g indexIdent): a
// column, keys(c), values(c), entries(c) or full(c), or for a local index
// the parenthesised partition key columns.
type IndexTarget struct {
	Column string
	// Type is "" (the column's values), "keys", "values", "entries" or "full".
	Type string
	// Columns is a local index's partition key: CREATE INDEX ON t((p), c).
	Columns []string
}

// CreateIndex is CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON table
// (targets) [USING 'class' [WITH OPTIONS = {...}]] [WITH properties].
type CreateIndex struct {
	Keyspace, Table string
	Index           string // "" = the default name
	IfNotExists     bool
	Custom          bool
	Targets         []IndexTarget
	Class           string
	Options         map[string]string // WITH OPTIONS = {...}
	// Properties are the other WITH properties (of the index's view).
	Properties map[string]Term
	Ordering   map[string]bool
}

// DropIndex is DROP INDEX [IF EXISTS] [ks.]name.
type DropIndex struct {
	Keyspace, Index string
	IfExists        bool
}

// CreateView is CREATE MATERIALIZED VIEW [IF NOT EXISTS] [ks.]name AS
// SELECT columns FROM [ks.]base WHERE ... PRIMARY KEY (...) [WITH ...].
type CreateView struct {
	Keyspace, View     string
	BaseKeyspace, Base string
	IfNotExists        bool
	Columns            []Selector // empty: SELECT *
	Where              []Relation
	PartitionKey       []string
	Clustering         []string
	ClusteringOrder    map[string]bool
	CompactStorage     bool
	Options            map[string]Term
	Binds              int
}

// DropView is DROP MATERIALIZED VIEW [IF EXISTS] [ks.]name.
type DropView struct {
	Keyspace, View string
	IfExists       bool
}

// AlterView is ALTER MATERIALIZED VIEW [ks.]name WITH options.
type AlterView struct {
	Keyspace, View string
	Options        map[string]Term
}

// FunctionStmt is CREATE [OR REPLACE] FUNCTION|AGGREGATE and DROP
// FUNCTION|AGGREGATE (cql3/Cql.g createFunctionStatement,
// createAggregateStatement, dropFunctionStatement, dropAggregateStatement).
type FunctionStmt struct {
	Verb               string // CREATE or DROP
	Aggregate          bool
	Keyspace, Function string
	OrReplace          bool
	IfNotExists        bool
	IfExists           bool
	// ArgTypes are the argument types; ArgsPresent says a DROP named them.
	ArgTypes    []string
	ArgsPresent bool
	// A function's argument names, null-input behaviour, return type,
	// language and body.
	ArgNames          []string
	CalledOnNullInput bool
	ReturnType        string
	Language, Body    string
	// An aggregate's SFUNC, STYPE, REDUCEFUNC, FINALFUNC and INITCOND.
	SFunc, SType, ReduceFunc, FinalFunc string
	InitCond                            *Term
}

func (*CreateIndex) Name() string { return "CREATE INDEX" }
func (*DropIndex) Name() string   { return "DROP INDEX" }
func (*CreateView) Name() string  { return "CREATE MATERIALIZED VIEW" }
func (*DropView) Name() string    { return "DROP MATERIALIZED VIEW" }
func (*AlterView) Name() string   { return "ALTER MATERIALIZED VIEW" }
func (f *FunctionStmt) Name() string {
	if f.Aggregate {
		return f.Verb + " AGGREGATE"
	}
	return f.Verb + " FUNCTION"
}

// createIndex parses the rest of CREATE [CUSTOM] INDEX (cql3/Cql.g
// createIndexStatement).
func (p *parser) createIndex(custom bool) (Statement, error) {
	ine, err := p.ifNotExists()
	if err != nil {
		return nil, err
	}
	st := &CreateIndex{Custom: custom, IfNotExists: ine, Options: map[string]string{}, Properties: map[string]Term{}, Ordering: map[string]bool{}}
	if !p.isKw("on") {
		if st.Index, err = p.ident("index name"); err != nil {
			return nil, err
		}
	}
	if err := p.expectKw("on"); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Table, err = p.qualifiedName("table name"); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	if !p.accept(")") {
		for {
			t, err := p.indexTarget()
			if err != nil {
				return nil, err
			}
			st.Targets = append(st.Targets, t)
			if p.accept(")") {
				break
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	if p.acceptKw("using") {
		t := p.next()
		if t.kind != tString {
			return nil, p.errf("expecting the index class name, got %s", t)
		}
		st.Class = t.text
	}
	if p.acceptKw("with") {
		if p.isKw("options") && p.peekAt(1).kind == tSymbol && p.peekAt(1).text == "=" {
			p.i += 2
			t, err := p.term()
			if err != nil {
				return nil, err
			}
			for i, k := range t.Keys {
				st.Options[k.Text] = t.Values[i].Text
			}
			if !p.acceptKw("and") {
				return st, nil
			}
		}
		var compact bool
		if err := p.tableProperties(st.Ordering, &compact, st.Properties); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// indexTarget is one target of CREATE INDEX.
func (p *parser) indexTarget() (IndexTarget, error) {
	if p.accept("(") {
		var t IndexTarget
		err := p.commaList(func() error {
			c, err := p.ident("partition key column")
			t.Columns = append(t.Columns, c)
			return err
		})
		if err == nil {
			err = p.expect(")")
		}
		return t, err
	}
	for _, kind := range []string{"keys", "values", "entries", "full"} {
		if p.isKw(kind) && p.peekAt(1).kind == tSymbol && p.peekAt(1).text == "(" {
			p.i += 2
			c, err := p.ident("column name")
			if err == nil {
				err = p.expect(")")
			}
			return IndexTarget{Column: c, Type: kind}, err
		}
	}
	c, err := p.ident("column name")
	return IndexTarget{Column: c}, err
}

// createView parses the rest of CREATE MATERIALIZED VIEW (cql3/Cql.g
// createViewStatement).
func (p *parser) createView() (Statement, error) {
	ine, err := p.ifNotExists()
	if err != nil {
		return nil, err
	}
	st := &CreateView{IfNotExists: ine, ClusteringOrder: map[string]bool{}, Options: map[string]Term{}}
	if st.Keyspace, st.View, err = p.qualifiedName("view name"); err != nil {
		return nil, err
	}
	if err := p.expectKw("as"); err != nil {
		return nil, err
	}
	if !p.isKw("select") {
		return nil, p.errf("expecting SELECT, got %s", p.peek())
	}
	sel, err := p.selectStmt()
	if err != nil {
		return nil, err
	}
	s := sel.(*Select)
	if s.Limit != nil || s.PerPartitionLimit != nil || len(s.OrderBy) > 0 || s.Distinct || s.Count || len(s.GroupBy) > 0 {
		return nil, p.errf("a materialized view's SELECT takes columns, FROM and WHERE only")
	}
	st.BaseKeyspace, st.Base, st.Columns, st.Where = s.Keyspace, s.Table, s.Columns, s.Where
	if err := p.expectKw("primary"); err != nil {
		return nil, err
	}
	if err := p.expectKw("key"); err != nil {
		return nil, err
	}
	ct := &CreateTable{}
	if err := p.primaryKey(ct); err != nil {
		return nil, err
	}
	st.PartitionKey, st.Clustering = ct.PartitionKey, ct.Clustering
	if p.acceptKw("with") {
		if err := p.tableProperties(st.ClusteringOrder, &st.CompactStorage, st.Options); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// materializedView reads "MATERIALIZED VIEW" after CREATE, DROP or ALTER.
func (p *parser) materializedView() bool {
	if p.isKw("materialized") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "view" {
		p.i += 2
		return true
	}
	return false
}

// dropObject parses DROP INDEX / MATERIALIZED VIEW / FUNCTION / AGGREGATE.
func (p *parser) dropObject(kind string) (Statement, error) {
	ifExists, err := p.ifExists()
	if err != nil {
		return nil, err
	}
	ks, name, err := p.qualifiedName(kind + " name")
	if err != nil {
		return nil, err
	}
	switch kind {
	case "index":
		return &DropIndex{Keyspace: ks, Index: name, IfExists: ifExists}, nil
	case "view":
		return &DropView{Keyspace: ks, View: name, IfExists: ifExists}, nil
	}
	st := &FunctionStmt{Verb: "DROP", Aggregate: kind == "aggregate", Keyspace: ks, Function: name, IfExists: ifExists}
	if p.accept("(") {
		st.ArgsPresent = true
		if !p.accept(")") {
			if err := p.commaListIn(func() error {
				t, err := p.cqlType()
				st.ArgTypes = append(st.ArgTypes, t)
				return err
			}); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// commaListIn parses item, item ... ) after an opening parenthesis.
func (p *parser) commaListIn(item func() error) error {
	for {
		if err := item(); err != nil {
			return err
		}
		if !p.accept(",") {
			return p.expect(")")
		}
	}
}

// functionHead parses CREATE [OR REPLACE] FUNCTION|AGGREGATE [IF NOT
// EXISTS] name (...) and the rest of the statement.
func (p *parser) functionHead(aggregate, orReplace bool) (Statement, error) {
	ine, err := p.ifNotExists()
	if err != nil {
		return nil, err
	}
	ks, name, err := p.qualifiedName("function name")
	if err != nil {
		return nil, err
	}
	st := &FunctionStmt{Verb: "CREATE", Aggregate: aggregate, Keyspace: ks, Function: name, OrReplace: orReplace, IfNotExists: ine}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	if !p.accept(")") {
		if err := p.commaListIn(func() error {
			if !aggregate {
				n, err := p.ident("argument name")
				if err != nil {
					return err
				}
				st.ArgNames = append(st.ArgNames, n)
			}
			t, err := p.cqlType()
			st.ArgTypes = append(st.ArgTypes, t)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if aggregate {
		return st, p.aggregateBody(st)
	}
	return st, p.functionBody(st)
}

// functionBody parses (CALLED | RETURNS NULL) ON NULL INPUT RETURNS type
// LANGUAGE lang AS 'body'.
func (p *parser) functionBody(st *FunctionStmt) error {
	switch {
	case p.acceptKw("called"):
		st.CalledOnNullInput = true
	case p.acceptKw("returns"):
		if err := p.expectKw("null"); err != nil {
			return err
		}
	default:
		return p.errf("expecting CALLED or RETURNS NULL, got %s", p.peek())
	}
	for _, kw := range []string{"on", "null", "input", "returns"} {
		if err := p.expectKw(kw); err != nil {
			return err
		}
	}
	var err error
	if st.ReturnType, err = p.cqlType(); err != nil {
		return err
	}
	if err := p.expectKw("language"); err != nil {
		return err
	}
	if st.Language, err = p.ident("language"); err != nil {
		return err
	}
	if err := p.expectKw("as"); err != nil {
		return err
	}
	if t := p.peek(); t.kind != tString {
		return p.errf("expecting the function body as a string, got %s", t)
	}
	st.Body = p.next().text
	return nil
}

// aggregateBody parses SFUNC f STYPE t [REDUCEFUNC f] [FINALFUNC f]
// [INITCOND term].
func (p *parser) aggregateBody(st *FunctionStmt) error {
	var err error
	if err = p.expectKw("sfunc"); err != nil {
		return err
	}
	if st.SFunc, err = p.ident("state function"); err != nil {
		return err
	}
	if err = p.expectKw("stype"); err != nil {
		return err
	}
	if st.SType, err = p.cqlType(); err != nil {
		return err
	}
	if p.acceptKw("reducefunc") {
		if st.ReduceFunc, err = p.ident("reduce function"); err != nil {
			return err
		}
	}
	if p.acceptKw("finalfunc") {
		if st.FinalFunc, err = p.ident("final function"); err != nil {
			return err
		}
	}
	if p.acceptKw("initcond") {
		t, err := p.term()
		if err != nil {
			return err
		}
		st.InitCond = &t
	}
	return nil
}
