package cql

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Lightweight transactions, as cql3/statements/modification_statement.cc
// (execute_with_condition, applies_to, build_cas_result_set_metadata),
// cql3/statements/batch_statement.cc (execute_with_conditions) and
// cql3/statements/cas_request.cc (find_old_row, build_cas_result_set) run
// them: the partition's row is read under the partition's Paxos round
// (engine.PartitionLocker; the node's leader lease, see
// emulator/node/paxos.go), every statement's condition is checked against
// its old row, and the updates are written together only when all hold.
// The result is always a row set: [applied], then the columns of the
// conditions (every column for IF [NOT] EXISTS), one row per statement,
// with the old row's values (null when there is none).

// casUpdate is one statement of a conditional statement or batch.
type casUpdate struct {
	ti                    *tableInfo
	pk                    []byte
	ck                    []byte // the full clustering key; nil when the statement names none
	ifExists, ifNotExists bool
	conds                 []casCond
	ms                    []engine.Mutation
	ops                   []*cellOp // SET operations on the old row (operations.go)
	timestamp             bool      // USING TIMESTAMP
}

// casCond is one IF condition: col op val (vals for IN).
type casCond struct {
	col  *colInfo
	op   string
	val  []byte
	vals [][]byte
}

// hasConditions reports whether the statement checks anything.
func (u *casUpdate) hasConditions() bool { return u.ifExists || u.ifNotExists || len(u.conds) > 0 }

// onlyStaticConditions is modification_statement's
// has_only_static_column_conditions: IF [NOT] EXISTS on a table with static
// columns without a clustering key, or conditions on static columns only.
func (u *casUpdate) onlyStaticConditions() bool {
	if u.ifExists || u.ifNotExists {
		return u.ti.hasStatic() && u.ck == nil
	}
	static := false
	for _, c := range u.conds {
		if c.col.Kind != engine.Static {
			return false
		}
		static = true
	}
	return static
}

// columns are the statement's result columns after [applied].
func (u *casUpdate) columns() map[*colInfo]bool {
	out := map[*colInfo]bool{}
	if u.ifExists || u.ifNotExists {
		for _, c := range u.ti.all {
			out[c] = true
		}
		return out
	}
	for _, c := range u.conds {
		out[c.col] = true
	}
	return out
}

// casStatement turns one modification statement into a casUpdate.
func (ec *execCtx) casStatement(st cqlparse.Statement) (*casUpdate, error) {
	u := &casUpdate{}
	var ks, table string
	var using cqlparse.Using
	var conds []cqlparse.Relation
	switch x := st.(type) {
	case *cqlparse.Insert:
		ks, table, using, u.ifNotExists = x.Keyspace, x.Table, x.Using, x.IfNotExists
	case *cqlparse.Update:
		ks, table, using, u.ifExists, conds = x.Keyspace, x.Table, x.Using, x.IfExists, x.If
	case *cqlparse.Delete:
		ks, table, using, u.ifExists, conds = x.Keyspace, x.Table, x.Using, x.IfExists, x.If
	default:
		return nil, engine.Errorf(engine.CodeInvalid, "%s is not allowed in a batch", st.Name())
	}
	ti, err := ec.writableTable(ks, table)
	if err != nil {
		return nil, err
	}
	u.ti, u.timestamp = ti, using.Timestamp != nil
	if ti.counter && (u.ifExists || u.ifNotExists || len(conds) > 0) {
		return nil, engine.Errorf(engine.CodeInvalid, "Conditional updates are not supported on counter tables")
	}
	ec.casOps = &u.ops
	u.ms, _, err = ec.mutations(st)
	ec.casOps = nil
	if err != nil {
		return nil, err
	}
	if len(u.ms) == 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Unrestricted partition key in a conditional %s", st.Name())
	}
	u.pk = u.ms[0].PartitionKey
	if len(u.ms[0].Clustering) > 0 {
		u.ck = u.ms[0].Clustering
	}
	for _, r := range conds {
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, err
		}
		if c.Kind.InPrimaryKey() {
			return nil, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY column '%s' cannot have IF conditions", c.Name)
		}
		cond := casCond{col: c, op: r.Op}
		if r.Op == "IN" || r.Op == "NOT IN" {
			cond.vals, err = ec.conditionList(r.Value, c)
		} else {
			var unset bool
			cond.val, unset, err = ec.value(r.Value, c.Name, c.dt)
			if err == nil && unset {
				err = unsetBindError(r.Value)
			}
		}
		if err != nil {
			return nil, err
		}
		u.conds = append(u.conds, cond)
	}
	return u, nil
}

