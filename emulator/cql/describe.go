package cql

import (
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// describer computes the bound-variable metadata of a statement.
type describer struct {
	s        *Server
	keyspace string
	vars     []*message.ColumnMetadata
	pk       []uint16
}

// describe returns the PREPARED metadata of a statement: one column spec per
// bind marker, the partition key indexes (for token-aware routing) and the
// result metadata of a SELECT.
func (s *Server) describe(ks string, st cqlparse.Statement, nbinds int) (*message.VariablesMetadata, *message.RowsMetadata, error) {
	d := &describer{s: s, keyspace: ks, vars: make([]*message.ColumnMetadata, nbinds)}
	result := &message.RowsMetadata{}
	switch x := st.(type) {
	case *cqlparse.Select:
		ti, err := s.resolveTable(ks, x.Keyspace, x.Table)
		if err != nil {
			return nil, nil, err
		}
		p, err := ti.project(x, s.functions())
		if err != nil {
			return nil, nil, err
		}
		result = p.metadata(ti)
		if err := d.relations(ti, x.Where); err != nil {
			return nil, nil, err
		}
		d.special(ti, x.Limit, "[limit]", datatype.Int)
		d.special(ti, x.PerPartitionLimit, "[per_partition_limit]", datatype.Int)
		d.pk = pkIndexes(ti, x.Where)
	case *cqlparse.Insert, *cqlparse.Update, *cqlparse.Delete:
		pk, err := d.modification(st)
		if err != nil {
			return nil, nil, err
		}
		d.pk = pk
	case *cqlparse.Batch:
		for _, child := range x.Statements {
			if _, err := d.modification(child); err != nil {
				return nil, nil, err
			}
		}
	case *cqlparse.AlterTable:
		// Cql.g alterTableStatement: DROP ... USING TIMESTAMP ? may be
		// prepared, even before the table exists (test/cqlpy
		// test_alter_table.py).
		if t := x.DropTimestamp; t != nil && t.Kind == cqlparse.TermBind {
			tks := x.Keyspace
			if tks == "" {
				tks = ks
			}
			d.set(t.Bind, &message.ColumnMetadata{Keyspace: tks, Table: x.Table, Name: "[timestamp]", Type: datatype.Bigint})
		}
	default:
		if nbinds > 0 {
			return nil, nil, engine.Errorf(engine.CodeInvalid, "Bind markers are not supported in %s statements", st.Name())
		}
	}
	if conditional(st) {
		md, err := s.casPreparedMetadata(ks, st)
		if err != nil {
			return nil, nil, err
		}
		result = md
	}
	for i, v := range d.vars {
		if v == nil {
			return nil, nil, engine.Errorf(engine.CodeInvalid, "Cannot determine the type of bind marker %d in %s", i, st.Name())
		}
	}
	vars := &message.VariablesMetadata{Columns: d.vars}
	if len(d.pk) > 0 {
		vars.PkIndices = d.pk
	}
	return vars, result, nil
}

func (d *describer) modification(st cqlparse.Statement) ([]uint16, error) {
	switch x := st.(type) {
	case *cqlparse.Insert:
		ti, err := d.s.resolveTable(d.keyspace, x.Keyspace, x.Table)
		if err != nil {
			return nil, err
		}
		// cql3/statements/raw/insert_statement.cc json_insert: the JSON
		// marker is a text variable named [json].
		d.special(ti, x.JSON, "[json]", datatype.Varchar)
		byCol := map[string]int{}
		for i, name := range x.Columns {
			c, err := ti.column(name)
			if err != nil {
				return nil, err
			}
			if t := x.Values[i]; t.Kind == cqlparse.TermBind {
				d.set(t.Bind, ti.spec(c))
				byCol[c.Name] = t.Bind
			}
			d.tupleMarkers(ti, c.Name, c.dt, x.Values[i])
		}
		d.using(ti, x.Using)
		var pk []uint16
		for _, c := range ti.pk {
			b, ok := byCol[c.Name]
			if !ok {
				return nil, nil
			}
			pk = append(pk, uint16(b))
		}
		return pk, nil
	case *cqlparse.Update:
		ti, err := d.s.resolveTable(d.keyspace, x.Keyspace, x.Table)
		if err != nil {
			return nil, err
		}
		d.using(ti, x.Using)
		for _, a := range x.Set {
			c, err := ti.column(a.Column)
			if err != nil {
				return nil, err
			}
			if a.Value.Kind == cqlparse.TermBind {
				spec := ti.spec(c)
				if m, ok := c.dt.(*datatype.Map); ok && a.Op == "-" {
					spec.Type = datatype.NewSet(m.KeyType) // operation.cc: map subtraction takes a set of keys
				}
				d.set(a.Value.Bind, spec)
			}
			d.tupleMarkers(ti, c.Name, c.dt, a.Value)
		}
		if err := d.relations(ti, x.Where); err != nil {
			return nil, err
		}
		if err := d.relations(ti, x.If); err != nil {
			return nil, err
		}
		return pkIndexes(ti, x.Where), nil
	case *cqlparse.Delete:
		ti, err := d.s.resolveTable(d.keyspace, x.Keyspace, x.Table)
		if err != nil {
			return nil, err
		}
		d.using(ti, x.Using)
		if err := d.relations(ti, x.Where); err != nil {
			return nil, err
		}
		if err := d.relations(ti, x.If); err != nil {
			return nil, err
		}
		return pkIndexes(ti, x.Where), nil
	}
	return nil, engine.Errorf(engine.CodeInvalid, "%s is not allowed in a batch", st.Name())
}

// tupleMarkers types the bind markers inside a tuple literal by the
// tuple's element types.
func (d *describer) tupleMarkers(ti *tableInfo, name string, dt datatype.DataType, t cqlparse.Term) {
	// fromJson(?): a text argument, named as functions.cc make_arg_spec
	// names a function's arguments.
	if t.Kind == cqlparse.TermFunc && t.Text == "fromjson" && len(t.Values) == 1 && t.Values[0].Kind == cqlparse.TermBind {
		d.set(t.Values[0].Bind, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: "arg0(system.fromjson)", Type: datatype.Varchar})
	}
	tt, ok := dt.(*datatype.Tuple)
	if t.Kind != cqlparse.TermTuple || !ok {
		return
	}
	for i, el := range t.Values {
		if i >= len(tt.FieldTypes) {
			return
		}
		if el.Kind == cqlparse.TermBind {
			d.set(el.Bind, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: fmt.Sprintf("%s[%d]", name, i), Type: tt.FieldTypes[i]})
		}
		d.tupleMarkers(ti, name, tt.FieldTypes[i], el)
	}
}

