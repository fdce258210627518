package cqlparse

import "time"

// Statement is one parsed CQL statement.
type Statement interface {
	// Name is the statement's name for error messages, e.g. "INSERT".
	Name() string
}

// TermKind says what a Term is.
type TermKind int

const (
	TermBind     TermKind = iota + 1 // ? or :name
	TermString                       // 'text'
	TermInt                          // integer literal (Text holds the digits, maybe signed)
	TermFloat                        // floating point literal
	TermBlob                         // 0x... (Text holds the hex digits)
	TermUUID                         // canonical uuid text
	TermBool                         // true/false (Text is "true" or "false")
	TermNull                         // null
	TermMap                          // {k: v, ...}
	TermList                         // [a, b] or (a, b) in IN relations
	TermDuration                     // 5s, 100ms
	TermTuple                        // (a, b, ...) (Values)
	TermFunc                         // name(args...): Text is the lower-case name, Values the arguments
	TermField                        // a field name, the key of a user type literal {a: 1}
)

// Term is a value in a statement: a literal or a bind marker.
type Term struct {
	Kind TermKind
	Text string
	// Bind is the 0-based position of this marker among the statement's bind
	// markers (TermBind only); BindName is set for :name markers.
	Bind     int
	BindName string
	// Map entries (TermMap) and list elements (TermList).
	Keys, Values []Term
}

// Relation is one WHERE condition: Column Op Value, or, when Token is set,
// token(Token...) Op Value.
type Relation struct {
	Column string
	Op     string // =, <, <=, >, >=, !=, IN, NOT IN, IS NOT (IS NOT NULL), CONTAINS, CONTAINS KEY
	Value  Term
	// Token lists the arguments of token(...) on the left-hand side.
	Token []string
}

// Assignment is one SET clause of an UPDATE: Column = Value, or, with Op
// "+" or "-", Column = Column + Value (counter increments, also written
// Column += Value).
type Assignment struct {
	Column string
	Op     string // "" (set), "+", "-"
	Value  Term
	// Prepend marks Column = Value + Column (a list prepend; Op is "+").
	Prepend bool
}

// Using holds USING TTL / TIMESTAMP / TIMEOUT.
type Using struct {
	TTL       *Term
	Timestamp *Term
	Timeout   time.Duration
}

// CreateKeyspace is CREATE KEYSPACE.
type CreateKeyspace struct {
	Keyspace    string
	IfNotExists bool
	// Options maps option name (lower case) to its value term, e.g.
	// "replication" -> map, "durable_writes" -> bool, "tablets" -> map.
	Options map[string]Term
}

// DropKeyspace is DROP KEYSPACE.
type DropKeyspace struct {
	Keyspace string
	IfExists bool
}

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	Name string
	Type string // lower-case CQL type, e.g. "bigint", "map<text, text>"
	// Static marks a STATIC column: one value per partition.
	Static bool
	// TTL marks the table's per-row TTL column (cql3/Cql.g cfamColumns:
	// `name type TTL [STATIC]`).
	TTL bool
}

// CreateTable is CREATE TABLE.
type CreateTable struct {
	Keyspace, Table string
	IfNotExists     bool
	Columns         []ColumnDef
	PartitionKey    []string
	Clustering      []string
	// ClusteringOrder maps clustering column to true when DESC.
	ClusteringOrder map[string]bool
	CompactStorage  bool
	// Options are the other WITH options.
	Options map[string]Term
}

// DropTable is DROP TABLE.
type DropTable struct {
	Keyspace, Table string
	IfExists        bool
}

// Use is USE keyspace.
type Use struct{ Keyspace string }

// Insert is INSERT INTO.
type Insert struct {
	Keyspace, Table string
	Columns         []string
	Values          []Term
	IfNotExists     bool
	Using           Using
	// JSON is INSERT ... JSON value (a string literal or a bind marker);
	// DefaultUnset is its DEFAULT UNSET (columns it omits keep their
	// values; by default they become null).
	JSON         *Term
	DefaultUnset bool
}

