package cql

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// unsetBindError is query_options.hh's refusal of an UNSET value where
// the statement has no use for one (a WHERE restriction, a condition).
func unsetBindError(t cqlparse.Term) error {
	return engine.Errorf(engine.CodeInvalid, "Unexpected unset value for bind variable %d", t.Bind)
}

// execCtx carries what one request's execution needs.
type execCtx struct {
	s        *Server
	c        *conn
	parent   context.Context // the request's context (nil: the connection's)
	keyspace string
	values   []*primitive.Value
	cl       engine.Consistency
	serial   engine.Consistency // the serial consistency of a conditional statement (0 = SERIAL)
	ts       *int64             // protocol default timestamp
	skipMeta bool
	pageSize int // rows per page; 0 = everything at once
	// perPartition is a SELECT's PER PARTITION LIMIT (0 = none).
	perPartition int
	paging       []byte                     // paging state from the previous page
	result       *message.RowsMetadata      // prepared result metadata, if any
	vars         *message.VariablesMetadata // the markers' specs, for named values
	// tokenAware: the partition key is bound by markers, so a driver
	// could have routed by it (ScyllaDB's _may_use_token_aware_routing,
	// cql3/statements/modification_statement.cc and select_statement.cc).
	tokenAware bool
	// casOps, inside a conditional statement, collects the SET operations
	// that read the old row (operations.go) for runCAS to apply.
	casOps *[]*cellOp
}

// extended is a result with what ScyllaDB's protocol extensions add to its
// frame and the codec cannot express: a custom payload
// ("tablets-routing-v1"), or the LWT bit in a PREPARED result's metadata
// flags (SCYLLA_LWT_ADD_METADATA_MARK). send writes it.
type extended struct {
	message.Message
	payload map[string][]byte
	lwt     bool
}

// routeHint adds the tablets-routing-v1 payload to a single-partition
// statement's result when the client negotiated it and this node on the
// connection's shard is not the partition's replica (modification_statement
// and select_statement: the payload rides on the successful result).
func (ec *execCtx) routeHint(res message.Message, keyspace, table string, partitionKey []byte) message.Message {
	if !ec.tokenAware || ec.c == nil || !ec.c.tabletsRouting.Load() {
		return res
	}
	rt := ec.s.router.TabletRoute(keyspace, table, partitionKey, ec.c.shard)
	if rt == nil {
		return res
	}
	return &extended{Message: res, payload: map[string][]byte{"tablets-routing-v1": tabletsRoutingPayload(rt)}}
}

func (s *Server) query(c *conn, m *message.Query) message.Message {
	opts := m.Options
	if opts == nil {
		opts = &message.QueryOptions{}
	}
	st, nbinds, err := s.parse(m.Query)
	if err != nil {
		return errorMessage(err, engine.One, "")
	}
	ec := &execCtx{s: s, c: c, keyspace: c.getKeyspace(), cl: engine.Consistency(opts.Consistency), serial: serialOf(opts.SerialConsistency), ts: opts.DefaultTimestamp}
	if opts.Keyspace != "" {
		ec.keyspace = opts.Keyspace
	}
	if nbinds > 0 && (c.tabletsRouting.Load() || len(opts.NamedValues) > 0) {
		// ScyllaDB prepares a QUERY too; its partition key markers
		// allow token-aware routing as an EXECUTE's do, and its markers'
		// names place named values.
		if vars, _, err := s.describe(ec.keyspace, st, nbinds); err == nil {
			ec.tokenAware = len(vars.PkIndices) > 0
			ec.vars = withBindNames(vars, s.bindNames(m.Query))
		}
	}
	if err := ec.bindValues(opts, nbinds, st); err != nil {
		return errorMessage(err, ec.cl, "")
	}
	return ec.run(st)
}

func (ec *execCtx) bindValues(opts *message.QueryOptions, nbinds int, st cqlparse.Statement) error {
	if len(opts.NamedValues) > 0 {
		if err := ec.placeNamedValues(opts, nbinds); err != nil {
			return err
		}
	}
	if len(opts.PositionalValues) != nbinds {
		return engine.Errorf(engine.CodeInvalid, "There were %d markers(?) in CQL but %d bound variables", nbinds, len(opts.PositionalValues))
	}
	ec.values = opts.PositionalValues
	if opts.PageSize > 0 && !opts.PageSizeInBytes {
		ec.pageSize = int(opts.PageSize)
	}
	ec.paging = opts.PagingState
	return nil
}

