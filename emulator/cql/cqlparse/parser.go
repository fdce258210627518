package cqlparse

import (
	"fmt"
	"strings"
	"time"
)

// SyntaxError is a statement the parser cannot read. Servers report it with
// the protocol's SyntaxError code.
type SyntaxError struct {
	Statement string // statement name if known, e.g. "SELECT"
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Statement != "" {
		return fmt.Sprintf("%s: %s", e.Statement, e.Msg)
	}
	return e.Msg
}

// maxDepth bounds nesting of collection literals and types.
const maxDepth = 32

// maxLen bounds the statement text the parser accepts.
const maxLen = 1 << 20

// BindNames returns the names of a statement's bind variables in order:
// the name of a :name marker, "" for a ? marker (nil when it does not
// lex). A name used twice is one variable (ScyllaDB's default,
// cql_duplicate_bind_variable_names_refer_to_same_variable) unless
// separate is set.
func BindNames(src string, separate bool) []string {
	toks, err := lex(src)
	if err != nil {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	for _, t := range toks {
		switch t.kind {
		case tBind:
			names = append(names, "")
		case tNamedBind:
			if seen[t.text] && !separate {
				continue
			}
			seen[t.text] = true
			names = append(names, t.text)
		}
	}
	return names
}

// Parse parses one statement (an optional trailing ';' is allowed) and
// returns it with the number of bind variables it has; a :name used twice
// is one variable, as ScyllaDB's default dialect has it.
func Parse(src string) (Statement, int, error) { return ParseDialect(src, false) }

// ParseDialect is Parse; with separateNames every marker is a variable of
// its own, as in Cassandra (ScyllaDB's
// cql_duplicate_bind_variable_names_refer_to_same_variable: false).
func ParseDialect(src string, separateNames bool) (Statement, int, error) {
	if len(src) > maxLen {
		return nil, 0, &SyntaxError{Msg: fmt.Sprintf("statement too long (%d bytes)", len(src))}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, 0, &SyntaxError{Statement: firstWord(src), Msg: err.Error()}
	}
	p := &parser{toks: toks, src: src}
	if !separateNames {
		p.named = map[string]int{}
	}
	st, err := p.statement()
	if err != nil {
		return nil, 0, err
	}
	p.accept(";")
	if p.peek().kind != tEOF {
		return nil, 0, p.errf("unexpected %s after end of statement", p.peek())
	}
	return st, p.binds, nil
}

func firstWord(src string) string {
	f := strings.Fields(src)
	if len(f) == 0 {
		return ""
	}
	w := strings.ToUpper(f[0])
	if len(w) > 20 {
		w = w[:20]
	}
	return w
}

type parser struct {
	toks  []token
	i     int
	src   string
	stmt  string // current statement name for errors
	binds int
	// named maps a :name to its variable when repeated names share one
	// (nil: every marker is a variable).
	named map[string]int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errf(format string, args ...any) error {
	t := p.peek()
	line, col := 1, 0
	for i := 0; i < t.pos && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line++
			col = 0
		} else {
			col++
		}
	}
	return &SyntaxError{Statement: p.stmt, Msg: fmt.Sprintf("line %d:%d %s", line, col, fmt.Sprintf(format, args...))}
}

// isKw reports whether the next token is the keyword kw (lower case).
func (p *parser) isKw(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && t.text == kw
}

