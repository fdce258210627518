// Package cqlarg holds the values the workload models bind to reused
// queries: each is bound once and changed before each execution (gocql
// allows re-executing a Query once the previous execution returned), so an
// operation neither boxes its values nor allocates to marshal them.
package cqlarg

import (
	"encoding/binary"

	"github.com/gocql/gocql"
)

// Bigint is a bigint (or counter) value.
type Bigint struct {
	V   int64
	buf [8]byte
}

// MarshalCQL encodes V into the holder's own buffer.
func (a *Bigint) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	binary.BigEndian.PutUint64(a.buf[:], uint64(a.V))
	return a.buf[:], nil
}

// Blob is a value already encoded (a blob's bytes, or any type's
// encoding); a nil B is null, an empty one the empty value. Null binds
// null whatever B holds, so B keeps its buffer for the next value (a value
// column a profile's row-population ratio leaves out).
type Blob struct {
	B    []byte
	Null bool
}

// MarshalCQL returns B as it is, or null.
func (a *Blob) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	if a.Null {
		return nil, nil
	}
	return a.B, nil
}

// Discard reads a column without keeping it.
type Discard struct{}

// UnmarshalCQL drops the value.
func (*Discard) UnmarshalCQL(gocql.TypeInfo, []byte) error { return nil }

// DiscardValue is the Discard scans share (it holds nothing).
var DiscardValue Discard
