package cql

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// UPDATE operations that read the column's current value, as
// cql3/operation.cc prepares them: a non-frozen collection's append,
// prepend and discard (cql3/lists.cc), add and discard (cql3/sets.cc),
// put and key discard (cql3/maps.cc); and `r = r + v` / `r = r - v` on a
// numeric non-counter column, which ScyllaDB allows only in an LWT update,
// from 2026.3 (issue #10568: constants::setter over a binary_operator,
// update_statement.cc requires_lwt). The emulator reads the old cell and
// writes the whole new value: for the collections outside LWT that read is
// not atomic with the write, which ScyllaDB's cell-level collection
// mutations are; concurrent appends to one list may lose an element here.

// cellOp is one read-modify-write SET operation.
type cellOp struct {
	col     *colInfo
	op      string // "+", "-", or "prepend" (c = v + c)
	operand []byte // nil: null
	arith   bool   // a numeric non-counter column (requires LWT)
}

// opText is operation.cc's to_string of the operation, for its errors.
func opText(c string, a cqlparse.Assignment) string {
	if a.Prepend {
		return c + " = " + termText(a.Value) + " + " + c
	}
	return c + " = " + c + " " + a.Op + " " + termText(a.Value)
}

// isFrozen reports whether a column's schema type is frozen<...>.
func isFrozen(c *colInfo) bool { return strings.HasPrefix(strings.ToLower(c.Type), "frozen<") }

// cellOpOf validates an operation as operation.cc addition/subtraction/
// prepend ::prepare and evaluates its operand; nil when the operand is
// UNSET (operation_skip_if_unset: the operation does nothing).
func (ec *execCtx) cellOpOf(c *colInfo, a cqlparse.Assignment) (*cellOp, error) {
	op := &cellOp{col: c, op: a.Op}
	operandType := c.dt
	switch dt := c.dt.(type) {
	case *datatype.List:
	case *datatype.Set:
		if a.Prepend {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid operation (%s) for non list column %s", opText(c.Name, a), c.Name)
		}
	case *datatype.Map:
		if a.Prepend {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid operation (%s) for non list column %s", opText(c.Name, a), c.Name)
		}
		if a.Op == "-" {
			// operation.cc: the value of a map subtraction is a set of keys.
			operandType = datatype.NewSet(dt.KeyType)
		}
	default:
		if a.Prepend {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid operation (%s) for non list column %s", opText(c.Name, a), c.Name)
		}
		// LWT arithmetic came with 2026.3 (scylladb f8aaeb5e87).
		if !isArithmetic(c.dt) || !versionAtLeast(ec.s.b.Local().ScyllaVersion, 2026, 3) {
			return nil, engine.Errorf(engine.CodeInvalid, "Invalid operation (%s) for non counter column %s", opText(c.Name, a), c.Name)
		}
		op.arith = true
	}
	if !op.arith && isFrozen(c) {
		kind := "collection"
		if a.Prepend {
			kind = "list"
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Invalid operation (%s) for frozen %s column %s", opText(c.Name, a), kind, c.Name)
	}
	if a.Prepend {
		op.op = "prepend"
	}
	b, unset, err := ec.value(a.Value, c.Name, operandType)
	if err != nil || unset {
		return nil, err
	}
	op.operand = b
	return op, nil
}

// isArithmetic is abstract_type::is_arithmetic for the types the emulator
// computes with.
func isArithmetic(dt datatype.DataType) bool {
	switch dt {
	case datatype.Tinyint, datatype.Smallint, datatype.Int, datatype.Bigint, datatype.Varint, datatype.Float, datatype.Double:
		return true
	}
	return false
}

// apply computes the column's new value from its old one (nil: null).
func (o *cellOp) apply(old []byte) ([]byte, error) {
	if o.arith {
		return arithmetic(o.col.dt, o.op, old, o.operand)
	}
	if o.operand == nil {
		// lists.cc/sets.cc/maps.cc: a null operand adds or removes nothing.
		return old, nil
	}
	types := collectionTypes(o.col.dt)
	per := len(types)
	if o.op == "-" {
		per = 1 // list/set elements, or map keys
	}
	add, err := collectionElems(o.operand, per)
	if err != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Invalid collection value for %s: %v", o.col.Name, err)
	}
	var cur [][]byte
	if len(old) > 0 {
		if cur, err = collectionElems(old, len(types)); err != nil {
			return nil, err
		}
	}
	var out [][]byte
	switch o.op {
	case "prepend":
		out = append(append(out, add...), cur...)
	case "+":
		if _, isMap := o.col.dt.(*datatype.Map); isMap {
			out = append(append(out, add...), cur...) // the new value of a key wins
		} else {
			out = append(append(out, cur...), add...)
		}
	default:
		out = discard(cur, add, len(types))
	}
	if len(out) == 0 {
		return nil, nil // an empty non-frozen collection is null
	}
	return normalizeSet(o.col.dt, collectionBytes(out, len(types)))
}

