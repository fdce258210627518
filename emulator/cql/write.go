package cql

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// maxTTL is Cassandra's limit: 20 years in seconds.
const maxTTL = 20 * 365 * 24 * 3600

func (ec *execCtx) write(st cqlparse.Statement, writeType string) (message.Message, error) {
	if conditional(st) {
		return ec.cas(st)
	}
	ms, u, err := ec.mutations(st)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return &message.VoidResult{}, nil
	}
	ctx := ec.context(u.Timeout)
	defer ctx.stop()
	if err := ec.s.b.Write(ctx, ms, ec.cl); err != nil {
		return nil, withWriteType(err, writeType)
	}
	if _, batch := st.(*cqlparse.Batch); !batch && len(ms) == 1 {
		return ec.routeHint(&message.VoidResult{}, ms[0].Keyspace, ms[0].Table, ms[0].PartitionKey), nil
	}
	return &message.VoidResult{}, nil
}

func withWriteType(err error, wt string) error {
	if ee, ok := err.(*engine.Error); ok && ee.WriteType == "" && (ee.Code == engine.CodeWriteTimeout || ee.Code == engine.CodeWriteFailure) {
		cp := *ee
		cp.WriteType = wt
		return &cp
	}
	return err
}

// mutations turns a modification statement (or a batch of them) into
// engine mutations.
func (ec *execCtx) mutations(st cqlparse.Statement) ([]engine.Mutation, cqlparse.Using, error) {
	switch x := st.(type) {
	case *cqlparse.Insert:
		m, err := ec.insert(x)
		return m, x.Using, err
	case *cqlparse.Update:
		m, err := ec.update(x)
		return m, x.Using, err
	case *cqlparse.Delete:
		m, err := ec.delete(x)
		return m, x.Using, err
	case *cqlparse.Batch:
		kind := batchLogged
		if x.Unlogged {
			kind = batchUnlogged
		} else if x.Counter {
			kind = batchCounter
		}
		var kinds []bool
		for _, child := range x.Statements {
			counter, err := ec.isCounterStmt(child)
			if err != nil {
				return nil, x.Using, err
			}
			kinds = append(kinds, counter)
		}
		if err := checkBatchCounters(kind, x.Using.Timestamp != nil, kinds); err != nil {
			return nil, x.Using, err
		}
		if ec.ts == nil {
			// One timestamp for the batch's statements that give none
			// (cql3/statements/batch_statement.cc: the batch's
			// timestamp is each statement's default).
			now := time.Now().UnixMicro()
			ec.ts = &now
			defer func() { ec.ts = nil }()
		}
		var all []engine.Mutation
		for _, child := range x.Statements {
			ms, _, err := ec.mutations(child)
			if err != nil {
				return nil, x.Using, err
			}
			if x.Using.Timestamp != nil {
				ts, ok, err := ec.intTerm(x.Using.Timestamp, "timestamp")
				if err != nil {
					return nil, x.Using, err
				}
				if err := ec.s.checkFutureTimestamp(ts); ok && err != nil {
					return nil, x.Using, err
				}
				if ok {
					for i := range ms {
						ms[i].Timestamp = ts
					}
				}
			}
			all = append(all, ms...)
		}
		return batchOrder(all), x.Using, nil
	}
	return nil, cqlparse.Using{}, engine.Errorf(engine.CodeInvalid, "%s is not allowed in a batch", st.Name())
}

// batchOrder orders a batch's mutations as ScyllaDB merges those of one
// partition into one mutation (batch_statement.cc get_mutations): a write
// that a deletion of the batch covers (its partition, or its row) with a
// timestamp at least the write's is dropped (a tombstone wins a tie,
// mutation_partition.cc apply), and deletions come before the writes of
// their partition, which the emulator then applies in order. A batch of
// DELETE ... USING TIMESTAMP t and UPDATE ... USING TIMESTAMP t+1 on one
// partition kept either, at random (test/cqlpy
// test_static_and_regular_index_operations).
func batchOrder(ms []engine.Mutation) []engine.Mutation {
	var dels []int
	for i := range ms {
		if ms[i].Delete {
			dels = append(dels, i)
		}
	}
	if len(dels) == 0 {
		return ms
	}
	samePartition := func(a, b *engine.Mutation) bool {
		return a.Keyspace == b.Keyspace && a.Table == b.Table && bytes.Equal(a.PartitionKey, b.PartitionKey)
	}
	out := make([]engine.Mutation, 0, len(ms))
	for _, i := range dels {
		out = append(out, ms[i])
	}
	for i := range ms {
		w := &ms[i]
		if w.Delete {
			continue
		}
		covered := false
		for _, d := range dels {
			dm := &ms[d]
			if samePartition(dm, w) && (len(dm.Clustering) == 0 || bytes.Equal(dm.Clustering, w.Clustering)) && dm.Timestamp >= w.Timestamp && w.Counters == nil {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, *w)
		}
	}
	return out
}