// conditionList is the value list of an IN condition (nulls allowed).
func (ec *execCtx) conditionList(t cqlparse.Term, c *colInfo) ([][]byte, error) {
	if t.Kind == cqlparse.TermBind && t.Bind < len(ec.values) {
		if v := ec.values[t.Bind]; v != nil && v.Type == primitive.ValueTypeRegular {
			return conditionBoundList(v.Contents, c)
		}
	}
	if t.Kind != cqlparse.TermList {
		return ec.inValues(t, c)
	}
	var out [][]byte
	for _, el := range t.Values {
		b, _, err := ec.value(el, c.Name, c.dt)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// conditionBoundList decodes the bound list of "IF col IN ?": unlike a
// WHERE IN list its elements may be null (nil here), and a null element
// matches a null column (cql3/expr/expression.cc is_one_of with
// null_handling_style::lwt_nulls, list_contains_null).
func conditionBoundList(b []byte, c *colInfo) ([][]byte, error) {
	out, err := collectionElemsOrNull(b, 1)
	for _, e := range out {
		if err == nil && e != nil {
			err = validateBytes(c.dt, e)
		}
	}
	if err != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Exception while binding column %s: %v", c.Name, err)
	}
	return out, nil
}

// cas runs a conditional INSERT, UPDATE, DELETE or BATCH.
func (ec *execCtx) cas(st cqlparse.Statement) (message.Message, error) {
	var stmts []cqlparse.Statement
	batch := false
	var using cqlparse.Using
	switch x := st.(type) {
	case *cqlparse.Batch:
		if x.Counter {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot include a counter statement in a conditional BATCH")
		}
		stmts, batch, using = x.Statements, true, x.Using
	default:
		stmts = []cqlparse.Statement{st}
	}
	if batch && using.Timestamp != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot provide custom timestamp for conditional BATCH")
	}
	var us []*casUpdate
	for _, s := range stmts {
		u, err := ec.casStatement(s)
		if err != nil {
			return nil, err
		}
		us = append(us, u)
	}
	return ec.runCAS(us, batch, using.Timeout)
}

// runCAS checks and applies a conditional statement's updates on their
// partition under its Paxos round.
func (ec *execCtx) runCAS(us []*casUpdate, batch bool, timeout time.Duration) (message.Message, error) {
	first := us[0]
	for _, u := range us {
		if u.timestamp {
			if batch {
				return nil, engine.Errorf(engine.CodeInvalid, "Cannot provide custom timestamp for conditional BATCH")
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot provide custom timestamp for conditional updates")
		}
		if u.ti != first.ti {
			return nil, engine.Errorf(engine.CodeInvalid, "BATCH with conditions cannot span multiple tables")
		}
		if !bytes.Equal(u.pk, first.pk) {
			return nil, engine.Errorf(engine.CodeInvalid, "BATCH with conditions cannot span multiple partitions")
		}
	}
	readCL, err := ec.paxosReadCL()
	if err != nil {
		return nil, err
	}
	ti := first.ti
	if err := ec.s.checkLWTTable(ti); err != nil {
		return nil, err
	}
	ctx := ec.context(timeout)
	defer ctx.stop()
	unlock, err := ec.s.lockPartition(ctx, ti.keyspace, ti.name, first.pk)
	if err != nil {
		return nil, withWriteType(err, "CAS")
	}
	defer unlock()
	rows, err := ec.s.b.Read(ctx, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: first.pk}, readCL)
	if err != nil {
		return nil, err
	}
	part := newCASPartition(ti, rows)
	applied := true
	for _, u := range us {
		if u.hasConditions() && !part.applies(u) {
			applied = false
			break
		}
	}
	if applied {
		for _, u := range us {
			if err := part.applyCASOps(u); err != nil {
				return nil, err
			}
		}
		ts := max(time.Now().UnixMicro(), part.maxTimestamp+1)
		var ms []engine.Mutation
		for _, u := range us {
			for _, m := range u.ms {
				m.Timestamp = ts
				ms = append(ms, m)
			}
		}
		if err := ec.s.b.Write(ctx, ms, ec.cl); err != nil {
			return nil, withWriteType(err, "CAS")
		}
	}
	res := ec.casResult(us, part, applied, batch)
	if !batch {
		return ec.routeHint(res, ti.keyspace, ti.name, first.pk), nil
	}
	return res, nil
}

