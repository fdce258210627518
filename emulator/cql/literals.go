package cql

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
)

// constantError is prepare_expr.cc's refusal of an untyped constant its
// receiver cannot take: `Invalid STRING constant (x) for "c" of type int`.
// The receiver's name is added where it is known (execCtx.value).
type constantError struct {
	kind, text, typ, column string
}

func (e *constantError) Error() string {
	if e.column == "" {
		return fmt.Sprintf("Invalid %s constant (%s) for a column of type %s", e.kind, e.text, e.typ)
	}
	return fmt.Sprintf("Invalid %s constant (%s) for \"%s\" of type %s", e.kind, e.text, e.column, e.typ)
}

// emptyStringIsEmptyValue: the types that take a string constant and
// whose from_string makes an empty value of an empty string.
func emptyStringIsEmptyValue(dt datatype.DataType) bool {
	return dt == datatype.Timestamp || dt == datatype.Date || dt == datatype.Time || dt == datatype.Inet
}

// literalEncoder serializes a literal term of one scalar type; bad is the
// untyped constant's refusal (constantError).
type literalEncoder func(dt datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error)

// scalarLiterals are the encoders of the scalar types, each accepting the
// constant kinds prepare_expr.cc untyped_constant_test_assignment lets
// the type take and reading them as the type's from_string does.
var scalarLiterals = map[datatype.DataType]literalEncoder{
	datatype.Duration: encodeDurationLiteral, datatype.Date: encodeDateLiteral, datatype.Time: encodeTimeLiteral,
	datatype.Decimal: encodeDecimalLiteral, datatype.Varchar: encodeTextLiteral, datatype.Ascii: encodeTextLiteral,
	datatype.Bigint: encodeIntLiteral, datatype.Counter: encodeIntLiteral, datatype.Int: encodeIntLiteral,
	datatype.Smallint: encodeIntLiteral, datatype.Tinyint: encodeIntLiteral, datatype.Timestamp: encodeTimestampLiteral,
	datatype.Boolean: encodeBoolLiteral, datatype.Double: encodeFloatLiteral, datatype.Float: encodeFloatLiteral,
	datatype.Blob: encodeBlobLiteral, datatype.Uuid: encodeUUIDLiteral, datatype.Timeuuid: encodeUUIDLiteral,
	datatype.Inet: encodeInetLiteral, datatype.Varint: encodeVarintLiteral,
}

// encodeLiteral serializes a literal term for a column of type dt. A null
// literal encodes as nil.
func encodeLiteral(dt datatype.DataType, t cqlparse.Term) ([]byte, error) {
	if t.Kind == cqlparse.TermNull {
		return nil, nil
	}
	bad := func() error {
		text := termText(t)
		if t.Kind == cqlparse.TermString {
			text = t.Text // Cql.g STRING_LITERAL's text is unquoted
		}
		return &constantError{kind: termKindName(t.Kind), text: text, typ: typeName(dt)}
	}
	if t.Kind == cqlparse.TermString && t.Text == "" && emptyStringIsEmptyValue(dt) {
		// types/types.cc from_string_visitor: an empty string makes an
		// empty value of these types (scylladb #10625).
		return []byte{}, nil
	}
	if b, ok, err := encodeCompositeLiteral(dt, t, bad); ok {
		return b, err
	}
	if enc, ok := scalarLiterals[dt]; ok {
		return enc(dt, t, bad)
	}
	return nil, fmt.Errorf("literals of type %s are not supported; use a bind marker", typeName(dt))
}

// encodeCompositeLiteral serializes collections, user types, vectors and
// tuples; ok is false for the other types.
func encodeCompositeLiteral(dt datatype.DataType, t cqlparse.Term, bad func() error) (b []byte, ok bool, err error) {
	switch x := dt.(type) {
	case *datatype.List:
		if t.Kind != cqlparse.TermList {
			return nil, true, bad()
		}
		b, err = encodeCollection(x.ElementType, nil, t.Values, nil)
	case *datatype.Set:
		switch {
		case t.Kind == cqlparse.TermMap && len(t.Keys) == 0:
			b, err = encodeCollection(x.ElementType, nil, nil, nil)
		case t.Kind != cqlparse.TermList:
			return nil, true, bad()
		default:
			b, err = encodeCollection(x.ElementType, nil, t.Values, nil)
		}
	case *datatype.Map:
		if t.Kind != cqlparse.TermMap {
			return nil, true, bad()
		}
		b, err = encodeCollection(x.KeyType, x.ValueType, t.Keys, t.Values)
	case *datatype.UserDefined:
		b, err = encodeUserTypeLiteral(x, t, bad)
	case *datatype.Custom:
		el, dim, isVector := vectorOf(x)
		if !isVector {
			return nil, false, nil
		}
		b, err = encodeVectorLiteral(el, dim, t, bad)
	case *datatype.Tuple:
		b, err = encodeTupleLiteral(x, t, bad)
	default:
		return nil, false, nil
	}
	return b, true, err
}

func encodeTupleLiteral(x *datatype.Tuple, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermTuple || len(t.Values) > len(x.FieldTypes) {
		return nil, bad()
	}
	terms := make([]*cqlparse.Term, len(t.Values))
	for i := range t.Values {
		terms[i] = &t.Values[i]
	}
	return encodeFields(x.FieldTypes[:len(terms)], terms)
}

