package cql

import (
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// isRangeDelete reports whether a DELETE's WHERE restricts a prefix of
// the clustering key by equality and then, optionally, the next column by
// a slice (<, <=, >, >=), leaving the rest unrestricted: a range deletion
// (cql3/statements/delete_statement.cc has_slice). Any other shape (a gap,
// a restriction after a slice) goes to rowKey, which refuses it.
func isRangeDelete(ti *tableInfo, where []cqlparse.Relation) bool {
	ops := make([][]string, len(ti.ck))
	for _, r := range where {
		if c, ok := ti.cols[r.Column]; ok && c.Kind == engine.Clustering {
			ops[c.Position] = append(ops[c.Position], r.Op)
		}
	}
	eq := 0
	for eq < len(ops) && len(ops[eq]) == 1 && ops[eq][0] == "=" {
		eq++
	}
	if eq == len(ops) {
		return false // the full key: a row deletion
	}
	slice := 0
	if len(ops[eq]) > 0 {
		for _, op := range ops[eq] {
			if op != "<" && op != "<=" && op != ">" && op != ">=" {
				return false
			}
		}
		slice = 1
	}
	for _, rest := range ops[eq+slice:] {
		if len(rest) > 0 {
			return false
		}
	}
	return eq+slice > 0
}

// rangeDelete deletes the rows of one partition whose clustering key
// satisfies the statement's clustering restrictions. ScyllaDB writes one
// range tombstone (delete_statement.cc, statement_restrictions.cc
// get_clustering_bounds); the emulator's engine has row tombstones only,
// so it deletes each row the range holds when the statement runs: a row
// written later inside the range with an older timestamp is not covered.
func (ec *execCtx) rangeDelete(ti *tableInfo, st *cqlparse.Delete) ([]engine.Mutation, error) {
	if len(st.Columns) > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Range deletions are not supported for specific columns")
	}
	var pkRels []cqlparse.Relation
	var filters []rowFilter
	for _, r := range st.Where {
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, err
		}
		switch {
		case c.Kind == engine.PartitionKey:
			pkRels = append(pkRels, r)
		case c.Kind != engine.Clustering:
			return nil, engine.Errorf(engine.CodeInvalid, "Non PRIMARY KEY columns found in where clause: %s", c.Name)
		default:
			f, err := ec.rowFilterOf(c, r)
			if err != nil {
				return nil, err
			}
			filters = append(filters, f)
		}
	}
	keys, _, err := ec.partitionKeys(ti, pkRels, true)
	if err != nil {
		return nil, err
	}
	var out []engine.Mutation
	for _, pk := range keys {
		ms, err := ec.deleteMatching(ti, pk, filters, st.Using)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// deleteMatching is one row tombstone per row of partition pk that passes
// the clustering filters.
func (ec *execCtx) deleteMatching(ti *tableInfo, pk []byte, filters []rowFilter, using cqlparse.Using) ([]engine.Mutation, error) {
	ctx := ec.context(0)
	defer ctx.stop()
	rows, err := ec.s.b.Read(ctx, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk}, ec.cl)
	if err != nil {
		return nil, err
	}
	var out []engine.Mutation
	for _, r := range rows {
		if ti.isStaticRow(r) {
			continue
		}
		row := make([][]byte, len(ti.all))
		rest := r.Clustering
		for _, c := range ti.ck {
			if row[c.idx], rest, err = clusteringNext(rest, c.dt, c.Desc); err != nil {
				return nil, rowErr(ti, err)
			}
		}
		if !matches(filters, row) {
			continue
		}
		m := engine.Mutation{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Clustering: r.Clustering, Delete: true}
		if err := ec.stamp(&m, using, ti); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