// placeNamedValues orders a request's named values by its markers' names,
// as cql3/query_options.cc prepare does.
func (ec *execCtx) placeNamedValues(opts *message.QueryOptions, nbinds int) error {
	if ec.vars == nil || len(ec.vars.Columns) != nbinds {
		return engine.Errorf(engine.CodeInvalid, "Named bind values need the statement's bind markers to be known")
	}
	values := make([]*primitive.Value, nbinds)
	for i, spec := range ec.vars.Columns {
		v, ok := opts.NamedValues[spec.Name]
		if !ok {
			return engine.Errorf(engine.CodeInvalid, "Missing value for bind marker with name: %s", spec.Name)
		}
		values[i] = v
	}
	cp := *opts
	cp.PositionalValues, cp.NamedValues = values, nil
	*opts = cp
	return nil
}

// withBindNames names the specs of :name markers after them, as ScyllaDB
// names a named marker's variable.
// parse parses a statement in the node's dialect: whether a :name used
// twice is one bind variable (cql_duplicate_bind_variable_names_refer_to_same_variable).
func (s *Server) parse(src string) (cqlparse.Statement, int, error) {
	return cqlparse.ParseDialect(src, !s.configBool("cql_duplicate_bind_variable_names_refer_to_same_variable"))
}

func (s *Server) bindNames(src string) []string {
	return cqlparse.BindNames(src, !s.configBool("cql_duplicate_bind_variable_names_refer_to_same_variable"))
}

func withBindNames(vars *message.VariablesMetadata, names []string) *message.VariablesMetadata {
	if vars == nil || len(names) != len(vars.Columns) {
		return vars
	}
	out := *vars
	out.Columns = make([]*message.ColumnMetadata, len(vars.Columns))
	for i, c := range vars.Columns {
		cp := *c
		if names[i] != "" {
			cp.Name = names[i]
		}
		out.Columns[i] = &cp
	}
	return &out
}

func (s *Server) prepare(c *conn, m *message.Prepare) message.Message {
	st, nbinds, err := s.parse(m.Query)
	if err != nil {
		return errorMessage(err, engine.One, "")
	}
	ks := c.getKeyspace()
	if m.Keyspace != "" {
		ks = m.Keyspace
	}
	vars, result, err := s.describe(ks, st, nbinds)
	if err != nil {
		return errorMessage(err, engine.One, "")
	}
	vars = withBindNames(vars, s.bindNames(m.Query))
	key := preparedID(ks, m.Query)
	p := &prepared{id: key[:], query: m.Query, keyspace: ks, stmt: st, nbinds: nbinds, vars: vars, result: result, inline: servedInline(st)}
	if sel, ok := st.(*cqlparse.Select); ok {
		if ti, err := s.resolveTable(ks, sel.Keyspace, sel.Table); err == nil {
			p.sig = ti.sig
		}
	}
	s.prepared.put(key, p)
	res := &message.PreparedResult{PreparedQueryId: p.id, ResultMetadataId: p.id, VariablesMetadata: vars, ResultMetadata: result}
	if c != nil && c.lwtMark.Load() && conditional(st) {
		// result_message::prepared: the flag only for a client that asked.
		return &extended{Message: res, lwt: true}
	}
	return res
}

func (s *Server) executePrepared(ctx context.Context, c *conn, m *message.Execute) message.Message {
	p := s.prepared.get(m.QueryId)
	if p == nil {
		return &message.Unprepared{ErrorMessage: fmt.Sprintf("Prepared query with ID %x not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", m.QueryId), Id: m.QueryId}
	}
	if sel, ok := p.stmt.(*cqlparse.Select); ok && p.sig != 0 {
		if ti, err := s.resolveTable(p.keyspace, sel.Keyspace, sel.Table); err == nil && ti.virtual == nil && ti.sig != p.sig {
			s.prepared.drop(m.QueryId)
			return &message.Unprepared{ErrorMessage: fmt.Sprintf("Prepared query with ID %x not found (the table's schema changed since it was prepared)", m.QueryId), Id: m.QueryId}
		}
	}
	opts := m.Options
	if opts == nil {
		opts = &message.QueryOptions{}
	}
	ec := &execCtx{s: s, c: c, parent: ctx, keyspace: p.keyspace, cl: engine.Consistency(opts.Consistency), serial: serialOf(opts.SerialConsistency), ts: opts.DefaultTimestamp, skipMeta: opts.SkipMetadata, result: p.result, vars: p.vars,
		tokenAware: p.vars != nil && len(p.vars.PkIndices) > 0}
	if err := ec.bindValues(opts, p.nbinds, p.stmt); err != nil {
		return errorMessage(err, ec.cl, "")
	}
	return ec.run(p.stmt)
}