type batchKind int

const (
	batchLogged batchKind = iota
	batchUnlogged
	batchCounter
)

// checkBatchCounters applies cql3/statements/batch_statement.cc's rules on
// counter statements in batches; counters[i] says whether the i-th
// statement modifies a counter table.
func checkBatchCounters(kind batchKind, timestamp bool, counters []bool) error {
	has, hasNon := false, false
	for _, c := range counters {
		has = has || c
		hasNon = hasNon || !c
	}
	switch {
	case timestamp && kind == batchCounter:
		return engine.Errorf(engine.CodeInvalid, "Cannot provide custom timestamp for counter BATCH")
	case timestamp && has:
		return engine.Errorf(engine.CodeInvalid, "Cannot provide custom timestamp for a BATCH containing counters")
	case kind == batchCounter && hasNon:
		return engine.Errorf(engine.CodeInvalid, "Cannot include non-counter statement in a counter batch")
	case kind == batchLogged && has:
		return engine.Errorf(engine.CodeInvalid, "Cannot include a counter statement in a logged batch")
	case has && hasNon:
		return engine.Errorf(engine.CodeInvalid, "Counter and non-counter mutations cannot exist in the same batch")
	}
	return nil
}

// isCounterStmt reports whether a modification statement's table is a
// counter table.
func (ec *execCtx) isCounterStmt(st cqlparse.Statement) (bool, error) {
	var ks, name string
	switch x := st.(type) {
	case *cqlparse.Insert:
		ks, name = x.Keyspace, x.Table
	case *cqlparse.Update:
		ks, name = x.Keyspace, x.Table
	case *cqlparse.Delete:
		ks, name = x.Keyspace, x.Table
	default:
		return false, engine.Errorf(engine.CodeInvalid, "%s is not allowed in a batch", st.Name())
	}
	ti, err := ec.writableTable(ks, name)
	if err != nil {
		return false, err
	}
	return ti.counter, nil
}

// checkCounterWrite applies the rules of a modification statement on a
// counter table (cql3/statements/modification_statement.cc validate, and
// db/consistency_level.cc validate_counter_for_write).
func (ec *execCtx) checkCounterWrite(ti *tableInfo, u cqlparse.Using) error {
	if u.Timestamp != nil {
		return engine.Errorf(engine.CodeInvalid, "Cannot provide custom timestamp for counter updates")
	}
	if u.TTL != nil {
		return engine.Errorf(engine.CodeInvalid, "Cannot provide custom TTL for counter updates")
	}
	if ec.cl == engine.Any {
		return engine.Errorf(engine.CodeInvalid, "Consistency level ANY is not yet supported for counter table %s", ti.name)
	}
	return nil
}

// counterDelta is the increment of one counter assignment (c = c + v or
// c = c - v); ok is false for an unset value, which changes nothing.
func (ec *execCtx) counterDelta(c *colInfo, a cqlparse.Assignment) (delta int64, ok bool, err error) {
	b, unset, err := ec.value(a.Value, c.Name, datatype.Counter)
	if err != nil {
		return 0, false, err
	}
	if unset {
		return 0, false, nil
	}
	if b == nil {
		// cql3/constants.cc
		return 0, false, engine.Errorf(engine.CodeInvalid, "Invalid null value for counter increment")
	}
	if len(b) != 8 {
		return 0, false, engine.Errorf(engine.CodeInvalid, "Expected 8 bytes for a counter increment of %s (%d)", c.Name, len(b))
	}
	d := int64(binary.BigEndian.Uint64(b))
	if a.Op == "-" {
		if d == math.MinInt64 {
			return 0, false, engine.Errorf(engine.CodeInvalid, "The negation of %d overflows supported counter precision (signed 8 bytes integer)", d)
		}
		d = -d
	}
	return d, true, nil
}

