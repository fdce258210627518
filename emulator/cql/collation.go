package cql

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"sort"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Order-preserving encodings of the clustering types whose comparison is
// not their bytes' (clusteringAppend): decimal and varint compare by
// numeric value (types/types.cc decimal_type_impl and varint compare, so
// 1230 and 1.23E+3 are one clustering key), frozen lists, sets and maps
// element by element, a shorter one first (collection_type_impl compare).

const (
	numNegative = 0x00
	numZero     = 0x01
	numPositive = 0x02
	elemMore    = 0x01 // another element of a collection follows
	elemEnd     = 0x00
)

// numericAppend encodes unscaled × 10^-scale: a sign byte, then for a
// non-zero value the decimal exponent of its leading digit (8 bytes, order
// preserving) and its significant digits, ended by a 0x00; a negative
// value's exponent and digits are inverted so larger magnitudes sort first.
func numericAppend(dst []byte, unscaled *big.Int, scale int64) []byte {
	if unscaled.Sign() == 0 {
		return append(dst, numZero)
	}
	digits := []byte(new(big.Int).Abs(unscaled).String())
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	exp := int64(len(new(big.Int).Abs(unscaled).String())) - scale
	body := binary.BigEndian.AppendUint64(nil, uint64(exp)^(1<<63))
	body = append(append(body, digits...), 0)
	if unscaled.Sign() < 0 {
		for i := range body {
			body[i] = ^body[i]
		}
		return append(append(dst, numNegative), body...)
	}
	return append(append(dst, numPositive), body...)
}

// numericNext decodes numericAppend's encoding back to (unscaled, scale),
// the canonical representation of the value (no trailing zeros).
func numericNext(get func(int) byte, n int) (unscaled *big.Int, scale int64, used int, err error) {
	if n < 1 {
		return nil, 0, 0, fmt.Errorf("truncated clustering key")
	}
	sign := get(0)
	if sign == numZero {
		return new(big.Int), 0, 1, nil
	}
	inv := byte(0)
	if sign == numNegative {
		inv = 0xff
	}
	if n < 10 {
		return nil, 0, 0, fmt.Errorf("truncated clustering key")
	}
	var e [8]byte
	for i := range e {
		e[i] = get(1+i) ^ inv
	}
	exp := int64(binary.BigEndian.Uint64(e[:]) ^ (1 << 63))
	var digits []byte
	i := 9
	for ; i < n && get(i)^inv != 0; i++ {
		digits = append(digits, get(i)^inv)
	}
	if i >= n {
		return nil, 0, 0, fmt.Errorf("truncated clustering key")
	}
	unscaled, _ = new(big.Int).SetString(string(digits), 10)
	if sign == numNegative {
		unscaled.Neg(unscaled)
	}
	return unscaled, int64(len(digits)) - exp, i + 1, nil
}

// decimalParts reads a decimal's wire form: an int32 scale, then the
// unscaled varint.
func decimalParts(v []byte) (*big.Int, int64, error) {
	if len(v) < 4 {
		return nil, 0, fmt.Errorf("invalid %d-byte decimal", len(v))
	}
	return varintValue(v[4:]), int64(int32(binary.BigEndian.Uint32(v))), nil
}

// varintValue reads a two's complement big-endian integer.
func varintValue(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// collectionElems splits a serialized list or set (count, then each
// element's int32 length and bytes) or map (keys and values alternating).
func collectionElems(v []byte, perEntry int) ([][]byte, error) {
	out, err := collectionElemsOrNull(v, perEntry)
	for _, e := range out {
		if e == nil {
			return nil, fmt.Errorf("invalid collection element")
		}
	}
	return out, err
}

// collectionElemsOrNull is collectionElems where an element may be null
// (a negative length: nil here), as a bound IN list's may be.
func collectionElemsOrNull(v []byte, perEntry int) ([][]byte, error) {
	if len(v) < 4 {
		return nil, fmt.Errorf("invalid %d-byte collection", len(v))
	}
	n := int(binary.BigEndian.Uint32(v)) * perEntry
	v = v[4:]
	out := make([][]byte, 0, min(n, len(v)/4))
	for i := 0; i < n; i++ {
		if len(v) < 4 {
			return nil, fmt.Errorf("truncated collection")
		}
		l := int(int32(binary.BigEndian.Uint32(v)))
		v = v[4:]
		if l < 0 {
			out = append(out, nil)
			continue
		}
		if len(v) < l {
			return nil, fmt.Errorf("invalid collection element")
		}
		out = append(out, v[:l:l])
		v = v[l:]
	}
	return out, nil
}

func collectionBytes(elems [][]byte, perEntry int) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(elems)/perEntry))
	for _, e := range elems {
		out = binary.BigEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

// collectionTypes are a collection's element types per entry: a list or
// set has one, a map its key and value types; nil for other types.
func collectionTypes(dt datatype.DataType) []datatype.DataType {
	switch x := dt.(type) {
	case *datatype.List:
		return []datatype.DataType{x.ElementType}
	case *datatype.Set:
		return []datatype.DataType{x.ElementType}
	case *datatype.Map:
		return []datatype.DataType{x.KeyType, x.ValueType}
	}
	return nil
}

func collectionAppend(dst []byte, types []datatype.DataType, v []byte) ([]byte, error) {
	elems, err := collectionElems(v, len(types))
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		if i%len(types) == 0 {
			dst = append(dst, elemMore)
		}
		if dst, err = clusteringAppend(dst, types[i%len(types)], e, false); err != nil {
			return nil, err
		}
	}
	return append(dst, elemEnd), nil
}