// checkLWTTable refuses a transaction on a table with tablets where this
// version cannot run one: service/storage_proxy.cc cas, unconditionally
// in 2025.1, and while the cluster lacks LWT_WITH_TABLETS in 2025.4.
func (s *Server) checkLWTTable(ti *tableInfo) error {
	sch := s.b.Schema()
	if sch == nil || sch.Keyspaces[ti.keyspace] == nil || !sch.Keyspaces[ti.keyspace].TabletsEnabled {
		return nil
	}
	if hasFeature(s.b.Local().ScyllaVersion, "LWT_WITH_TABLETS") {
		return nil
	}
	return engine.Errorf(engine.CodeInvalid, "Cannot use LightWeight Transactions for table %s.%s: LWT is not yet supported with tablets", ti.keyspace, ti.name)
}

// paxosReadCL is the consistency of the Paxos round's read: QUORUM for
// SERIAL, LOCAL_QUORUM for LOCAL_SERIAL (the protocol's default serial
// consistency is SERIAL).
func (ec *execCtx) paxosReadCL() (engine.Consistency, error) {
	switch ec.serial {
	case 0, engine.Serial:
		return engine.Quorum, nil
	case engine.LocalSerial:
		return engine.LocalQuorum, nil
	}
	// db/consistency_level.cc validate_for_cas
	return 0, engine.Errorf(engine.CodeInvalid, "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
}

// casPartition is the partition as the Paxos round read it.
type casPartition struct {
	ti           *tableInfo
	rows         map[string]engine.Row
	static       map[string][]byte
	maxTimestamp int64
}

func newCASPartition(ti *tableInfo, rows []engine.Row) *casPartition {
	p := &casPartition{ti: ti, rows: map[string]engine.Row{}}
	for _, r := range rows {
		p.maxTimestamp = max(p.maxTimestamp, r.Timestamp)
		if ti.isStaticRow(r) {
			p.static = r.Cells
			continue
		}
		p.rows[string(r.Clustering)] = r
	}
	return p
}

// oldRow is a statement's old row: its clustering key (empty for the
// static row) and its static and regular cells; nil when there is none.
type oldRow struct {
	ck    []byte
	cells map[string][]byte
}

// oldRow is cas_request.cc find_old_row: the row at the statement's
// clustering key, else (for column conditions) the static row.
func (p *casPartition) oldRow(u *casUpdate) *oldRow {
	if len(u.ti.ck) == 0 {
		if r, ok := p.rows[""]; ok {
			return &oldRow{cells: r.Cells}
		}
		return nil
	}
	if u.ck != nil {
		if r, ok := p.rows[string(u.ck)]; ok {
			cells := map[string][]byte{}
			for k, v := range p.static {
				cells[k] = v
			}
			for k, v := range r.Cells {
				cells[k] = v
			}
			return &oldRow{ck: u.ck, cells: cells}
		}
		if u.ifExists || u.ifNotExists {
			return nil
		}
	}
	if hasLiveCell(p.static) {
		return &oldRow{cells: p.static}
	}
	return nil
}

// applies is modification_statement::applies_to.
func (p *casPartition) applies(u *casUpdate) bool {
	row := p.oldRow(u)
	if u.onlyStaticConditions() && row != nil && !p.hasStaticIn(row) {
		row = nil
	}
	switch {
	case u.ifExists:
		return row != nil
	case u.ifNotExists:
		return row == nil
	}
	var cells map[string][]byte
	if row != nil {
		cells = row.cells
	}
	for _, c := range u.conds {
		if !c.holds(cells[c.col.Name]) {
			return false
		}
	}
	return true
}

func (p *casPartition) hasStaticIn(r *oldRow) bool {
	for _, c := range p.ti.static {
		if r.cells[c.Name] != nil {
			return true
		}
	}
	return false
}

// holds evaluates the condition on a cell (nil = null): = and != compare
// nulls as values, IN matches any element, an order comparison with a
// null is false (cql3/expr/expression.cc evaluate).
func (c casCond) holds(v []byte) bool {
	eq := func(a, b []byte) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		if cmp, ok := compareEncoded(c.col.dt, a, b); ok {
			return cmp == 0
		}
		return bytes.Equal(a, b)
	}
	switch c.op {
	case "=":
		return eq(v, c.val)
	case "!=":
		return !eq(v, c.val)
	case "IN", "NOT IN":
		in := false
		for _, x := range c.vals {
			in = in || eq(v, x)
		}
		return in == (c.op == "IN")
	}
	if v == nil || c.val == nil {
		return false
	}
	cmp, ok := compareEncoded(c.col.dt, v, c.val)
	if !ok {
		cmp = bytes.Compare(v, c.val)
	}
	switch c.op {
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}

// casColumns is the result's columns after [applied], in the table's
// column order: a statement's condition columns (all for IF [NOT] EXISTS);
// a batch adds the primary key (batch_statement.cc
// build_cas_result_set_metadata).
func casColumns(us []*casUpdate, batch bool) []*colInfo {
	want := map[*colInfo]bool{}
	ti := us[0].ti
	if batch {
		for _, c := range ti.all {
			if c.Kind.InPrimaryKey() {
				want[c] = true
			}
		}
	}
	for _, u := range us {
		if u.hasConditions() {
			for c := range u.columns() {
				want[c] = true
			}
		}
	}
	var out []*colInfo
	for _, c := range ti.all {
		if want[c] {
			out = append(out, c)
		}
	}
	return out
}

// casMetadata is the result metadata of a conditional statement.
func casMetadata(ti *tableInfo, cols []*colInfo) *message.RowsMetadata {
	md := &message.RowsMetadata{ColumnCount: int32(len(cols) + 1)}
	md.Columns = append(md.Columns, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: "[applied]", Type: datatype.Boolean})
	for i, c := range cols {
		md.Columns = append(md.Columns, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: c.Name, Type: c.dt, Index: int32(i + 1)})
	}
	return md
}