// stamp fills timestamp and TTL from USING and the protocol options.
func (ec *execCtx) stamp(m *engine.Mutation, u cqlparse.Using, ti *tableInfo) error {
	ts, ok, err := ec.intTerm(u.Timestamp, "timestamp")
	if err != nil {
		return err
	}
	switch {
	case ok:
		if err := ec.s.checkFutureTimestamp(ts); err != nil {
			return err
		}
		m.Timestamp = ts
	case ec.ts != nil:
		m.Timestamp = *ec.ts
	default:
		m.Timestamp = time.Now().UnixMicro()
	}
	ttl, ok, err := ec.intTerm(u.TTL, "ttl")
	if err != nil {
		return err
	}
	if ok {
		if ttl < 0 {
			return engine.Errorf(engine.CodeInvalid, "A TTL must be greater or equal to 0, but was %d", ttl)
		}
		if ttl > maxTTL {
			return engine.Errorf(engine.CodeInvalid, "ttl is too large. requested (%d) maximum (%d)", ttl, maxTTL)
		}
		m.TTL = time.Duration(ttl) * time.Second
	} else if ti.defaultTTL > 0 && !m.Delete {
		m.TTL = ti.defaultTTL
	}
	return nil
}

// checkFutureTimestamp is cql3/util.cc validate_timestamp: with
// restrict_future_timestamp (the default) a USING TIMESTAMP more than three
// days ahead is refused, as a likely millisecond/microsecond mix-up.
func (s *Server) checkFutureTimestamp(ts int64) error {
	const maxAhead = int64(3 * 24 * time.Hour / time.Microsecond)
	now := time.Now().UnixMicro()
	if ts > now && ts-now > maxAhead && s.configBool("restrict_future_timestamp") {
		return engine.Errorf(engine.CodeInvalid, "Cannot provide a timestamp more than 3 days into the future. If this was not intended, "+
			"make sure the timestamp is in microseconds. You can also disable this check by setting the restrict_future_timestamp "+
			"configuration option to false.")
	}
	return nil
}

func (ec *execCtx) writableTable(ks, name string) (*tableInfo, error) {
	ti, err := ec.s.resolveTable(ec.keyspace, ks, name)
	if err != nil {
		return nil, err
	}
	if ti.virtual != nil && !ti.virtual.scylla {
		return nil, engine.Errorf(engine.CodeUnauthorized, "%s.%s is a system table and cannot be modified", ti.keyspace, ti.name)
	}
	if ti.def != nil && ti.def.View != nil {
		// cql3/statements/modification_statement.cc
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot directly modify a materialized view")
	}
	return ti, nil
}

// virtualWrite hands an INSERT or UPDATE of a db/virtual_tables.cc table to
// the table (virtual_table::apply): one partition, named by an equality on
// its key, and the cells the statement sets.
func (ec *execCtx) virtualWrite(ti *tableInfo, names []string, terms []cqlparse.Term, where []cqlparse.Relation) error {
	fail := func(err error) error {
		if ee, ok := err.(*engine.Error); ok && ee.Code == engine.CodeWriteFailure {
			ee.Consistency, ee.WriteType = ec.cl, "SIMPLE"
		}
		return err
	}
	if ti.virtual.apply == nil {
		return fail(virtualUpdateError("this virtual table doesn't allow updates"))
	}
	key := ti.all[0]
	var pk []byte
	cells := map[string][]byte{}
	for i, name := range names {
		c, err := ti.column(name)
		if err != nil {
			return err
		}
		b, _, err := ec.value(terms[i], c.Name, c.dt)
		if err != nil {
			return err
		}
		if c == key {
			pk = b
			continue
		}
		cells[c.Name] = b
	}
	for _, r := range where {
		c, err := ti.column(r.Column)
		if err != nil {
			return err
		}
		if c != key || r.Op != "=" {
			return engine.Errorf(engine.CodeInvalid, "Only EQ relations on the partition key %s are supported when writing to %s.%s", key.Name, ti.keyspace, ti.name)
		}
		if pk, _, err = ec.value(r.Value, c.Name, c.dt); err != nil {
			return err
		}
	}
	if pk == nil {
		return engine.Errorf(engine.CodeInvalid, "Missing mandatory PRIMARY KEY part %s", key.Name)
	}
	return fail(ti.virtual.apply(ec.s, pk, cells))
}

