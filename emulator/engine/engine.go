// Package engine is the boundary inside an emulated node between the CQL
// front end (package emulator/cql: protocol, parser, system tables) and the
// cluster engine (package emulator/node: membership, replication, storage,
// tablets, capacity model). The front end turns statements into schema
// changes, mutations and reads; the engine makes them happen cluster-wide.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// Consistency is a CQL consistency level, with the protocol's numeric values.
type Consistency uint16

const (
	Any         Consistency = 0x0000
	One         Consistency = 0x0001
	Two         Consistency = 0x0002
	Three       Consistency = 0x0003
	Quorum      Consistency = 0x0004
	All         Consistency = 0x0005
	LocalQuorum Consistency = 0x0006
	EachQuorum  Consistency = 0x0007
	LocalOne    Consistency = 0x000A
	// Serial and LocalSerial are the consistencies of a lightweight
	// transaction's Paxos round (and of a linearizable read).
	Serial      Consistency = 0x0008
	LocalSerial Consistency = 0x0009
)

func (c Consistency) String() string {
	switch c {
	case Any:
		return "ANY"
	case One:
		return "ONE"
	case Two:
		return "TWO"
	case Three:
		return "THREE"
	case Quorum:
		return "QUORUM"
	case All:
		return "ALL"
	case LocalQuorum:
		return "LOCAL_QUORUM"
	case EachQuorum:
		return "EACH_QUORUM"
	case LocalOne:
		return "LOCAL_ONE"
	case Serial:
		return "SERIAL"
	case LocalSerial:
		return "LOCAL_SERIAL"
	}
	return fmt.Sprintf("CONSISTENCY(%d)", uint16(c))
}

// Keyspace is a keyspace definition.
type Keyspace struct {
	Name string
	// Replication as written in CQL and shown in system_schema.keyspaces,
	// e.g. {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"}.
	Replication   map[string]string
	DurableWrites bool
	// Tablets is the initial tablet count when the keyspace uses tablets; 0 = vnodes.
	Tablets        int
	TabletsEnabled bool
}

// ColumnKind says where a column sits in the primary key.
type ColumnKind string

const (
	PartitionKey ColumnKind = "partition_key"
	Clustering   ColumnKind = "clustering"
	Regular      ColumnKind = "regular"
	// Static columns hold one value per partition (schema/schema.hh
	// column_kind::static_column). The node stores a partition's static
	// cells as the row with an empty clustering key, which sorts before
	// every clustering row of the partition.
	Static ColumnKind = "static"
)

// InPrimaryKey reports whether the kind is a partition key or clustering column.
func (k ColumnKind) InPrimaryKey() bool { return k == PartitionKey || k == Clustering }

// Column is a column definition.
type Column struct {
	Name     string
	Type     string // CQL type name: bigint, int, text, blob, uuid, timestamp, boolean, double, varchar ...
	Kind     ColumnKind
	Position int  // position within the partition key or clustering key; -1 for regular and static
	Desc     bool // clustering order DESC
}

// Table is a table definition.
type Table struct {
	Keyspace string
	Name     string
	ID       [16]byte // table uuid
	Columns  []Column // partition key columns first (by position), then clustering, then static, then regular
	Options  map[string]string
	// Dropped are the columns ALTER TABLE dropped (system_schema.dropped_columns,
	// schema/schema.hh dropped_columns): a dropped column's stored cells are no
	// longer read, and once the name is added again its cells written at or
	// before the drop stay hidden.
	Dropped []DroppedColumn `json:",omitempty"`
	// Indexes are the table's secondary indexes (system_schema.indexes;
	// schema/schema.hh keeps index_metadata in the base table's schema).
	Indexes []Index `json:",omitempty"`
	// View, when set, makes this table a materialized view of a base table
	// of its keyspace (system_schema.views).
	View *View `json:",omitempty"`
	// Tags are the table's db::tags_extension (db/tags/extension.hh), e.g.
	// "system:ttl_attribute" naming the per-row TTL column.
	Tags map[string]string `json:",omitempty"`
}

// DroppedColumn is a column ALTER TABLE dropped (schema.hh
// schema::dropped_column): its type and the drop's timestamp.
type DroppedColumn struct {
	Name, Type string
	// Timestamp is the drop's write timestamp in microseconds since the
	// epoch (USING TIMESTAMP, else the time of the ALTER): cells of the
	// name written at or before it are hidden.
	Timestamp int64
}

