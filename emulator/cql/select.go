package cql

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/murmur3"
)

// projection is the list of output columns of a SELECT.
type projection struct {
	cols  []*colInfo
	names []string
	count bool
	// attrs are the writetime()/ttl() selectors, whose values follow the
	// table's columns in a decoded row (colInfo.idx len(ti.all)+i).
	attrs []cellAttr
	// fns are the user-defined functions; err is the first error a call
	// of one returned (selectRows answers it instead of rows).
	fns map[string]map[string]*engine.Function
	err error
	// aggregates: some attrs are aggregate functions (sum, avg, min, max,
	// count of a column), which fold the rows into one.
	aggregates bool
}

// cellAttr is writetime(col) or ttl(col) (cql3/expr column_mutation_attribute).
type cellAttr struct {
	fn  string
	col *colInfo
	udf *udfCall
}

// attrSelector validates writetime(col)/ttl(col) as cql3/expr/prepare_expr.cc
// prepare_column_mutation_attribute does and returns its output column:
// writetime a bigint, ttl an int, named as ScyllaDB names them.
func (p *projection) attrSelector(ti *tableInfo, sel cqlparse.Selector) (*colInfo, error) {
	if c, ok, err := p.udfSelector(ti, sel); ok || err != nil {
		return c, err
	}
	if sel.Column == "" {
		// A function without arguments, named as ScyllaDB names it:
		// system.now().
		dt := funcType(sel.Func)
		if dt == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown function '%s'", sel.Func)
		}
		out := &colInfo{Column: engine.Column{Name: "system." + sel.Func + "()", Type: typeName(dt)}, dt: dt, idx: len(ti.all) + len(p.attrs)}
		p.attrs = append(p.attrs, cellAttr{fn: sel.Func})
		return out, nil
	}
	c, err := ti.column(sel.Column)
	if err != nil {
		return nil, err
	}
	if sel.Subscript || sel.Field != "" {
		return nil, elementAttrError(c, sel)
	}
	if aggregateFuncs[sel.Func] {
		dt, err := aggregateType(sel.Func, c.dt)
		if err != nil {
			return nil, err
		}
		out := &colInfo{Column: engine.Column{Name: "system." + sel.Func + "(" + c.Name + ")", Type: typeName(dt)}, dt: dt, idx: len(ti.all) + len(p.attrs)}
		p.attrs = append(p.attrs, cellAttr{fn: sel.Func, col: c})
		p.aggregates = true
		return out, nil
	}
	if sel.Func != "writetime" && sel.Func != "ttl" {
		dt, err := convFuncType(sel.Func, c.dt)
		if err != nil {
			return nil, err
		}
		out := &colInfo{Column: engine.Column{Name: "system." + sel.Func + "(" + c.Name + ")", Type: typeName(dt)}, dt: dt, idx: len(ti.all) + len(p.attrs)}
		p.attrs = append(p.attrs, cellAttr{fn: sel.Func, col: c})
		return out, nil
	}
	if c.Kind.InPrimaryKey() {
		return nil, engine.Errorf(engine.CodeInvalid, "%s is not legal on partition key component %s", sel.Func, c.Name)
	}
	if strings.Contains(c.Type, "<") && !strings.HasPrefix(c.Type, "frozen<") {
		return nil, engine.Errorf(engine.CodeInvalid, "%s expects an atomic column, but %s is a non-frozen collection", sel.Func, c.Name)
	}
	dt := datatype.DataType(datatype.Bigint)
	if sel.Func == "ttl" {
		dt = datatype.Int
	}
	name := sel.Func + "(" + c.Name + ")"
	out := &colInfo{Column: engine.Column{Name: name, Type: dt.AsCql()}, dt: dt, idx: len(ti.all) + len(p.attrs)}
	p.attrs = append(p.attrs, cellAttr{fn: sel.Func, col: c})
	return out, nil
}

// elementAttrError is cql3/expr/prepare_expr.cc's verdict on
// WRITETIME/TTL of a collection element or a UDT field: the subscript or
// field selection is prepared first (only a map, set or list can be
// subscripted, only a user type has fields), then the column must be a
// regular non-frozen map or set, or non-frozen UDT. Where ScyllaDB
// answers with the element's own timestamp, the emulator, which keeps no
// per-element timestamps, refuses.
func elementAttrError(c *colInfo, sel cqlparse.Selector) error {
	kind, context, allowed := strings.ToUpper(sel.Func), "subscript", "non-frozen map or set columns"
	frozen := strings.HasPrefix(c.Type, "frozen<")
	ok := false
	if sel.Subscript {
		switch c.dt.(type) {
		case *datatype.Map, *datatype.Set:
			ok = !frozen
		case *datatype.List:
		default:
			return engine.Errorf(engine.CodeInvalid, "Column %s is not a map/set/list, cannot be subscripted", c.Name)
		}
	} else {
		context, allowed = "field selection", "non-frozen UDT columns"
		if _, udt := c.dt.(*datatype.UserDefined); !udt {
			return engine.Errorf(engine.CodeInvalid, "Invalid field selection: %s of type %s is not a user type", c.Name, c.Type)
		}
		ok = !frozen
	}
	if c.Kind.InPrimaryKey() {
		return engine.Errorf(engine.CodeInvalid, "%s is not legal on primary key component %s", kind, c.Name)
	}
	if !ok {
		return engine.Errorf(engine.CodeInvalid, "%s on a %s is only valid for %s", kind, context, allowed)
	}
	return engine.Errorf(engine.CodeInvalid, "%s on a %s is not supported by the emulator", kind, context)
}