// casResult is cas_request.cc build_cas_result_set.
func (ec *execCtx) casResult(us []*casUpdate, p *casPartition, applied bool, batch bool) *message.RowsResult {
	ti := us[0].ti
	cols := casColumns(us, batch)
	md := casMetadata(ti, cols)
	if ec.skipMeta && ec.result != nil && int(ec.result.ColumnCount) == len(md.Columns) {
		md = &message.RowsMetadata{ColumnCount: md.ColumnCount}
	}
	res := &message.RowsResult{Metadata: md}
	flag := []byte{0}
	if applied {
		flag = []byte{1}
	}
	for _, u := range us {
		out := message.Row{flag}
		row := p.oldRow(u)
		if row == nil {
			res.Data = append(res.Data, append(out, make(message.Row, len(cols))...))
			continue
		}
		pkParts, _ := ti.splitPartitionKey(u.pk)
		full := ti.staticOnlyRow(pkParts, row.cells)
		if len(row.ck) > 0 || len(ti.ck) == 0 {
			if dec, err := ti.decodeRow(pkParts, engine.Row{Clustering: row.ck, Cells: row.cells}, row.cells); err == nil {
				full = dec
			}
		}
		for _, c := range cols {
			out = append(out, full[c.idx])
		}
		res.Data = append(res.Data, out)
	}
	return res
}

