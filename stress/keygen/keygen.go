// Package keygen generates the keys and values of the load generator
// without locks or allocations on the hot path: randomness is derived from
// the operation's sequence number (splitmix64), so any number of workers can
// draw keys concurrently and a run is reproducible.
package keygen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// Distribution draws keys in [0, n).
type Distribution interface {
	// Key returns the key of operation seq among n keys (n > 0).
	Key(seq uint64, n int64) int64
	String() string
}

// Distribution names accepted by Parse.
const (
	Sequential = "sequential"
	Uniform    = "uniform"
	Gaussian   = "gaussian"
)

// Parse reads a distribution spec:
//
//	sequential        keys 0, 1, 2 ... wrapping at n (also "seq")
//	uniform           every key equally likely (the default for "")
//	gaussian          normal around a centre that moves one key per operation through the
//	                  key space, stddev n/10 (cassandra-stress gaussian(1..n,5), made to sweep)
//	gaussian(S)       the same with stddev n/(2*S)
//	gaussian(M%,S%)   normal with a fixed centre at M% of the keys and stddev S% of them,
//	                  clamped to the keys: cassandra-stress gauss(1..n,mean,stdev), as
//	                  SCT's elasticity tests read a hot set with gauss(1..180M,90M,1.8M)
//	                  of 360M keys: gaussian(25%,0.5%)
func Parse(spec string) (Distribution, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	switch {
	case s == "" || s == Uniform:
		return uniform{}, nil
	case s == Sequential || s == "seq":
		return &sequential{}, nil
	case s == Gaussian:
		return gaussian{stdvrng: 5}, nil
	case strings.HasPrefix(s, Gaussian+"(") && strings.HasSuffix(s, ")"):
		args := s[len(Gaussian)+1 : len(s)-1]
		if strings.Contains(args, ",") {
			return parseFixedGaussian(spec, args)
		}
		v, err := strconv.ParseFloat(args, 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return nil, fmt.Errorf("key distribution %q: the argument must be a positive number of standard deviations per half range", spec)
		}
		return gaussian{stdvrng: v}, nil
	}
	return nil, fmt.Errorf("unknown key distribution %q (want sequential, uniform, gaussian, gaussian(S) or gaussian(M%%,S%%))", spec)
}

// parseFixedGaussian reads gaussian(M%,S%)'s arguments: a centre in [0%, 100%]
// and a stddev in (0%, 100%] of the keys.
func parseFixedGaussian(spec, args string) (Distribution, error) {
	m, sd, _ := strings.Cut(args, ",")
	mean, errM := percentArg(m)
	std, errS := percentArg(sd)
	if errM != nil || errS != nil || mean < 0 || mean > 1 || std <= 0 || std > 1 {
		return nil, fmt.Errorf("key distribution %q: want gaussian(M%%,S%%), a centre M in [0%%, 100%%] and a standard deviation S in (0%%, 100%%] of the keys, e.g. gaussian(50%%,1%%)", spec)
	}
	return fixedGaussian{mean: mean, std: std}, nil
}

// percentArg reads "12.5%" as 0.125; the % is required so that a fraction
// cannot be mistaken for gaussian(S)'s standard deviations.
func percentArg(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	return v / 100, nil
}

// Mix64 is splitmix64's finaliser: a well-mixed 64-bit hash of x.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit returns a uniform float in [0, 1) from a hash.
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

type uniform struct{}

func (uniform) Key(seq uint64, n int64) int64 { return int64(Mix64(seq) % uint64(n)) }
func (uniform) String() string                { return Uniform }

// sequential hands out keys in order with its own counter, so that the keys
// of one operation type are consecutive even when types interleave; a
// loader's (ForLoader) walks its own part of the n keys.
type sequential struct {
	next        atomic.Int64
	part, parts int
}

func (s *sequential) Key(_ uint64, n int64) int64 {
	start, size := Part(0, n, s.part, s.parts)
	return start + (s.next.Add(1)-1)%size
}
func (s *sequential) String() string { return Sequential }

type gaussian struct{ stdvrng float64 }

