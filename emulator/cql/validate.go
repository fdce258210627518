package cql

import (
	"fmt"
	"unicode/utf8"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// marshalError is ScyllaDB's marshal_exception (marshal_exception.hh): its
// message always starts "marshaling error: ".
type marshalError string

func (e marshalError) Error() string { return "marshaling error: " + string(e) }

func marshalErrorf(format string, args ...any) error {
	return marshalError(fmt.Sprintf(format, args...))
}

// validateBytes is types/types.cc validate_visitor: what a serialized value
// of type dt must be. Empty values pass for the fixed-size types (an empty
// int is a valid, distinct value), never for a duration.
func validateBytes(dt datatype.DataType, b []byte) error {
	if el, dim, ok := vectorOf(dt); ok {
		return validateVectorBytes(el, dim, b)
	}
	switch dt {
	case datatype.Ascii:
		for _, c := range b {
			if c >= 0x80 {
				return marshalErrorf("Validation failed - non-ASCII character in an ASCII string")
			}
		}
		return nil
	case datatype.Varchar:
		if !utf8.Valid(b) {
			return marshalErrorf("Validation failed - non-UTF8 character in a UTF8 string, at byte offset %d", invalidUTF8At(b))
		}
		return nil
	case datatype.Duration:
		return validateDurationBytes(b)
	case datatype.Inet:
		if len(b) != 0 && len(b) != 4 && len(b) != 16 {
			return marshalErrorf("Validation failed for inet_addr - got %d bytes", len(b))
		}
		return nil
	}
	want := fixedSize(dt)
	if want == 0 || len(b) == 0 || len(b) == want {
		if dt == datatype.Timeuuid && len(b) == 16 && b[6]>>4 != 1 {
			return marshalErrorf("Unsupported UUID version (%d)", b[6]>>4)
		}
		return nil
	}
	switch dt {
	case datatype.Tinyint:
		return marshalErrorf("Expected 1 byte for a tinyint (%d)", len(b))
	case datatype.Smallint:
		return marshalErrorf("Expected 2 bytes for a smallint (%d)", len(b))
	case datatype.Boolean:
		return marshalErrorf("Validation failed for boolean, got %d bytes", len(b))
	case datatype.Timeuuid:
		return marshalErrorf("Validation failed for timeuuid - got %d bytes", len(b))
	case datatype.Uuid:
		return marshalErrorf("Validation failed for uuid - got %d bytes", len(b))
	case datatype.Timestamp:
		return marshalErrorf("Validation failed for timestamp - got %d bytes", len(b))
	case datatype.Float, datatype.Double:
		return marshalErrorf("Expected %d bytes for a floating type, got %d", want, len(b))
	case datatype.Date:
		return marshalErrorf("Expected 4 byte long for date (%d)", len(b))
	case datatype.Time:
		return marshalErrorf("Expected 8 byte long for time (%d)", len(b))
	}
	return marshalErrorf("Validation failed for type %s: got %d bytes", validatorName(dt), len(b))
}

// validatorName is the type's Java-style name that integer_type_impl's
// message prints (t.name()).
func validatorName(dt datatype.DataType) string {
	switch dt {
	case datatype.Int:
		return "org.apache.cassandra.db.marshal.Int32Type"
	case datatype.Bigint:
		return "org.apache.cassandra.db.marshal.LongType"
	case datatype.Counter:
		return "org.apache.cassandra.db.marshal.CounterColumnType"
	}
	return typeName(dt)
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// validateDurationBytes is validate_visitor's duration case: three vints,
// each within its counter's width, all of one sign.
func validateDurationBytes(b []byte) error {
	if len(b) < 3 {
		return marshalErrorf("Expected at least 3 bytes for a duration, got %d", len(b))
	}
	var v [3]int64
	rest := b
	for i := range v {
		x, n := readVInt(rest)
		if n <= 0 {
			return marshalErrorf("Expected at least 3 bytes for a duration, got %d", len(b))
		}
		v[i], rest = x, rest[n:]
	}
	for i, name := range []string{"months", "days"} {
		if int64(int32(v[i])) != v[i] {
			return marshalErrorf("The duration %s (%d) must be a 32 bit integer", name, v[i])
		}
	}
	if !(v[0] <= 0 && v[1] <= 0 && v[2] <= 0 || v[0] >= 0 && v[1] >= 0 && v[2] >= 0) {
		return marshalErrorf("The duration months, days, and nanoseconds must be all of the same sign (%d, %d, %d)", v[0], v[1], v[2])
	}
	return nil
}

// readVInt reads a zigzag vint as appendVInt writes it; n is 0 when b is short.
func readVInt(b []byte) (int64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	extra := 0
	for extra < 8 && b[0]&(0x80>>extra) != 0 {
		extra++
	}
	if len(b) < 1+extra {
		return 0, 0
	}
	u := uint64(b[0] & (0xff >> extra))
	if extra == 8 {
		u = 0
	}
	for _, c := range b[1 : 1+extra] {
		u = u<<8 | uint64(c)
	}
	return int64(u>>1) ^ -int64(u&1), 1 + extra
}
