package csstress

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator/murmur3"
)

// A key is a row: its key and n columns of the size distribution's mean
// (as the cells draw them), or counter1's counters.
func TestKeyBytesIsARow(t *testing.T) {
	for _, c := range []struct {
		line string
		want float64
	}{
		{acceptanceLine, 10 + 512},
		{"cassandra-stress write -col size=UNIFORM(100..200) n=FIXED(3)", 10 + 3*150},
		{"cassandra-stress write -col size=FIXED(64) names=a,b", 10 + 2*64},
		{"cassandra-stress counter_write -col n=FIXED(5)", 10 + 5*8},
	} {
		m, err := Parse(c.line)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.KeyBytes(); math.Abs(got-c.want) > 0.01*c.want || m.KeyWrites() != 1 {
			t.Errorf("%s: a row is %.1f B in %g writes, want %g B ±1%% in one", c.line, got, m.KeyWrites(), c.want)
		}
	}
}

// A lost row's replicas are looked up by its blob key in hex (nodetool
// style), whose token is the row's.
func TestPartitionKeyIsTheBlobInHex(t *testing.T) {
	m, err := Parse(acceptanceLine)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{0, 7, 12345} {
		kb, err := hex.DecodeString(m.PartitionKey(k))
		if err != nil || len(kb) != m.s.keysize {
			t.Fatalf("key %d: partition key %q is not %d bytes in hex: %v", k, m.PartitionKey(k), m.s.keysize, err)
		}
		if murmur3.Token(kb) != m.Token(k) {
			t.Errorf("key %d: partition key %q has token %d, the row's is %d", k, m.PartitionKey(k), murmur3.Token(kb), m.Token(k))
		}
		if got, ok := indexOf(kb, m.s.keysize); !ok || got != k+1 {
			t.Errorf("key %d: partition key %q is population index %d, want %d", k, kb, got, k+1)
		}
	}
}