// withAttrs appends the writetime()/ttl() values of a decoded row, from its
// cells' metadata (meta) and its partition's static row's (staticMeta).
func (p *projection) withAttrs(full [][]byte, meta, staticMeta map[string]engine.CellMeta) [][]byte {
	if len(p.attrs) == 0 {
		return full
	}
	now := time.Now().Unix()
	for _, a := range p.attrs {
		if a.udf != nil {
			full = append(full, p.callUDF(a.udf, full))
			continue
		}
		if a.col == nil {
			v, _ := (&execCtx{}).funcValue(cqlparse.Term{Kind: cqlparse.TermFunc, Text: a.fn}, "", nil)
			full = append(full, v)
			continue
		}
		if aggregateFuncs[a.fn] {
			full = append(full, full[a.col.idx]) // folded by aggregate
			continue
		}
		if a.fn != "writetime" && a.fn != "ttl" {
			full = append(full, convFunc(a.fn, a.col.dt, full[a.col.idx]))
			continue
		}
		m, ok := meta[a.col.Name]
		if a.col.Kind == engine.Static {
			m, ok = staticMeta[a.col.Name]
		}
		var v []byte
		switch {
		case !ok || full[a.col.idx] == nil:
		case a.fn == "writetime":
			v = binary.BigEndian.AppendUint64(nil, uint64(m.Timestamp))
		case m.Expiry > 0 && m.Expiry > now:
			v = binary.BigEndian.AppendUint32(nil, uint32(m.Expiry-now))
		}
		full = append(full, v)
	}
	return full
}

// project builds a SELECT's output columns; fns are the user-defined
// functions its selectors may call (engine.Schema.Functions).
func (ti *tableInfo) project(st *cqlparse.Select, fns map[string]map[string]*engine.Function) (*projection, error) {
	p := &projection{count: st.Count, fns: fns}
	switch {
	case st.Count:
	case st.Star:
		p.cols = ti.all
		for _, c := range ti.all {
			p.names = append(p.names, c.Name)
		}
	default:
		for _, sel := range st.Columns {
			if sel.Token != nil {
				if err := checkTokenArgs(ti, sel.Token); err != nil {
					return nil, err
				}
				// ScyllaDB names the column after the function:
				// system.token(pk).
				name := "system.token(" + strings.Join(sel.Token, ", ") + ")"
				if sel.Alias != "" {
					name = sel.Alias
				}
				p.cols = append(p.cols, &colInfo{Column: engine.Column{Name: name, Type: "bigint"}, dt: datatype.Bigint, idx: -1})
				p.names = append(p.names, name)
				continue
			}
			if sel.Func != "" {
				c, err := p.attrSelector(ti, sel)
				if err != nil {
					return nil, err
				}
				p.add(c, sel.Alias)
				continue
			}
			c, err := ti.column(sel.Column)
			if err != nil {
				return nil, err
			}
			p.add(c, sel.Alias)
		}
	}
	return p, nil
}

// add appends an output column, named by its alias (AS) if it has one.
func (p *projection) add(c *colInfo, alias string) {
	p.cols = append(p.cols, c)
	name := c.Name
	if alias != "" {
		name = alias
	}
	p.names = append(p.names, name)
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
func (ec *execCtx) rowsResult(ti *tableInfo, p *projection, rows [][][]byte) (*message.RowsResult, error) {
	if p.aggregates {
		agg, err := p.aggregate(ti, rows)
		if err != nil {
			return nil, err
		}
		rows = [][][]byte{agg}
	}
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
		return res, nil
	}
	res.Data = make(message.RowSet, len(rows))
	for i, r := range rows {
		out := make(message.Row, len(p.cols))
		for j, c := range p.cols {
			if c.idx < 0 { // token(pk)
				parts := make([][]byte, len(ti.pk))
				for k, pc := range ti.pk {
					parts[k] = r[pc.idx]
				}
				out[j] = binary.BigEndian.AppendUint64(nil, uint64(murmur3.Token(compositeKey(parts))))
				continue
			}
			out[j] = r[c.idx]
		}
		res.Data[i] = out
	}
	return res, nil
}