func (s *Server) batch(c *conn, m *message.Batch) message.Message {
	cl := engine.Consistency(m.Consistency)
	writeType := "BATCH"
	kind := batchLogged
	switch m.Type {
	case primitive.BatchTypeUnlogged:
		writeType, kind = "UNLOGGED_BATCH", batchUnlogged
	case primitive.BatchTypeCounter:
		writeType, kind = "COUNTER", batchCounter
	}
	ks := c.getKeyspace()
	if m.Keyspace != "" {
		ks = m.Keyspace
	}
	type child struct {
		ec *execCtx
		st cqlparse.Statement
	}
	var children []child
	anyConditional := false
	for i, ch := range m.Children {
		var st cqlparse.Statement
		ec := &execCtx{s: s, c: c, keyspace: ks, cl: cl, serial: serialOf(m.SerialConsistency), ts: m.DefaultTimestamp}
		if len(ch.Id) > 0 {
			p := s.prepared.get(ch.Id)
			if p == nil {
				return &message.Unprepared{ErrorMessage: fmt.Sprintf("Prepared query with ID %x not found (batch child %d)", ch.Id, i), Id: ch.Id}
			}
			st, ec.keyspace = p.stmt, p.keyspace
			if len(ch.Values) != p.nbinds {
				return errorMessage(engine.Errorf(engine.CodeInvalid, "There were %d markers(?) in CQL but %d bound variables", p.nbinds, len(ch.Values)), cl, "")
			}
		} else {
			var nbinds int
			var err error
			st, nbinds, err = s.parse(ch.Query)
			if err != nil {
				return errorMessage(err, cl, "")
			}
			if len(ch.Values) != nbinds {
				return errorMessage(engine.Errorf(engine.CodeInvalid, "There were %d markers(?) in CQL but %d bound variables", nbinds, len(ch.Values)), cl, "")
			}
		}
		ec.values = ch.Values
		anyConditional = anyConditional || conditional(st)
		children = append(children, child{ec, st})
	}
	if anyConditional {
		// A batch with conditions is one Paxos round
		// (batch_statement.cc execute_with_conditions).
		if kind == batchCounter {
			return errorMessage(engine.Errorf(engine.CodeInvalid, "Cannot include a counter statement in a conditional BATCH"), cl, "")
		}
		var us []*casUpdate
		for _, ch := range children {
			u, err := ch.ec.casStatement(ch.st)
			if err != nil {
				return errorMessage(err, cl, "CAS")
			}
			us = append(us, u)
		}
		ec := &execCtx{s: s, c: c, cl: cl, serial: serialOf(m.SerialConsistency)}
		res, err := ec.runCAS(us, true, 0)
		if err != nil {
			return errorMessage(err, cl, "CAS")
		}
		return res
	}
	var muts []engine.Mutation
	var timeout time.Duration
	var kinds []bool
	for _, ch := range children {
		counter, err := ch.ec.isCounterStmt(ch.st)
		if err != nil {
			return errorMessage(err, cl, "")
		}
		kinds = append(kinds, counter)
		ms, u, err := ch.ec.mutations(ch.st)
		if err != nil {
			return errorMessage(err, cl, "")
		}
		if u.Timeout > 0 && (timeout == 0 || u.Timeout < timeout) {
			timeout = u.Timeout
		}
		muts = append(muts, ms...)
	}
	if err := checkBatchCounters(kind, false, kinds); err != nil {
		return errorMessage(err, cl, "")
	}
	if len(muts) == 0 {
		return &message.VoidResult{}
	}
	ec := &execCtx{s: s, c: c}
	ctx := ec.context(timeout)
	defer ctx.stop()
	if err := s.b.Write(ctx, muts, cl); err != nil {
		return errorMessage(err, cl, writeType)
	}
	return &message.VoidResult{}
}

