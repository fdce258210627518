package cql

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// primitiveTypes are the CQL types a user table may use.
var primitiveTypes = map[string]datatype.DataType{
	"ascii":     datatype.Ascii,
	"bigint":    datatype.Bigint,
	"blob":      datatype.Blob,
	"boolean":   datatype.Boolean,
	"counter":   datatype.Counter,
	"date":      datatype.Date,
	"decimal":   datatype.Decimal,
	"double":    datatype.Double,
	"duration":  datatype.Duration,
	"float":     datatype.Float,
	"inet":      datatype.Inet,
	"int":       datatype.Int,
	"smallint":  datatype.Smallint,
	"text":      datatype.Varchar,
	"time":      datatype.Time,
	"timestamp": datatype.Timestamp,
	"timeuuid":  datatype.Timeuuid,
	"tinyint":   datatype.Tinyint,
	"uuid":      datatype.Uuid,
	"varchar":   datatype.Varchar,
	"varint":    datatype.Varint,
}

// parseType turns a CQL type name (as produced by cqlparse) into a protocol
// data type. Collections, tuples and counters are supported; UDTs are not.
func parseType(s string) (datatype.DataType, error) { return parseTypeIn(s, nil) }

// userTypes resolves a user-defined type's name in a keyspace (nil: none).
type userTypes func(name string) *engine.UserType

// parseTypeIn is parseType with the user-defined types of a keyspace:
// a UDT is a datatype.UserDefined with its fields' types resolved.
func parseTypeIn(s string, udts userTypes) (datatype.DataType, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, `"`) && !strings.Contains(s, "<") {
		// A quoted user type name keeps its case (Cql.g userTypeName).
		if ut := lookupUserType(udts, s); ut != nil {
			return userDefined(ut, udts)
		}
		return nil, fmt.Errorf("unsupported type %q", s)
	}
	s = lowerUnquoted(s)
	if dt, ok := primitiveTypes[s]; ok {
		return dt, nil
	}
	if strings.Contains(s, "counter") && !strings.HasPrefix(s, "frozen<") {
		// cql3/cql3_type.cc
		return nil, fmt.Errorf("Counters are not allowed inside collections: %s", s)
	}
	open := strings.IndexByte(s, '<')
	if open < 0 || !strings.HasSuffix(s, ">") {
		if ut := lookupUserType(udts, s); ut != nil {
			return userDefined(ut, udts)
		}
		return nil, fmt.Errorf("unsupported type %q", s)
	}
	outer, inner := s[:open], s[open+1:len(s)-1]
	args := splitTypeArgs(inner)
	switch outer {
	case "frozen":
		if len(args) == 1 {
			return parseTypeIn(args[0], udts)
		}
	case "list", "set":
		if len(args) == 1 {
			el, err := parseTypeIn(args[0], udts)
			if err != nil {
				return nil, err
			}
			if outer == "list" {
				return datatype.NewList(el), nil
			}
			return datatype.NewSet(el), nil
		}
	case "tuple":
		// cql3/cql3_type.cc: a tuple's elements, any type but counter.
		var elems []datatype.DataType
		for _, a := range args {
			el, err := parseTypeIn(a, udts)
			if err != nil {
				return nil, err
			}
			elems = append(elems, el)
		}
		if len(elems) > 0 {
			return datatype.NewTuple(elems...), nil
		}
	case "vector":
		if len(args) == 2 {
			el, err := parseTypeIn(args[0], udts)
			if err != nil {
				return nil, err
			}
			return newVectorType(el, args[1])
		}
	case "map":
		if len(args) == 2 {
			k, err := parseTypeIn(args[0], udts)
			if err != nil {
				return nil, err
			}
			v, err := parseTypeIn(args[1], udts)
			if err != nil {
				return nil, err
			}
			return datatype.NewMap(k, v), nil
		}
	}
	return nil, fmt.Errorf("unsupported type %q", s)
}

// lookupUserType finds a UDT by name ("" when udts is nil): [ks.]name,
// either part quoted or not.
func lookupUserType(udts userTypes, name string) *engine.UserType {
	if udts == nil {
		return nil
	}
	if ks, n, ok := cutUnquoted(name, '.'); ok {
		return udts(unquoteIdent(ks) + "." + unquoteIdent(n))
	}
	return udts(unquoteIdent(name))
}