func (ec *execCtx) selectRows(st *cqlparse.Select) (udfRes message.Message, err error) {
	ti, err := ec.s.resolveTable(ec.keyspace, st.Keyspace, st.Table)
	if err != nil {
		return nil, err
	}
	p, err := ti.project(st, ec.s.functions())
	if err != nil {
		return nil, err
	}
	defer func() {
		if p.err != nil {
			udfRes, err = nil, p.err
		}
	}()
	limit, err := ec.limitValue(st.Limit, "LIMIT")
	if err != nil {
		return nil, err
	}
	if ec.perPartition, err = ec.limitValue(st.PerPartitionLimit, "PER PARTITION LIMIT"); err != nil {
		return nil, err
	}
	if st.PerPartitionLimit != nil && (p.count || p.aggregates) && len(st.GroupBy) == 0 {
		// cql3/statements/select_statement.cc prepare.
		return nil, engine.Errorf(engine.CodeInvalid, "PER PARTITION LIMIT is not allowed with aggregate queries.")
	}
	if err := checkDistinct(ti, st, p); err != nil {
		return nil, err
	}
	if st.Distinct {
		ec.perPartition = 1
	}
	if ti.virtual != nil {
		rows, err := ec.virtualRows(ti, st.Where)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			rows[i] = p.withAttrs(rows[i], nil, nil)
		}
		if limit > 0 && len(rows) > limit {
			rows = rows[:limit]
		}
		return ec.rowsResult(ti, p, rows)
	}

	if rangeQuery(ti, st) {
		if len(st.OrderBy) > 0 {
			return nil, engine.Errorf(engine.CodeInvalid, "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
		}
		return ec.selectRange(ti, p, st, limit)
	}
	keys, keyParts, err := ec.partitionKeys(ti, st.Where, true)
	if err != nil {
		return nil, err
	}
	reversed, err := orderReversed(ti, st)
	if err != nil {
		return nil, err
	}
	if reversed && len(keys) > 1 {
		return nil, engine.Errorf(engine.CodeInvalid, "ORDER BY with an IN restriction on the partition key is not supported by the emulator")
	}
	prefixes, n, err := ec.clusteringPrefixes(ti, st.Where)
	if err != nil {
		return nil, err
	}
	// Relations not answered by the key lookup are applied to the rows.
	var filters []rowFilter
	indexed := indexedColumn(ti, st)
	for _, r := range st.Where {
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, err
		}
		if c.Kind == engine.PartitionKey || (c.Kind == engine.Clustering && (r.Op == "=" || r.Op == "IN") && c.Position < n) {
			continue
		}
		if c.Kind == engine.Regular && !st.AllowFiltering && c.Name != indexed {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
		}
		if c.Kind == engine.Clustering && c.Position > n && !st.AllowFiltering && c.Name != indexed {
			return nil, engine.Errorf(engine.CodeInvalid, "PRIMARY KEY column %q cannot be restricted as preceding column %q is not restricted", c.Name, ti.ck[n].Name)
		}
		f, err := ec.rowFilterOf(c, r)
		if err != nil {
			return nil, err
		}
		f.exact = c.Name == indexed
		filters = append(filters, f)
	}

	// Paging state: partition index, rows still allowed by LIMIT, and the
	// clustering key of the last row returned.
	startPart, after := 0, []byte(nil)
	pageSize := ec.pageSize
	if p.count || p.aggregates {
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

	ctx := ec.context(st.Using.Timeout)
	defer ctx.stop()
	if isSerial(ec.cl) {
		unlock, err := ec.serialRead(ctx, ti, keys)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	var out [][][]byte
	var nextState, lastClustering []byte
	lastPart := 0
scan:
	for ki := startPart; ki < len(keys); ki++ {
		readLimit := 0
		if len(filters) == 0 && !p.count && !reversed && (ki != startPart || after == nil) {
			readLimit = limit - len(out)
			if pageSize > 0 && (readLimit <= 0 || pageSize-len(out) < readLimit) {
				readLimit = pageSize - len(out)
			}
			if readLimit < 0 {
				readLimit = 0
			}
		}
		resuming := ki == startPart && after != nil
		if pp := ec.perPartition; pp > 0 && len(filters) == 0 && !reversed && !resuming && (readLimit == 0 || readLimit > pp) {
			readLimit = pp
		}
		if readLimit > 0 && ti.hasStatic() {
			readLimit++ // the static row comes first
		}
		rows, err := ec.readPrefixes(ctx, ti, keys[ki], prefixes, readLimit, len(p.attrs) > 0)
		if err != nil {
			return nil, err
		}
		prefix := prefixes[0]
		var static map[string][]byte
		var staticMeta map[string]engine.CellMeta
		switch {
		case len(rows) > 0 && ti.isStaticRow(rows[0]):
			static, staticMeta, rows = rows[0].Cells, rows[0].Meta, rows[1:]
		case ti.hasStatic() && (len(prefix) > 0 || resuming) && len(rows) > 0:
			if static, err = ec.staticCells(ctx, ti, keys[ki]); err != nil {
				return nil, err
			}
		}
		if len(rows) == 0 && hasLiveCell(static) && !resuming && !restrictsClustering(ti, st.Where) {
			rows = []engine.Row{{Cells: static}} // the partition's static-only row
		}
		if reversed {
			for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
				rows[i], rows[j] = rows[j], rows[i]
			}
		}
		quota := partitionQuota{n: ec.perPartition}
		for _, r := range rows {
			// Rows up to the paging state's are decoded too, to count
			// them against PER PARTITION LIMIT.
			done := false
			if resuming {
				c := bytes.Compare(r.Clustering, after)
				done = (!reversed && c <= 0) || (reversed && c >= 0)
				if done && quota.n == 0 {
					continue
				}
			}
			full, err := ti.decodeRow(keyParts[ki], r, static)
			if len(r.Clustering) == 0 && ti.hasStatic() {
				full, err = ti.staticOnlyRow(keyParts[ki], static), nil
			}
			full = p.withAttrs(full, r.Meta, staticMeta)
			if err != nil {
				return nil, engine.Errorf(engine.CodeServerError, "decoding row of %s.%s: %v", ti.keyspace, ti.name, err)
			}
			if !matches(filters, full) {
				continue
			}
			if !quota.take(keys[ki]) {
				break
			}
			if done {
				continue
			}
			out = append(out, full)
			lastPart, lastClustering = ki, r.Clustering
			if limit > 0 && len(out) >= limit {
				break scan
			}
			if pageSize > 0 && len(out) == pageSize {
				// A full page ends with a paging state whether or not
				// more rows follow (service/pager/query_pagers.cc: the
				// pager is exhausted only by a short page or by LIMIT);
				// a client's next request then gets the empty last page.
				nextState = binary.BigEndian.AppendUint32(nil, uint32(lastPart))
				nextState = binary.BigEndian.AppendUint32(nextState, uint32(max(limit-len(out), 0)))
				nextState = append(nextState, lastClustering...)
				break scan
			}
		}
	}
	res, err := ec.rowsResult(ti, p, out)
	if err != nil {
		return nil, err
	}
	if nextState != nil {
		md := *res.Metadata
		md.PagingState = nextState
		res.Metadata = &md
	}
	if len(keys) == 1 {
		return ec.routeHint(res, ti.keyspace, ti.name, keys[0]), nil
	}
	return res, nil
}

