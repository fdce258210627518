package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The report of a 10-hour run merges ~72,000 encoded histograms. Decoding
// each into a fresh dense hdrhistogram (a 140 kB counts array plus a new
// inflater) costs ~150 µs; Counts and HDRDecoder add the payload straight
// into reused dense arrays of the latency.jsonl geometry instead.

// Geometry of latency.jsonl histograms (1 µs .. 60 s, 3 digits): unit
// magnitude 0, 1024 half sub-buckets.
const (
	hdrHalfMag   = 10
	hdrHalfCount = 1 << hdrHalfMag
)

var hdrCountsLen = func() int {
	h := NewHDR()
	return len(h.Export().Counts)
}()

// Counts is an accumulator of HDR counts in the latency.jsonl geometry. It
// answers percentiles exactly as hdrhistogram.Histogram.ValueAtPercentile.
type Counts struct {
	c     []int64
	total int64
	lo    int // lowest and highest index touched, to keep Reset and scans short
	hi    int
}

// NewCounts returns an empty accumulator.
func NewCounts() *Counts { return &Counts{c: make([]int64, hdrCountsLen), lo: math.MaxInt, hi: -1} }

// Reset empties the accumulator, keeping its memory.
func (c *Counts) Reset() {
	if c.hi >= c.lo {
		clear(c.c[c.lo : c.hi+1])
	}
	c.total, c.lo, c.hi = 0, math.MaxInt, -1
}

// Total is the number of values recorded.
func (c *Counts) Total() int64 { return c.total }

func (c *Counts) addIdx(i int, n int64) {
	if i >= len(c.c) { // beyond 60 s: clamp into the last bucket rather than lose it
		i = len(c.c) - 1
	}
	c.c[i] += n
	c.total += n
	if i < c.lo {
		c.lo = i
	}
	if i > c.hi {
		c.hi = i
	}
}

// Add adds the counts of o.
func (c *Counts) Add(o *Counts) {
	for i := o.lo; i <= o.hi; i++ {
		if n := o.c[i]; n != 0 {
			c.addIdx(i, n)
		}
	}
}

// Less is a new accumulator of c's counts without o's, which were added
// to c too.
func (c *Counts) Less(o *Counts) *Counts {
	d := NewCounts()
	d.Add(c)
	for i := o.lo; i <= o.hi; i++ {
		d.c[i] -= o.c[i]
		d.total -= o.c[i]
	}
	return d
}

// RecordValues records n occurrences of v microseconds.
func (c *Counts) RecordValues(v, n int64) {
	if v < 0 {
		v = 0
	}
	c.addIdx(hdrIndexOf(v), n)
}

// ValueAt returns the value (µs) at percentile p (0..100), 0 when empty.
func (c *Counts) ValueAt(p float64) int64 {
	if c.total == 0 {
		return 0
	}
	p = math.Max(0, math.Min(p, 100))
	rank := (p/100)*float64(c.total) + 0.5
	var target int64
	switch {
	case !(rank >= 1):
		target = 1
	case rank >= float64(c.total):
		target = c.total
	default:
		target = int64(rank)
	}
	var cum int64
	for i := c.lo; i <= c.hi; i++ {
		cum += c.c[i]
		if cum >= target {
			if p == 0 {
				return hdrValueOf(i)
			}
			return hdrHighestEquivalent(i)
		}
	}
	return hdrHighestEquivalent(c.hi)
}

// MS returns the value at percentile p in milliseconds.
func (c *Counts) MS(p float64) float64 { return float64(c.ValueAt(p)) / 1000 }