// serialOf is a request's serial consistency (0 when it names none).
func serialOf(sc *primitive.ConsistencyLevel) engine.Consistency {
	if sc == nil {
		return 0
	}
	return engine.Consistency(*sc)
}

// context is the request's context (reqCtx); stop it when it is done.
func (ec *execCtx) context(timeout time.Duration) *reqCtx {
	d := ec.s.opts.RequestTimeout
	if timeout > 0 && timeout < d {
		d = timeout
	}
	parent := ec.parent
	if parent == nil && ec.c != nil {
		parent = ec.c.ctx
	}
	if parent == nil {
		parent = context.Background()
	}
	return &reqCtx{parent: parent, deadline: time.Now().Add(d)}
}

// reqCtx is a request's context: its parent's, with the request timeout as
// its deadline, and a timer only once something waits on Done. A request
// of a client operation is mostly answered without that (its replicas'
// answers there before it looks: the local replica, nodes of this process
// served at once), and context.WithTimeout's timer and its registration
// with the connection's context were a few % of a node's CPU (issue 45).
// Err before Done tells the deadline from the clock.
type reqCtx struct {
	parent   context.Context
	deadline time.Time
	mu       sync.Mutex
	armed    context.Context // the parent's with the deadline, or canceled once stopped
	cancel   context.CancelFunc
}

// canceled is the context of a stopped request that never waited.
var canceled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *reqCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *reqCtx) Value(key any) any           { return c.parent.Value(key) }