// UnmarshalJSON also reads a schema saved before drops recorded a type and
// timestamp, when Table.Dropped held bare column names.
func (d *DroppedColumn) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*d = DroppedColumn{}
		return json.Unmarshal(b, &d.Name)
	}
	type plain DroppedColumn
	return json.Unmarshal(b, (*plain)(d))
}

// DroppedAt is the drop timestamp of a column name; ok is false when the
// name was never dropped.
func (t *Table) DroppedAt(name string) (ts int64, ok bool) {
	for _, d := range t.Dropped {
		if d.Name == name {
			return d.Timestamp, true
		}
	}
	return 0, false
}

// ReaddedColumns maps each column that was dropped and added again to its
// drop timestamp; nil when there is none.
func (t *Table) ReaddedColumns() map[string]int64 {
	var m map[string]int64
	for _, c := range t.Columns {
		if ts, ok := t.DroppedAt(c.Name); ok {
			if m == nil {
				m = map[string]int64{}
			}
			m[c.Name] = ts
		}
	}
	return m
}

// HideDropped (for backends) leaves out the cells of re-added columns written at or
// before the column's drop, as ScyllaDB does by the column's dropped_at
// (schema/schema.cc column_definition::dropped_at; the read and compaction
// paths drop such cells), and the cell metadata unless it was asked for.
func HideDropped(row *Row, hidden map[string]int64, keepMeta bool) {
	if hidden == nil {
		return
	}
	for name, ts := range hidden {
		if m, ok := row.Meta[name]; ok && m.Timestamp <= ts {
			delete(row.Cells, name)
			delete(row.Meta, name)
		}
	}
	if !keepMeta {
		row.Meta = nil
	}
}

// Index is a secondary index of a table (schema/schema.hh index_metadata).
type Index struct {
	Name string
	// Kind is COMPOSITES (or CUSTOM for a custom class).
	Kind string
	// Options hold "target": the indexed column as index/secondary_index.cc
	// serialize_targets writes it ("v", "keys(m)", "values(l)",
	// "entries(m)", or for a local index {"pk":["p"],"ck":["v"]}), and a
	// custom index's class_name.
	Options map[string]string
	// Properties are the CREATE INDEX ... WITH properties of the index's
	// backing view (table options as Table.Options holds them; "id" is
	// WITH ID), which DESCRIBE INDEX prints.
	Properties map[string]string `json:",omitempty"`
}

// View is what makes a table a materialized view
// (cql3/statements/create_view_statement.cc, schema/schema.hh view_info).
type View struct {
	BaseTable string
	BaseID    [16]byte
	// WhereClause is the view's WHERE as system_schema.views shows it.
	WhereClause string
	// IncludeAllColumns: SELECT * (every base column is in the view).
	IncludeAllColumns bool
}

// UserType is a user-defined type (CREATE TYPE): its fields' names and CQL
// types in order.
type UserType struct {
	Keyspace, Name string
	FieldNames     []string
	FieldTypes     []string
}

// Schema is an immutable snapshot of all keyspaces and tables. Version agrees
// across nodes once a change has propagated (it is derived from the content).
type Schema struct {
	Version   [16]byte
	Keyspaces map[string]*Keyspace
	Tables    map[string]map[string]*Table    // keyspace -> table -> def
	Types     map[string]map[string]*UserType // keyspace -> type -> def
	// Functions are the user-defined functions and aggregates: keyspace
	// -> signature (Function.Signature) -> definition.
	Functions map[string]map[string]*Function
}

// SchemaChangeKind enumerates DDL operations.
type SchemaChangeKind int

const (
	CreateKeyspace SchemaChangeKind = iota + 1
	DropKeyspace
	CreateTable
	DropTable
	CreateType
	DropType
	AlterTable    // Table is the new definition (same id)
	AlterKeyspace // Keyspace is the new definition
	// CreateFunction and DropFunction carry Function (a function or an
	// aggregate: Function.Aggregate).
	CreateFunction
	DropFunction
)

// SchemaChange is one DDL statement, already validated syntactically.
type SchemaChange struct {
	Kind         SchemaChangeKind
	IfNotExists  bool
	IfExists     bool
	Keyspace     *Keyspace // CreateKeyspace
	Table        *Table    // CreateTable
	Type         *UserType // CreateType
	KeyspaceName string    // Drop*, CreateTable, CreateType
	TableName    string    // DropTable; DropType: the type's name
	Function     *Function // CreateFunction, DropFunction
	OrReplace    bool      // CREATE OR REPLACE FUNCTION/AGGREGATE
}