func (ec *execCtx) insert(st *cqlparse.Insert) ([]engine.Mutation, error) {
	ti, err := ec.writableTable(st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	if ti.virtual != nil {
		return nil, ec.virtualWrite(ti, st.Columns, st.Values, nil)
	}
	if ti.counter {
		// cql3/statements/update_statement.cc
		return nil, engine.Errorf(engine.CodeInvalid, "INSERT statement are not allowed on counter tables, use UPDATE instead")
	}
	slots := make([]slot, len(ti.all))
	if st.JSON != nil {
		if err := ec.jsonSlots(ti, st, slots); err != nil {
			return nil, err
		}
	}
	for i, name := range st.Columns {
		c, err := ti.column(name)
		if err != nil {
			return nil, err
		}
		if slots[c.idx].set {
			return nil, engine.Errorf(engine.CodeInvalid, "Multiple definitions found for column %s", name)
		}
		b, unset, err := ec.value(st.Values[i], c.Name, c.dt)
		if err != nil {
			return nil, err
		}
		if unset {
			if c.Kind.InPrimaryKey() {
				return nil, engine.Errorf(engine.CodeInvalid, "Invalid unset value for column %s", c.Name)
			}
			continue
		}
		slots[c.idx] = slot{b, true}
	}
	pk, err := ti.partitionKeyOf(slots)
	if err != nil {
		return nil, err
	}
	stamp := func(m *engine.Mutation) error { return ec.stamp(m, st.Using, ti) }
	// An INSERT that sets only static columns (and names no clustering
	// column) writes the static row alone (cql3/restrictions/
	// statement_restrictions.cc: only static columns need no clustering key).
	if anySet(ti.static, slots) && !anySet(ti.reg, slots) && !anySet(ti.ck, slots) {
		m := staticMutation(ti, pk, slots)
		if err := stamp(&m); err != nil {
			return nil, err
		}
		return []engine.Mutation{m}, nil
	}
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Cells: map[string][]byte{}}
	var missing []string
	for _, c := range ti.ck {
		if !slots[c.idx].set {
			missing = append(missing, c.Name)
			continue
		}
		if slots[c.idx].b == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid null value in condition for column %s", c.Name)
		}
		if m.Clustering, err = clusteringAppend(m.Clustering, c.dt, slots[c.idx].b, c.Desc); err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "%s: %v", c.Name, err)
		}
	}
	if len(missing) > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Some clustering keys are missing: %v", joinNames(missing))
	}
	for _, c := range ti.reg {
		if slots[c.idx].set {
			m.Cells[c.Name] = slots[c.idx].b
		}
	}
	if err := stamp(&m); err != nil {
		return nil, err
	}
	ms := []engine.Mutation{m}
	if anySet(ti.static, slots) {
		sm := staticMutation(ti, pk, slots)
		sm.Timestamp, sm.TTL = m.Timestamp, m.TTL
		ms = append(ms, sm)
	}
	return ms, nil
}

// slot is one column's value in a statement (set: the statement names it).
type slot struct {
	b   []byte
	set bool
}

func anySet(cols []*colInfo, slots []slot) bool {
	for _, c := range cols {
		if slots[c.idx].set {
			return true
		}
	}
	return false
}

// partitionKeyOf builds the serialised partition key from an INSERT's values.
func (ti *tableInfo) partitionKeyOf(slots []slot) ([]byte, error) {
	parts := make([][]byte, len(ti.pk))
	var missing []string
	for i, c := range ti.pk {
		if !slots[c.idx].set {
			missing = append(missing, c.Name)
			continue
		}
		if slots[c.idx].b == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid null value in condition for column %s", c.Name)
		}
		parts[i] = slots[c.idx].b
	}
	if len(missing) > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Some partition key parts are missing: %v", joinNames(missing))
	}
	return nonEmptyKey(compositeKey(parts))
}