func collectionNext(src []byte, types []datatype.DataType, get func(int) byte, desc bool) (val, rest []byte, err error) {
	var elems [][]byte
	for {
		if len(src) == 0 {
			return nil, nil, fmt.Errorf("truncated clustering key")
		}
		m := get(0)
		src = src[1:]
		if m == elemEnd {
			return collectionBytes(elems, len(types)), src, nil
		}
		for _, t := range types {
			var e []byte
			if e, src, err = clusteringNext(src, t, desc); err != nil {
				return nil, nil, err
			}
			elems = append(elems, e)
		}
		get = getter(src, desc)
	}
}

// normalizeSet sorts a set's elements (and a map's entries by key) in
// their type's order and drops repeats, inside nested collections too, as
// ScyllaDB reserializes a bound set (expr/expression.cc reserialize_value);
// other values are unchanged.
func normalizeSet(dt datatype.DataType, v []byte) ([]byte, error) {
	types := collectionTypes(dt)
	if types == nil || v == nil {
		return v, nil
	}
	elems, err := collectionElems(v, len(types))
	if err != nil {
		return nil, err
	}
	for i := range elems {
		if elems[i], err = normalizeSet(types[i%len(types)], elems[i]); err != nil {
			return nil, err
		}
	}
	if _, isList := dt.(*datatype.List); isList {
		return collectionBytes(elems, 1), nil
	}
	type entry struct {
		key  []byte
		elem [][]byte
	}
	var entries []entry
	for i := 0; i < len(elems); i += len(types) {
		k, err := clusteringAppend(nil, types[0], elems[i], false)
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, elems[i : i+len(types)]})
	}
	sort.SliceStable(entries, func(a, b int) bool { return bytes.Compare(entries[a].key, entries[b].key) < 0 })
	var out [][]byte
	for i, e := range entries {
		if i > 0 && bytes.Equal(e.key, entries[i-1].key) {
			continue
		}
		out = append(out, e.elem...)
	}
	return collectionBytes(out, len(types)), nil
}

func getter(src []byte, desc bool) func(int) byte {
	return func(i int) byte {
		if desc {
			return ^src[i]
		}
		return src[i]
	}
}

// Field markers of a tuple's or user type's fields in the order-preserving
// encoding: after the last field elemEnd, so a tuple with fewer fields
// sorts first; a null field before any value.
const (
	fieldNull  = 0x01
	fieldValue = 0x02
)

// tupleTypes are a tuple's or a user type's field types; nil for other
// types.
func tupleTypes(dt datatype.DataType) []datatype.DataType {
	switch x := dt.(type) {
	case *datatype.Tuple:
		return x.FieldTypes
	case *datatype.UserDefined:
		return x.FieldTypes
	}
	return nil
}

// tupleAppend encodes a tuple or user-type value so that byte order is
// ScyllaDB's order of such values (types/types.cc compare_aux for
// tuple_type_impl, which user_type_impl inherits): field by field, each
// by its own type's order, a null field before any value. Before, the
// serialized bytes were compared, so a negative int field sorted after
// every positive one (test/cqlpy test_filter_UDT_restriction_*: x < {a:
// -1} matched every row).
func tupleAppend(dst []byte, types []datatype.DataType, v []byte) ([]byte, error) {
	for i := 0; len(v) > 0; i++ {
		if i >= len(types) || len(v) < 4 {
			return nil, fmt.Errorf("invalid tuple value")
		}
		l := int(int32(binary.BigEndian.Uint32(v)))
		v = v[4:]
		if l < 0 {
			dst = append(dst, fieldNull)
			continue
		}
		if len(v) < l {
			return nil, fmt.Errorf("truncated tuple value")
		}
		dst = append(dst, fieldValue)
		var err error
		if dst, err = clusteringAppend(dst, types[i], v[:l], false); err != nil {
			return nil, err
		}
		v = v[l:]
	}
	return append(dst, elemEnd), nil
}

// tupleNext decodes what tupleAppend encoded.
func tupleNext(src []byte, types []datatype.DataType, desc bool) (val, rest []byte, err error) {
	val = []byte{}
	for i := 0; ; i++ {
		if len(src) == 0 {
			return nil, nil, fmt.Errorf("truncated clustering key")
		}
		m := getter(src, desc)(0)
		src = src[1:]
		switch {
		case m == elemEnd:
			return val, src, nil
		case i >= len(types):
			return nil, nil, fmt.Errorf("corrupt clustering key")
		case m == fieldNull:
			val = binary.BigEndian.AppendUint32(val, 0xffffffff)
		default:
			var f []byte
			if f, src, err = clusteringNext(src, types[i], desc); err != nil {
				return nil, nil, err
			}
			val = binary.BigEndian.AppendUint32(val, uint32(len(f)))
			val = append(val, f...)
		}
	}
}
