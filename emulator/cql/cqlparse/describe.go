package cqlparse

// DescribeKind names what a DESCRIBE statement describes (cql3/Cql.g
// describeStatement).
type DescribeKind string

const (
	DescCluster    DescribeKind = "cluster"
	DescSchema     DescribeKind = "schema"     // FullSchema for FULL SCHEMA
	DescKeyspaces  DescribeKind = "keyspaces"  // listings: no create statement
	DescTables     DescribeKind = "tables"     //
	DescTypes      DescribeKind = "types"      //
	DescFunctions  DescribeKind = "functions"  //
	DescAggregates DescribeKind = "aggregates" //
	DescKeyspace   DescribeKind = "keyspace"   // Only for ONLY KEYSPACE; Keyspace may be empty (the session's)
	DescTable      DescribeKind = "table"
	DescIndex      DescribeKind = "index"
	DescView       DescribeKind = "view"
	DescType       DescribeKind = "type"
	DescFunction   DescribeKind = "function"
	DescAggregate  DescribeKind = "aggregate"
	DescGeneric    DescribeKind = "generic" // DESCRIBE [ks.]name
)

// Describe is a server-side DESCRIBE statement.
type Describe struct {
	Kind DescribeKind
	// FullSchema: DESCRIBE FULL SCHEMA; Only: DESCRIBE ONLY KEYSPACE.
	FullSchema, Only bool
	Keyspace, Target string
	// Internals: WITH INTERNALS; Passwords: WITH INTERNALS AND PASSWORDS.
	Internals, Passwords bool
}

func (*Describe) Name() string { return "DESCRIBE" }

// describeStmt parses what follows DESCRIBE/DESC, as cql3/Cql.g's
// describeStatement: the listing keywords are tried before a generic name.
func (p *parser) describeStmt() (Statement, error) {
	st := &Describe{}
	var err error
	listing := map[string]DescribeKind{"cluster": DescCluster, "keyspaces": DescKeyspaces, "tables": DescTables,
		"types": DescTypes, "functions": DescFunctions, "aggregates": DescAggregates}
	named := map[string]DescribeKind{"table": DescTable, "columnfamily": DescTable, "index": DescIndex,
		"type": DescType, "function": DescFunction, "aggregate": DescAggregate}
	t := p.peek()
	switch {
	case t.kind == tIdent && listing[t.text] != "":
		p.i++
		st.Kind = listing[t.text]
	case p.acceptKw("full"):
		if err := p.expectKw("schema"); err != nil {
			return nil, err
		}
		st.Kind, st.FullSchema = DescSchema, true
	case p.acceptKw("schema"):
		st.Kind = DescSchema
	case p.isKw("only") || p.isKw("keyspace"):
		st.Only = p.acceptKw("only")
		if err := p.expectKw("keyspace"); err != nil {
			return nil, err
		}
		st.Kind = DescKeyspace
		if k := p.peek().kind; k == tIdent && !p.isKw("with") || k == tQuotedIdent {
			if st.Keyspace, err = p.ident("keyspace name"); err != nil {
				return nil, err
			}
		}
	case p.isKw("materialized"):
		p.i++
		if err := p.expectKw("view"); err != nil {
			return nil, err
		}
		st.Kind = DescView
		if st.Keyspace, st.Target, err = p.qualifiedName("view name"); err != nil {
			return nil, err
		}
	case t.kind == tIdent && named[t.text] != "" && p.peekAt(1).kind != tEOF && p.peekAt(1).text != ".":
		p.i++
		st.Kind = named[t.text]
		if st.Keyspace, st.Target, err = p.qualifiedName(string(st.Kind) + " name"); err != nil {
			return nil, err
		}
	default:
		st.Kind = DescGeneric
		if st.Keyspace, st.Target, err = p.qualifiedName("name"); err != nil {
			return nil, err
		}
	}
	if p.acceptKw("with") {
		if err := p.expectKw("internals"); err != nil {
			return nil, err
		}
		st.Internals = true
		if p.acceptKw("and") {
			if err := p.expectKw("passwords"); err != nil {
				return nil, err
			}
			st.Passwords = true
		}
	}
	return st, nil
}