// nonEmptyKey refuses an empty partition key in a modification, as
// cql3/statements/modification_statement.cc (validation::validate_cql_key)
// does; reads of an empty key just find nothing.
func nonEmptyKey(pk []byte) ([]byte, error) {
	if len(pk) == 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Key may not be empty")
	}
	return pk, nil
}

// staticMutation writes the static columns set in slots to the partition's
// static row (the row with an empty clustering key).
func staticMutation(ti *tableInfo, pk []byte, slots []slot) engine.Mutation {
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Cells: map[string][]byte{}}
	for _, c := range ti.static {
		if slots[c.idx].set {
			m.Cells[c.Name] = slots[c.idx].b
		}
	}
	return m
}

// rowKey resolves a WHERE clause that must name one partition and, when
// fullRow, one complete clustering key.
func (ec *execCtx) rowKey(ti *tableInfo, where []cqlparse.Relation, fullRow bool, stmt string) (pk, ck []byte, ckCount int, err error) {
	for _, r := range where {
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, nil, 0, err
		}
		if !c.Kind.InPrimaryKey() {
			return nil, nil, 0, engine.Errorf(engine.CodeInvalid, "Non PRIMARY KEY columns found in where clause: %s", c.Name)
		}
		if r.Op != "=" {
			return nil, nil, 0, engine.Errorf(engine.CodeInvalid, "%s: only equality relations are supported on %s", stmt, c.Name)
		}
	}
	keys, _, err := ec.partitionKeys(ti, where, false)
	if err != nil {
		return nil, nil, 0, err
	}
	ck, n, err := ec.clusteringPrefix(ti, where)
	if err != nil {
		return nil, nil, 0, err
	}
	if fullRow && n != len(ti.ck) {
		var missing []string
		for _, c := range ti.ck[n:] {
			missing = append(missing, c.Name)
		}
		return nil, nil, 0, engine.Errorf(engine.CodeInvalid, "Some clustering keys are missing: %s", joinNames(missing))
	}
	pk, err = nonEmptyKey(keys[0])
	return pk, ck, n, err
}

// staticOnlyKey resolves the WHERE clause of an UPDATE or DELETE that
// modifies only static columns: the partition, and no clustering column
// (cql3/restrictions/statement_restrictions.cc refuses one).
func (ec *execCtx) staticOnlyKey(ti *tableInfo, where []cqlparse.Relation, stmt string) ([]byte, error) {
	pk, _, n, err := ec.rowKey(ti, where, false, stmt)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Invalid restrictions on clustering columns since the %s statement modifies only static columns", stmt)
	}
	return pk, nil
}

// splitStatic separates a statement's static cells from its regular ones.
func splitStatic(ti *tableInfo, cells map[string][]byte) (static map[string][]byte) {
	for _, c := range ti.static {
		if v, ok := cells[c.Name]; ok {
			if static == nil {
				static = map[string][]byte{}
			}
			static[c.Name] = v
			delete(cells, c.Name)
		}
	}
	return static
}

// onlyStatic reports whether every named column is static (and there is one).
func onlyStatic(ti *tableInfo, names []string) bool {
	for _, n := range names {
		if c, ok := ti.cols[n]; !ok || c.Kind != engine.Static {
			return false
		}
	}
	return len(names) > 0
}