func (d *describer) set(i int, spec *message.ColumnMetadata) {
	if i >= 0 && i < len(d.vars) {
		d.vars[i] = spec
	}
}

func (d *describer) special(ti *tableInfo, t *cqlparse.Term, name string, dt datatype.DataType) {
	if t != nil && t.Kind == cqlparse.TermBind {
		d.set(t.Bind, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: name, Type: dt})
	}
}

func (d *describer) using(ti *tableInfo, u cqlparse.Using) {
	d.special(ti, u.TTL, "[ttl]", datatype.Int)
	d.special(ti, u.Timestamp, "[timestamp]", datatype.Bigint)
}

func (d *describer) relations(ti *tableInfo, where []cqlparse.Relation) error {
	for _, r := range where {
		if r.Token != nil {
			// cql3/expr/prepare_expr.cc names the receiver of token(...) = ?
			// "partition key token"; Murmur3 tokens are bigints.
			if r.Value.Kind == cqlparse.TermBind {
				d.set(r.Value.Bind, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: "partition key token", Type: datatype.Bigint})
			}
			continue
		}
		c, err := ti.column(r.Column)
		if err != nil {
			return err
		}
		switch {
		case r.Value.Kind == cqlparse.TermBind && (r.Op == "IN" || r.Op == "NOT IN"):
			d.set(r.Value.Bind, &message.ColumnMetadata{Keyspace: ti.keyspace, Table: ti.name, Name: d.s.inBindName(r.Op, c.Name), Type: datatype.NewList(c.dt)})
		case r.Value.Kind == cqlparse.TermBind:
			d.set(r.Value.Bind, ti.spec(c))
		case r.Value.Kind == cqlparse.TermList:
			for _, el := range r.Value.Values {
				if el.Kind == cqlparse.TermBind {
					d.set(el.Bind, ti.spec(c))
				}
			}
		}
	}
	return nil
}

// pkIndexes returns the bind indexes of the partition key columns when every
// one is bound by an equality marker; otherwise nil.
func pkIndexes(ti *tableInfo, where []cqlparse.Relation) []uint16 {
	if ti.virtual != nil {
		return nil
	}
	var out []uint16
	for _, c := range ti.pk {
		found := false
		for _, r := range where {
			if r.Token == nil && r.Column == c.Name && r.Op == "=" && r.Value.Kind == cqlparse.TermBind {
				out = append(out, uint16(r.Value.Bind))
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return out
}

// inBindName names an IN restriction's bind variable as
// cql3/expr/prepare_expr.cc get_rhs_receiver does: "IN(c)" / "NOT IN(c)",
// or "in(c)" / "not in(c)" with
// cql_in_bind_variable_name_uses_uppercase_operator off (Cassandra's).
func (s *Server) inBindName(op, col string) string {
	if s.configBool("cql_in_bind_variable_name_uses_uppercase_operator") {
		return op + "(" + col + ")"
	}
	return strings.ToLower(op) + "(" + col + ")"
}