// Mutation writes or deletes one row or one partition.
type Mutation struct {
	Keyspace string
	Table    string
	// PartitionKey is the CQL serialisation of the partition key exactly as
	// drivers compute it for token routing (single column: its value bytes;
	// composite: the [len16][bytes][0x00] concatenation).
	PartitionKey []byte
	// Clustering is an order-preserving encoding of the clustering columns
	// (bytes compare in CQL clustering order); empty when the table has none.
	Clustering []byte
	// Cells maps column name to the CQL-serialised value (nil = null).
	Cells map[string][]byte
	// Counters maps counter column name to the delta to add (UPDATE ... SET
	// c = c + d). A mutation has Counters or Cells, never both; counter
	// mutations carry no Timestamp or TTL (ScyllaDB refuses both).
	Counters map[string]int64
	// Delete removes the row (Clustering set) or the whole partition (Clustering empty).
	Delete    bool
	Timestamp int64         // microseconds since epoch; last write wins
	TTL       time.Duration // 0 = none
}

// Read fetches rows of one partition.
type Read struct {
	Keyspace     string
	Table        string
	PartitionKey []byte
	// ClusteringPrefix restricts the rows to those whose Clustering starts with these bytes.
	ClusteringPrefix []byte
	Limit            int // 0 = no limit
	// CellMeta asks for each cell's write timestamp and expiry in Row.Meta
	// (for writetime() and ttl()).
	CellMeta bool
}

// Row is a stored row. A counter column's cell is its value as a CQL
// bigint (8 bytes, big endian).
type Row struct {
	Clustering []byte
	Cells      map[string][]byte
	Timestamp  int64
	// Meta holds each cell's write timestamp and expiry when the read
	// asked for them (Read.CellMeta, RangeRead.CellMeta).
	Meta map[string]CellMeta
}

// CellMeta is what writetime() and ttl() read of a cell.
type CellMeta struct {
	Timestamp int64 // microseconds since the epoch
	Expiry    int64 // unix seconds; 0 = no TTL
}

// RangeRead fetches the rows of every partition whose token lies in
// [Start, End] (inclusive; Murmur3 tokens as package emulator/murmur3
// computes them), as a token-range scan does.
type RangeRead struct {
	Keyspace   string
	Table      string
	Start, End int64
	// After, when set, resumes strictly after that row (paging).
	After *RangeRow
	Limit int // rows; 0 = no limit
	// CellMeta: as Read.CellMeta.
	CellMeta bool
}

// RangeRow is a row of a range scan with its partition key. Rows come in
// ring order: by token, then by partition (a backend-defined but stable
// order among partitions sharing a token), then by clustering.
type RangeRow struct {
	PartitionKey []byte
	Row
}

// NodeState is a node's topology state.
type NodeState string

const (
	StateJoining NodeState = "JOINING"
	StateNormal  NodeState = "NORMAL"
	StateLeaving NodeState = "LEAVING"
	StateLeft    NodeState = "LEFT"
)

// NodeInfo is what system.local and system.peers show of a node.
type NodeInfo struct {
	HostID         [16]byte
	Addr           net.IP // rpc / native address (also broadcast and listen)
	CQLPort        int
	DC             string
	Rack           string
	Tokens         []string // decimal Murmur3 tokens
	ReleaseVersion string   // e.g. "3.0.8"
	ScyllaVersion  string   // e.g. "2025.1.0-emulated"
	State          NodeState
	Up             bool
	Shards         int // vCPUs = shards
}

// EventKind is a server-pushed event type.
type EventKind int

const (
	TopologyNewNode EventKind = iota + 1
	TopologyRemovedNode
	StatusUp
	StatusDown
	SchemaChanged
)

// Event is pushed to CQL clients that REGISTERed for it.
type Event struct {
	Kind EventKind
	Addr net.IP
	Port int
	// SchemaChanged: the change that was applied.
	Change *SchemaChange
}

