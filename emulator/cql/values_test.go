package cql

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// cqlCompare is the reference CQL order of two serialized values.
func cqlCompare(dt datatype.DataType, a, b []byte) int {
	switch dt {
	case datatype.Bigint:
		return cmp(int64(binary.BigEndian.Uint64(a)), int64(binary.BigEndian.Uint64(b)))
	case datatype.Int:
		return cmp(int64(int32(binary.BigEndian.Uint32(a))), int64(int32(binary.BigEndian.Uint32(b))))
	case datatype.Smallint:
		return cmp(int64(int16(binary.BigEndian.Uint16(a))), int64(int16(binary.BigEndian.Uint16(b))))
	case datatype.Tinyint:
		return cmp(int64(int8(a[0])), int64(int8(b[0])))
	case datatype.Double:
		fa, fb := math.Float64frombits(binary.BigEndian.Uint64(a)), math.Float64frombits(binary.BigEndian.Uint64(b))
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	case datatype.Timeuuid:
		ta := uint64(a[6]&0x0f)<<56 | uint64(a[7])<<48 | uint64(a[4])<<40 | uint64(a[5])<<32 | uint64(binary.BigEndian.Uint32(a[0:4]))
		tb := uint64(b[6]&0x0f)<<56 | uint64(b[7])<<48 | uint64(b[4])<<40 | uint64(b[5])<<32 | uint64(binary.BigEndian.Uint32(b[0:4]))
		switch {
		case ta < tb:
			return -1
		case ta > tb:
			return 1
		}
		return bytes.Compare(a[8:], b[8:])
	}
	return bytes.Compare(a, b) // text, blob
}

func cmp(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sign(x int) int { return cmp(int64(x), 0) }

func randValue(r *rand.Rand, dt datatype.DataType) []byte {
	switch dt {
	case datatype.Bigint, datatype.Double:
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, r.Uint64())
		if dt == datatype.Double {
			f := (r.Float64() - 0.5) * math.Pow(10, float64(r.Intn(20)-10))
			binary.BigEndian.PutUint64(b, math.Float64bits(f))
		}
		return b
	case datatype.Int:
		return binary.BigEndian.AppendUint32(nil, r.Uint32())
	case datatype.Smallint:
		return binary.BigEndian.AppendUint16(nil, uint16(r.Uint32()))
	case datatype.Tinyint:
		return []byte{byte(r.Uint32())}
	case datatype.Timeuuid:
		b := make([]byte, 16)
		r.Read(b)
		b[6] = b[6]&0x0f | 0x10
		return b
	}
	b := make([]byte, r.Intn(4))
	for i := range b {
		b[i] = []byte{0, 1, 0xff, 'a'}[r.Intn(4)]
	}
	return b
}

func TestClusteringEncodingOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	types := []datatype.DataType{datatype.Bigint, datatype.Int, datatype.Smallint, datatype.Tinyint, datatype.Double, datatype.Timeuuid, datatype.Varchar, datatype.Blob}
	for _, dt := range types {
		for _, desc := range []bool{false, true} {
			for i := 0; i < 2000; i++ {
				a, b := randValue(r, dt), randValue(r, dt)
				if i%10 == 0 {
					b = append([]byte(nil), a...)
				}
				// A second component checks self-delimiting prefixes.
				ea, err := clusteringAppend(nil, dt, a, desc)
				if err != nil {
					t.Fatal(err)
				}
				eb, _ := clusteringAppend(nil, dt, b, desc)
				want := sign(cqlCompare(dt, a, b))
				if desc {
					want = -want
				}
				ea2, _ := clusteringAppend(append([]byte(nil), ea...), datatype.Int, []byte{0, 0, 0, 9}, false)
				eb2, _ := clusteringAppend(append([]byte(nil), eb...), datatype.Int, []byte{0, 0, 0, 1}, false)
				if got := sign(bytes.Compare(ea, eb)); got != want {
					t.Fatalf("%s desc=%v: compare(%x, %x) = %d, want %d", typeName(dt), desc, a, b, got, want)
				}
				if want != 0 && sign(bytes.Compare(ea2, eb2)) != want {
					t.Fatalf("%s desc=%v: second component changed the order of %x, %x", typeName(dt), desc, a, b)
				}
				v, rest, err := clusteringNext(ea2, dt, desc)
				if err != nil || !bytes.Equal(v, a) || len(rest) != 4 {
					t.Fatalf("%s desc=%v: decode(%x) = %x rest %x err %v", typeName(dt), desc, ea2, v, rest, err)
				}
			}
		}
	}
}

func TestCompositeKey(t *testing.T) {
	if got := compositeKey([][]byte{{1, 2}}); !bytes.Equal(got, []byte{1, 2}) {
		t.Fatalf("single: %x", got)
	}
	got := compositeKey([][]byte{{1}, {2, 3}})
	if !bytes.Equal(got, []byte{0, 1, 1, 0, 0, 2, 2, 3, 0}) {
		t.Fatalf("composite: %x", got)
	}
}