func (p *parser) acceptKw(kw string) bool {
	if p.isKw(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(kw string) error {
	if !p.acceptKw(kw) {
		return p.errf("expecting %s, got %s", strings.ToUpper(kw), p.peek())
	}
	return nil
}

func (p *parser) accept(sym string) bool {
	t := p.peek()
	if t.kind == tSymbol && t.text == sym {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(sym string) error {
	if !p.accept(sym) {
		return p.errf("expecting '%s', got %s", sym, p.peek())
	}
	return nil
}

// ident reads an identifier (unquoted: lower-cased; quoted: verbatim).
func (p *parser) ident(what string) (string, error) {
	t := p.peek()
	if t.kind == tIdent || t.kind == tQuotedIdent {
		p.i++
		return t.text, nil
	}
	return "", p.errf("expecting %s, got %s", what, t)
}

// typeIdent is ident for a name inside a type: a quoted name stays quoted
// (with "" for a quote) so that a user type keeps its case and may hold
// any character (Cql.g userTypeName takes a quoted identifier verbatim).
func (p *parser) typeIdent(what string) (string, error) {
	quoted := p.peek().kind == tQuotedIdent
	name, err := p.ident(what)
	if err != nil || !quoted {
		return name, err
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`, nil
}

// qualifiedName reads [keyspace.]name.
func (p *parser) qualifiedName(what string) (ks, name string, err error) {
	name, err = p.ident(what)
	if err != nil {
		return "", "", err
	}
	if p.accept(".") {
		ks = name
		if name, err = p.ident(what); err != nil {
			return "", "", err
		}
	}
	return ks, name, nil
}

func (p *parser) statement() (Statement, error) {
	t := p.peek()
	if t.kind != tIdent {
		return nil, p.errf("no viable alternative at input %s", t)
	}
	switch t.text {
	case "select":
		p.stmt = "SELECT"
		return p.selectStmt()
	case "insert":
		p.stmt = "INSERT"
		return p.insertStmt()
	case "update":
		p.stmt = "UPDATE"
		return p.updateStmt()
	case "delete":
		p.stmt = "DELETE"
		return p.deleteStmt()
	case "create":
		p.i++
		switch {
		case p.acceptKw("keyspace"), p.acceptKw("schema"):
			p.stmt = "CREATE KEYSPACE"
			return p.createKeyspace()
		case p.acceptKw("table"), p.acceptKw("columnfamily"):
			p.stmt = "CREATE TABLE"
			return p.createTable()
		case p.acceptKw("type"):
			p.stmt = "CREATE TYPE"
			return p.createType()
		case p.acceptKw("index"):
			p.stmt = "CREATE INDEX"
			return p.createIndex(false)
		case p.isKw("custom") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "index":
			p.i += 2
			p.stmt = "CREATE INDEX"
			return p.createIndex(true)
		case p.materializedView():
			p.stmt = "CREATE MATERIALIZED VIEW"
			return p.createView()
		case p.isKw("or") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "replace":
			p.i += 2
			if p.isKw("function") || p.isKw("aggregate") {
				p.stmt = "CREATE " + strings.ToUpper(p.peek().text)
				return p.functionHead(p.next().text == "aggregate", true)
			}
		case p.isKw("function") || p.isKw("aggregate"):
			p.stmt = "CREATE " + strings.ToUpper(p.peek().text)
			return p.functionHead(p.next().text == "aggregate", false)
		}
		if st, ok, err := p.authStatement("create"); ok {
			return st, err
		}
		p.stmt = "CREATE"
		return nil, p.errf("unsupported CREATE %s (only KEYSPACE and TABLE)", p.peek())
	case "drop":
		p.i++
		switch {
		case p.acceptKw("keyspace"), p.acceptKw("schema"):
			p.stmt = "DROP KEYSPACE"
			ifExists, err := p.ifExists()
			if err != nil {
				return nil, err
			}
			name, err := p.ident("keyspace name")
			if err != nil {
				return nil, err
			}
			return &DropKeyspace{Keyspace: name, IfExists: ifExists}, nil
		case p.acceptKw("table"), p.acceptKw("columnfamily"):
			p.stmt = "DROP TABLE"
			ifExists, err := p.ifExists()
			if err != nil {
				return nil, err
			}
			ks, name, err := p.qualifiedName("table name")
			if err != nil {
				return nil, err
			}
			return &DropTable{Keyspace: ks, Table: name, IfExists: ifExists}, nil
		case p.acceptKw("type"):
			p.stmt = "DROP TYPE"
			ifExists, err := p.ifExists()
			if err != nil {
				return nil, err
			}
			ks, name, err := p.qualifiedName("type name")
			if err != nil {
				return nil, err
			}
			return &DropType{Keyspace: ks, Type: name, IfExists: ifExists}, nil
		case p.acceptKw("index"):
			p.stmt = "DROP INDEX"
			return p.dropObject("index")
		case p.materializedView():
			p.stmt = "DROP MATERIALIZED VIEW"
			return p.dropObject("view")
		case p.isKw("function") || p.isKw("aggregate"):
			kind := p.next().text
			p.stmt = "DROP " + strings.ToUpper(kind)
			return p.dropObject(kind)
		}
		if st, ok, err := p.authStatement("drop"); ok {
			return st, err
		}
		p.stmt = "DROP"
		return nil, p.errf("unsupported DROP %s (only KEYSPACE and TABLE)", p.peek())
	case "use":
		p.stmt = "USE"
		p.i++
		name, err := p.ident("keyspace name")
		if err != nil {
			return nil, err
		}
		return &Use{Keyspace: name}, nil
	case "truncate":
		p.stmt = "TRUNCATE"
		p.i++
		p.acceptKw("table")
		ks, name, err := p.qualifiedName("table name")
		if err != nil {
			return nil, err
		}
		if _, err := p.using(); err != nil {
			return nil, err
		}
		return &Truncate{Keyspace: ks, Table: name}, nil
	case "begin":
		p.stmt = "BATCH"
		return p.batchStmt()
	case "alter":
		p.i++
		if p.acceptKw("keyspace") || p.acceptKw("schema") {
			p.stmt = "ALTER KEYSPACE"
			name, err := p.keyspaceName()
			if err != nil {
				return nil, err
			}
			st := &AlterKeyspace{Keyspace: name, Options: map[string]Term{}}
			if err := p.expectKw("with"); err != nil {
				return nil, err
			}
			if err := p.options(st.Options, "option name"); err != nil {
				return nil, err
			}
			return st, nil
		}
		if p.materializedView() {
			p.stmt = "ALTER MATERIALIZED VIEW"
			ks, name, err := p.qualifiedName("view name")
			if err != nil {
				return nil, err
			}
			st := &AlterView{Keyspace: ks, View: name, Options: map[string]Term{}}
			if err := p.expectKw("with"); err != nil {
				return nil, err
			}
			if err := p.options(st.Options, "option name"); err != nil {
				return nil, err
			}
			return st, nil
		}
		if st, ok, err := p.authStatement("alter"); ok {
			return st, err
		}
		if !p.acceptKw("table") && !p.acceptKw("columnfamily") {
			p.stmt = "ALTER"
			return nil, p.errf("unsupported ALTER %s (only ALTER TABLE)", p.peek())
		}
		p.stmt = "ALTER TABLE"
		return p.alterTable()
	case "grant", "revoke":
		p.stmt = strings.ToUpper(t.text)
		p.i++
		return p.grantStatement(t.text == "revoke")
	case "list":
		p.stmt = "LIST"
		p.i++
		return p.listStatement()
	case "attach", "detach":
		p.stmt = strings.ToUpper(t.text) + " SERVICE LEVEL"
		p.i++
		return p.attachStatement(t.text == "detach")
	case "describe", "desc":
		p.stmt = "DESCRIBE"
		p.i++
		return p.describeStmt()
	}
	p.stmt = strings.ToUpper(t.text)
	return nil, p.errf("unsupported statement %s", t)
}

func (p *parser) ifExists() (bool, error) {
	if p.isKw("if") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "exists" {
		p.i += 2
		return true, nil
	}
	return false, nil
}

func (p *parser) ifNotExists() (bool, error) {
	if p.isKw("if") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "not" {
		p.i += 2
		if err := p.expectKw("exists"); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// options parses `name = term [AND name = term]...` after WITH; what
// names the option in an error ("option name", "table option").
func (p *parser) options(into map[string]Term, what string) error {
	for {
		name, v, err := p.option(what)
		if err != nil {
			return err
		}
		into[name] = v
		if !p.acceptKw("and") {
			return nil
		}
	}
}

// option parses one `name = term`.
func (p *parser) option(what string) (string, Term, error) {
	name, err := p.ident(what)
	if err != nil {
		return "", Term{}, err
	}
	if err := p.expect("="); err != nil {
		return "", Term{}, err
	}
	v, err := p.term()
	if err != nil {
		return "", Term{}, err
	}
	return name, v, nil
}

// commaList parses `item [, item]...`, in parentheses or without them
// (ALTER TABLE ADD and DROP take both); item parses one element.
func (p *parser) commaList(item func() error) error {
	paren := p.accept("(")
	for {
		if err := item(); err != nil {
			return err
		}
		if !p.accept(",") {
			break
		}
	}
	if paren {
		return p.expect(")")
	}
	return nil
}

func (p *parser) createKeyspace() (Statement, error) {
	ine, err := p.ifNotExists()
	if err != nil {
		return nil, err
	}
	name, err := p.keyspaceName()
	if err != nil {
		return nil, err
	}
	st := &CreateKeyspace{Keyspace: name, IfNotExists: ine, Options: map[string]Term{}}
	// cql3/Cql.g createKeyspaceStatement: WITH properties is optional
	// (from 2025.4; the replication then defaults, ks_prop_defs.cc).
	if t := p.peek(); t.kind == tEOF || (t.kind != tIdent && t.text == ";") {
		return st, nil
	}
	if err := p.expectKw("with"); err != nil {
		return nil, err
	}
	if err := p.options(st.Options, "option name"); err != nil {
		return nil, err
	}
	return st, nil
}

// keyspaceName reads a keyspace name; an unquoted WITH is the keyword
// (Cql.g reserves it), so "CREATE KEYSPACE WITH WITH ..." is a syntax error.
func (p *parser) keyspaceName() (string, error) {
	if t := p.peek(); t.kind == tIdent && strings.EqualFold(t.text, "with") {
		return "", p.errf("expecting keyspace name, got %s", t)
	}
	return p.ident("keyspace name")
}

func (p *parser) cqlType() (string, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return "", p.errf("type nested too deeply")
	}
	t := p.peek()
	if t.kind == tString { // custom type class name
		p.i++
		return "'" + t.text + "'", nil
	}
	name, err := p.typeIdent("type")
	if err != nil {
		return "", err
	}
	if p.accept(".") {
		// A user type named with its keyspace (Cql.g userTypeName).
		ut, err := p.typeIdent("type name")
		if err != nil {
			return "", err
		}
		return name + "." + ut, nil
	}
	if !p.accept("<") {
		return name, nil
	}
	var args []string
	for {
		if t := p.peek(); name == "vector" && len(args) == 1 && t.kind == tNumber {
			// cql3/Cql.g comparatorType: vector<type, INTEGER>.
			p.i++
			args = append(args, t.text)
			if err := p.expect(">"); err != nil {
				return "", err
			}
			break
		}
		a, err := p.cqlType()
		if err != nil {
			return "", err
		}
		args = append(args, a)
		if p.accept(">") {
			break
		}
		if err := p.expect(","); err != nil {
			return "", err
		}
	}
	return name + "<" + strings.Join(args, ", ") + ">", nil
}

func (p *parser) createTable() (Statement, error) {
	ine, err := p.ifNotExists()
	if err != nil {
		return nil, err
	}
	ks, name, err := p.qualifiedName("table name")
	if err != nil {
		return nil, err
	}
	st := &CreateTable{Keyspace: ks, Table: name, IfNotExists: ine, ClusteringOrder: map[string]bool{}, Options: map[string]Term{}}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	pkSeen := false
	for {
		if p.isKw("primary") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "key" {
			p.i += 2
			if pkSeen {
				return nil, p.errf("multiple PRIMARY KEY definitions")
			}
			pkSeen = true
			if err := p.primaryKey(st); err != nil {
				return nil, err
			}
		} else {
			col, err := p.ident("column name")
			if err != nil {
				return nil, err
			}
			typ, err := p.cqlType()
			if err != nil {
				return nil, err
			}
			ttl := p.acceptKw("ttl")
			static := p.acceptKw("static")
			st.Columns = append(st.Columns, ColumnDef{Name: col, Type: typ, Static: static, TTL: ttl})
			if p.isKw("primary") {
				p.i++
				if err := p.expectKw("key"); err != nil {
					return nil, err
				}
				if pkSeen {
					return nil, p.errf("multiple PRIMARY KEY definitions")
				}
				pkSeen = true
				st.PartitionKey = []string{col}
			}
		}
		if p.accept(")") {
			break
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		// cql3/Cql.g cfamDefinition: '(' cfamColumns ( ',' cfamColumns? )* ')'
		// allows empty definitions (cassandra-stress writes "KEY,\n, ...").
		for p.accept(",") {
		}
		if p.accept(")") {
			break
		}
	}
	if !pkSeen {
		return nil, p.errf("no PRIMARY KEY specified for table %s", name)
	}
	if p.acceptKw("with") {
		if err := p.tableProperties(st.ClusteringOrder, &st.CompactStorage, st.Options); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// tableProperties parses the properties after WITH of CREATE TABLE and
// CREATE MATERIALIZED VIEW (cql3/Cql.g cfamProperty): CLUSTERING ORDER BY,
// COMPACT STORAGE and name = value options, joined by AND.
func (p *parser) tableProperties(order map[string]bool, compact *bool, opts map[string]Term) error {
	for {
		switch {
		case p.isKw("clustering"):
			p.i++
			if err := p.expectKw("order"); err != nil {
				return err
			}
			if err := p.expectKw("by"); err != nil {
				return err
			}
			if err := p.expect("("); err != nil {
				return err
			}
			for {
				col, err := p.ident("clustering column")
				if err != nil {
					return err
				}
				desc := false
				if p.acceptKw("desc") {
					desc = true
				} else if !p.acceptKw("asc") {
					return p.errf("expecting ASC or DESC, got %s", p.peek())
				}
				order[col] = desc
				if p.accept(")") {
					break
				}
				if err := p.expect(","); err != nil {
					return err
				}
			}
		case p.isKw("compact"):
			p.i++
			if err := p.expectKw("storage"); err != nil {
				return err
			}
			*compact = true
		default:
			name, v, err := p.option("table option")
			if err != nil {
				return err
			}
			opts[name] = v
		}
		if !p.acceptKw("and") {
			break
		}
	}
	return nil
}

// alterTable parses the rest of ALTER TABLE (cql3/Cql.g alterTableStatement:
// ADD, DROP, WITH, RENAME and TTL; ALTER ... TYPE is refused).
func (p *parser) alterTable() (Statement, error) {
	ks, name, err := p.qualifiedName("table name")
	if err != nil {
		return nil, err
	}
	st := &AlterTable{Keyspace: ks, Table: name}
	switch {
	case p.acceptKw("add"):
		err = p.commaList(func() error {
			col, err := p.ident("column name")
			if err != nil {
				return err
			}
			typ, err := p.cqlType()
			if err != nil {
				return err
			}
			st.Add = append(st.Add, ColumnDef{Name: col, Type: typ, Static: p.acceptKw("static")})
			return nil
		})
	case p.acceptKw("drop"):
		err = p.commaList(func() error {
			col, err := p.ident("column name")
			if err != nil {
				return err
			}
			st.Drop = append(st.Drop, col)
			return nil
		})
		if err == nil && p.acceptKw("using") {
			err = p.expectKw("timestamp")
			if err == nil {
				var t Term
				t, err = p.term()
				st.DropTimestamp = &t
			}
		}
	case p.acceptKw("with"):
		st.Options = map[string]Term{}
		err = p.options(st.Options, "table option")
	case p.acceptKw("rename"):
		err = p.renames(st)
	case p.acceptKw("ttl"):
		st.TTL = true
		if !p.acceptKw("null") {
			st.TTLColumn, err = p.ident("column name")
		}
	default:
		return nil, p.errf("unsupported ALTER TABLE %s (ADD, DROP, WITH, RENAME or TTL)", p.peek())
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// renames parses `a TO b (AND c TO d)*`.
func (p *parser) renames(st *AlterTable) error {
	for {
		from, err := p.ident("column name")
		if err != nil {
			return err
		}
		if err := p.expectKw("to"); err != nil {
			return err
		}
		to, err := p.ident("column name")
		if err != nil {
			return err
		}
		st.Renames = append(st.Renames, [2]string{from, to})
		if !p.acceptKw("and") {
			return nil
		}
	}
}

// createType parses the rest of CREATE TYPE (cql3/Cql.g createTypeStatement).
func (p *parser) createType() (Statement, error) {
	ine, err := p.ifNotExists()
	if err != nil {
		return nil, err
	}
	ks, name, err := p.qualifiedName("type name")
	if err != nil {
		return nil, err
	}
	st := &CreateType{Keyspace: ks, Type: name, IfNotExists: ine}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	for {
		field, err := p.ident("field name")
		if err != nil {
			return nil, err
		}
		typ, err := p.cqlType()
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, ColumnDef{Name: field, Type: typ})
		if p.accept(")") {
			return st, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func (p *parser) primaryKey(st *CreateTable) error {
	if err := p.expect("("); err != nil {
		return err
	}
	if p.accept("(") {
		for {
			c, err := p.ident("partition key column")
			if err != nil {
				return err
			}
			st.PartitionKey = append(st.PartitionKey, c)
			if p.accept(")") {
				break
			}
			if err := p.expect(","); err != nil {
				return err
			}
		}
	} else {
		c, err := p.ident("partition key column")
		if err != nil {
			return err
		}
		st.PartitionKey = []string{c}
	}
	for p.accept(",") {
		c, err := p.ident("clustering column")
		if err != nil {
			return err
		}
		st.Clustering = append(st.Clustering, c)
	}
	return p.expect(")")
}

// term parses a literal, collection literal or bind marker.
func (p *parser) term() (Term, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return Term{}, p.errf("literal nested too deeply")
	}
	t := p.peek()
	switch t.kind {
	case tBind:
		p.i++
		tm := Term{Kind: TermBind, Bind: p.binds}
		p.binds++
		return tm, nil
	case tNamedBind:
		p.i++
		if i, ok := p.named[t.text]; ok {
			return Term{Kind: TermBind, Bind: i, BindName: t.text}, nil
		}
		tm := Term{Kind: TermBind, Bind: p.binds, BindName: t.text}
		if p.named != nil {
			p.named[t.text] = p.binds
		}
		p.binds++
		return tm, nil
	case tString:
		p.i++
		return Term{Kind: TermString, Text: t.text}, nil
	case tNumber:
		p.i++
		return numberTerm(t.text), nil
	case tDuration:
		p.i++
		return Term{Kind: TermDuration, Text: t.text}, nil
	case tBlob:
		p.i++
		return Term{Kind: TermBlob, Text: t.text}, nil
	case tUUID:
		p.i++
		return Term{Kind: TermUUID, Text: t.text}, nil
	case tIdent:
		switch t.text {
		case "true", "false":
			p.i++
			return Term{Kind: TermBool, Text: t.text}, nil
		case "null":
			p.i++
			return Term{Kind: TermNull}, nil
		case "nan", "infinity":
			p.i++
			return Term{Kind: TermFloat, Text: t.text}, nil
		}
		if nt := p.peekAt(1); nt.kind == tSymbol && nt.text == "(" {
			// A function call (cql3/Cql.g functionName '(' terms ')').
			p.i += 2
			tm := Term{Kind: TermFunc, Text: t.text}
			if p.accept(")") {
				return tm, nil
			}
			var err error
			tm.Values, err = p.termsUntil(")")
			return tm, err
		}
	case tSymbol:
		switch t.text {
		case "-":
			nt := p.peekAt(1)
			if nt.kind == tNumber {
				p.i += 2
				return numberTerm("-" + nt.text), nil
			}
			if nt.kind == tIdent && nt.text == "infinity" {
				p.i += 2
				return Term{Kind: TermFloat, Text: "-infinity"}, nil
			}
		case "{":
			p.i++
			return p.collection("}")
		case "[":
			p.i++
			return p.collection("]")
		case "(":
			// A tuple literal (cql3/Cql.g tupleLiteral).
			p.i++
			vals, err := p.termsUntil(")")
			return Term{Kind: TermTuple, Values: vals}, err
		}
	}
	return Term{}, p.errf("expecting a value, got %s", t)
}

// termsUntil parses `term [, term]...` and the closing symbol after them.
func (p *parser) termsUntil(closing string) ([]Term, error) {
	var out []Term
	for {
		v, err := p.term()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.accept(closing) {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func numberTerm(text string) Term {
	if strings.ContainsAny(text, ".eE") {
		return Term{Kind: TermFloat, Text: text}
	}
	return Term{Kind: TermInt, Text: text}
}

// collection parses the rest of a map, set or list literal up to the closer.
// mapKey reads a key of a {...} literal: a field name where an identifier
// is followed by ':' (a user type literal, cql3/Cql.g usertypeLiteral),
// else a term (a map literal's key).
func (p *parser) mapKey(closer string) (Term, error) {
	t := p.peek()
	if closer == "}" && (t.kind == tIdent || t.kind == tQuotedIdent) && p.peekAt(1).kind == tSymbol && p.peekAt(1).text == ":" {
		switch t.text {
		case "true", "false", "null", "nan", "infinity":
		default:
			p.i++
			return Term{Kind: TermField, Text: t.text}, nil
		}
	}
	return p.term()
}

func (p *parser) collection(closer string) (Term, error) {
	if p.accept(closer) {
		if closer == "}" {
			return Term{Kind: TermMap}, nil
		}
		return Term{Kind: TermList}, nil
	}
	first, err := p.mapKey(closer)
	if err != nil {
		return Term{}, err
	}
	if closer == "}" && p.accept(":") {
		m := Term{Kind: TermMap}
		k := first
		for {
			v, err := p.term()
			if err != nil {
				return Term{}, err
			}
			m.Keys = append(m.Keys, k)
			m.Values = append(m.Values, v)
			if p.accept(closer) {
				return m, nil
			}
			if err := p.expect(","); err != nil {
				return Term{}, err
			}
			if k, err = p.mapKey(closer); err != nil {
				return Term{}, err
			}
			if err := p.expect(":"); err != nil {
				return Term{}, err
			}
		}
	}
	l := Term{Kind: TermList, Values: []Term{first}}
	for !p.accept(closer) {
		if err := p.expect(","); err != nil {
			return Term{}, err
		}
		v, err := p.term()
		if err != nil {
			return Term{}, err
		}
		l.Values = append(l.Values, v)
	}
	return l, nil
}

// using parses an optional USING TTL/TIMESTAMP/TIMEOUT clause.
func (p *parser) using() (Using, error) {
	var u Using
	if !p.acceptKw("using") {
		return u, nil
	}
	for {
		switch {
		case p.acceptKw("ttl"):
			t, err := p.term()
			if err != nil {
				return u, err
			}
			u.TTL = &t
		case p.acceptKw("timestamp"):
			t, err := p.term()
			if err != nil {
				return u, err
			}
			u.Timestamp = &t
		case p.acceptKw("timeout"):
			t := p.peek()
			if t.kind != tDuration {
				return u, p.errf("expecting a duration after TIMEOUT, got %s", t)
			}
			p.i++
			d, err := ParseDuration(t.text)
			if err != nil {
				return u, p.errf("%v", err)
			}
			u.Timeout = d
		default:
			return u, p.errf("expecting TTL, TIMESTAMP or TIMEOUT, got %s", p.peek())
		}
		if !p.acceptKw("and") {
			return u, nil
		}
	}
}

// ParseDuration parses a CQL duration literal such as 5s, 100ms, 1h30m or 10us.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.ToLower(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return d, nil
	}
	if strings.HasSuffix(s, "d") {
		var n int64
		if _, err := fmt.Sscanf(s, "%dd", &n); err == nil && n >= 0 && n < 1e5 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	return 0, fmt.Errorf("invalid duration %q", s)
}

func (p *parser) where() ([]Relation, error) {
	var rels []Relation
	for {
		col, err := p.ident("column name")
		if err != nil {
			return nil, err
		}
		t := p.peek()
		var op string
		switch {
		case t.kind == tSymbol && (t.text == "=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=" || t.text == "!="):
			op = t.text
			p.i++
		case t.kind == tIdent && t.text == "in":
			op = "IN"
			p.i++
		case t.kind == tIdent && t.text == "not" && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "in":
			op = "NOT IN" // cql3/Cql.g relationType K_NOT K_IN
			p.i += 2
		case t.kind == tIdent && t.text == "contains":
			// col CONTAINS v, col CONTAINS KEY k (cql3/Cql.g relation).
			op = "CONTAINS"
			p.i++
			if p.isKw("key") {
				op = "CONTAINS KEY"
				p.i++
			}
		case t.kind == tIdent && t.text == "is":
			// col IS NOT NULL (cql3/Cql.g relation), in materialized views.
			p.i++
			if err := p.expectKw("not"); err != nil {
				return nil, err
			}
			if err := p.expectKw("null"); err != nil {
				return nil, err
			}
			rels = append(rels, Relation{Column: col, Op: "IS NOT", Value: Term{Kind: TermNull}})
			if !p.acceptKw("and") {
				return rels, nil
			}
			continue
		case t.kind == tSymbol && t.text == "(" && col == "token" && p.toks[p.i-1].kind == tIdent:
			// token(pk, ...) op value: a token-range restriction.
			args, err := p.tokenArgs()
			if err != nil {
				return nil, err
			}
			t = p.peek()
			if t.kind != tSymbol || (t.text != "=" && t.text != "<" && t.text != "<=" && t.text != ">" && t.text != ">=") {
				return nil, p.errf("expecting a relation operator after token(...), got %s", t)
			}
			p.i++
			v, err := p.term()
			if err != nil {
				return nil, err
			}
			rels = append(rels, Relation{Column: "token", Op: t.text, Value: v, Token: args})
			if !p.acceptKw("and") {
				return rels, nil
			}
			continue
		case t.kind == tSymbol && t.text == "(":
			return nil, p.errf("function calls in WHERE (%s(...)) are not supported", col)
		default:
			return nil, p.errf("expecting a relation operator after %s, got %s", col, t)
		}
		var v Term
		if (op == "IN" || op == "NOT IN") && p.accept("(") {
			v, err = p.collection(")")
		} else {
			v, err = p.term()
		}
		if err != nil {
			return nil, err
		}
		rels = append(rels, Relation{Column: col, Op: op, Value: v})
		if !p.acceptKw("and") {
			return rels, nil
		}
	}
}

// tokenArgs reads the "(a, b, ...)" after token.
func (p *parser) tokenArgs() ([]string, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var args []string
	for {
		a, err := p.ident("partition key column")
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.accept(")") {
			return args, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

// elementAttr parses the rest of WRITETIME(c[key]) or WRITETIME(c.f)
// after the function's name.
func (p *parser) elementAttr(sel *Selector) error {
	if err := p.expect("("); err != nil {
		return err
	}
	c, err := p.ident("column name")
	if err != nil {
		return err
	}
	sel.Func, sel.Column = sel.Column, c
	if p.accept("[") {
		if _, err := p.term(); err != nil {
			return err
		}
		if err := p.expect("]"); err != nil {
			return err
		}
		sel.Subscript = true
	} else {
		if err := p.expect("."); err != nil {
			return err
		}
		if sel.Field, err = p.ident("field name"); err != nil {
			return err
		}
	}
	return p.expect(")")
}

func (p *parser) selectStmt() (Statement, error) {
	p.i++ // SELECT
	st := &Select{}
	if p.isKw("json") {
		return nil, p.errf("SELECT %s is not supported", strings.ToUpper(p.peek().text))
	}
	if p.isKw("distinct") && !(p.peekAt(1).kind == tIdent && p.peekAt(1).text == "from") && !(p.peekAt(1).kind == tSymbol && (p.peekAt(1).text == "," || p.peekAt(1).text == "(")) {
		// SELECT DISTINCT (cql3/Cql.g selectStatement); a column named
		// distinct stays a column.
		p.i++
		st.Distinct = true
	}
	if p.accept("*") {
		st.Star = true
	} else {
		for {
			if p.isKw("count") && p.peekAt(1).kind == tSymbol && p.peekAt(1).text == "(" && (p.peekAt(2).text == "*" || p.peekAt(2).kind == tNumber) {
				p.i += 2
				if !p.accept("*") {
					if t := p.peek(); t.kind == tNumber && t.text == "1" {
						p.i++
					} else {
						return nil, p.errf("only COUNT(*) and COUNT(1) are supported")
					}
				}
				if err := p.expect(")"); err != nil {
					return nil, err
				}
				st.Count = true
			} else {
				col, err := p.ident("column name")
				if err != nil {
					return nil, err
				}
				sel := Selector{Column: col}
				if p.peek().kind == tSymbol && p.peek().text == "." && p.peekAt(2).kind == tSymbol && p.peekAt(2).text == "(" {
					// ks.f(args): a user-defined function (Cql.g functionName).
					p.i++
					if sel.Func, err = p.ident("function name"); err != nil {
						return nil, err
					}
					sel.FuncKeyspace, sel.Column = col, ""
					if p.peekAt(1).kind == tSymbol && p.peekAt(1).text == ")" {
						p.i += 2
					} else if sel.Args, err = p.tokenArgs(); err != nil {
						return nil, p.errf("function %s.%s() takes column arguments only", col, sel.Func)
					}
				} else if p.peek().kind == tSymbol && p.peek().text == "(" {
					switch {
					case p.toks[p.i-1].kind != tIdent:
						return nil, p.errf("function %s() is not supported in selection", col)
					case col == "token":
						if sel.Token, err = p.tokenArgs(); err != nil {
							return nil, err
						}
					case p.peekAt(1).kind == tSymbol && p.peekAt(1).text == ")":
						// A function without arguments: now(), uuid(), currentTimestamp() ...
						p.i += 2
						sel.Func, sel.Column = col, ""
					case (col == "writetime" || col == "ttl") && p.peekAt(2).kind == tSymbol && (p.peekAt(2).text == "[" || p.peekAt(2).text == "."):
						if err := p.elementAttr(&sel); err != nil {
							return nil, err
						}
					default:
						// writetime(c), ttl(c) and one-column functions
						// such as toUnixTimestamp(c) or blobAsInt(c).
						args, err := p.tokenArgs()
						if err != nil {
							return nil, p.errf("function %s() is supported in selection on one column only", col)
						}
						sel.Func, sel.Args = col, args
						if len(args) == 1 {
							sel.Column = args[0]
						} else {
							sel.Column = ""
						}
					}
				}
				if p.acceptKw("as") {
					if sel.Alias, err = p.ident("alias"); err != nil {
						return nil, err
					}
				}
				st.Columns = append(st.Columns, sel)
			}
			if !p.accept(",") {
				break
			}
		}
		if st.Count && len(st.Columns) > 0 {
			return nil, p.errf("COUNT(*) cannot be mixed with other selectors")
		}
	}
	if err := p.expectKw("from"); err != nil {
		return nil, err
	}
	var err error
	if st.Keyspace, st.Table, err = p.qualifiedName("table name"); err != nil {
		return nil, err
	}
	if p.acceptKw("where") {
		if st.Where, err = p.where(); err != nil {
			return nil, err
		}
	}
	if p.isKw("group") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "by" {
		p.i += 2
		if err := p.commaList(func() error {
			c, err := p.ident("column name")
			st.GroupBy = append(st.GroupBy, c)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if p.acceptKw("order") {
		if err := p.expectKw("by"); err != nil {
			return nil, err
		}
		for {
			col, err := p.ident("column name")
			if err != nil {
				return nil, err
			}
			desc := false
			if p.acceptKw("desc") {
				desc = true
			} else {
				p.acceptKw("asc")
			}
			st.OrderBy = append(st.OrderBy, col)
			st.OrderDesc = append(st.OrderDesc, desc)
			if !p.accept(",") {
				break
			}
		}
	}
	if p.acceptKw("per") {
		if err := p.expectKw("partition"); err != nil {
			return nil, err
		}
		if err := p.expectKw("limit"); err != nil {
			return nil, err
		}
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		st.PerPartitionLimit = &t
	}
	if p.acceptKw("limit") {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		st.Limit = &t
	}
	if p.acceptKw("allow") {
		if err := p.expectKw("filtering"); err != nil {
			return nil, err
		}
		st.AllowFiltering = true
	}
	if p.acceptKw("bypass") {
		if err := p.expectKw("cache"); err != nil {
			return nil, err
		}
	}
	if st.Using, err = p.using(); err != nil {
		return nil, err
	}
	return st, nil
}

func (p *parser) insertStmt() (Statement, error) {
	p.i++ // INSERT
	if err := p.expectKw("into"); err != nil {
		return nil, err
	}
	st := &Insert{}
	var err error
	if st.Keyspace, st.Table, err = p.qualifiedName("table name"); err != nil {
		return nil, err
	}
	if p.acceptKw("json") {
		return p.insertJSON(st)
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	for {
		c, err := p.ident("column name")
		if err != nil {
			return nil, err
		}
		st.Columns = append(st.Columns, c)
		if p.accept(")") {
			break
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
	if err := p.expectKw("values"); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	for {
		v, err := p.term()
		if err != nil {
			return nil, err
		}
		st.Values = append(st.Values, v)
		if p.accept(")") {
			break
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
	if len(st.Values) != len(st.Columns) {
		return nil, p.errf("unmatched column names/values: %d columns, %d values", len(st.Columns), len(st.Values))
	}
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Using, err = p.using(); err != nil {
		return nil, err
	}
	return st, nil
}

// insertJSON parses the rest of INSERT ... JSON (cql3/Cql.g
// insertStatement's jsonValue and DEFAULT (NULL | UNSET)).
func (p *parser) insertJSON(st *Insert) (Statement, error) {
	v, err := p.term()
	if err != nil {
		return nil, err
	}
	if v.Kind != TermString && v.Kind != TermBind {
		return nil, p.errf("expecting a JSON string or a bind marker after JSON")
	}
	st.JSON = &v
	if p.acceptKw("default") {
		switch {
		case p.acceptKw("unset"):
			st.DefaultUnset = true
		case p.acceptKw("null"):
		default:
			return nil, p.errf("expecting NULL or UNSET after DEFAULT, got %s", p.peek())
		}
	}
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Using, err = p.using(); err != nil {
		return nil, err
	}
	return st, nil
}

func (p *parser) updateStmt() (Statement, error) {
	p.i++ // UPDATE
	st := &Update{}
	var err error
	if st.Keyspace, st.Table, err = p.qualifiedName("table name"); err != nil {
		return nil, err
	}
	if st.Using, err = p.using(); err != nil {
		return nil, err
	}
	if err := p.expectKw("set"); err != nil {
		return nil, err
	}
	for {
		c, err := p.ident("column name")
		if err != nil {
			return nil, err
		}
		a := Assignment{Column: c}
		switch {
		case p.accept("+"):
			a.Op = "+"
		case p.accept("-"):
			a.Op = "-"
		}
		if err := p.expect("="); err != nil {
			return nil, err
		}
		if err := p.columnOperation(c, &a); err != nil {
			return nil, err
		}
		st.Set = append(st.Set, a)
		if !p.accept(",") {
			break
		}
	}
	if st.Where, st.IfExists, st.If, err = p.whereIf(); err != nil {
		return nil, err
	}
	return st, nil
}

// columnOperation parses what follows `c =` in a SET clause as Cql.g
// normalColumnOperation does: `value`, `value + c` (a list prepend), or
// `c + value` / `c - value`; the column on the right must be c.
func (p *parser) columnOperation(c string, a *Assignment) error {
	if t := p.peek(); a.Op == "" && (t.kind == tIdent || t.kind == tQuotedIdent) {
		if sig := p.peekAt(1); sig.kind == tSymbol && (sig.text == "+" || sig.text == "-") {
			if t.text != c {
				return p.errf("Only expressions of the form X = X %s<value> are supported.", sig.text)
			}
			p.i += 2
			a.Op = sig.text
		}
	}
	var err error
	if a.Value, err = p.term(); err != nil {
		return err
	}
	if a.Op == "" && p.accept("+") {
		t := p.peek()
		if t.kind != tIdent && t.kind != tQuotedIdent || t.text != c {
			return p.errf("Only expressions of the form X = <value> + X are supported.")
		}
		p.i++
		a.Op, a.Prepend = "+", true
	}
	return nil
}

// whereIf parses the `WHERE ... [IF EXISTS | IF cond [AND cond]...]` tail
// of UPDATE and DELETE (cql3/Cql.g updateConditions).
func (p *parser) whereIf() ([]Relation, bool, []Relation, error) {
	if err := p.expectKw("where"); err != nil {
		return nil, false, nil, err
	}
	where, err := p.where()
	if err != nil {
		return nil, false, nil, err
	}
	ifExists, err := p.ifExists()
	if err != nil || ifExists {
		return where, ifExists, nil, err
	}
	if !p.acceptKw("if") {
		return where, false, nil, nil
	}
	conds, err := p.where()
	if err != nil {
		return nil, false, nil, err
	}
	for _, c := range conds {
		if c.Token != nil {
			return nil, false, nil, p.errf("token() is not allowed in IF conditions")
		}
	}
	return where, false, conds, nil
}

func (p *parser) deleteStmt() (Statement, error) {
	p.i++ // DELETE
	st := &Delete{}
	var err error
	if !p.isKw("from") {
		for {
			c, err := p.ident("column name")
			if err != nil {
				return nil, err
			}
			st.Columns = append(st.Columns, c)
			if !p.accept(",") {
				break
			}
		}
	}
	if err := p.expectKw("from"); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Table, err = p.qualifiedName("table name"); err != nil {
		return nil, err
	}
	if st.Using, err = p.using(); err != nil {
		return nil, err
	}
	if st.Where, st.IfExists, st.If, err = p.whereIf(); err != nil {
		return nil, err
	}
	return st, nil
}

func (p *parser) batchStmt() (Statement, error) {
	p.i++ // BEGIN
	st := &Batch{}
	switch {
	case p.acceptKw("unlogged"):
		st.Unlogged = true
	case p.acceptKw("logged"):
	case p.acceptKw("counter"):
		st.Counter = true
	}
	if err := p.expectKw("batch"); err != nil {
		return nil, err
	}
	var err error
	if st.Using, err = p.using(); err != nil {
		return nil, err
	}
	for {
		if p.acceptKw("apply") {
			if err := p.expectKw("batch"); err != nil {
				return nil, err
			}
			p.stmt = "BATCH"
			return st, nil
		}
		var child Statement
		switch {
		case p.isKw("insert"):
			p.stmt = "INSERT"
			child, err = p.insertStmt()
		case p.isKw("update"):
			p.stmt = "UPDATE"
			child, err = p.updateStmt()
		case p.isKw("delete"):
			p.stmt = "DELETE"
			child, err = p.deleteStmt()
		default:
			p.stmt = "BATCH"
			return nil, p.errf("expecting INSERT, UPDATE, DELETE or APPLY BATCH, got %s", p.peek())
		}
		if err != nil {
			return nil, err
		}
		st.Statements = append(st.Statements, child)
		p.accept(";")
	}
}
