package csstress

import (
	"math"

	"github.com/elasticity-dev/elasticity/stress/csdist"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// Keys: cassandra-stress's predefined key is keysize (default 10) bytes of
// hex characters generated from the population index (HexBytes over
// "randomstrkey"). Here the index is first permuted within the 4·keysize
// bits the hex digits hold (a bijection: distinct indexes give distinct
// keys, spread over the token ring), then written low nibble first with
// HexBytes's own digits: (v < 10 ? '0' : 'A') + v, so 10..15 are K..P.

// keyBits is the number of bits the hex digits of a key hold.
func keyBits(keysize int) uint { return uint(4 * min(keysize, 16)) }

// maxIndex is the largest population index a key of keysize bytes holds distinctly.
func maxIndex(keysize int) int64 {
	if keyBits(keysize) >= 63 {
		return math.MaxInt64
	}
	return int64(1)<<keyBits(keysize) - 1
}

// permute is a bijection of the n-bit integers (multiplication by an odd
// constant and xor-shifts are each invertible modulo 2^n).
func permute(x uint64, n uint) uint64 {
	mask := ^uint64(0)
	if n < 64 {
		mask = uint64(1)<<n - 1
	}
	x &= mask
	x = (x * 0x9e3779b97f4a7c15) & mask
	x ^= x >> (n/2 + 1)
	x = (x * 0xbf58476d1ce4e5b9) & mask
	x ^= x >> (n/3 + 1)
	return x & mask
}

// putKey writes the key of population index into dst (len keysize).
func putKey(dst []byte, index int64) {
	x := permute(uint64(index), keyBits(len(dst)))
	v := x
	for i := range dst {
		if i > 0 && i%16 == 0 { // beyond 16 digits: more digits derived from the first 16
			v = keygen.Mix64(x + uint64(i))
		}
		d := byte(v & 15)
		if d < 10 {
			dst[i] = '0' + d
		} else {
			dst[i] = 'A' + d // HexBytes: 'A' + v, not 'A' + v - 10
		}
		v >>= 4
	}
}

// cells hands out the cell values of the predefined tables: a function of
// the population index and the column alone (every write of a row stores
// the same bytes, so rows are regenerable), sizes drawn from -col size=.
// Values are windows into one shared random buffer: no allocation per
// operation; callers must not modify them.
type cells struct {
	size csdist.Dist
	max  int64 // size's largest
	buf  []byte
}

func newCells(size csdist.Dist) *cells {
	_, hi := size.Bounds()
	buf := make([]byte, 2*hi+64)
	for i := 0; i < len(buf); i += 8 {
		h := keygen.Mix64(uint64(i) ^ 0x63732d7374726573)
		for j := 0; j < 8 && i+j < len(buf); j++ {
			buf[i+j] = byte(h >> (8 * j))
		}
	}
	return &cells{size: size, max: hi, buf: buf}
}

// cellHash is the hash of one cell.
func cellHash(index int64, col int) uint64 {
	return keygen.Mix64(uint64(index)*0x9e3779b97f4a7c15 ^ uint64(col+1)*0xd1b54a32d192ed03)
}

// value is the value of column col of the row of population index.
func (c *cells) value(index int64, col int) []byte {
	h := cellHash(index, col)
	n := c.size.Sample(h)
	off := (h >> 32) % uint64(c.max+1)
	return c.buf[off : off+uint64(n) : off+uint64(n)]
}

// unpermute inverts permute.
func unpermute(x uint64, n uint) uint64 {
	mask := ^uint64(0)
	if n < 64 {
		mask = uint64(1)<<n - 1
	}
	x = unxorshift(x, n/3+1) & mask
	x = (x * inverseOdd(0xbf58476d1ce4e5b9)) & mask
	x = unxorshift(x, n/2+1) & mask
	return (x * inverseOdd(0x9e3779b97f4a7c15)) & mask
}

// unxorshift inverts x ^= x >> s.
func unxorshift(x uint64, s uint) uint64 {
	y := x
	for i := uint(0); i < 64/s+1; i++ {
		y = x ^ (y >> s)
	}
	return y
}

// inverseOdd is the inverse of odd c modulo 2^64 (Newton's iteration).
func inverseOdd(c uint64) uint64 {
	inv := c
	for i := 0; i < 6; i++ {
		inv *= 2 - c*inv
	}
	return inv
}

// indexOf is the population index of a key putKey wrote; ok is false for
// any other key.
func indexOf(key []byte, keysize int) (int64, bool) {
	if len(key) != keysize {
		return 0, false
	}
	var x uint64
	for i := min(keysize, 16) - 1; i >= 0; i-- {
		c := key[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'K' && c <= 'P':
			d = c - 'A'
		default:
			return 0, false
		}
		x = x<<4 | uint64(d)
	}
	idx := int64(unpermute(x, keyBits(keysize)))
	if keysize > 16 { // the digits beyond 16 must be the index's own
		var buf [64]byte
		check := buf[:0]
		if keysize > len(buf) {
			check = make([]byte, keysize)
		} else {
			check = buf[:keysize]
		}
		putKey(check, idx)
		if string(check) != string(key) {
			return 0, false
		}
	}
	return idx, idx >= 0
}