// lockPartition takes the partition's Paxos round from the backend, or,
// for a backend without one (a single-node test double), a lock in this
// server.
func (s *Server) lockPartition(ctx context.Context, keyspace, table string, pk []byte) (func(), error) {
	if l, ok := s.b.(engine.PartitionLocker); ok {
		return l.LockPartition(ctx, keyspace, table, pk)
	}
	key := keyspace + "\x00" + table + "\x00" + string(pk)
	for {
		s.casMu.Lock()
		if s.casHeld == nil {
			s.casHeld = map[string]chan struct{}{}
		}
		ch, held := s.casHeld[key]
		if !held {
			done := make(chan struct{})
			s.casHeld[key] = done
			s.casMu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					s.casMu.Lock()
					delete(s.casHeld, key)
					s.casMu.Unlock()
					close(done)
				})
			}, nil
		}
		s.casMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// serialRead runs fn, a SELECT of one partition at SERIAL or LOCAL_SERIAL,
// inside the partition's Paxos round at QUORUM or LOCAL_QUORUM
// (storage_proxy.cc read_with_paxos: a read sees every accepted proposal).
func (ec *execCtx) serialRead(ctx context.Context, ti *tableInfo, keys [][]byte) (unlock func(), err error) {
	if len(keys) != 1 {
		return nil, engine.Errorf(engine.CodeInvalid, "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time")
	}
	ec.serial = ec.cl
	readCL, err := ec.paxosReadCL()
	if err != nil {
		return nil, err
	}
	if err := ec.s.checkLWTTable(ti); err != nil {
		return nil, err
	}
	unlock, err = ec.s.lockPartition(ctx, ti.keyspace, ti.name, keys[0])
	if err != nil {
		return nil, err
	}
	ec.cl = readCL
	return unlock, nil
}

// casPreparedMetadata is the PREPARED result metadata of a conditional
// statement (modification_statement.cc and batch_statement.cc
// build_cas_result_set_metadata): what its results will carry.
func (s *Server) casPreparedMetadata(ks string, st cqlparse.Statement) (*message.RowsMetadata, error) {
	stmts, batch := []cqlparse.Statement{st}, false
	if b, ok := st.(*cqlparse.Batch); ok {
		stmts, batch = b.Statements, true
	}
	var us []*casUpdate
	for _, child := range stmts {
		u := &casUpdate{}
		var table, tks string
		var conds []cqlparse.Relation
		switch x := child.(type) {
		case *cqlparse.Insert:
			tks, table, u.ifNotExists = x.Keyspace, x.Table, x.IfNotExists
		case *cqlparse.Update:
			tks, table, u.ifExists, conds = x.Keyspace, x.Table, x.IfExists, x.If
		case *cqlparse.Delete:
			tks, table, u.ifExists, conds = x.Keyspace, x.Table, x.IfExists, x.If
		default:
			return nil, engine.Errorf(engine.CodeInvalid, "%s is not allowed in a batch", child.Name())
		}
		ti, err := s.resolveTable(ks, tks, table)
		if err != nil {
			return nil, err
		}
		u.ti = ti
		for _, r := range conds {
			c, err := ti.column(r.Column)
			if err != nil {
				return nil, err
			}
			u.conds = append(u.conds, casCond{col: c, op: r.Op})
		}
		if len(us) > 0 && us[0].ti != ti {
			return nil, engine.Errorf(engine.CodeInvalid, "BATCH with conditions cannot span multiple tables")
		}
		us = append(us, u)
	}
	return casMetadata(us[0].ti, casColumns(us, batch)), nil
}