// Selector is one item of a SELECT list: a column, token(Token...), or
// a cell attribute of Column: Func "writetime" or "ttl".
type Selector struct {
	Column string
	Alias  string
	Token  []string
	Func   string
	// FuncKeyspace is the keyspace of a qualified function call ks.f(...);
	// Args are a call's column arguments (a user-defined function may
	// take several).
	FuncKeyspace string
	Args         []string
	// Subscript and Field are WRITETIME/TTL of an element, c[key], or
	// of a field, c.f (Cql.g selector: column_mutation_attribute).
	Subscript bool
	Field     string
}

// Select is SELECT.
type Select struct {
	Keyspace, Table string
	Star            bool
	Count           bool // SELECT COUNT(*) / COUNT(1)
	Columns         []Selector
	Where           []Relation
	// Distinct is SELECT DISTINCT: one row per partition.
	Distinct bool
	// GroupBy is GROUP BY's columns.
	GroupBy []string
	// OrderBy is ORDER BY's columns; Desc[i] says DESC for OrderBy[i].
	OrderBy   []string
	OrderDesc []bool
	Limit     *Term
	// PerPartitionLimit is PER PARTITION LIMIT's value.
	PerPartitionLimit *Term
	AllowFiltering    bool
	Using             Using
}

// Update is UPDATE.
type Update struct {
	Keyspace, Table string
	Set             []Assignment
	Where           []Relation
	Using           Using
	IfExists        bool
	// If holds the IF conditions (col op value AND ...) of a conditional
	// update; Op is =, !=, <, <=, >, >= or IN.
	If []Relation
}

// Delete is DELETE.
type Delete struct {
	Keyspace, Table string
	Columns         []string // empty = whole row / partition
	Where           []Relation
	Using           Using
	IfExists        bool
	If              []Relation // as Update.If
}

// Truncate is TRUNCATE [TABLE].
type Truncate struct{ Keyspace, Table string }

// Batch is BEGIN [UNLOGGED|LOGGED] BATCH ... APPLY BATCH.
type Batch struct {
	Unlogged   bool
	Counter    bool // BEGIN COUNTER BATCH
	Statements []Statement
	Using      Using
}

// AlterKeyspace is ALTER KEYSPACE name WITH options.
type AlterKeyspace struct {
	Keyspace string
	Options  map[string]Term
}

func (*AlterKeyspace) Name() string { return "ALTER KEYSPACE" }

// AlterTable is ALTER TABLE ... ADD columns | DROP columns | WITH options.
type AlterTable struct {
	Keyspace, Table string
	Add             []ColumnDef
	Drop            []string
	// DropTimestamp is DROP ... USING TIMESTAMP t (Cql.g usingTimestampClause).
	DropTimestamp *Term
	Options       map[string]Term
	// Renames are RENAME a TO b [AND c TO d ...] pairs.
	Renames [][2]string
	// TTL is ALTER TABLE ... TTL column (TTLColumn set) or TTL NULL
	// (TTLColumn empty).
	TTL       bool
	TTLColumn string
}

func (*AlterTable) Name() string { return "ALTER TABLE" }

// CreateType is CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, ...).
type CreateType struct {
	Keyspace, Type string
	IfNotExists    bool
	Fields         []ColumnDef
}

// DropType is DROP TYPE [IF EXISTS] [ks.]name.
type DropType struct {
	Keyspace, Type string
	IfExists       bool
}

func (*CreateType) Name() string { return "CREATE TYPE" }
func (*DropType) Name() string   { return "DROP TYPE" }

func (*CreateKeyspace) Name() string { return "CREATE KEYSPACE" }
func (*DropKeyspace) Name() string   { return "DROP KEYSPACE" }
func (*CreateTable) Name() string    { return "CREATE TABLE" }
func (*DropTable) Name() string      { return "DROP TABLE" }
func (*Use) Name() string            { return "USE" }
func (*Insert) Name() string         { return "INSERT" }
func (*Select) Name() string         { return "SELECT" }
func (*Update) Name() string         { return "UPDATE" }
func (*Delete) Name() string         { return "DELETE" }
func (*Truncate) Name() string       { return "TRUNCATE" }
func (*Batch) Name() string          { return "BATCH" }
