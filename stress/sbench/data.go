package sbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// maxRowSize bounds -clustering-row-size: a row far above it could not be
// written in one mutation (ScyllaDB's commitlog takes at most half a
// 32 MiB segment).
const maxRowSize = 16 << 20

// sizeDist is scylla-bench's -clustering-row-size (random/random.go:
// Fixed, and Uniform over [Min, Max)). scylla-bench draws a size per write
// at random; here a row's size is a hash of its pk and ck, so every write
// of a row writes the same value and data validation can regenerate it.
type sizeDist struct{ min, max int64 } // max == min: fixed

// parseSizeDist mirrors main.go's DistributionValue.Set and
// random.ParseDistribution: a bare number (at least 1), fixed:N, fixed(N),
// uniform:A..B or uniform(A..B) with A <= B.
func parseSizeDist(s string, validate bool) (sizeDist, error) {
	var d sizeDist
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1 {
			return d, errors.New("value for fixed distribution is invalid: value has to be positive")
		}
		d = sizeDist{n, n}
	} else {
		var perr error
		if d, perr = parseDistribution(s); perr != nil {
			return d, perr
		}
	}
	switch {
	case d.max > maxRowSize:
		return d, fmt.Errorf("%d bytes is more than a row can be (%d)", d.max, maxRowSize)
	case validate && d.min < 1:
		return d, errors.New("validate-data needs rows of at least 1 byte (its value starts with its size)")
	}
	return d, nil
}

// parseDistribution is random.ParseDistribution for the sizes.
func parseDistribution(s string) (sizeDist, error) {
	var typ, val string
	if i := strings.IndexByte(s, '('); i > 0 {
		j := strings.IndexByte(s, ')')
		if j < i || j != len(s)-1 {
			return sizeDist{}, errors.New("missing parameter list end delimiter ')'")
		}
		typ, val = s[:i], s[i+1:j]
	} else if i := strings.IndexByte(s, ':'); i > 0 {
		typ, val = s[:i], s[i+1:]
	} else {
		return sizeDist{}, errors.New("missing parameter list start delimiter '(' or ':' (a size, fixed:N or uniform:MIN..MAX)")
	}
	switch strings.ToLower(typ) {
	case "fixed":
		n, err := strconv.ParseUint(val, 10, 32)
		if err != nil {
			return sizeDist{}, errors.New("value for fixed distribution is invalid")
		}
		return sizeDist{int64(n), int64(n)}, nil
	case "uniform":
		lo, hi, ok := strings.Cut(val, "..")
		if !ok {
			return sizeDist{}, errors.New("interval for uniform distribution has invalid format, expected: min..max")
		}
		a, err1 := strconv.ParseUint(lo, 10, 32)
		b, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil {
			return sizeDist{}, errors.New("min or max of the uniform distribution is invalid")
		}
		if b < a {
			return sizeDist{}, errors.New("interval for uniform distribution is invalid: min > max")
		}
		return sizeDist{int64(a), int64(b)}, nil
	}
	return sizeDist{}, fmt.Errorf("unsupported distribution: %s (fixed, uniform)", typ)
}

// forRow is the size of row (pk, ck): in [min, max) as scylla-bench's
// Uniform.Generate (min when min == max).
func (d sizeDist) forRow(pk, ck int64) int {
	if d.max == d.min {
		return int(d.min)
	}
	h := keygen.Mix64(uint64(pk)*0x9e3779b97f4a7c15 ^ keygen.Mix64(uint64(ck)))
	return int(d.min + int64(h%uint64(d.max-d.min)))
}

func (d sizeDist) String() string {
	if d.min == d.max {
		return strconv.FormatInt(d.min, 10) + " B"
	}
	return fmt.Sprintf("uniform %d..%d B", d.min, d.max)
}

// The value layout of -validate-data, modes.go: a header of the size, pk
// and ck, a payload and a CRC32C of the payload.
const (
	generatedDataHeaderSize = 24
	checksumSize            = 4
	generatedDataMinSize    = 57
)

var crc32cTable = crc32.MakeTable(crc32.Castagnoli)

// generateData writes row (pk, ck)'s value into buf (its length is the
// size), as modes.go's GenerateData: with validate, the self-checking
// layout; else, unless zeros, fillPayload's per-row pattern; zeros: the
// legacy all-zero blob (-no-random-data).
func generateData(buf []byte, pk, ck int64, validate, zeros bool) {
	clear(buf)
	size := len(buf)
	switch {
	case !validate:
		if !zeros {
			fillPayload(buf, pk, ck)
			ensureNonZero(buf)
		}
	case size < generatedDataHeaderSize:
		// Small format: [size byte] [pk^ck bytes, truncated to fit].
		buf[0] = byte(int8(size))
		if size > 1 {
			var x [8]byte
			binary.LittleEndian.PutUint64(x[:], uint64(pk^ck))
			copy(buf[1:], x[:])
		}
	default:
		binary.LittleEndian.PutUint64(buf[0:8], uint64(size))
		binary.LittleEndian.PutUint64(buf[8:16], uint64(pk))
		binary.LittleEndian.PutUint64(buf[16:24], uint64(ck))
		if size >= generatedDataMinSize {
			end := size - checksumSize
			fillPayload(buf[generatedDataHeaderSize:end], pk, ck)
			binary.LittleEndian.PutUint32(buf[end:], crc32.Checksum(buf[generatedDataHeaderSize:end], crc32cTable))
		} // else: medium format, header and zeros
	}
}

