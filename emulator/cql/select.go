package cql

import (
	"bytes"
	"encoding/binary"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// projection is the list of output columns of a SELECT.
type projection struct {
	cols  []*colInfo
	names []string
	count bool
}

func (ti *tableInfo) project(st *cqlparse.Select) (*projection, error) {
	p := &projection{count: st.Count}
	switch {
	case st.Count:
	case st.Star:
		p.cols = ti.all
		for _, c := range ti.all {
			p.names = append(p.names, c.Name)
		}
	default:
		for _, sel := range st.Columns {
			c, err := ti.column(sel.Column)
			if err != nil {
				return nil, err
			}
			p.cols = append(p.cols, c)
			name := c.Name
			if sel.Alias != "" {
				name = sel.Alias
			}
			p.names = append(p.names, name)
		}
	}
	return p, nil
}

func (p *projection) metadata(ti *tableInfo) *message.RowsMetadata {
	if p.count {
		return &message.RowsMetadata{ColumnCount: 1, Columns: []*message.ColumnMetadata{
			{Keyspace: ti.keyspace, Table: ti.name, Name: "count", Type: datatype.Bigint}}}
	}
	md := &message.RowsMetadata{ColumnCount: int32(len(p.cols))}
	for i, c := range p.cols {
		md.Columns = append(md.Columns, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: p.names[i], Type: c.dt, Index: int32(i)})
	}
	return md
}

// rowsResult builds a RESULT Rows from full rows (in ti.all order).
func (ec *execCtx) rowsResult(ti *tableInfo, p *projection, rows [][][]byte) *message.RowsResult {
	var md *message.RowsMetadata
	if ec.result != nil && ec.result.ColumnCount > 0 {
		md = ec.result
	} else {
		md = p.metadata(ti)
	}
	if ec.skipMeta {
		md = &message.RowsMetadata{ColumnCount: md.ColumnCount}
	}
	res := &message.RowsResult{Metadata: md}
	if p.count {
		res.Data = message.RowSet{{binary.BigEndian.AppendUint64(nil, uint64(len(rows)))}}
		return res
	}
	res.Data = make(message.RowSet, len(rows))
	for i, r := range rows {
		out := make(message.Row, len(p.cols))
		for j, c := range p.cols {
			out[j] = r[c.idx]
		}
		res.Data[i] = out
	}
	return res
}