func (c *reqCtx) Done() <-chan struct{} {
	c.mu.Lock()
	if c.armed == nil {
		c.armed, c.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	armed := c.armed
	c.mu.Unlock()
	return armed.Done()
}

func (c *reqCtx) Err() error {
	c.mu.Lock()
	armed := c.armed
	c.mu.Unlock()
	if armed != nil {
		return armed.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// stop is the request's cancel function: as context.WithTimeout's, its
// context is canceled from then on.
func (c *reqCtx) stop() {
	c.mu.Lock()
	if c.armed == nil {
		c.armed = canceled
	} else if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
}

// run executes one parsed statement.
func (ec *execCtx) run(st cqlparse.Statement) message.Message {
	var (
		res message.Message
		err error
	)
	switch x := st.(type) {
	case *cqlparse.Select:
		res, err = ec.selectRows(x)
	case *cqlparse.Insert, *cqlparse.Update, *cqlparse.Delete:
		res, err = ec.write(st, "SIMPLE")
	case *cqlparse.Batch:
		wt := "BATCH"
		if x.Unlogged {
			wt = "UNLOGGED_BATCH"
		} else if x.Counter {
			wt = "COUNTER"
		}
		res, err = ec.write(st, wt)
	case *cqlparse.Use:
		res, err = ec.use(x)
	case *cqlparse.Describe:
		res, err = ec.describe(x)
	case *cqlparse.RoleStmt:
		res, err = ec.roleStmt(x)
	case *cqlparse.GrantRole:
		res, err = ec.grantRole(x)
	case *cqlparse.GrantPermission:
		res, err = ec.grantPermission(x)
	case *cqlparse.ListRoles:
		res, err = ec.listRoles(x)
	case *cqlparse.ListPermissions:
		res, err = ec.listPermissions(x)
	case *cqlparse.ServiceLevelStmt:
		res, err = ec.serviceLevelStmt(x)
	case *cqlparse.Truncate:
		res, err = ec.truncate(x)
	case *cqlparse.CreateKeyspace, *cqlparse.DropKeyspace, *cqlparse.CreateTable, *cqlparse.DropTable, *cqlparse.CreateType, *cqlparse.DropType, *cqlparse.AlterTable, *cqlparse.AlterKeyspace,
		*cqlparse.CreateIndex, *cqlparse.DropIndex, *cqlparse.CreateView, *cqlparse.DropView, *cqlparse.AlterView, *cqlparse.FunctionStmt:
		res, err = ec.ddl(st)
	default:
		err = engine.Errorf(engine.CodeSyntaxError, "%s statements are not supported", st.Name())
	}
	if err != nil {
		wt := ""
		switch st.(type) {
		case *cqlparse.Insert, *cqlparse.Update, *cqlparse.Delete:
			wt = "SIMPLE"
		case *cqlparse.Batch:
			wt = "BATCH"
		}
		return errorMessage(err, ec.cl, wt)
	}
	if res == nil {
		// Role, grant and service level statements answer VOID.
		return &message.VoidResult{}
	}
	return res
}

// value returns the serialized value of a term for a column of type dt.
// unset reports a protocol "unset" bind value.
func (ec *execCtx) value(t cqlparse.Term, col string, dt datatype.DataType) (b []byte, unset bool, err error) {
	if t.Kind == cqlparse.TermTuple {
		return ec.tupleValue(t, col, dt)
	}
	if t.Kind == cqlparse.TermFunc {
		b, err := ec.funcValue(t, col, dt)
		return b, false, err
	}
	if t.Kind == cqlparse.TermBind {
		if t.Bind >= len(ec.values) {
			return nil, false, engine.Errorf(engine.CodeInvalid, "No value bound for marker %d (%s)", t.Bind, col)
		}
		v := ec.values[t.Bind]
		if v == nil || v.Type == primitive.ValueTypeNull {
			return nil, false, nil
		}
		if v.Type == primitive.ValueTypeUnset {
			return nil, true, nil
		}
		// cql3/expr/expression.cc do_evaluate(bind_variable).
		if err := validateBytes(dt, v.Contents); err != nil {
			return nil, false, engine.Errorf(engine.CodeInvalid, "Exception while binding column %s: %v", col, err)
		}
		if v.Contents == nil {
			return []byte{}, false, nil
		}
		b, err := normalizeSet(dt, v.Contents)
		if err != nil {
			return nil, false, engine.Errorf(engine.CodeInvalid, "Exception while binding column %s: %v", col, err)
		}
		return b, false, nil
	}
	b, err = encodeLiteral(dt, t)
	if ce := (*constantError)(nil); errors.As(err, &ce) && ce.column == "" {
		ce.column = col
	}
	if err == nil {
		b, err = normalizeSet(dt, b)
	}
	if err != nil {
		return nil, false, engine.Errorf(engine.CodeInvalid, "%v", err)
	}
	return b, false, nil
}

// tupleValue serialises a tuple literal whose elements may be bind markers:
// each element as [int length][bytes], -1 for null (the protocol's tuple
// encoding; cql3/tuples.cc).
func (ec *execCtx) tupleValue(t cqlparse.Term, col string, dt datatype.DataType) ([]byte, bool, error) {
	tt, ok := dt.(*datatype.Tuple)
	if !ok {
		return nil, false, engine.Errorf(engine.CodeInvalid, "Invalid tuple literal for %s of type %s", col, typeName(dt))
	}
	if len(t.Values) > len(tt.FieldTypes) {
		return nil, false, engine.Errorf(engine.CodeInvalid, "Invalid tuple literal for %s: too many elements. Type %s expects %d but got %d", col, typeName(dt), len(tt.FieldTypes), len(t.Values))
	}
	out := []byte{}
	for i, el := range t.Values {
		b, unset, err := ec.value(el, col, tt.FieldTypes[i])
		if err != nil {
			return nil, false, err
		}
		if unset {
			return nil, false, engine.Errorf(engine.CodeInvalid, "Invalid unset value for tuple field number %d", i)
		}
		if b == nil {
			out = binary.BigEndian.AppendUint32(out, math.MaxUint32)
			continue
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, false, nil
}

func (ec *execCtx) intTerm(t *cqlparse.Term, what string) (int64, bool, error) {
	if t == nil {
		return 0, false, nil
	}
	dt := datatype.Int
	if what == "timestamp" {
		dt = datatype.Bigint
	}
	b, unset, err := ec.value(*t, "["+what+"]", dt)
	if err != nil {
		return 0, false, err
	}
	if unset || b == nil {
		return 0, false, nil
	}
	switch len(b) {
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b))), true, nil
	case 8:
		return int64(binary.BigEndian.Uint64(b)), true, nil
	}
	return 0, false, engine.Errorf(engine.CodeInvalid, "Invalid %s value", what)
}

// keyParts collects the equality values of the given key columns from a
// WHERE clause. For partition keys an IN list expands to several values.
func (ec *execCtx) keyValues(ti *tableInfo, where []cqlparse.Relation, cols []*colInfo, allowIN bool) ([][][]byte, []bool, error) {
	vals := make([][][]byte, len(cols))
	found := make([]bool, len(cols))
	for _, r := range where {
		if r.Token != nil {
			continue
		}
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, nil, err
		}
		pos := -1
		for i, kc := range cols {
			if kc == c {
				pos = i
			}
		}
		if pos < 0 {
			continue
		}
		switch r.Op {
		case "=":
			if found[pos] {
				return nil, nil, engine.Errorf(engine.CodeInvalid, "%s cannot be restricted by more than one relation if it includes an Equal", c.Name)
			}
			b, unset, err := ec.value(r.Value, c.Name, c.dt)
			if err != nil {
				return nil, nil, err
			}
			if unset {
				return nil, nil, unsetBindError(r.Value)
			}
			if b == nil {
				return nil, nil, engine.Errorf(engine.CodeInvalid, "Invalid null value in condition for column %s", c.Name)
			}
			vals[pos] = [][]byte{b}
			found[pos] = true
		case "IN":
			if !allowIN {
				return nil, nil, engine.Errorf(engine.CodeInvalid, "IN restrictions are not supported on column %s here", c.Name)
			}
			list, err := ec.inValues(r.Value, c)
			if err != nil {
				return nil, nil, err
			}
			vals[pos] = sortedValues(c, list)
			found[pos] = true
		}
	}
	return vals, found, nil
}

// sortedValues sorts an IN list by the column type's order and drops
// duplicates, as cql3/restrictions/statement_restrictions.cc keeps value
// lists ("sorted and deduped using value comparator").
func sortedValues(c *colInfo, list [][]byte) [][]byte {
	cmp := func(a, b []byte) int {
		if v, ok := compareEncoded(c.dt, a, b); ok {
			return v
		}
		return bytes.Compare(a, b)
	}
	out := slices.Clone(list)
	slices.SortStableFunc(out, cmp)
	return slices.CompactFunc(out, func(a, b []byte) bool { return cmp(a, b) == 0 })
}

func (ec *execCtx) inValues(t cqlparse.Term, c *colInfo) ([][]byte, error) {
	var out [][]byte
	if t.Kind == cqlparse.TermBind {
		b, unset, err := ec.value(t, c.Name, datatype.NewList(c.dt))
		if err != nil {
			return nil, err
		}
		if unset || b == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid null value for IN restriction on %s", c.Name)
		}
		elems, err := collectionElems(b, 1)
		if err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid list value for IN restriction on %s", c.Name)
		}
		return elems, nil
	}
	if t.Kind != cqlparse.TermList {
		return nil, engine.Errorf(engine.CodeInvalid, "Invalid IN value for %s", c.Name)
	}
	for _, el := range t.Values {
		b, unset, err := ec.value(el, c.Name, c.dt)
		if err != nil {
			return nil, err
		}
		if unset || b == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid null value in IN restriction on %s", c.Name)
		}
		out = append(out, b)
	}
	return out, nil
}