// fillPayload is modes.go's: xorshift64 from a seed of pk and ck.
func fillPayload(buf []byte, pk, ck int64) {
	state := uint64(pk)*6364136223846793005 ^ uint64(ck)*1442695040888963407
	if state == 0 {
		state = 1
	}
	i := 0
	for ; i+8 <= len(buf); i += 8 {
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		binary.LittleEndian.PutUint64(buf[i:i+8], state)
	}
	if i < len(buf) {
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		for j := i; j < len(buf); j++ {
			buf[j] = byte(state)
			state >>= 8
		}
	}
}

// ensureNonZero is modes.go's: a short tail can come out all zeros.
func ensureNonZero(buf []byte) {
	if len(buf) == 0 || len(buf) >= 8 {
		return
	}
	for _, b := range buf {
		if b != 0 {
			return
		}
	}
	buf[0] = 1
}

// validateData is modes.go's ValidateData: the value's stored size, then
// small and medium values regenerated and compared, full ones by their
// pk, ck and checksum. scratch is reused for the regeneration.
func validateData(pk, ck int64, data []byte, scratch *[]byte) error {
	size := len(data)
	var stored int64
	switch {
	case size < 1:
		return errors.New("data too short to contain size byte")
	case size < generatedDataHeaderSize:
		stored = int64(int8(data[0]))
	default:
		stored = int64(binary.LittleEndian.Uint64(data[0:8]))
	}
	if int64(size) != stored {
		return fmt.Errorf("actual size of value (%d) doesn't match size stored in value (%d)", size, stored)
	}
	if size < generatedDataMinSize {
		want := grow(scratch, size)
		generateData(want, pk, ck, true, false)
		if !bytes.Equal(data, want) {
			return fmt.Errorf("actual value doesn't match expected value: expected %x, actual %x", want, data)
		}
		return nil
	}
	if p := int64(binary.LittleEndian.Uint64(data[8:16])); p != pk {
		return fmt.Errorf("actual pk (%d) doesn't match pk stored in value (%d)", pk, p)
	}
	if c := int64(binary.LittleEndian.Uint64(data[16:24])); c != ck {
		return fmt.Errorf("actual ck (%d) doesn't match ck stored in value (%d)", ck, c)
	}
	end := size - checksumSize
	if got, want := binary.LittleEndian.Uint32(data[end:]), crc32.Checksum(data[generatedDataHeaderSize:end], crc32cTable); got != want {
		return fmt.Errorf("corrupt checksum or data: calculated checksum (%08x) doesn't match stored checksum (%08x)", want, got)
	}
	return nil
}

// validateCounters is modes.go's executeReadsQuery check of a counter row:
// every update adds ck, ck+1 ... ck+4, so after n updates c1 = ck·n and
// c2..c5 = c1 + n, c1 + 2n ...
func validateCounters(ck int64, c *[5]int64) error {
	var n int64
	if ck == 0 {
		n = c[1]
	} else {
		n = c[0] / ck
	}
	if c[0] != ck*n || c[1] != c[0]+n || c[2] != c[0]+2*n || c[3] != c[0]+3*n || c[4] != c[0]+4*n {
		return fmt.Errorf("counter data corruption: ck %d holds %v", ck, *c)
	}
	return nil
}

// grow returns (*buf)[:n], growing it if needed.
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return (*buf)[:n]
}

// parseCL mirrors main.go's -consistency-level values.
func parseCL(s string) (gocql.Consistency, error) {
	switch strings.ToLower(s) {
	case "any":
		return gocql.Any, nil
	case "one":
		return gocql.One, nil
	case "two":
		return gocql.Two, nil
	case "three":
		return gocql.Three, nil
	case "quorum":
		return gocql.Quorum, nil
	case "all":
		return gocql.All, nil
	case "local_quorum":
		return gocql.LocalQuorum, nil
	case "each_quorum":
		return gocql.EachQuorum, nil
	case "local_one":
		return gocql.LocalOne, nil
	}
	return 0, fmt.Errorf("unknown consistency level %q (any, one, two, three, quorum, all, local_quorum, each_quorum, local_one)", s)
}
