package cql

import (
	"bytes"
	"context"
	"math"
	"sort"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/murmur3"
)

// read is Backend.Read for a SELECT's table; a materialized view's rows
// are derived from its base table's.
func (ec *execCtx) read(ctx context.Context, ti *tableInfo, r engine.Read) ([]engine.Row, error) {
	if ti.def == nil || ti.def.View == nil {
		return ec.s.b.Read(ctx, r, ec.cl)
	}
	all, err := ec.viewRows(ctx, ti)
	if err != nil {
		return nil, err
	}
	var out []engine.Row
	for _, vr := range all {
		if bytes.Equal(vr.PartitionKey, r.PartitionKey) && bytes.HasPrefix(vr.Clustering, r.ClusteringPrefix) {
			out = append(out, vr.Row)
			if r.Limit > 0 && len(out) == r.Limit {
				break
			}
		}
	}
	return out, nil
}

// readRange is Backend.ReadRange for a SELECT's table, views as read.
func (ec *execCtx) readRange(ctx context.Context, ti *tableInfo, r engine.RangeRead) ([]engine.RangeRow, error) {
	if ti.def == nil || ti.def.View == nil {
		return ec.s.b.ReadRange(ctx, r, ec.cl)
	}
	all, err := ec.viewRows(ctx, ti)
	if err != nil {
		return nil, err
	}
	var out []engine.RangeRow
	for _, vr := range all {
		tok := murmur3.Token(vr.PartitionKey)
		if tok < r.Start || tok > r.End || (r.After != nil && ringCompare(&vr, r.After) <= 0) {
			continue
		}
		out = append(out, vr)
		if r.Limit > 0 && len(out) == r.Limit {
			break
		}
	}
	return out, nil
}

// ringCompare orders rows as a range scan returns them: by token, then
// partition key, then clustering.
func ringCompare(a, b *engine.RangeRow) int {
	ta, tb := murmur3.Token(a.PartitionKey), murmur3.Token(b.PartitionKey)
	switch {
	case ta < tb:
		return -1
	case ta > tb:
		return 1
	}
	if c := bytes.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return bytes.Compare(a.Clustering, b.Clustering)
}

// viewRows derives all rows of a materialized view from its base table, in
// ring order, as db/view/view.cc's view_updates would have written them: a
// base row gives a view row when every view key column is set and the
// view's WHERE clause holds; its cells are the view's regular columns.
func (ec *execCtx) viewRows(ctx context.Context, vi *tableInfo) ([]engine.RangeRow, error) {
	sch := schemaOf(ec.s)
	base := sch.Tables[vi.keyspace][vi.def.View.BaseTable]
	if base == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", vi.def.View.BaseTable)
	}
	bi, err := infoFor(base, keyspaceTypes(sch, vi.keyspace))
	if err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "%v", err)
	}
	filters, err := ec.viewFilters(bi, vi.def.View.WhereClause)
	if err != nil {
		return nil, err
	}
	rows, err := ec.s.b.ReadRange(ctx, engine.RangeRead{Keyspace: bi.keyspace, Table: bi.name, Start: math.MinInt64, End: math.MaxInt64, CellMeta: true}, ec.cl)
	if err != nil {
		return nil, err
	}
	var out []engine.RangeRow
	for i := range rows {
		r := &rows[i]
		if bi.isStaticRow(r.Row) {
			continue
		}
		parts, err := bi.splitPartitionKey(r.PartitionKey)
		if err != nil {
			return nil, rowErr(bi, err)
		}
		full, err := bi.decodeRow(parts, r.Row, nil)
		if err != nil {
			return nil, rowErr(bi, err)
		}
		if !matches(filters, full) {
			continue
		}
		if vr, ok, err := viewRow(vi, bi, full, r); err != nil {
			return nil, err
		} else if ok {
			out = append(out, vr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ringCompare(&out[i], &out[j]) < 0 })
	return out, nil
}

// viewFilters are the relations of a view's WHERE clause other than
// IS NOT NULL (create_view_statement.cc allows them on key columns).
func (ec *execCtx) viewFilters(bi *tableInfo, where string) ([]rowFilter, error) {
	if where == "" {
		return nil, nil
	}
	st, _, err := cqlparse.Parse("SELECT * FROM t WHERE " + where)
	if err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "the view's WHERE clause %q: %v", where, err)
	}
	var fs []rowFilter
	for _, r := range st.(*cqlparse.Select).Where {
		c, err := bi.column(r.Column)
		if err != nil {
			return nil, err
		}
		if r.Op == "IS NOT" {
			continue // viewRow skips rows without a key column
		}
		f, err := ec.rowFilterOf(c, r)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// viewRow is the view row of one base row (full: the base row in its
// all-columns order); ok is false when a view key column is null.
func viewRow(vi, bi *tableInfo, full [][]byte, r *engine.RangeRow) (engine.RangeRow, bool, error) {
	val := func(c *colInfo) []byte { return full[bi.cols[c.Name].idx] }
	var parts [][]byte
	for _, c := range vi.pk {
		v := val(c)
		if v == nil {
			return engine.RangeRow{}, false, nil
		}
		parts = append(parts, v)
	}
	var ck []byte
	for _, c := range vi.ck {
		v := val(c)
		if v == nil {
			return engine.RangeRow{}, false, nil
		}
		var err error
		if ck, err = clusteringAppend(ck, c.dt, v, c.Desc); err != nil {
			return engine.RangeRow{}, false, rowErr(vi, err)
		}
	}
	out := engine.RangeRow{PartitionKey: compositeKey(parts), Row: engine.Row{Clustering: ck, Cells: map[string][]byte{}, Timestamp: r.Timestamp}}
	if r.Meta != nil {
		out.Meta = map[string]engine.CellMeta{}
	}
	for _, c := range vi.reg {
		out.Cells[c.Name] = val(c)
		if m, ok := r.Meta[c.Name]; ok {
			out.Meta[c.Name] = m
		}
	}
	return out, true, nil
}