// Backend is what the CQL front end needs from the node. Calls honour ctx
// (deadline = the request timeout) and return *Error values for anything a
// client must see as a protocol error.
type Backend interface {
	// Schema returns the current schema snapshot.
	Schema() *Schema
	// ApplySchema applies a change cluster-wide and returns once the live
	// nodes agree on the new schema version.
	ApplySchema(ctx context.Context, ch SchemaChange) (*Schema, error)
	// Write applies mutations (one statement or an unlogged batch) at cl.
	Write(ctx context.Context, ms []Mutation, cl Consistency) error
	// Read reads one partition at cl.
	Read(ctx context.Context, r Read, cl Consistency) ([]Row, error)
	// ReadRange reads the partitions of a token range at cl, in ring order.
	ReadRange(ctx context.Context, r RangeRead, cl Consistency) ([]RangeRow, error)
	// Truncate empties a table on every node.
	Truncate(ctx context.Context, keyspace, table string) error
	// Local describes this node; Peers the other nodes of the cluster.
	Local() NodeInfo
	Peers() []NodeInfo
	// Subscribe returns a channel of events and a cancel function. The engine
	// never blocks on a slow subscriber (it drops events for it instead).
	Subscribe() (<-chan Event, func())
	// ClusterName is system.local.cluster_name.
	ClusterName() string
}

// PartitionLocker is implemented by a Backend that serialises lightweight
// transactions on a partition cluster-wide (ScyllaDB: a Paxos round among
// the partition's replicas, service/paxos/). LockPartition returns once no
// other coordinator's transaction on the partition runs, and unlock ends
// the caller's; the front end reads, decides and writes in between.
type PartitionLocker interface {
	LockPartition(ctx context.Context, keyspace, table string, partitionKey []byte) (unlock func(), err error)
}

// TabletRouter is implemented by a Backend whose tables may use tablets.
// TabletRoute is ScyllaDB's check_locality (locator/tablets.cc): nil when
// this node, on the client connection's shard, is a replica of the tablet
// holding partitionKey's token (or its pending replica), or when the table
// does not use tablets; otherwise the tablet's token range and replicas,
// which the front end returns as the "tablets-routing-v1" custom payload
// (transport/messages/result_message.cc) so that a tablet-aware driver
// sends the tablet's next requests to a replica.
type TabletRouter interface {
	TabletRoute(keyspace, table string, partitionKey []byte, shard int) *TabletRoute
}

// TabletLister is implemented by a Backend whose tables may use tablets:
// a table's tablet map as system.tablets lists it (replica/tablets.cc),
// one route per tablet in token order; nil for a vnode table.
type TabletLister interface {
	Tablets(keyspace, table string) []TabletRoute
}

// TabletRoute is one tablet's routing: its tokens (FirstToken, LastToken],
// FirstToken being math.MinInt64 for the first tablet, and its replicas.
type TabletRoute struct {
	FirstToken, LastToken int64
	Replicas              []TabletReplica
}

// TabletReplica is a tablet replica: a host and a shard on it.
type TabletReplica struct {
	HostID [16]byte
	Shard  int
}

// ErrorCode is a CQL protocol error code.
type ErrorCode int

const (
	CodeServerError     ErrorCode = 0x0000
	CodeProtocolError   ErrorCode = 0x000A
	CodeUnavailable     ErrorCode = 0x1000
	CodeOverloaded      ErrorCode = 0x1001
	CodeIsBootstrapping ErrorCode = 0x1002
	CodeTruncateError   ErrorCode = 0x1003
	CodeWriteTimeout    ErrorCode = 0x1100
	CodeReadTimeout     ErrorCode = 0x1200
	CodeReadFailure     ErrorCode = 0x1300
	CodeFunctionFailure ErrorCode = 0x1400
	CodeWriteFailure    ErrorCode = 0x1500
	CodeSyntaxError     ErrorCode = 0x2000
	CodeUnauthorized    ErrorCode = 0x2100
	CodeInvalid         ErrorCode = 0x2200
	CodeConfigError     ErrorCode = 0x2300
	CodeAlreadyExists   ErrorCode = 0x2400
	CodeUnprepared      ErrorCode = 0x2500
)

// Error is an error a client must see with a protocol error code.
type Error struct {
	Code    ErrorCode
	Message string
	// Details for Unavailable / timeouts / failures.
	Consistency Consistency
	Required    int    // Unavailable: required; timeouts/failures: block_for
	Alive       int    // Unavailable: alive; timeouts/failures: received
	Failures    int    // failures
	WriteType   string // WriteTimeout/WriteFailure: SIMPLE, BATCH, UNLOGGED_BATCH ...
	DataPresent bool   // ReadTimeout/ReadFailure
	// AlreadyExists (and FunctionFailure's keyspace)
	Keyspace, Table string
	// FunctionFailure: the function and its argument types
	Function string
	ArgTypes []string
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error with a code.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
