package cqlarg

import (
	"bytes"
	"testing"
)

// A bigint is 8 bytes big-endian; a blob is its bytes, an empty one the
// empty value, a Null one null whatever it holds.
func TestEncodings(t *testing.T) {
	b := Bigint{V: -2}
	if got, _ := b.MarshalCQL(nil); !bytes.Equal(got, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}) {
		t.Errorf("bigint -2: %x", got)
	}
	v := Blob{B: []byte{}}
	if got, _ := v.MarshalCQL(nil); got == nil || len(got) != 0 {
		t.Errorf("empty blob: %#v", got)
	}
	v = Blob{B: []byte("x"), Null: true}
	if got, _ := v.MarshalCQL(nil); got != nil {
		t.Errorf("null blob: %#v", got)
	}
	if err := DiscardValue.UnmarshalCQL(nil, []byte("y")); err != nil {
		t.Error(err)
	}
}