func (ec *execCtx) selectRows(st *cqlparse.Select) (message.Message, error) {
	ti, err := ec.s.resolveTable(ec.keyspace, st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	p, err := ti.project(st)
	if err != nil {
		return nil, err
	}
	limit := 0
	if st.Limit != nil {
		l, ok, err := ec.intTerm(st.Limit, "limit")
		if err != nil {
			return nil, err
		}
		if ok {
			if l <= 0 {
				return nil, engine.Errorf(engine.CodeInvalid, "LIMIT must be strictly positive")
			}
			limit = int(l)
		}
	}
	if ti.virtual != nil {
		rows, err := ec.virtualRows(ti, st.Where)
		if err != nil {
			return nil, err
		}
		if limit > 0 && len(rows) > limit {
			rows = rows[:limit]
		}
		return ec.rowsResult(ti, p, rows), nil
	}

	keys, keyParts, err := ec.partitionKeys(ti, st.Where, true)
	if err != nil {
		return nil, err
	}
	prefix, n, err := ec.clusteringPrefix(ti, st.Where)
	if err != nil {
		return nil, err
	}
	// Relations not answered by the key lookup are applied to the rows.
	var filters []rowFilter
	for _, r := range st.Where {
		c, _ := ti.column(r.Column)
		if c.Kind == engine.PartitionKey || (c.Kind == engine.Clustering && r.Op == "=" && c.Position < n) {
			continue
		}
		if c.Kind == engine.Regular && !st.AllowFiltering {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
		}
		if c.Kind == engine.Clustering && c.Position > n && !st.AllowFiltering {
			return nil, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY column %q cannot be restricted as preceding column %q is not restricted", c.Name, ti.ck[n].Name)
		}
		if r.Op == "IN" || r.Op == "!=" {
			return nil, engine.Errorf(engine.CodeInvalid, "%s restrictions on %s are not supported", r.Op, c.Name)
		}
		v, unset, err := ec.value(r.Value, c.Name, c.dt)
		if err != nil {
			return nil, err
		}
		if unset || v == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid null value in condition for column %s", c.Name)
		}
		filters = append(filters, rowFilter{col: c, op: r.Op, val: v})
	}

	// Paging state: partition index, rows still allowed by LIMIT, and the
	// clustering key of the last row returned.
	startPart, after := 0, []byte(nil)
	pageSize := ec.pageSize
	if p.count {
		pageSize = 0
	}
	if len(ec.paging) > 0 {
		if len(ec.paging) < 8 || int(binary.BigEndian.Uint32(ec.paging)) >= len(keys) {
			return nil, engine.Errorf(engine.CodeProtocolError, "Invalid paging state")
		}
		startPart = int(binary.BigEndian.Uint32(ec.paging))
		if rem := int(binary.BigEndian.Uint32(ec.paging[4:])); limit > 0 && rem > 0 {
			limit = rem
		}
		after = ec.paging[8:]
	}

	ctx, cancel := ec.context(st.Using.Timeout)
	defer cancel()
	var out [][][]byte
	var nextState, lastClustering []byte
	lastPart := 0
scan:
	for ki := startPart; ki < len(keys); ki++ {
		readLimit := 0
		if len(filters) == 0 && !p.count && (ki != startPart || after == nil) {
			readLimit = limit - len(out)
			if pageSize > 0 && (readLimit <= 0 || pageSize-len(out) < readLimit) {
				readLimit = pageSize - len(out) + 1
			}
			if readLimit < 0 {
				readLimit = 0
			}
		}
		rows, err := ec.s.b.Read(ctx, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: keys[ki], ClusteringPrefix: prefix, Limit: readLimit}, ec.cl)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if ki == startPart && after != nil && bytes.Compare(r.Clustering, after) <= 0 {
				continue
			}
			full, err := ti.decodeRow(keyParts[ki], r)
			if err != nil {
				return nil, engine.Errorf(engine.CodeServerError, "decoding row of %s.%s: %v", ti.keyspace, ti.name, err)
			}
			if !matches(filters, full) {
				continue
			}
			if pageSize > 0 && len(out) == pageSize {
				// One more row exists: end the page here.
				nextState = binary.BigEndian.AppendUint32(nil, uint32(lastPart))
				rem := 0
				if limit > 0 {
					rem = limit - len(out)
				}
				nextState = binary.BigEndian.AppendUint32(nextState, uint32(rem))
				nextState = append(nextState, lastClustering...)
				break scan
			}
			out = append(out, full)
			lastPart, lastClustering = ki, r.Clustering
			if limit > 0 && len(out) >= limit {
				break scan
			}
		}
	}
	res := ec.rowsResult(ti, p, out)
	if nextState != nil {
		md := *res.Metadata
		md.PagingState = nextState
		res.Metadata = &md
	}
	return res, nil
}

type rowFilter struct {
	col *colInfo
	op  string
	val []byte
}

func matches(fs []rowFilter, row [][]byte) bool {
	for _, f := range fs {
		v := row[f.col.idx]
		if v == nil {
			return false
		}
		if f.op == "=" {
			if !bytes.Equal(v, f.val) {
				return false
			}
			continue
		}
		cmp, ok := compareEncoded(f.col.dt, v, f.val)
		if !ok {
			return false
		}
		switch f.op {
		case "<":
			ok = cmp < 0
		case "<=":
			ok = cmp <= 0
		case ">":
			ok = cmp > 0
		case ">=":
			ok = cmp >= 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// decodeRow expands a stored row into all-columns order.
func (ti *tableInfo) decodeRow(pkParts [][]byte, r engine.Row) ([][]byte, error) {
	full := make([][]byte, len(ti.all))
	for i, c := range ti.pk {
		full[c.idx] = pkParts[i]
	}
	rest := r.Clustering
	for _, c := range ti.ck {
		v, next, err := clusteringNext(rest, c.dt, c.Desc)
		if err != nil {
			return nil, err
		}
		full[c.idx] = v
		rest = next
	}
	for _, c := range ti.reg {
		full[c.idx] = r.Cells[c.Name]
	}
	return full, nil
}