func (ec *execCtx) update(st *cqlparse.Update) ([]engine.Mutation, error) {
	ti, err := ec.writableTable(st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	var setNames []string
	var setTerms []cqlparse.Term
	for _, a := range st.Set {
		setNames = append(setNames, a.Column)
		setTerms = append(setTerms, a.Value)
	}
	if ti.virtual != nil {
		return nil, ec.virtualWrite(ti, setNames, setTerms, st.Where)
	}
	var pk, ck []byte
	staticOnly := ti.hasStatic() && onlyStatic(ti, setNames)
	if staticOnly {
		pk, err = ec.staticOnlyKey(ti, st.Where, "UPDATE")
	} else {
		pk, ck, _, err = ec.rowKey(ti, st.Where, true, "UPDATE")
	}
	if err != nil {
		return nil, err
	}
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Clustering: ck, Cells: map[string][]byte{}}
	if ti.counter {
		if err := ec.checkCounterWrite(ti, st.Using); err != nil {
			return nil, err
		}
		m.Cells, m.Counters = nil, map[string]int64{}
	}
	var ops []*cellOp
	for _, a := range st.Set {
		c, err := ti.column(a.Column)
		if err != nil {
			return nil, err
		}
		if c.Kind.InPrimaryKey() {
			return nil, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY part %s found in SET part", c.Name)
		}
		// cql3/operation.cc
		isCounter := c.dt == datatype.Counter
		switch {
		case a.Op == "" && isCounter:
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot set the value of counter column %s (counters can only be incremented/decremented, not set)", c.Name)
		case a.Op != "" && !isCounter:
			op, err := ec.cellOpOf(c, a)
			if err != nil {
				return nil, err
			}
			if op != nil {
				ops = append(ops, op)
				m.Cells[c.Name] = nil // placeholder: withStaticMutation routes it, applyOps fills it
			}
			continue
		case isCounter:
			d, ok, err := ec.counterDelta(c, a)
			if err != nil {
				return nil, err
			}
			if ok {
				m.Counters[c.Name] += d
			}
			continue
		}
		b, unset, err := ec.value(a.Value, c.Name, c.dt)
		if err != nil {
			return nil, err
		}
		if !unset {
			m.Cells[c.Name] = b
		}
	}
	if ti.counter {
		m.Timestamp = time.Now().UnixMicro()
		if len(m.Counters) == 0 {
			return nil, nil
		}
		return []engine.Mutation{m}, nil
	}
	if err := ec.stamp(&m, st.Using, ti); err != nil {
		return nil, err
	}
	if err := ec.readForOps(ti, &m, ops); err != nil {
		return nil, err
	}
	return withStaticMutation(ti, m, staticOnly), nil
}

// withStaticMutation moves a row mutation's static cells to the partition's
// static row: one mutation when the statement modifies only static columns,
// otherwise the row and (when it sets any) the static row.
func withStaticMutation(ti *tableInfo, m engine.Mutation, staticOnly bool) []engine.Mutation {
	if !ti.hasStatic() || staticOnly {
		return []engine.Mutation{m}
	}
	static := splitStatic(ti, m.Cells)
	if static == nil {
		return []engine.Mutation{m}
	}
	sm := m
	sm.Clustering, sm.Cells = nil, static
	return []engine.Mutation{m, sm}
}

func (ec *execCtx) delete(st *cqlparse.Delete) ([]engine.Mutation, error) {
	ti, err := ec.writableTable(st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	if ti.virtual != nil {
		return nil, ec.virtualWrite(ti, nil, nil, st.Where)
	}
	if ti.counter {
		if err := ec.checkCounterWrite(ti, st.Using); err != nil {
			return nil, err
		}
	}
	if st.Using.TTL != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot provide custom TTL for DELETE")
	}
	var pk, ck []byte
	staticOnly := ti.hasStatic() && onlyStatic(ti, st.Columns)
	if !staticOnly && isRangeDelete(ti, st.Where) {
		return ec.rangeDelete(ti, st)
	}
	if staticOnly {
		pk, err = ec.staticOnlyKey(ti, st.Where, "DELETE")
	} else {
		pk, ck, _, err = ec.rowKey(ti, st.Where, len(st.Columns) > 0, "DELETE")
	}
	if err != nil {
		return nil, err
	}
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Clustering: ck}
	if len(st.Columns) > 0 {
		m.Cells = map[string][]byte{}
		for _, name := range st.Columns {
			c, err := ti.column(name)
			if err != nil {
				return nil, err
			}
			if c.Kind.InPrimaryKey() {
				return nil, engine.Errorf(engine.CodeInvalid, "Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c.Name)
			}
			m.Cells[c.Name] = nil
		}
	} else {
		m.Delete = true
	}
	if err := ec.stamp(&m, st.Using, ti); err != nil {
		return nil, err
	}
	if m.Delete {
		return []engine.Mutation{m}, nil
	}
	return withStaticMutation(ti, m, staticOnly), nil
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}