// normal is a standard normal draw for seq: Box-Muller from two independent
// hashes of it.
func normal(seq uint64) float64 {
	u1 := unit(Mix64(seq ^ 0xa5a5a5a5a5a5a5a5))
	u2 := unit(Mix64(seq + 0x1234567))
	if u1 < 1e-300 {
		u1 = 1e-300
	}
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func (g gaussian) Key(seq uint64, n int64) int64 {
	z := normal(seq)
	std := float64(n) / (2 * g.stdvrng)
	centre := int64(seq % uint64(n))
	k := (centre + int64(math.Round(z*std))) % n
	if k < 0 {
		k += n
	}
	return k
}

// fixedGaussian is cassandra-stress's GAUSSIAN(min..max,mean,stdev) over the
// n keys (generate/DistributionBoundApache: a draw outside the bounds is
// clamped to them), with mean and stdev as shares of n so that the scaled
// fill of an emulated node keeps the real one's hot set.
type fixedGaussian struct{ mean, std float64 }

func (g fixedGaussian) Key(seq uint64, n int64) int64 {
	k := int64(math.Round(float64(n)*g.mean + normal(seq)*float64(n)*g.std))
	return min(max(k, 0), n-1)
}

func (g fixedGaussian) String() string {
	return fmt.Sprintf("gaussian(%g%%,%g%%)", 100*g.mean, 100*g.std)
}

func (g gaussian) String() string {
	if g.stdvrng == 5 {
		return Gaussian
	}
	return fmt.Sprintf("gaussian(%g)", g.stdvrng)
}

// Values hands out value payloads of a fixed or ranged size. Payloads are
// windows into one shared random buffer: no allocation per operation, and
// callers must not modify them (the CQL driver copies them into its frame).
type Values struct {
	min, max int
	buf      []byte
}

// NewValues returns payloads of sizes uniformly distributed in [min, max].
func NewValues(minSize, maxSize int) (*Values, error) {
	if minSize < 0 || maxSize < minSize {
		return nil, fmt.Errorf("value size range %d..%d is invalid", minSize, maxSize)
	}
	if maxSize > 64<<20 {
		return nil, fmt.Errorf("value size %d is above the 64 MiB limit", maxSize)
	}
	// Twice the maximum gives distinct windows; random bytes make values incompressible.
	buf := make([]byte, 2*maxSize+64)
	for i := 0; i < len(buf); i += 8 {
		h := Mix64(uint64(i) ^ 0xfeedface)
		for j := 0; j < 8 && i+j < len(buf); j++ {
			buf[i+j] = byte(h >> (8 * j))
		}
	}
	return &Values{min: minSize, max: maxSize, buf: buf}, nil
}

// ForKey returns key's payload: a function of the key alone, so that every
// write of a key stores the same bytes and a reader can recompute what a
// key must hold (data validation tells a wrong value from a right one).
func (v *Values) ForKey(key int64) []byte { return v.window(Mix64(uint64(key) ^ 0x6b65792d76616c)) }

// window picks a payload's size and offset from the hash h.
func (v *Values) window(h uint64) []byte {
	size := v.min
	if v.max > v.min {
		size += int(h % uint64(v.max-v.min+1))
	}
	off := int((h >> 32) % uint64(v.max+1))
	return v.buf[off : off+size : off+size]
}

// Range returns the configured size range.
func (v *Values) Range() (minSize, maxSize int) { return v.min, v.max }

// ParseSize reads a byte size such as 1024, 1KiB, 4kb, 1MiB or 2M (binary multiples).
func ParseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1
	for _, suf := range []struct {
		s string
		m int
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"k", 1 << 10}, {"m", 1 << 20}, {"b", 1}} {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.s)), suf.m
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > (64<<20)/mult {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional KiB or MiB suffix, at most 64 MiB", s)
	}
	return n * mult, nil
}

// ParseSizeRange reads "1KiB" (fixed) or "512..4KiB" / "512-4096" (ranged).
func ParseSizeRange(s string) (minSize, maxSize int, err error) {
	sep := ".."
	if !strings.Contains(s, sep) {
		sep = "-"
	}
	if a, b, ok := strings.Cut(s, sep); ok {
		if minSize, err = ParseSize(a); err != nil {
			return 0, 0, err
		}
		if maxSize, err = ParseSize(b); err != nil {
			return 0, 0, err
		}
		if maxSize < minSize {
			return 0, 0, fmt.Errorf("size range %q: maximum below minimum", s)
		}
		return minSize, maxSize, nil
	}
	n, err := ParseSize(s)
	return n, n, err
}

// ForLoader is d as loader i of n loaders that share one job draws it. The
// engine hands every model the job's global sequence number (loader i's
// k-th operation is the job's k·n+i-th, GlobalSeq), so the distributions
// that are a function of seq already differ between loaders and together
// draw the single loader's stream; the sequential one counts on its own,
// and loader i walks its own contiguous part of the keys (Part), as SCT
// splits a `-pop seq=` range between its loaders (sdcm/tester.py
// populate_data_parallel) and runs scylla-bench with a -partition-offset
// per loader. n <= 1: d itself, today's stream.
func ForLoader(d Distribution, i, n int) Distribution {
	if n <= 1 {
		return d
	}
	if _, ok := d.(*sequential); ok {
		return &sequential{part: i, parts: n}
	}
	return d
}

// GlobalSeq is the job's sequence number of loader i of n's seq-th
// operation: the loaders' operations interleave in the job's sequence.
func GlobalSeq(seq uint64, i, n int) uint64 {
	if n <= 1 {
		return seq
	}
	return seq*uint64(n) + uint64(i)
}

// Part is loader i of n's contiguous part of the count values from lo:
// its first value and how many it has. The parts cover lo..lo+count-1 once
// (the last loaders take one more when count does not divide: SCT's split
// drops the remainder, which would leave values nobody draws); a loader
// whose part is empty (count < n) gets value lo + i%count alone.
func Part(lo, count int64, i, n int) (start, size int64) {
	if n <= 1 || count <= 0 {
		return lo, count
	}
	a := count * int64(i) / int64(n)
	b := count * int64(i+1) / int64(n)
	if b == a {
		return lo + int64(i)%count, 1
	}
	return lo + a, b - a
}
