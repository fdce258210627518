package profile

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/elasticity-dev/elasticity/stress/csdist"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// kind is a CQL type this engine generates values of: cassandra-stress's
// (StressProfile.ColumnInfo.getGenerator) and map, which it lacks.
type kind int

const (
	kText kind = iota + 1
	kAscii
	kBlob
	kInt
	kBigint
	kSmallint
	kTinyint
	kVarint
	kFloat
	kDouble
	kDecimal
	kBoolean
	kUUID
	kTimeUUID
	kTimestamp
	kDate
	kTime
	kInet
	kCounter
	kList
	kSet
	kMap
)

var kinds = map[string]kind{
	"text": kText, "varchar": kText, "ascii": kAscii, "blob": kBlob, "int": kInt, "bigint": kBigint,
	"smallint": kSmallint, "tinyint": kTinyint, "varint": kVarint, "float": kFloat, "double": kDouble,
	"decimal": kDecimal, "boolean": kBoolean, "uuid": kUUID, "timeuuid": kTimeUUID, "timestamp": kTimestamp,
	"date": kDate, "time": kTime, "inet": kInet, "counter": kCounter,
}

// ctype is a column's type.
type ctype struct {
	kind     kind
	frozen   bool
	key, val *ctype // list/set element in val; map key and value
}

func (t *ctype) isCollection() bool { return t.kind == kList || t.kind == kSet || t.kind == kMap }

// parseType reads a type as the CQL parser prints it ("map<text, int>",
// "frozen<set<int>>").
func parseType(s string) (*ctype, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	name, args, generic := strings.Cut(s, "<")
	name = strings.TrimSpace(name)
	if !generic {
		if k, ok := kinds[name]; ok {
			return &ctype{kind: k}, nil
		}
		return nil, fmt.Errorf("type %s is not supported by the profile engine (supported: %s, list, set, map, frozen)", s, strings.Join(slices.Sorted(maps.Keys(kinds)), ", "))
	}
	if !strings.HasSuffix(args, ">") {
		return nil, fmt.Errorf("type %s: unbalanced <>", s)
	}
	parts := splitTop(args[:len(args)-1])
	switch {
	case name == "frozen" && len(parts) == 1:
		t, err := parseType(parts[0])
		if err == nil {
			t.frozen = true
		}
		return t, err
	case (name == "list" || name == "set") && len(parts) == 1:
		el, err := parseType(parts[0])
		if err != nil {
			return nil, err
		}
		k := kList
		if name == "set" {
			k = kSet
		}
		return &ctype{kind: k, val: el}, nil
	case name == "map" && len(parts) == 2:
		key, err := parseType(parts[0])
		if err != nil {
			return nil, err
		}
		val, err := parseType(parts[1])
		if err != nil {
			return nil, err
		}
		return &ctype{kind: kMap, key: key, val: val}, nil
	}
	return nil, fmt.Errorf("type %s is not supported by the profile engine (tuples, user types, vectors and durations are not generated)", s)
}

// splitTop splits s at its top-level commas.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// generator makes a column's values as cassandra-stress's
// generate/values/*.java do: a value is a function of its identity,
// drawn from the population distribution (default uniform(1..100B);
// timestamps uniform over 50 years of ms, Dates.java), and strings and
// blobs take their length from the size distribution seeded with that
// identity (default uniform(4..8), Generator.java). Values are written in
// the native protocol's encoding straight into the caller's buffer.
type generator struct {
	typ                 *ctype
	size, pop, cluster  csdist.Dist
	salt                uint64
	elemKey, elem       *generator // collections: key (maps) and element generators, same spec
	clockSeqAndNodeBits uint64
}

func newGenerator(t *ctype, spec ColumnSpec) *generator {
	h := fnv.New64a()
	h.Write([]byte("seed for stress" + strings.ToLower(spec.Name))) // GeneratorConfig's seedStr + name
	g := &generator{typ: t, size: spec.Size, pop: spec.Population, cluster: spec.Cluster, salt: keygen.Mix64(h.Sum64())}
	if g.size.IsZero() {
		g.size = csdist.Uniform(4, 8)
	}
	if g.cluster.IsZero() {
		g.cluster = csdist.Fixed(1)
	}
	if g.pop.IsZero() {
		g.pop = csdist.Uniform(1, 100e9)
		if t.kind == kTimestamp || t.kind == kTimeUUID {
			g.pop = csdist.Uniform(1, 50*365*24*60*60*1000)
		}
	}
	// TimeUUIDs.java: one clock sequence and node per generator; the variant bits are RFC 4122's.
	g.clockSeqAndNodeBits = g.salt&^(0xc0<<56) | 0x80<<56
	if t.isCollection() {
		g.elem = newGenerator(t.val, spec)
		g.elem.salt = g.salt * 31 // Sets/Lists.setSeed: the element generator's seed is seed*31
		if t.kind == kMap {
			g.elemKey = newGenerator(t.key, spec)
			g.elemKey.salt = g.salt * 37
		}
	}
	return g
}