// lowerUnquoted lower-cases a type name outside its quoted identifiers.
func lowerUnquoted(s string) string {
	b := []byte(s)
	quoted := false
	for i, c := range b {
		if c == '"' {
			quoted = !quoted
		} else if !quoted && c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// cutUnquoted is strings.Cut at the first sep outside quotes.
func cutUnquoted(s string, sep byte) (before, after string, found bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == sep:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// userDefined is a UDT's protocol type (its fields resolved in turn).
func userDefined(ut *engine.UserType, udts userTypes) (datatype.DataType, error) {
	fields := make([]datatype.DataType, len(ut.FieldTypes))
	for i, ft := range ut.FieldTypes {
		dt, err := parseTypeIn(ft, udts)
		if err != nil {
			return nil, fmt.Errorf("type %s.%s field %s: %w", ut.Keyspace, ut.Name, ut.FieldNames[i], err)
		}
		fields[i] = dt
	}
	return datatype.NewUserDefined(ut.Keyspace, ut.Name, ut.FieldNames, fields)
}

// splitTypeArgs splits "a, map<b, c>" at top-level commas.
func splitTypeArgs(s string) []string {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			quoted = !quoted
		}
		if quoted {
			continue
		}
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// elementTypeName is typeName of a collection's element: always frozen,
// which types.cc abstract_type::cql3_type_name prints as frozen<...> for
// a user type or a collection.
func elementTypeName(dt datatype.DataType) string {
	switch dt.(type) {
	case *datatype.UserDefined, *datatype.List, *datatype.Set, *datatype.Map:
		return "frozen<" + typeName(dt) + ">"
	}
	return typeName(dt)
}

// typeName renders a data type as system_schema.columns shows it.
func typeName(dt datatype.DataType) string {
	switch t := dt.(type) {
	case *datatype.List:
		return "list<" + elementTypeName(t.ElementType) + ">"
	case *datatype.Set:
		return "set<" + elementTypeName(t.ElementType) + ">"
	case *datatype.Map:
		return "map<" + elementTypeName(t.KeyType) + ", " + elementTypeName(t.ValueType) + ">"
	case *datatype.UserDefined:
		// types.cc user_type_impl: the name as maybe_quote prints it.
		return maybeQuote(t.Name)
	case *datatype.Custom:
		if el, dim, ok := vectorOf(t); ok {
			return vectorTypeName(el, dim)
		}
	case *datatype.Tuple:
		// Tuples are always frozen; system_schema shows them so
		// (types/tuple.cc tuple_type_impl::make_name).
		var names []string
		for _, el := range t.FieldTypes {
			names = append(names, typeName(el))
		}
		return "frozen<tuple<" + strings.Join(names, ", ") + ">>"
	}
	if dt == datatype.Varchar {
		return "text"
	}
	return strings.ToLower(dt.AsCql())
}

// fixedSize is the serialized size of fixed-width types (0 = variable).
func fixedSize(dt datatype.DataType) int {
	switch dt {
	case datatype.Bigint, datatype.Counter, datatype.Timestamp, datatype.Double, datatype.Time:
		return 8
	case datatype.Int, datatype.Float, datatype.Date:
		return 4
	case datatype.Smallint:
		return 2
	case datatype.Tinyint, datatype.Boolean:
		return 1
	case datatype.Uuid, datatype.Timeuuid:
		return 16
	}
	return 0
}

// encodeDuration parses a duration literal (parseDuration) and serialises
// it as types/types.cc duration_type_impl does: months, days and
// nanoseconds, each a zigzag variable-length integer (vint_serialization.cc).
func encodeDuration(text string) ([]byte, error) {
	d, err := parseDuration(text)
	if err != nil {
		return nil, err
	}
	return appendVInt(appendVInt(appendVInt(nil, int64(d.months)), int64(d.days)), d.nanos), nil
}

// encodeUserTypeLiteral serializes {field: value, ...} as a user type value
// (cql3/user_types.cc: fields in the type's order, a missing one null;
// an unknown one refused).
func encodeUserTypeLiteral(ut *datatype.UserDefined, t cqlparse.Term, bad func() error) ([]byte, error) {
	if t.Kind != cqlparse.TermMap {
		return nil, bad()
	}
	values := map[string]cqlparse.Term{}
	for i, k := range t.Keys {
		if k.Kind != cqlparse.TermField {
			return nil, bad()
		}
		known := false
		for _, f := range ut.FieldNames {
			known = known || f == k.Text
		}
		if !known {
			return nil, fmt.Errorf("Unknown field '%s' in value of user defined type %s", k.Text, ut.Name)
		}
		values[k.Text] = t.Values[i]
	}
	terms := make([]*cqlparse.Term, len(ut.FieldNames))
	for i, f := range ut.FieldNames {
		if v, ok := values[f]; ok {
			terms[i] = &v
		}
	}
	return encodeFields(ut.FieldTypes, terms)
}

// appendVInt writes a signed variable-length integer as
// vint_serialization.cc (Cassandra's VIntCoding) does: zigzag, then the
// number of extra bytes as leading one bits of the first byte.
func appendVInt(dst []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	magnitude := bits.LeadingZeros64(u | 1)
	size := (639 - magnitude*9) >> 6
	if size == 1 {
		return append(dst, byte(u))
	}
	buf := make([]byte, size)
	for i := size - 1; i >= 0; i-- {
		buf[i] = byte(u)
		u >>= 8
	}
	buf[0] |= ^byte(0xff >> (size - 1))
	return append(dst, buf...)
}

func encodeCollection(kt, vt datatype.DataType, keys, vals []cqlparse.Term) ([]byte, error) {
	n := len(keys)
	if vt == nil {
		n = len(keys) + len(vals)
		keys = append(keys, vals...)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(n))
	for i, k := range keys {
		kb, err := encodeLiteral(kt, k)
		if err != nil {
			return nil, err
		}
		if kb == nil {
			return nil, fmt.Errorf("null is not supported inside collections")
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(kb)))
		out = append(out, kb...)
		if vt != nil {
			vb, err := encodeLiteral(vt, vals[i])
			if err != nil {
				return nil, err
			}
			if vb == nil {
				return nil, fmt.Errorf("null is not supported inside collections")
			}
			out = binary.BigEndian.AppendUint32(out, uint32(len(vb)))
			out = append(out, vb...)
		}
	}
	return out, nil
}

func varintBytes(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Two's complement of a negative number.
	bits := n.BitLen()/8*8 + 8
	m := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	m.Add(m, n)
	b := m.Bytes()
	for len(b) < bits/8 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

func putInt(size int, v int64) []byte {
	b := make([]byte, size)
	switch size {
	case 8:
		binary.BigEndian.PutUint64(b, uint64(v))
	case 4:
		binary.BigEndian.PutUint32(b, uint32(v))
	case 2:
		binary.BigEndian.PutUint16(b, uint16(v))
	case 1:
		b[0] = byte(v)
	}
	return b
}

func termKindName(k cqlparse.TermKind) string {
	switch k {
	case cqlparse.TermString:
		return "STRING"
	case cqlparse.TermInt:
		return "INTEGER"
	case cqlparse.TermFloat:
		return "FLOAT"
	case cqlparse.TermBlob:
		return "HEX"
	case cqlparse.TermUUID:
		return "UUID"
	case cqlparse.TermBool:
		return "BOOLEAN"
	case cqlparse.TermDuration:
		return "DURATION"
	case cqlparse.TermMap:
		return "MAP"
	case cqlparse.TermList:
		return "LIST"
	}
	return "literal"
}

// termText renders a term as ScyllaDB prints an expression in messages.
func termText(t cqlparse.Term) string {
	switch t.Kind {
	case cqlparse.TermBind:
		if t.BindName != "" {
			return ":" + t.BindName
		}
		return "?"
	case cqlparse.TermNull:
		return "null"
	case cqlparse.TermString:
		return "'" + t.Text + "'"
	case cqlparse.TermBlob:
		return "0x" + t.Text
	case cqlparse.TermMap, cqlparse.TermList:
		return "..."
	}
	return t.Text
}

// clusteringAppend appends the order-preserving encoding of one clustering
// component: bytes.Compare on the concatenation gives CQL clustering order,
// each component is self-delimiting (so a prefix of components is a byte
// prefix), and DESC components are bit-inverted.
func clusteringAppend(dst []byte, dt datatype.DataType, v []byte, desc bool) ([]byte, error) {
	start := len(dst)
	if types := collectionTypes(dt); types != nil {
		var err error
		if dst, err = collectionAppend(dst, types, v); err != nil {
			return nil, err
		}
	} else if types := tupleTypes(dt); types != nil {
		var err error
		if dst, err = tupleAppend(dst, types, v); err != nil {
			return nil, err
		}
	} else if dt == datatype.Decimal {
		unscaled, scale, err := decimalParts(v)
		if err != nil {
			return nil, err
		}
		dst = numericAppend(dst, unscaled, scale)
	} else if dt == datatype.Varint {
		dst = numericAppend(dst, varintValue(v), 0)
	} else if n := fixedSize(dt); n > 0 {
		if len(v) != n {
			return nil, fmt.Errorf("invalid %d-byte value for clustering column of type %s", len(v), typeName(dt))
		}
		switch dt {
		case datatype.Bigint, datatype.Counter, datatype.Timestamp, datatype.Int, datatype.Smallint, datatype.Tinyint, datatype.Time:
			dst = append(dst, v...)
			dst[start] ^= 0x80 // two's complement -> unsigned order
		case datatype.Date: // unsigned, epoch at 2^31
			dst = append(dst, v...)
		case datatype.Double, datatype.Float:
			dst = append(dst, v...)
			if v[0]&0x80 != 0 {
				for i := start; i < len(dst); i++ {
					dst[i] = ^dst[i]
				}
			} else {
				dst[start] ^= 0x80
			}
		case datatype.Timeuuid:
			// Order by timestamp: time_hi, time_mid, time_low, then the rest.
			dst = append(dst, v[6]&0x0f, v[7], v[4], v[5], v[0], v[1], v[2], v[3])
			dst = append(dst, v[8:]...)
		case datatype.Uuid:
			ver := v[6] >> 4
			if ver == 1 {
				dst = append(dst, ver, v[6]&0x0f, v[7], v[4], v[5], v[0], v[1], v[2], v[3])
				dst = append(dst, v[8:]...)
			} else {
				dst = append(dst, ver)
				dst = append(dst, v...)
			}
		default: // boolean
			dst = append(dst, v...)
		}
	} else {
		// Variable length: escape 0x00 as 0x00 0xff and terminate with 0x00 0x01.
		for _, c := range v {
			if c == 0 {
				dst = append(dst, 0, 0xff)
			} else {
				dst = append(dst, c)
			}
		}
		dst = append(dst, 0, 1)
	}
	if desc {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst, nil
}

// clusteringNext decodes one component from src and returns its value and
// the remaining bytes.
func clusteringNext(src []byte, dt datatype.DataType, desc bool) (val, rest []byte, err error) {
	get := getter(src, desc)
	if types := collectionTypes(dt); types != nil {
		return collectionNext(src, types, get, desc)
	}
	if types := tupleTypes(dt); types != nil {
		return tupleNext(src, types, desc)
	}
	if dt == datatype.Decimal || dt == datatype.Varint {
		unscaled, scale, used, err := numericNext(get, len(src))
		if err != nil {
			return nil, nil, err
		}
		if dt == datatype.Varint {
			return varintBytes(unscaled), src[used:], nil
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(int32(scale))), varintBytes(unscaled)...), src[used:], nil
	}
	if n := fixedSize(dt); n > 0 {
		enc := n
		if dt == datatype.Uuid {
			enc = 17
		}
		if len(src) < enc {
			return nil, nil, fmt.Errorf("truncated clustering key")
		}
		b := make([]byte, enc)
		for i := range b {
			b[i] = get(i)
		}
		switch dt {
		case datatype.Bigint, datatype.Counter, datatype.Timestamp, datatype.Int, datatype.Smallint, datatype.Tinyint, datatype.Time:
			b[0] ^= 0x80
		case datatype.Double, datatype.Float:
			if b[0]&0x80 == 0 {
				for i := range b {
					b[i] = ^b[i]
				}
			} else {
				b[0] ^= 0x80
			}
		case datatype.Timeuuid:
			b = []byte{b[4], b[5], b[6], b[7], b[2], b[3], b[0] | 0x10, b[1], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]}
		case datatype.Uuid:
			if b[0] == 1 {
				b = []byte{b[5], b[6], b[7], b[8], b[3], b[4], b[1] | 0x10, b[2], b[9], b[10], b[11], b[12], b[13], b[14], b[15], b[16]}
			} else {
				b = b[1:]
			}
		}
		return b, src[enc:], nil
	}
	var out []byte
	for i := 0; i < len(src); i++ {
		c := get(i)
		if c != 0 {
			out = append(out, c)
			continue
		}
		if i+1 >= len(src) {
			break
		}
		switch get(i + 1) {
		case 0xff:
			out = append(out, 0)
			i++
		case 1:
			if out == nil {
				out = []byte{}
			}
			return out, src[i+2:], nil
		default:
			return nil, nil, fmt.Errorf("corrupt clustering key")
		}
	}
	return nil, nil, fmt.Errorf("truncated clustering key")
}

// compositeKey builds the partition key bytes drivers hash for tokens.
func compositeKey(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += 3 + len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
		out = append(out, p...)
		out = append(out, 0)
	}
	return out
}
