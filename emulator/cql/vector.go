package cql

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
)

// A vector<T, N> (types/vector.hh vector_type_impl) travels in result
// metadata as a custom type named by its class, as types/types.cc
// make_vector_type_name writes it:
// org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3).
const (
	vectorClassPrefix = "org.apache.cassandra.db.marshal.VectorType("
	marshalPackage    = "org.apache.cassandra.db.marshal."
	maxVectorDim      = 16000 // cql3/cql3_type.hh MAX_VECTOR_DIMENSION
)

// marshalClasses are the element types a vector may hold here, by their
// class names (types/types.cc *_type_name).
var marshalClasses = map[datatype.DataType]string{
	datatype.Float: "FloatType", datatype.Double: "DoubleType", datatype.Int: "Int32Type",
	datatype.Bigint: "LongType", datatype.Smallint: "ShortType", datatype.Tinyint: "ByteType",
	datatype.Varchar: "UTF8Type", datatype.Ascii: "AsciiType", datatype.Boolean: "BooleanType",
	datatype.Blob: "BytesType", datatype.Uuid: "UUIDType", datatype.Timeuuid: "TimeUUIDType",
	datatype.Timestamp: "TimestampType", datatype.Date: "SimpleDateType", datatype.Time: "TimeType",
	datatype.Decimal: "DecimalType", datatype.Varint: "IntegerType", datatype.Inet: "InetAddressType",
}

var vectorClassRe = regexp.MustCompile(`^org\.apache\.cassandra\.db\.marshal\.VectorType\(org\.apache\.cassandra\.db\.marshal\.(\w+), (\d+)\)$`)

// newVectorType is cql3_type.cc raw_vector::prepare_internal.
func newVectorType(elem datatype.DataType, dimText string) (datatype.DataType, error) {
	dim, err := strconv.Atoi(dimText)
	switch {
	case err != nil || dim <= 0:
		return nil, fmt.Errorf("Vectors must have a dimension greater than 0")
	case dim > maxVectorDim:
		return nil, fmt.Errorf("Vectors must have a dimension less than or equal to %d", maxVectorDim)
	}
	class, ok := marshalClasses[elem]
	if !ok {
		return nil, fmt.Errorf("vectors of %s are not supported by the emulator", typeName(elem))
	}
	return datatype.NewCustom(fmt.Sprintf("%s%s%s, %d)", vectorClassPrefix, marshalPackage, class, dim)), nil
}

// vectorOf returns a vector type's element type and dimension.
func vectorOf(dt datatype.DataType) (elem datatype.DataType, dim int, ok bool) {
	c, isCustom := dt.(*datatype.Custom)
	if !isCustom {
		return nil, 0, false
	}
	m := vectorClassRe.FindStringSubmatch(c.ClassName)
	if m == nil {
		return nil, 0, false
	}
	for t, class := range marshalClasses {
		if class == m[1] {
			dim, _ = strconv.Atoi(m[2])
			return t, dim, true
		}
	}
	return nil, 0, false
}

func vectorTypeName(elem datatype.DataType, dim int) string {
	return fmt.Sprintf("vector<%s, %d>", typeName(elem), dim)
}

// encodeVectorLiteral is prepare_expr.cc's vector literal check and
// vector_type_impl's serialization: exactly dim elements; fixed-size
// elements back to back, others each after an unsigned vint length.
func encodeVectorLiteral(elem datatype.DataType, dim int, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermList {
		return nil, bad()
	}
	if len(t.Values) != dim {
		return nil, fmt.Errorf("Invalid vector literal: type %s expects %d elements but got %d", vectorTypeName(elem, dim), dim, len(t.Values))
	}
	var out []byte
	for _, v := range t.Values {
		b, err := encodeLiteral(elem, v)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return nil, fmt.Errorf("null is not supported inside vectors")
		}
		if fixedSize(elem) == 0 {
			out = binary.AppendUvarint(out, uint64(len(b)))
		}
		out = append(out, b...)
	}
	return out, nil
}

// validateVectorBytes checks a bound vector's size (vector_type_impl validate).
func validateVectorBytes(elem datatype.DataType, dim int, b []byte) error {
	if n := fixedSize(elem); n > 0 && len(b) != n*dim && len(b) != 0 {
		return marshalErrorf("Expected %d bytes for a vector of %d %s, got %d", n*dim, dim, typeName(elem), len(b))
	}
	return nil
}