// encodeFields serializes the fields of a tuple or a user type value: each
// an int32 length and its bytes, -1 for a null or missing one (types/
// tuple.cc tuple_type_impl::build_value).
func encodeFields(types []datatype.DataType, terms []*cqlparse.Term) ([]byte, error) {
	out := []byte{}
	for i, t := range terms {
		var b []byte
		if t != nil {
			var err error
			if b, err = encodeLiteral(types[i], *t); err != nil {
				return nil, err
			}
		}
		if b == nil {
			out = binary.BigEndian.AppendUint32(out, math.MaxUint32)
			continue
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// encodeDurationLiteral: a string is not assignable to a duration
// (prepare_expr.cc untyped_constant_test_assignment).
func encodeDurationLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermDuration {
		return nil, bad()
	}
	return encodeDuration(t.Text)
}

func encodeDateLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermString && t.Kind != cqlparse.TermInt {
		return nil, bad()
	}
	days, err := dateFromString(t.Text)
	if err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint32(nil, days), nil
}

// encodeTimeLiteral: constants.cc parses an integer literal with the
// type's from_string too, so 123 is refused (scylladb #7987).
func encodeTimeLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermString && t.Kind != cqlparse.TermInt {
		return nil, bad()
	}
	ns, err := timeFromString(t.Text)
	if err != nil {
		return nil, err
	}
	return putInt(8, ns), nil
}

// encodeDecimalLiteral is decimal_type_impl: the scale (an int32,
// utils/big_decimal.cc) then the unscaled varint.
func encodeDecimalLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermInt && t.Kind != cqlparse.TermFloat {
		return nil, bad()
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(t.Text), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	scale := int64(len(fracPart))
	if hasExp {
		e, err := strconv.ParseInt(exp, 10, 64)
		if err != nil {
			return nil, bad()
		}
		scale -= e
	}
	if scale != int64(int32(scale)) {
		return nil, marshalErrorf("unable to make BigDecimal from '%s'", t.Text)
	}
	n, ok := new(big.Int).SetString(intPart+fracPart, 10)
	if !ok {
		return nil, bad()
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(int32(scale))), varintBytes(n)...), nil
}

// encodeTextLiteral: ascii refuses other characters (types/types.cc
// from_string_visitor).
func encodeTextLiteral(dt datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermString {
		return nil, bad()
	}
	if dt == datatype.Ascii && validateBytes(dt, []byte(t.Text)) != nil {
		return nil, marshalErrorf("Invalid ASCII character in string literal: '%s'", t.Text)
	}
	return []byte(t.Text), nil
}

func encodeIntLiteral(dt datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermInt {
		return nil, bad()
	}
	size := fixedSize(dt)
	v, err := strconv.ParseInt(t.Text, 10, size*8)
	if err != nil {
		return nil, fmt.Errorf("Invalid %s value %s: out of range", typeName(dt), t.Text)
	}
	return putInt(size, v), nil
}

func encodeTimestampLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	switch t.Kind {
	case cqlparse.TermInt:
		v, err := strconv.ParseInt(t.Text, 10, 64)
		if err != nil {
			return nil, bad()
		}
		return putInt(8, v), nil
	case cqlparse.TermString:
		ms, err := timestampFromString(t.Text)
		if err != nil {
			return nil, err
		}
		return putInt(8, ms), nil
	}
	return nil, bad()
}

func encodeBoolLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermBool {
		return nil, bad()
	}
	if t.Text == "true" {
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

func encodeFloatLiteral(dt datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermInt && t.Kind != cqlparse.TermFloat {
		return nil, bad()
	}
	f, err := strconv.ParseFloat(strings.Replace(t.Text, "infinity", "inf", 1), 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return nil, bad()
	}
	if dt == datatype.Float {
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
}

func encodeBlobLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermBlob {
		return nil, bad()
	}
	if len(t.Text)%2 == 1 {
		return nil, fmt.Errorf("Invalid blob literal 0x%s: odd number of hex digits", t.Text)
	}
	b, err := hex.DecodeString(t.Text)
	if err != nil {
		return nil, bad()
	}
	return b, nil
}

func encodeUUIDLiteral(dt datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermUUID {
		return nil, bad()
	}
	b, err := hex.DecodeString(strings.ReplaceAll(t.Text, "-", ""))
	if err != nil || len(b) != 16 {
		return nil, bad()
	}
	if dt == datatype.Timeuuid && b[6]>>4 != 1 {
		return nil, fmt.Errorf("Unsupported UUID for timeuuid column: %s is not a version 1 UUID", t.Text)
	}
	return b, nil
}

func encodeInetLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermString {
		return nil, bad()
	}
	ip := net.ParseIP(t.Text)
	if ip == nil {
		return nil, fmt.Errorf("Unable to make inet address from '%s'", t.Text)
	}
	if v4 := ip.To4(); v4 != nil {
		return v4, nil
	}
	return ip, nil
}

func encodeVarintLiteral(_ datatype.DataType, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermInt {
		return nil, bad()
	}
	n, ok := new(big.Int).SetString(t.Text, 10)
	if !ok {
		return nil, bad()
	}
	return varintBytes(n), nil
}