func FuzzClusteringNext(f *testing.F) {
	f.Add([]byte{0x80, 0, 0, 1, 'a', 0, 1}, false)
	f.Add([]byte{0, 0xff, 0}, true)
	types := []datatype.DataType{datatype.Bigint, datatype.Int, datatype.Double, datatype.Uuid, datatype.Timeuuid, datatype.Varchar, datatype.Boolean}
	f.Fuzz(func(t *testing.T, b []byte, desc bool) {
		for _, dt := range types {
			v, rest, err := clusteringNext(b, dt, desc)
			if err != nil {
				continue
			}
			if len(rest) > len(b) {
				t.Fatalf("rest grew")
			}
			// What decodes must re-encode to the bytes consumed.
			enc, err := clusteringAppend(nil, dt, v, desc)
			if err != nil {
				t.Fatalf("%s: re-encoding %x: %v", typeName(dt), v, err)
			}
			if !bytes.Equal(enc, b[:len(b)-len(rest)]) && dt != datatype.Timeuuid && dt != datatype.Uuid && dt != datatype.Double {
				t.Fatalf("%s: %x decoded to %x re-encodes to %x", typeName(dt), b, v, enc)
			}
		}
	})
}

// Decimals and varints cluster by numeric value (types.cc decimal and
// varint compare): the encoding orders as big.Rat does, numerically equal
// representations (1230, 1.23E+3) encode alike, and decoding gives the
// value back (in its canonical representation). Frozen lists order
// element by element, a prefix first.
func TestNumericAndCollectionClusteringOrder(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	randDecimal := func() []byte {
		u := big.NewInt(r.Int63n(2001) - 1000)
		if r.Intn(4) == 0 {
			u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(r.Intn(30))), nil))
		}
		scale := int32(r.Intn(41) - 20)
		return append(binary.BigEndian.AppendUint32(nil, uint32(scale)), varintBytes(u)...)
	}
	rat := func(v []byte) *big.Rat {
		u, scale, _ := decimalParts(v)
		x := new(big.Rat).SetInt(u)
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(scale)), nil))
		if scale > 0 {
			return x.Quo(x, p)
		}
		return x.Mul(x, p)
	}
	for _, desc := range []bool{false, true} {
		for i := 0; i < 3000; i++ {
			a, b := randDecimal(), randDecimal()
			ea, err := clusteringAppend(nil, datatype.Decimal, a, desc)
			if err != nil {
				t.Fatal(err)
			}
			eb, _ := clusteringAppend(nil, datatype.Decimal, b, desc)
			want := rat(a).Cmp(rat(b))
			if desc {
				want = -want
			}
			if got := sign(bytes.Compare(ea, eb)); got != want {
				t.Fatalf("decimal desc=%v: %v vs %v compare %d, want %d", desc, rat(a), rat(b), got, want)
			}
			v, rest, err := clusteringNext(append(ea, 7), datatype.Decimal, desc)
			if err != nil || rat(v).Cmp(rat(a)) != 0 || len(rest) != 1 {
				t.Fatalf("decimal desc=%v: decode %v = %x rest %x err %v", desc, rat(a), v, rest, err)
			}
		}
	}
	x, _ := clusteringAppend(nil, datatype.Varint, []byte{0x00, 0x05}, false) // a non-minimal 5
	y, _ := clusteringAppend(nil, datatype.Varint, []byte{0x05}, false)
	z, _ := clusteringAppend(nil, datatype.Varint, []byte{0xff}, false) // -1
	if !bytes.Equal(x, y) || bytes.Compare(z, y) >= 0 {
		t.Errorf("varint: 0x0005 %x, 0x05 %x, -1 %x", x, y, z)
	}
	list := func(vs ...int32) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(vs)))
		for _, v := range vs {
			out = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(out, 4), uint32(v))
		}
		return out
	}
	lt := &datatype.List{ElementType: datatype.Int}
	ordered := [][]byte{list(), list(-5), list(-5, 3), list(1), list(1, 2, 3), list(2)}
	var prev []byte
	for _, l := range ordered {
		e, err := clusteringAppend(nil, lt, l, true)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && bytes.Compare(e, prev) >= 0 {
			t.Errorf("frozen list %x does not sort (DESC) before the previous one", l)
		}
		if v, _, err := clusteringNext(e, lt, true); err != nil || !bytes.Equal(v, l) {
			t.Errorf("frozen list %x decodes to %x %v", l, v, err)
		}
		prev = e
	}
	st := &datatype.Set{ElementType: datatype.Int}
	if got, _ := normalizeSet(st, list(3, 1, 3, 2)); !bytes.Equal(got, list(1, 2, 3)) {
		t.Errorf("set {3, 1, 3, 2} normalizes to %x, want {1, 2, 3}", got)
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