func hdrIndexOf(v int64) int {
	const mask = int64(2*hdrHalfCount - 1)
	bucket := 64 - bits.LeadingZeros64(uint64(v|mask)) - (hdrHalfMag + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<hdrHalfMag + sub - hdrHalfCount
}

func hdrValueOf(idx int) int64 {
	bucket := (idx >> hdrHalfMag) - 1
	sub := (idx & (hdrHalfCount - 1)) + hdrHalfCount
	if bucket < 0 {
		sub -= hdrHalfCount
		bucket = 0
	}
	return int64(sub) << uint(bucket)
}

func hdrHighestEquivalent(idx int) int64 {
	bucket := (idx >> hdrHalfMag) - 1
	if bucket < 0 {
		bucket = 0
	}
	return hdrValueOf(idx) + int64(1)<<uint(bucket) - 1
}

// HDRDecoder decodes encoded histograms of latency.jsonl into Counts,
// reusing its buffers and inflater between calls. Not safe for concurrent use.
type HDRDecoder struct {
	raw     []byte
	payload []byte
	zr      io.ReadCloser
	br      bytes.Reader
	pairs   []packedCount
}

// packedCount is one populated bucket: counts index << countBits | count.
// Decoded histograms travel between goroutines as ascending lists of them.
type packedCount uint64

const (
	countBits = 40
	countMask = 1<<countBits - 1
)

// appendCount appends bucket idx with count n (split when n does not fit).
func appendCount(p []packedCount, idx int, n int64) []packedCount {
	for n > countMask {
		p = append(p, packedCount(uint64(idx)<<countBits|countMask))
		n -= countMask
	}
	return append(p, packedCount(uint64(idx)<<countBits|uint64(n)))
}

// addPacked adds an ascending list of buckets.
func (c *Counts) addPacked(p []packedCount) {
	if len(p) == 0 {
		return
	}
	lo, hi := int(p[0]>>countBits), int(p[len(p)-1]>>countBits)
	if hi >= len(c.c) || lo > hi {
		for _, x := range p {
			c.addIdx(int(x>>countBits), int64(x&countMask))
		}
		return
	}
	counts := c.c[:hi+1]
	var total int64
	for _, x := range p {
		n := int64(x & countMask)
		counts[x>>countBits] += n
		total += n
	}
	c.total += total
	c.lo, c.hi = min(c.lo, lo), max(c.hi, hi)
}

// AddTo decodes enc and adds its counts to every dst. An empty enc adds nothing.
func (d *HDRDecoder) AddTo(enc string, dst ...*Counts) error {
	if enc == "" {
		return nil
	}
	if err := d.decode([]byte(enc)); err != nil {
		return fmt.Errorf("decoding HDR histogram: %w", err)
	}
	for _, c := range dst {
		c.addPacked(d.pairs)
	}
	return nil
}

func (d *HDRDecoder) decode(enc []byte) error {
	d.pairs = d.pairs[:0]
	n := base64.StdEncoding.DecodedLen(len(enc))
	if cap(d.raw) < n {
		d.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:n], enc)
	if err != nil {
		return err
	}
	raw := d.raw[:n]
	if len(raw) < 8 {
		return errors.New("encoded histogram too short")
	}
	cookie := int32(binary.BigEndian.Uint32(raw)) &^ 0xf0
	clen := int(int32(binary.BigEndian.Uint32(raw[4:])))
	if cookie != hdrhistogram.V2CompressedEncodingCookieBase {
		return fmt.Errorf("unsupported encoding cookie %#x", cookie)
	}
	if clen < 0 || clen > len(raw)-8 {
		return fmt.Errorf("compressed length %d out of range", clen)
	}
	d.br.Reset(raw[8 : 8+clen])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.br); err != nil {
			return err
		}
	} else if err = d.zr.(zlib.Resetter).Reset(&d.br, nil); err != nil {
		return err
	}
	var hdr [40]byte
	if _, err := io.ReadFull(d.zr, hdr[:]); err != nil {
		return fmt.Errorf("reading header: %w", err)
	}
	plen := int(int32(binary.BigEndian.Uint32(hdr[4:])))
	sig := int32(binary.BigEndian.Uint32(hdr[12:]))
	lowest := int64(binary.BigEndian.Uint64(hdr[16:]))
	if plen < 0 || plen > hdrCountsLen*9+1024 {
		return fmt.Errorf("payload length %d out of range", plen)
	}
	if cap(d.payload) < plen {
		d.payload = make([]byte, plen)
	}
	payload := d.payload[:plen]
	if _, err := io.ReadFull(d.zr, payload); err != nil {
		return fmt.Errorf("reading payload: %w", err)
	}
	if sig != HDRSigFigs || lowest > 1 {
		// Another writer's geometry: take the slow, general path.
		return d.foreign(enc)
	}
	idx := 0
	for len(payload) > 0 {
		v, k := binary.Uvarint(payload)
		if k <= 0 {
			return errors.New("corrupt payload varint")
		}
		payload = payload[k:]
		count := int64(v>>1) ^ -int64(v&1)
		if count < 0 {
			idx += int(-count)
			continue
		}
		if count > 0 {
			d.pairs = appendCount(d.pairs, idx, count)
		}
		idx++
	}
	return nil
}

func (d *HDRDecoder) foreign(enc []byte) error {
	p, err := hdrhistogram.DecodePacked(enc)
	if err != nil {
		return err
	}
	d.pairs = d.pairs[:0]
	for v, n := range p.ForEachBucket {
		d.pairs = appendCount(d.pairs, hdrIndexOf(v), n)
	}
	return nil
}