// identity is the value identity of seed (the population's draw).
func (g *generator) identity(seed uint64) int64 { return g.pop.Sample(seed + g.salt) }

// appendValue appends the encoded value of seed to b.
func (g *generator) appendValue(b []byte, seed uint64) []byte {
	if g.typ.isCollection() {
		return g.appendCollection(b, seed)
	}
	return g.appendScalar(b, g.identity(seed))
}

// appendScalar appends the encoding of the value of identity id.
func (g *generator) appendScalar(b []byte, id int64) []byte {
	switch g.typ.kind {
	case kText, kAscii, kBlob:
		return g.appendChars(b, id)
	case kInt:
		return binary.BigEndian.AppendUint32(b, uint32(int32(id)))
	case kBigint, kCounter, kTimestamp:
		return binary.BigEndian.AppendUint64(b, uint64(id))
	case kSmallint:
		return binary.BigEndian.AppendUint16(b, uint16(int16(id)))
	case kTinyint:
		return append(b, byte(int8(id)))
	case kVarint:
		return appendVarint(b, id)
	case kDecimal: // BigDecimal.valueOf(long): scale 0
		return appendVarint(append(b, 0, 0, 0, 0), id)
	case kFloat:
		return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(id)))
	case kDouble:
		return binary.BigEndian.AppendUint64(b, math.Float64bits(float64(id)))
	case kBoolean:
		// Booleans.java: identity % 1 == 0, which is always true.
		return append(b, 1)
	case kUUID: // UUIDs.java: new UUID(identity, identity)
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, uint64(id)), uint64(id))
	case kTimeUUID:
		return g.appendTimeUUID(b, id)
	case kDate:
		// LocalDates.java hands the driver the identity as days; a date is
		// days from 2^31 (the epoch), kept within 100 years after it.
		return binary.BigEndian.AppendUint32(b, 1<<31+uint32(uint64(id)%36525))
	case kTime: // nanoseconds of the day; Times.java's identity, kept within the day
		return binary.BigEndian.AppendUint64(b, uint64(id)%(86400*1e9))
	case kInet: // Inets.java: the identity's low 32 bits as an IPv4 address
		return binary.BigEndian.AppendUint32(b, uint32(id))
	}
	return b
}

// appendChars is Strings.java and Bytes.java: length from the size
// distribution seeded with the identity, content from a generator seeded
// with ~identity; strings keep each byte within ASCII, as Strings does.
func (g *generator) appendChars(b []byte, id int64) []byte {
	n := int(max(0, min(g.size.Sample(keygen.Mix64(uint64(id))), 1<<24)))
	r := ^uint64(id)
	for i := 0; i < n; {
		r = keygen.Mix64(r)
		v := r
		for k := 0; k < 8 && i < n; k, i = k+1, i+1 {
			if g.typ.kind == kBlob {
				b = append(b, byte(v))
			} else {
				b = append(b, byte(((v&127)+32)&127))
			}
			v >>= 8
		}
	}
	return b
}

// appendTimeUUID is TimeUUIDs.java: a version 1 UUID at the identity's
// time in ms (UUIDGen.getTimeUUID), with the generator's clock and node.
func (g *generator) appendTimeUUID(b []byte, ms int64) []byte {
	ts := uint64(ms)*10000 + 0x01B21DD213814000 // 100 ns units since 1582-10-15
	msb := ts<<32 | (ts>>16)&0xffff0000 | 0x1000 | (ts>>48)&0x0fff
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, msb), g.clockSeqAndNodeBits)
}

// appendVarint appends v as a minimal two's complement big-endian integer.
func appendVarint(b []byte, v int64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	i := 0
	for i < 7 && (buf[i] == 0 && buf[i+1]&0x80 == 0 || buf[i] == 0xff && buf[i+1]&0x80 != 0) {
		i++
	}
	return append(b, buf[i:]...)
}

// appendCollection is Lists/Sets.java (and maps alike): as many elements
// as the size distribution draws, each an element value of its own seed.
// A set's or map's duplicates and order are the server's to resolve
// (ScyllaDB builds a sorted set of the serialized elements).
func (g *generator) appendCollection(b []byte, seed uint64) []byte {
	n := int(max(0, min(g.size.Sample(keygen.Mix64(seed+g.salt)), 1<<16)))
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	for i := 0; i < n; i++ {
		es := keygen.Mix64(seed*31 + uint64(i))
		if g.elemKey != nil {
			b = appendSized(b, g.elemKey, es)
		}
		b = appendSized(b, g.elem, es)
	}
	return b
}

// appendSized appends g's value of seed with its [int] length in front.
func appendSized(b []byte, g *generator, seed uint64) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b = g.appendValue(b, seed)
	binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}