// partitionKeys returns the serialized partition keys a statement targets
// (several with IN) together with the per-column values of each.
func (ec *execCtx) partitionKeys(ti *tableInfo, where []cqlparse.Relation, allowIN bool) ([][]byte, [][][]byte, error) {
	vals, found, err := ec.keyValues(ti, where, ti.pk, allowIN)
	if err != nil {
		return nil, nil, err
	}
	var missing []string
	for i, ok := range found {
		if !ok {
			missing = append(missing, ti.pk[i].Name)
		}
	}
	if len(missing) > 0 {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance: partition key parts %v are not restricted by equality", missing)
	}
	combos := [][][]byte{{}}
	for _, vs := range vals {
		var next [][][]byte
		for _, prefix := range combos {
			for _, v := range vs {
				next = append(next, append(append([][]byte{}, prefix...), v))
			}
		}
		combos = next
		if len(combos) > 1000 {
			return nil, nil, engine.Errorf(engine.CodeInvalid, "IN restrictions select too many partitions (more than 1000)")
		}
	}
	keys := make([][]byte, len(combos))
	for i, parts := range combos {
		keys[i] = compositeKey(parts)
	}
	return keys, combos, nil
}

// clusteringPrefix encodes the equality-restricted clustering prefix and
// reports how many components it covers.
func (ec *execCtx) clusteringPrefix(ti *tableInfo, where []cqlparse.Relation) ([]byte, int, error) {
	vals, found, err := ec.keyValues(ti, where, ti.ck, false)
	if err != nil {
		return nil, 0, err
	}
	var prefix []byte
	n := 0
	for i, ok := range found {
		if !ok {
			break
		}
		c := ti.ck[i]
		if prefix, err = clusteringAppend(prefix, c.dt, vals[i][0], c.Desc); err != nil {
			return nil, 0, engine.Errorf(engine.CodeInvalid, "%s: %v", c.Name, err)
		}
		n++
	}
	for i := n; i < len(found); i++ {
		if found[i] {
			return nil, 0, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY column %q cannot be restricted as preceding column %q is not restricted", ti.ck[i].Name, ti.ck[n].Name)
		}
	}
	return prefix, n, nil
}

