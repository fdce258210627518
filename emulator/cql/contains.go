package cql

import (
	"bytes"
	"encoding/binary"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// filterType is the type a restriction's value has: the column's, or for
// CONTAINS a collection's element (a map's value) and for CONTAINS KEY a
// map's key, with cql3/expr/prepare_expr.cc's refusals.
func filterType(c *colInfo, op string) (datatype.DataType, error) {
	switch op {
	case "CONTAINS":
		switch t := c.dt.(type) {
		case *datatype.List:
			return t.ElementType, nil
		case *datatype.Set:
			return t.ElementType, nil
		case *datatype.Map:
			return t.ValueType, nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot use CONTAINS on non-collection column \"%s\"", c.Name)
	case "CONTAINS KEY":
		if t, ok := c.dt.(*datatype.Map); ok {
			return t.KeyType, nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot use CONTAINS KEY on non-map column %s", c.Name)
	}
	return c.dt, nil
}

// collectionContains reports whether a serialised collection (the
// protocol's [n][len][bytes]... encoding; a map's entries as key, value)
// holds v among its elements, or with keys among a map's keys.
func collectionContains(dt datatype.DataType, coll, v []byte, keys bool) bool {
	_, isMap := dt.(*datatype.Map)
	if len(coll) < 4 {
		return false
	}
	n := int(binary.BigEndian.Uint32(coll))
	b := coll[4:]
	next := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 || l > len(b) {
			return nil, false
		}
		e := b[:l]
		b = b[l:]
		return e, true
	}
	for i := 0; i < n; i++ {
		k, ok := next()
		if !ok {
			return false
		}
		e := k
		if isMap {
			if e, ok = next(); !ok {
				return false
			}
			if keys {
				e = k
			}
		}
		if bytes.Equal(e, v) {
			return true
		}
	}
	return false
}

// indexServes reports whether an index of the given target kind answers a
// restriction with op (statement_restrictions.cc: values of a column by =,
// a list's or map's values and a set's elements by CONTAINS, a map's keys
// by CONTAINS KEY).
func indexServes(c *colInfo, kind, op string) bool {
	switch op {
	case "=":
		return kind == ""
	case "CONTAINS":
		if _, set := c.dt.(*datatype.Set); set {
			return kind == "keys"
		}
		return kind == "values"
	case "CONTAINS KEY":
		return kind == "keys"
	}
	return false
}