// discard drops from cur (entries of per elements) every entry whose first
// element (list/set element, map key) is in drop: lists.cc discarder
// removes every occurrence, sets.cc/maps.cc the element or key.
func discard(cur, drop [][]byte, per int) [][]byte {
	var out [][]byte
	for i := 0; i < len(cur); i += per {
		found := false
		for _, d := range drop {
			if string(d) == string(cur[i]) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, cur[i:i+per]...)
		}
	}
	return out
}

// arithmetic is expr::evaluate of column +/- value (cql3/expr/expression.cc
// binary operators on numbers): null when either side is null, an error
// on fixed-width integer overflow instead of wrapping.
func arithmetic(dt datatype.DataType, op string, a, b []byte) ([]byte, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, nil
	}
	switch dt {
	case datatype.Float:
		x, y := math.Float32frombits(binary.BigEndian.Uint32(a)), math.Float32frombits(binary.BigEndian.Uint32(b))
		if op == "-" {
			y = -y
		}
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(x+y)), nil
	case datatype.Double:
		x, y := math.Float64frombits(binary.BigEndian.Uint64(a)), math.Float64frombits(binary.BigEndian.Uint64(b))
		if op == "-" {
			y = -y
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(x+y)), nil
	}
	x, y := varintValue(a), varintValue(b)
	r := new(big.Int)
	if op == "-" {
		r.Sub(x, y)
	} else {
		r.Add(x, y)
	}
	if dt == datatype.Varint {
		return varintBytes(r), nil
	}
	size := fixedSize(dt)
	if r.BitLen() > 8*size-1 && !(r.Sign() < 0 && new(big.Int).Add(r, big.NewInt(1)).BitLen() <= 8*size-1) {
		return nil, engine.Errorf(engine.CodeInvalid, "Arithmetic overflow in %s %s %s for type %s", x, op, y, typeName(dt))
	}
	return putInt(size, r.Int64()), nil
}

// applyOps sets each operation's column in m from the old row's cells
// (nil when the row does not exist).
func applyOps(m *engine.Mutation, ops []*cellOp, old map[string][]byte) error {
	for _, o := range ops {
		v, err := o.apply(old[o.col.Name])
		if err != nil {
			return err
		}
		m.Cells[o.col.Name] = v
	}
	return nil
}

// readOldCells reads the row a non-LWT collection operation modifies
// (modification_statement.cc read_required_rows): its cells with the
// partition's static cells.
func (ec *execCtx) readOldCells(ti *tableInfo, pk, ck []byte) (map[string][]byte, error) {
	ctx := ec.context(0)
	defer ctx.stop()
	rows, err := ec.s.b.Read(ctx, engine.Read{Keyspace: ti.keyspace, Table: ti.name, PartitionKey: pk}, ec.cl)
	if err != nil {
		return nil, err
	}
	return oldCells(ti, rows, ck), nil
}

// oldCells merges the static row's cells and the cells of the row at ck.
func oldCells(ti *tableInfo, rows []engine.Row, ck []byte) map[string][]byte {
	out := map[string][]byte{}
	for _, r := range rows {
		if ti.isStaticRow(r) || string(r.Clustering) == string(ck) {
			for k, v := range r.Cells {
				out[k] = v
			}
		}
	}
	return out
}

// readForOps fills the operations' cells of m. Inside a conditional
// statement (ec.casOps set) it only records them: runCAS applies them to
// the old row it read under the partition's Paxos round. Outside, an
// arithmetic operation is refused as update_statement.cc prepare_internal
// does, and collections are applied to the row read now.
func (ec *execCtx) readForOps(ti *tableInfo, m *engine.Mutation, ops []*cellOp) error {
	if len(ops) == 0 {
		return nil
	}
	if ec.casOps != nil {
		*ec.casOps = append(*ec.casOps, ops...)
		return nil
	}
	for _, o := range ops {
		if o.arith {
			return engine.Errorf(engine.CodeInvalid, "SET with a column expression (e.g. col = col + 1) requires an LWT condition (e.g., IF col != NULL or IF EXISTS) to ensure atomic read-before-write")
		}
	}
	old, err := ec.readOldCells(ti, m.PartitionKey, m.Clustering)
	if err != nil {
		return err
	}
	return applyOps(m, ops, old)
}

// applyCASOps applies a conditional statement's operations to its
// mutations (each to the one holding the column's placeholder cell) from
// the old row of the partition read by runCAS.
func (p *casPartition) applyCASOps(u *casUpdate) error {
	if len(u.ops) == 0 {
		return nil
	}
	old := map[string][]byte{}
	for k, v := range p.static {
		old[k] = v
	}
	for k, v := range p.rows[string(u.ck)].Cells {
		old[k] = v
	}
	for i := range u.ms {
		var mine []*cellOp
		for _, o := range u.ops {
			if _, ok := u.ms[i].Cells[o.col.Name]; ok {
				mine = append(mine, o)
			}
		}
		if err := applyOps(&u.ms[i], mine, old); err != nil {
			return err
		}
	}
	return nil
}
