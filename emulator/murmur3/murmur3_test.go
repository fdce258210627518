package murmur3

import (
	"encoding/binary"
	"testing"
)

// Known tokens of Cassandra's and ScyllaDB's Murmur3Partitioner: an int
// partition key 1 has token -4069959284402364209 (the value cqlsh shows for
// SELECT token(k) FROM t WHERE k = 1); the empty key hashes to 0
// (dht/murmur3_partitioner.cc drops Cassandra's empty-key special case).
func TestToken(t *testing.T) {
	one := binary.BigEndian.AppendUint32(nil, 1)
	if got := Token(one); got != -4069959284402364209 {
		t.Errorf("token(int 1) = %d, want -4069959284402364209", got)
	}
	if got := Token(nil); got != 0 {
		t.Errorf("token(empty) = %d, want 0", got)
	}
}

// Hashes of Cassandra's MurmurHash3 x64 128 (first 64 bits).
func TestMurmur3MatchesCassandra(t *testing.T) {
	for s, want := range map[string]uint64{
		"hello":                     0xcbd8a7b341bd9b02,
		"hello, world":              0x342fac623a5ebc8e,
		"19 Jan 2038 at 3:14:07 AM": 0xb89e5988b737affc,
		"The quick brown fox jumps over the lazy dog.": 0xcd99481f9ee902c9,
	} {
		if got := uint64(Murmur3H1([]byte(s))); got != want {
			t.Errorf("Murmur3H1(%q) = %x, want %x", s, got, want)
		}
	}
}