// readPrefixes reads a partition's rows under each clustering prefix, in
// order (prefixes are sorted and distinct), each read up to limit rows.
func (ec *execCtx) readPrefixes(ctx context.Context, ti *tableInfo, pk []byte, prefixes [][]byte, limit int, meta bool) ([]engine.Row, error) {
	var rows []engine.Row
	for _, p := range prefixes {
		rs, err := ec.read(ctx, ti, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, ClusteringPrefix: p, Limit: limit, CellMeta: meta})
		if err != nil {
			return nil, err
		}
		if len(p) > 0 && len(rs) > 0 && ti.isStaticRow(rs[0]) {
			rs = rs[1:]
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// rowsUpTo counts the rows of a scan's resumed partition up to and
// including the paging state's row, for PER PARTITION LIMIT.
func (ec *execCtx) rowsUpTo(ctx context.Context, ti *tableInfo, p *projection, filters []rowFilter, after *engine.RangeRow) (int, error) {
	rows, err := ec.read(ctx, ti, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: after.PartitionKey, CellMeta: len(p.attrs) > 0})
	if err != nil {
		return 0, err
	}
	parts, err := ti.splitPartitionKey(after.PartitionKey)
	if err != nil {
		return 0, rowErr(ti, err)
	}
	rs := &rangeStatics{ti: ti}
	n := 0
	for i := range rows {
		if bytes.Compare(rows[i].Clustering, after.Clustering) > 0 {
			break
		}
		r := &engine.RangeRow{PartitionKey: after.PartitionKey, Row: rows[i]}
		full, skip, err := rs.row(ctx, ec, r, parts, restrictsClustering(ti, nil))
		if err != nil {
			return 0, err
		}
		if !skip && matches(filters, p.withAttrs(full, r.Meta, rs.meta)) {
			n++
		}
	}
	return n, nil
}

// limitValue evaluates LIMIT or PER PARTITION LIMIT (0 = none), as
// select_statement.cc get_limit.
func (ec *execCtx) limitValue(t *cqlparse.Term, what string) (int, error) {
	if t == nil {
		return 0, nil
	}
	l, ok, err := ec.intTerm(t, "limit")
	if err != nil || !ok {
		return 0, err
	}
	if l <= 0 {
		return 0, engine.Errorf(engine.CodeInvalid, "%s must be strictly positive", what)
	}
	return int(l), nil
}

// partitionQuota counts a scan's rows per partition against PER PARTITION
// LIMIT (n = 0: no limit).
type partitionQuota struct {
	n    int
	pk   []byte
	seen int
}

// take reports whether one more row of partition pk may be returned.
func (q *partitionQuota) take(pk []byte) bool {
	if q.n == 0 {
		return true
	}
	if !bytes.Equal(q.pk, pk) {
		q.pk, q.seen = pk, 0
	}
	if q.seen >= q.n {
		return false
	}
	q.seen++
	return true
}

func isSerial(cl engine.Consistency) bool { return cl == engine.Serial || cl == engine.LocalSerial }

// orderReversed validates ORDER BY as select_statement.cc does
// (prepare_orderings, verify_ordering_is_valid) and reports whether it
// reverses the table's clustering order.
func orderReversed(ti *tableInfo, st *cqlparse.Select) (bool, error) {
	if len(st.OrderBy) == 0 {
		return false, nil
	}
	var cols []*colInfo
	for _, name := range st.OrderBy {
		c, ok := ti.cols[name]
		if !ok {
			for _, sel := range st.Columns {
				if sel.Alias == name {
					return false, engine.Errorf(engine.CodeInvalid, "Aliases are not allowed in order by clause ('%s')", name)
				}
			}
			return false, engine.Errorf(engine.CodeInvalid, "Order by on unknown column %s", name)
		}
		if c.Kind != engine.Clustering {
			return false, engine.Errorf(engine.CodeInvalid, "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s", name)
		}
		cols = append(cols, c)
	}
	for i := 0; i+1 < len(cols); i++ {
		if cols[i].Position >= cols[i+1].Position {
			return false, engine.Errorf(engine.CodeInvalid, "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY")
		}
	}
	rev := func(i int) bool { return st.OrderDesc[i] != cols[i].Desc }
	reversed := rev(0)
	k := 0
	for pos := 0; pos <= cols[len(cols)-1].Position; pos++ {
		if cols[k].Position == pos {
			if rev(k) != reversed {
				return false, engine.Errorf(engine.CodeInvalid, "Unsupported order by relation - only reversing all columns is supported, but column %s has opposite ordering", cols[k].Name)
			}
			k++
			continue
		}
		eq := false
		for _, r := range st.Where {
			eq = eq || (r.Token == nil && r.Column == ti.ck[pos].Name && r.Op == "=")
		}
		if !eq {
			return false, engine.Errorf(engine.CodeInvalid, "Unsupported order by relation - column %s doesn't have an ordering or EQ relation.", ti.ck[pos].Name)
		}
	}
	return reversed, nil
}

// rangeQuery reports whether a SELECT scans token ranges rather than
// reading named partitions: it restricts token(...), or no partition key
// column, or (with ALLOW FILTERING) only some of them.
func rangeQuery(ti *tableInfo, st *cqlparse.Select) bool {
	restricted := 0
	for _, c := range ti.pk {
		for _, r := range st.Where {
			if r.Token == nil && r.Column == c.Name && (r.Op == "=" || r.Op == "IN") {
				restricted++
				break
			}
		}
	}
	for _, r := range st.Where {
		if r.Token != nil {
			return true
		}
	}
	return restricted == 0 || (restricted < len(ti.pk) && (st.AllowFiltering || indexedColumn(ti, st) != ""))
}

// tokenBounds turns the token(...) relations into an inclusive token
// interval, as cql3/restrictions/statement_restrictions.cc does
// (possible_lhs_values, partition_ranges_from_token): relations intersect,
// an empty intersection selects nothing, and `< MIN`/`<= MIN` mean MAX.
func (ec *execCtx) tokenBounds(ti *tableInfo, where []cqlparse.Relation) (lo, hi int64, empty bool, err error) {
	lo, hi = math.MinInt64, math.MaxInt64
	normal := []string{}
	hasToken := false
	for _, r := range where {
		if r.Token == nil {
			if c, err := ti.column(r.Column); err == nil && c.Kind == engine.PartitionKey {
				normal = append(normal, c.Name)
			}
			continue
		}
		hasToken = true
		if err := checkTokenArgs(ti, r.Token); err != nil {
			return 0, 0, false, err
		}
		b, unset, err := ec.value(r.Value, "partition key token", datatype.Bigint)
		if err != nil {
			return 0, 0, false, err
		}
		if unset {
			return 0, 0, false, engine.Errorf(engine.CodeInvalid, "Invalid unset value for token restriction")
		}
		if b == nil { // all NULL comparisons fail
			empty = true
			continue
		}
		if len(b) != 8 {
			return 0, 0, false, engine.Errorf(engine.CodeInvalid, "Invalid token value: expected 8 bytes, got %d", len(b))
		}
		v := int64(binary.BigEndian.Uint64(b))
		switch r.Op {
		case "=":
			lo, hi = max(lo, v), min(hi, v)
		case ">":
			if v == math.MaxInt64 {
				empty = true
			} else {
				lo = max(lo, v+1)
			}
		case ">=":
			lo = max(lo, v)
		case "<", "<=":
			if v == math.MinInt64 {
				v = math.MaxInt64
			}
			if r.Op == "<" {
				if v == math.MinInt64 {
					empty = true
				} else {
					v--
				}
			}
			hi = min(hi, v)
		}
	}
	if hasToken && len(normal) > 0 {
		sort.Strings(normal)
		return 0, 0, false, engine.Errorf(engine.CodeInvalid, "Columns \"%s\" cannot be restricted by both a normal relation and a token relation", strings.Join(normal, ", "))
	}
	return lo, hi, empty || lo > hi, nil
}

// checkTokenArgs mirrors cql3/expr/restrictions.cc validate_token_relation.
func checkTokenArgs(ti *tableInfo, args []string) error {
	same := len(args) == len(ti.pk)
	for i := 0; same && i < len(args); i++ {
		same = args[i] == ti.pk[i].Name
	}
	if same {
		return nil
	}
	seen := map[string]bool{}
	for _, a := range args {
		c, err := ti.column(a)
		if err != nil {
			return err
		}
		if c.Kind != engine.PartitionKey {
			return engine.Errorf(engine.CodeInvalid, "The token function arguments must be in the partition key order: %s", pkNames(ti))
		}
		if seen[a] {
			return engine.Errorf(engine.CodeInvalid, "The token() function contains duplicate partition key components")
		}
		seen[a] = true
	}
	if len(seen) < len(ti.pk) {
		return engine.Errorf(engine.CodeInvalid, "The token() function must be applied to all partition key components or none of them")
	}
	return engine.Errorf(engine.CodeInvalid, "The token function arguments must be in the partition key order: %s", pkNames(ti))
}

func pkNames(ti *tableInfo) string {
	var names []string
	for _, c := range ti.pk {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// selectRange answers a SELECT over token ranges (scans and token(...)
// restrictions). Its paging state is 'R', the rows LIMIT still allows
// (uint32), the last row's partition key (uint32 length, bytes) and its
// clustering key.
func (ec *execCtx) selectRange(ti *tableInfo, p *projection, st *cqlparse.Select, limit int) (message.Message, error) {
	if isSerial(ec.cl) {
		return nil, engine.Errorf(engine.CodeInvalid, "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time")
	}
	lo, hi, empty, err := ec.tokenBounds(ti, st.Where)
	if err != nil {
		return nil, err
	}
	var filters []rowFilter
	indexed := indexedColumn(ti, st)
	for _, r := range st.Where {
		if r.Token != nil {
			continue
		}
		c, err := ti.column(r.Column)
		if err != nil {
			return nil, err
		}
		if c.Kind == engine.Regular && !st.AllowFiltering && c.Name != indexed {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
		}
		f, err := ec.rowFilterOf(c, r)
		if err != nil {
			return nil, err
		}
		f.exact = c.Name == indexed
		filters = append(filters, f)
	}
	pageSize := ec.pageSize
	if p.count || p.aggregates {
		pageSize = 0
	}
	var after *engine.RangeRow
	if len(ec.paging) > 0 {
		ps := ec.paging
		if len(ps) < 9 || ps[0] != 'R' || int(binary.BigEndian.Uint32(ps[5:])) > len(ps)-9 {
			return nil, engine.Errorf(engine.CodeProtocolError, "Invalid paging state")
		}
		if rem := int(binary.BigEndian.Uint32(ps[1:])); limit > 0 && rem > 0 {
			limit = rem
		}
		n := int(binary.BigEndian.Uint32(ps[5:]))
		after = &engine.RangeRow{PartitionKey: ps[9 : 9+n], Row: engine.Row{Clustering: ps[9+n:]}}
	}
	ctx := ec.context(st.Using.Timeout)
	defer ctx.stop()
	var out [][][]byte
	var nextState []byte
	var last *engine.RangeRow
	statics := &rangeStatics{ti: ti}
	noStaticOnly := restrictsClustering(ti, st.Where)
	quota := partitionQuota{n: ec.perPartition}
	if quota.n > 0 && after != nil {
		if quota.seen, err = ec.rowsUpTo(ctx, ti, p, filters, after); err != nil {
			return nil, err
		}
		quota.pk = after.PartitionKey
	}
	for !empty {
		want := 0
		if pageSize > 0 {
			want = pageSize - len(out)
		}
		if limit > 0 && (want == 0 || limit-len(out) < want) {
			want = limit - len(out)
		}
		if len(filters) > 0 && want > 0 {
			want = max(want, 1000) // filtered rows: read in chunks
		}
		rows, err := ec.readRange(ctx, ti, engine.RangeRead{Keyspace: ti.keyspace, Table: ti.name, Start: lo, End: hi, After: after, Limit: want, CellMeta: len(p.attrs) > 0})
		if err != nil {
			return nil, err
		}
		done := false
		for i := range rows {
			r := &rows[i]
			after = r
			parts, err := ti.splitPartitionKey(r.PartitionKey)
			if err != nil {
				return nil, engine.Errorf(engine.CodeServerError, "decoding partition key of %s.%s: %v", ti.keyspace, ti.name, err)
			}
			full, skip, err := statics.row(ctx, ec, r, parts, noStaticOnly)
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			full = p.withAttrs(full, r.Meta, statics.meta)
			if !matches(filters, full) || !quota.take(r.PartitionKey) {
				continue
			}
			out = append(out, full)
			last = r
			if limit > 0 && len(out) >= limit {
				done = true
				break
			}
			if pageSize > 0 && len(out) == pageSize {
				// A full page carries a paging state even when no row
				// follows (service/pager/query_pagers.cc).
				nextState = append([]byte{'R'}, binary.BigEndian.AppendUint32(nil, uint32(max(limit-len(out), 0)))...)
				nextState = binary.BigEndian.AppendUint32(nextState, uint32(len(last.PartitionKey)))
				nextState = append(append(nextState, last.PartitionKey...), last.Clustering...)
				done = true
				break
			}
		}
		if done || want == 0 || len(rows) < want {
			break
		}
	}
	res, err := ec.rowsResult(ti, p, out)
	if err != nil {
		return nil, err
	}
	if nextState != nil {
		md := *res.Metadata
		md.PagingState = nextState
		res.Metadata = &md
	}
	return res, nil
}

// rangeStatics joins a range scan's rows with their partitions' static
// cells. A partition's static row comes first in ring order; a scan that
// resumes inside a partition reads its static row separately.
type rangeStatics struct {
	ti     *tableInfo
	pk     []byte // the partition whose static cells are known
	static map[string][]byte
	meta   map[string]engine.CellMeta
}

// row decodes a scanned row into all-columns order; skip is set for a
// static row of a partition that has clustering rows (they carry its
// values) or when static-only rows are not wanted.
func (rs *rangeStatics) row(ctx context.Context, ec *execCtx, r *engine.RangeRow, parts [][]byte, noStaticOnly bool) (full [][]byte, skip bool, err error) {
	ti := rs.ti
	if !ti.hasStatic() {
		full, err = ti.decodeRow(parts, r.Row, nil)
		return full, false, rowErr(ti, err)
	}
	if ti.isStaticRow(r.Row) {
		rs.pk, rs.static, rs.meta = r.PartitionKey, r.Cells, r.Meta
		rows, err := ec.s.b.Read(ctx, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: r.PartitionKey, Limit: 2}, ec.cl)
		if err != nil {
			return nil, false, err
		}
		if len(rows) > 1 || noStaticOnly || !hasLiveCell(r.Cells) {
			return nil, true, nil
		}
		return ti.staticOnlyRow(parts, r.Cells), false, nil
	}
	if !bytes.Equal(rs.pk, r.PartitionKey) {
		rs.pk, rs.meta = r.PartitionKey, nil
		if rs.static, err = ec.staticCells(ctx, ti, r.PartitionKey); err != nil {
			return nil, false, err
		}
	}
	full, err = ti.decodeRow(parts, r.Row, rs.static)
	return full, false, rowErr(ti, err)
}

func rowErr(ti *tableInfo, err error) error {
	if err != nil {
		return engine.Errorf(engine.CodeServerError, "decoding row of %s.%s: %v", ti.keyspace, ti.name, err)
	}
	return nil
}

// rowFilterOf is the filter a restriction on column c applies to rows.
func (ec *execCtx) rowFilterOf(c *colInfo, r cqlparse.Relation) (rowFilter, error) {
	if r.Op == "!=" {
		return rowFilter{}, engine.Errorf(engine.CodeInvalid, "%s restrictions on %s are not supported", r.Op, c.Name)
	}
	if r.Op == "IN" || r.Op == "NOT IN" {
		return ec.inFilter(c, r)
	}
	dt, err := filterType(c, r.Op)
	if err != nil {
		return rowFilter{}, err
	}
	v, unset, err := ec.value(r.Value, c.Name, dt)
	if err != nil {
		return rowFilter{}, err
	}
	if unset {
		return rowFilter{}, unsetBindError(r.Value)
	}
	if v == nil {
		// A comparison with null is null, which no row passes
		// (cql3/expr/expression.cc evaluate; an index holds no nulls).
		return rowFilter{col: c, op: "none"}, nil
	}
	return rowFilter{col: c, op: r.Op, val: v}, nil
}

// inFilter is a filtering IN or NOT IN: a row passes when its value is one
// (none) of the list's; a null list, like a null value, passes no row
// (cql3/expr/expression.cc evaluate).
func (ec *execCtx) inFilter(c *colInfo, r cqlparse.Relation) (rowFilter, error) {
	if r.Value.Kind == cqlparse.TermBind {
		b, unset, err := ec.value(r.Value, c.Name, datatype.NewList(c.dt))
		if err != nil {
			return rowFilter{}, err
		}
		if unset {
			return rowFilter{}, unsetBindError(r.Value)
		}
		if b == nil {
			return rowFilter{col: c, op: "none"}, nil
		}
	}
	vals, err := ec.inValues(r.Value, c)
	return rowFilter{col: c, op: r.Op, vals: vals}, err
}

type rowFilter struct {
	col  *colInfo
	op   string
	val  []byte
	vals [][]byte // NOT IN
	// exact: = matches the same bytes only, as a lookup in a secondary
	// index's table does (its key is the value's bytes); filtering
	// compares values by their type (expr equal → abstract_type compare),
	// so 1230 and 1.23E+3 are equal decimals (test/cqlpy
	// test_decimal_si_and_mv_representation).
	exact bool
}

func matches(fs []rowFilter, row [][]byte) bool {
	for _, f := range fs {
		v := row[f.col.idx]
		if v == nil {
			return false
		}
		switch f.op {
		case "=":
			if bytes.Equal(v, f.val) {
				continue
			}
			if f.exact {
				return false
			}
			if cmp, ok := compareEncoded(f.col.dt, v, f.val); !ok || cmp != 0 {
				return false
			}
			continue
		case "none":
			return false
		case "IN", "NOT IN":
			in := false
			for _, x := range f.vals {
				cmp, ok := compareEncoded(f.col.dt, v, x)
				in = in || ok && cmp == 0 || bytes.Equal(v, x)
			}
			if in != (f.op == "IN") {
				return false
			}
			continue
		case "CONTAINS", "CONTAINS KEY":
			if !collectionContains(f.col.dt, v, f.val, f.op == "CONTAINS KEY") {
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

// decodeRow expands a stored row into all-columns order, with its
// partition's static cells.
func (ti *tableInfo) decodeRow(pkParts [][]byte, r engine.Row, static map[string][]byte) ([][]byte, error) {
	full := ti.staticOnlyRow(pkParts, static)
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

// staticOnlyRow is the row a partition with static cells but no clustering
// row shows: its key and static values, null elsewhere
// (cql3/selection/selection.hh result_set_builder::visitor::accept_partition_end).
func (ti *tableInfo) staticOnlyRow(pkParts [][]byte, static map[string][]byte) [][]byte {
	full := make([][]byte, len(ti.all))
	for i, c := range ti.pk {
		full[c.idx] = pkParts[i]
	}
	for _, c := range ti.static {
		full[c.idx] = static[c.Name]
	}
	return full
}

// hasLiveCell reports whether a static row holds a value (a deleted static
// cell leaves a null behind, and a partition with nothing else is empty).
func hasLiveCell(cells map[string][]byte) bool {
	for _, v := range cells {
		if v != nil {
			return true
		}
	}
	return false
}

// staticCells reads a partition's static row (nil when it has none).
func (ec *execCtx) staticCells(ctx context.Context, ti *tableInfo, pk []byte) (map[string][]byte, error) {
	rows, err := ec.s.b.Read(ctx, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk, Limit: 1}, ec.cl)
	if err != nil || len(rows) == 0 || !ti.isStaticRow(rows[0]) {
		return nil, err
	}
	return rows[0].Cells, nil
}

// restrictsClustering reports whether a WHERE clause restricts a clustering
// column; ScyllaDB then returns no static-only row for a partition without
// matching rows (mutation_partition.cc: the static row goes out alone only
// when the slice selects every clustering row).
func restrictsClustering(ti *tableInfo, where []cqlparse.Relation) bool {
	for _, r := range where {
		if c, ok := ti.cols[r.Column]; ok && r.Token == nil && c.Kind == engine.Clustering {
			return true
		}
	}
	return false
}