// clusteringPrefixes is clusteringPrefix with IN allowed: the clustering
// prefixes the equality and IN restrictions select, in clustering order
// without duplicates (select_statement.cc make_partition_slice sorts the
// bounds; cql3/restrictions: IN on clustering columns).
func (ec *execCtx) clusteringPrefixes(ti *tableInfo, where []cqlparse.Relation) ([][]byte, int, error) {
	vals, found, err := ec.keyValues(ti, where, ti.ck, true)
	if err != nil {
		return nil, 0, err
	}
	prefixes := [][]byte{nil}
	n := 0
	for i, ok := range found {
		if !ok {
			break
		}
		c := ti.ck[i]
		var next [][]byte
		for _, p := range prefixes {
			for _, v := range vals[i] {
				b, err := clusteringAppend(bytes.Clone(p), c.dt, v, c.Desc)
				if err != nil {
					return nil, 0, engine.Errorf(engine.CodeInvalid, "%s: %v", c.Name, err)
				}
				next = append(next, b)
			}
		}
		if len(next) > 100 {
			// cql3/restrictions/statement_restrictions.cc, with db::config's
			// max_clustering_key_restrictions_per_query default of 100.
			return nil, 0, engine.Errorf(engine.CodeInvalid, "size of clustering-key IN list or clustering-key cartesian product of IN list %d is greater than maximum 100. Use --max-clustering-key-restrictions-per-query configuration option to change default setting.", len(next))
		}
		prefixes = next
		n++
	}
	for i := n; i < len(found); i++ {
		if found[i] {
			return nil, 0, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY column %q cannot be restricted as preceding column %q is not restricted", ti.ck[i].Name, ti.ck[n].Name)
		}
	}
	sort.Slice(prefixes, func(i, j int) bool { return bytes.Compare(prefixes[i], prefixes[j]) < 0 })
	prefixes = slices.CompactFunc(prefixes, bytes.Equal)
	return prefixes, n, nil
}

