package cql

import (
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// maxTTL is Cassandra's limit: 20 years in seconds.
const maxTTL = 20 * 365 * 24 * 3600

func (ec *execCtx) write(st cqlparse.Statement, writeType string) (message.Message, error) {
	ms, u, err := ec.mutations(st)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return &message.VoidResult{}, nil
	}
	ctx, cancel := ec.context(u.Timeout)
	defer cancel()
	if err := ec.s.b.Write(ctx, ms, ec.cl); err != nil {
		return nil, withWriteType(err, writeType)
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
				if ok {
					for i := range ms {
						ms[i].Timestamp = ts
					}
				}
			}
			all = append(all, ms...)
		}
		return all, x.Using, nil
	}
	return nil, cqlparse.Using{}, engine.Errorf(engine.CodeInvalid, "%s is not allowed in a batch", st.Name())
}

// stamp fills timestamp and TTL from USING and the protocol options.
func (ec *execCtx) stamp(m *engine.Mutation, u cqlparse.Using, ti *tableInfo) error {
	ts, ok, err := ec.intTerm(u.Timestamp, "timestamp")
	if err != nil {
		return err
	}
	switch {
	case ok:
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

func (ec *execCtx) writableTable(ks, name string) (*tableInfo, error) {
	ti, err := ec.s.resolveTable(ec.keyspace, ks, name)
	if err != nil {
		return nil, err
	}
	if ti.virtual != nil {
		return nil, engine.Errorf(engine.CodeUnauthorized, "%s.%s is a system table and cannot be modified", ti.keyspace, ti.name)
	}
	return ti, nil
}

func (ec *execCtx) insert(st *cqlparse.Insert) ([]engine.Mutation, error) {
	if st.IfNotExists {
		return nil, engine.Errorf(engine.CodeInvalid, "INSERT ... IF NOT EXISTS (lightweight transactions) is not supported by the emulator")
	}
	ti, err := ec.writableTable(st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	type slot struct {
		b   []byte
		set bool
	}
	slots := make([]slot, len(ti.all))
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
			if c.Kind != engine.Regular {
				return nil, engine.Errorf(engine.CodeInvalid, "Invalid unset value for column %s", c.Name)
			}
			continue
		}
		slots[c.idx] = slot{b, true}
	}
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, Cells: map[string][]byte{}}
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
	m.PartitionKey = compositeKey(parts)
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
	if err := ec.stamp(&m, st.Using, ti); err != nil {
		return nil, err
	}
	return []engine.Mutation{m}, nil
}

// rowKey resolves a WHERE clause that must name one partition and, when
// fullRow, one complete clustering key.
func (ec *execCtx) rowKey(ti *tableInfo, where []cqlparse.Relation, fullRow bool, stmt string) (pk, ck []byte, ckCount int, err error) {
	for _, r := range where {
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, nil, 0, err
		}
		if c.Kind == engine.Regular {
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
	return keys[0], ck, n, nil
}

func (ec *execCtx) update(st *cqlparse.Update) ([]engine.Mutation, error) {
	if st.IfExists {
		return nil, engine.Errorf(engine.CodeInvalid, "UPDATE ... IF EXISTS (lightweight transactions) is not supported by the emulator")
	}
	ti, err := ec.writableTable(st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	pk, ck, _, err := ec.rowKey(ti, st.Where, true, "UPDATE")
	if err != nil {
		return nil, err
	}
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Clustering: ck, Cells: map[string][]byte{}}
	for _, a := range st.Set {
		c, err := ti.column(a.Column)
		if err != nil {
			return nil, err
		}
		if c.Kind != engine.Regular {
			return nil, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY part %s found in SET part", c.Name)
		}
		b, unset, err := ec.value(a.Value, c.Name, c.dt)
		if err != nil {
			return nil, err
		}
		if !unset {
			m.Cells[c.Name] = b
		}
	}
	if err := ec.stamp(&m, st.Using, ti); err != nil {
		return nil, err
	}
	return []engine.Mutation{m}, nil
}

func (ec *execCtx) delete(st *cqlparse.Delete) ([]engine.Mutation, error) {
	if st.IfExists {
		return nil, engine.Errorf(engine.CodeInvalid, "DELETE ... IF EXISTS (lightweight transactions) is not supported by the emulator")
	}
	ti, err := ec.writableTable(st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	if st.Using.TTL != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot provide custom TTL for DELETE")
	}
	pk, ck, n, err := ec.rowKey(ti, st.Where, len(st.Columns) > 0, "DELETE")
	if err != nil {
		return nil, err
	}
	if n > 0 && n < len(ti.ck) {
		return nil, engine.Errorf(engine.CodeInvalid, "DELETE of a clustering range is not supported by the emulator; restrict all clustering columns or none")
	}
	m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Clustering: ck}
	if len(st.Columns) > 0 {
		m.Cells = map[string][]byte{}
		for _, name := range st.Columns {
			c, err := ti.column(name)
			if err != nil {
				return nil, err
			}
			if c.Kind != engine.Regular {
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
	return []engine.Mutation{m}, nil
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