// errorMessage maps an error to the protocol error the client should see.
func errorMessage(err error, cl engine.Consistency, writeType string) message.Message {
	var se *cqlparse.SyntaxError
	if errors.As(err, &se) {
		return &message.SyntaxError{ErrorMessage: se.Error()}
	}
	var ee *engine.Error
	if !errors.As(err, &ee) {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			if writeType != "" {
				return &message.WriteTimeout{ErrorMessage: "Operation timed out - received only 0 responses.", Consistency: primitive.ConsistencyLevel(cl), WriteType: primitive.WriteType(writeType)}
			}
			return &message.ReadTimeout{ErrorMessage: "Operation timed out - received only 0 responses.", Consistency: primitive.ConsistencyLevel(cl)}
		case errors.Is(err, context.Canceled):
			return &message.ServerError{ErrorMessage: "request cancelled: connection closing"}
		}
		return &message.ServerError{ErrorMessage: err.Error()}
	}
	c := ee.Consistency
	if c == 0 && cl != 0 {
		c = cl
	}
	wt := ee.WriteType
	if wt == "" {
		wt = writeType
	}
	if wt == "" {
		wt = "SIMPLE"
	}
	pc := primitive.ConsistencyLevel(c)
	switch ee.Code {
	case engine.CodeServerError:
		return &message.ServerError{ErrorMessage: ee.Message}
	case engine.CodeProtocolError:
		return &message.ProtocolError{ErrorMessage: ee.Message}
	case engine.CodeUnavailable:
		return &message.Unavailable{ErrorMessage: ee.Message, Consistency: pc, Required: int32(ee.Required), Alive: int32(ee.Alive)}
	case engine.CodeOverloaded:
		return &message.Overloaded{ErrorMessage: ee.Message}
	case engine.CodeIsBootstrapping:
		return &message.IsBootstrapping{ErrorMessage: ee.Message}
	case engine.CodeTruncateError:
		return &message.TruncateError{ErrorMessage: ee.Message}
	case engine.CodeWriteTimeout:
		return &message.WriteTimeout{ErrorMessage: ee.Message, Consistency: pc, Received: int32(ee.Alive), BlockFor: int32(ee.Required), WriteType: primitive.WriteType(wt)}
	case engine.CodeReadTimeout:
		return &message.ReadTimeout{ErrorMessage: ee.Message, Consistency: pc, Received: int32(ee.Alive), BlockFor: int32(ee.Required), DataPresent: ee.DataPresent}
	case engine.CodeReadFailure:
		return &message.ReadFailure{ErrorMessage: ee.Message, Consistency: pc, Received: int32(ee.Alive), BlockFor: int32(ee.Required), NumFailures: int32(ee.Failures), DataPresent: ee.DataPresent}
	case engine.CodeWriteFailure:
		return &message.WriteFailure{ErrorMessage: ee.Message, Consistency: pc, Received: int32(ee.Alive), BlockFor: int32(ee.Required), NumFailures: int32(ee.Failures), WriteType: primitive.WriteType(wt)}
	case engine.CodeFunctionFailure:
		return &message.FunctionFailure{ErrorMessage: ee.Message, Keyspace: ee.Keyspace, Function: ee.Function, Arguments: ee.ArgTypes}
	case engine.CodeSyntaxError:
		return &message.SyntaxError{ErrorMessage: ee.Message}
	case engine.CodeUnauthorized:
		return &message.Unauthorized{ErrorMessage: ee.Message}
	case engine.CodeInvalid:
		return &message.Invalid{ErrorMessage: ee.Message}
	case engine.CodeConfigError:
		return &message.ConfigError{ErrorMessage: ee.Message}
	case engine.CodeAlreadyExists:
		return &message.AlreadyExists{ErrorMessage: ee.Message, Keyspace: ee.Keyspace, Table: ee.Table}
	case engine.CodeUnprepared:
		return &message.Unprepared{ErrorMessage: ee.Message}
	}
	return &message.ServerError{ErrorMessage: fmt.Sprintf("error code 0x%04x: %s", int(ee.Code), ee.Message)}
}

// compareEncoded orders two values of type dt the CQL way.
func compareEncoded(dt datatype.DataType, a, b []byte) (int, bool) {
	ea, err1 := clusteringAppend(nil, dt, a, false)
	eb, err2 := clusteringAppend(nil, dt, b, false)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return bytes.Compare(ea, eb), true
}

// conditional reports a lightweight transaction: IF [NOT] EXISTS on a
// modification, or a batch holding one (cql3/statements
// modification_statement::has_conditions, batch_statement::_has_conditions).
func conditional(st cqlparse.Statement) bool {
	switch st := st.(type) {
	case *cqlparse.Insert:
		return st.IfNotExists
	case *cqlparse.Update:
		return st.IfExists || len(st.If) > 0
	case *cqlparse.Delete:
		return st.IfExists || len(st.If) > 0
	case *cqlparse.Batch:
		for _, s := range st.Statements {
			if conditional(s) {
				return true
			}
		}
	}
	return false
}

// markLWT sets prepared_metadata's LWT flag in an encoded v3/v4 PREPARED
// frame: after the 9-byte header come the result kind [int], the id
// [short bytes] and the metadata's flags [int], whose top bit is
// LWT_FLAG_MASK.
func markLWT(f []byte) error {
	off := 9 + 4
	if len(f) < off+2 {
		return fmt.Errorf("PREPARED frame of %d bytes", len(f))
	}
	off += 2 + int(binary.BigEndian.Uint16(f[off:]))
	if len(f) < off+4 {
		return fmt.Errorf("PREPARED frame of %d bytes", len(f))
	}
	f[off] |= byte(lwtFlagMask >> 24)
	return nil
}
