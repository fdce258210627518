package stress

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/murmur3"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// Check validates the rows a fill wrote: keys 0..Keys-1, each holding
// keygen's value for the key (the workload's overwrites write the same
// value), read back at CL one by one (a sample) and by scanning token
// ranges end to end.
type Check struct {
	Keyspace, Table    string
	Keys               int64
	ValueMin, ValueMax int
	// Unacked reports keys whose write failed: missing, they are not lost.
	Unacked func(key int64) bool
	// Sample keys are read one by one, spread over the key space; < 0 or
	// at least Keys reads every key.
	Sample int64
	// Ranges of results.RingParts are scanned end to end, spread over the
	// ring; < 0 or at least RingParts scans the whole ring.
	Ranges int
	CL     gocql.Consistency
	// Concurrency of the sample's reads (default 32).
	Concurrency int
	// Replicas, when set, names the nodes that own a key (the replicas of
	// its token); asked for at most MaxReplicaLookups lost keys.
	Replicas func(ctx context.Context, key int64) ([]string, error)
	// After names when the check runs ("final" or a step), for the record.
	After string
}

// MaxReplicaLookups bounds the replica lookups of one validation.
const MaxReplicaLookups = 100

// maxExamples is how many lost keys a validation lists.
const maxExamples = 20

// readAttempts is how often one read or one range scan is tried.
const readAttempts = 3

// KeyToken is the Murmur3 token of a bigint partition key, as ScyllaDB and
// the drivers compute it (the emulator's murmur3 package is a copy of
// gocql's internal one, and a pure function: no emulator behaviour is used).
func KeyToken(key int64) int64 {
	return murmur3.Token(binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(key)))
}

// lossSet collects lost keys by kind (a key found wrong by the sample and
// the scan counts once).
type lossSet struct {
	mu       sync.Mutex
	missing  map[int64]bool
	mismatch map[int64]bool
	errors   int64
	firstErr error
}

func (l *lossSet) add(key int64, missing bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if missing {
		l.missing[key] = true
	} else {
		l.mismatch[key] = true
	}
}

func (l *lossSet) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors++
	if l.firstErr == nil {
		l.firstErr = err
	}
}

// Validate runs the check on session s. Its error is a setup problem (no
// keys, a bad table name); read failures are counted in the result.
func Validate(ctx context.Context, s *gocql.Session, c Check) (results.Validation, error) {
	start := time.Now()
	v := results.Validation{Time: start.UTC(), After: c.After, Consistency: c.CL.String(), Keys: c.Keys}
	if s == nil {
		return v, errors.New("validate: nil session")
	}
	if err := errors.Join(checkIdent("keyspace", c.Keyspace), checkIdent("table", c.Table)); err != nil {
		return v, fmt.Errorf("validate: %w", err)
	}
	if c.ValueMin == 0 && c.ValueMax == 0 {
		c.ValueMin, c.ValueMax = 1024, 1024
	}
	vals, err := keygen.NewValues(c.ValueMin, max(c.ValueMin, c.ValueMax))
	if err != nil {
		return v, fmt.Errorf("validate: %w", err)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 32
	}
	if c.Unacked == nil {
		c.Unacked = func(int64) bool { return false }
	}
	ls := &lossSet{missing: map[int64]bool{}, mismatch: map[int64]bool{}}
	ranges := map[int]*results.RangeCheck{}
	rangeOf := func(i int) *results.RangeCheck {
		r := ranges[i]
		if r == nil {
			first, last := results.RingPart(i)
			r = &results.RangeCheck{Index: i, First: first, Last: last}
			ranges[i] = r
		}
		return r
	}
	for k := int64(0); k < c.Keys; k++ {
		if c.Unacked(k) {
			v.Unacked++
		}
	}

	// The scans: expected keys of each scanned part, then what came back.
	parts := scannedParts(c.Ranges)
	if c.Keys > 0 && len(parts) > 0 {
		want := map[int][]int64{}
		scanned := map[int]bool{}
		for _, p := range parts {
			scanned[p] = true
		}
		for k := int64(0); k < c.Keys; k++ {
			if p := results.RingPartOf(KeyToken(k)); scanned[p] {
				want[p] = append(want[p], k)
			}
		}
		for _, p := range parts {
			r := rangeOf(p)
			r.Scanned = true
			found, err := scanPart(ctx, s, c, vals, r, ls)
			if err != nil {
				if ctx.Err() != nil {
					return v, ctx.Err()
				}
				ls.fail(fmt.Errorf("scanning tokens %d..%d: %w", r.First, r.Last, err))
				v.Incomplete = true
				continue
			}
			for _, k := range want[p] {
				if c.Unacked(k) {
					continue
				}
				r.Expected++
				if !found[k] {
					ls.add(k, true)
				}
			}
			v.ScanExpected += r.Expected
			v.ScannedRows += r.Found
			v.ScannedRanges++
		}
	}

	// The sample: keys spread evenly over 0..Keys-1, read one by one.
	keys := sampleKeys(c.Keys, c.Sample)
	v.SampleKeys = int64(len(keys))
	if len(keys) > 0 {
		if err := readSample(ctx, s, c, vals, keys, ls); err != nil {
			return v, err
		}
		v.Incomplete = v.Incomplete || ls.errors > 0
	}

	// Per range and per replica.
	lost := make([]int64, 0, len(ls.missing)+len(ls.mismatch))
	for k := range ls.missing {
		lost = append(lost, k)
	}
	for k := range ls.mismatch {
		if !ls.missing[k] {
			lost = append(lost, k)
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	for _, k := range lost {
		// Each lost key counts once in its range, whether the sample, the
		// scan or both found it.
		r := rangeOf(results.RingPartOf(KeyToken(k)))
		if ls.missing[k] {
			r.Missing++
		} else {
			r.Mismatched++
		}
	}
	v.Missing, v.Mismatched = int64(len(ls.missing)), 0
	for k := range ls.mismatch {
		if !ls.missing[k] {
			v.Mismatched++
		}
	}
	v.Examples = lost[:min(len(lost), maxExamples)]
	if c.Replicas != nil && len(lost) > 0 {
		byNode := map[string]*results.NodeLoss{}
		for _, k := range lost[:min(len(lost), MaxReplicaLookups)] {
			nodes, err := c.Replicas(ctx, k)
			if err != nil {
				break
			}
			v.ReplicasLookedUp++
			for _, n := range nodes {
				nl := byNode[n]
				if nl == nil {
					nl = &results.NodeLoss{Node: n}
					byNode[n] = nl
				}
				if ls.missing[k] {
					nl.Missing++
				} else {
					nl.Mismatched++
				}
			}
		}
		for _, nl := range byNode {
			v.Nodes = append(v.Nodes, *nl)
		}
		sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].Node < v.Nodes[j].Node })
	}
	for _, r := range ranges {
		v.Ranges = append(v.Ranges, *r)
	}
	sort.Slice(v.Ranges, func(i, j int) bool { return v.Ranges[i].Index < v.Ranges[j].Index })
	v.ReadErrors = ls.errors
	if ls.firstErr != nil {
		v.Error = ls.firstErr.Error()
	}
	v.DurationS = time.Since(start).Seconds()
	return v, nil
}

// scannedParts spreads n scans over the ring's parts (n < 0 or at least
// RingParts: every part).
func scannedParts(n int) []int {
	if n < 0 || n >= results.RingParts {
		n = results.RingParts
	}
	out := make([]int, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, i*results.RingParts/n)
	}
	return out
}

// sampleKeys spreads n keys over 0..keys-1 (n < 0 or at least keys: every key).
func sampleKeys(keys, n int64) []int64 {
	if keys <= 0 || n == 0 {
		return nil
	}
	if n < 0 || n >= keys {
		n = keys
	}
	out := make([]int64, 0, n)
	for i := int64(0); i < n; i++ {
		lo, hi := i*keys/n, (i+1)*keys/n
		out = append(out, lo+int64(keygen.Mix64(uint64(i))%uint64(hi-lo)))
	}
	return out
}

// scanPart reads part r end to end (token(key) >= first AND <= last, paged),
// checks every value and returns the keys found.
func scanPart(ctx context.Context, s *gocql.Session, c Check, vals *keygen.Values, r *results.RangeCheck, ls *lossSet) (map[int64]bool, error) {
	q := fmt.Sprintf("SELECT key, value FROM %s.%s WHERE token(key) >= ? AND token(key) <= ?", c.Keyspace, c.Table)
	var err error
	for attempt := 0; attempt < readAttempts; attempt++ {
		found := map[int64]bool{}
		var wrong []int64
		it := s.Query(q, r.First, r.Last).WithContext(ctx).Consistency(c.CL).PageSize(1000).Iter()
		var key int64
		var val []byte
		for it.Scan(&key, &val) {
			found[key] = true
			if key >= 0 && key < c.Keys && !bytes.Equal(val, vals.ForKey(key)) {
				wrong = append(wrong, key)
			}
		}
		if err = it.Close(); err == nil {
			r.Found = int64(len(found))
			for _, k := range wrong {
				ls.add(k, false)
			}
			return found, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, err
}

// readSample reads keys one by one with c.Concurrency workers.
func readSample(ctx context.Context, s *gocql.Session, c Check, vals *keygen.Values, keys []int64, ls *lossSet) error {
	q := fmt.Sprintf("SELECT value FROM %s.%s WHERE key = ?", c.Keyspace, c.Table)
	next := make(chan int64)
	var wg sync.WaitGroup
	for w := 0; w < c.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				var val []byte
				var err error
				for attempt := 0; attempt < readAttempts; attempt++ {
					if err = s.Query(q, k).WithContext(ctx).Consistency(c.CL).Scan(&val); err == nil || errors.Is(err, gocql.ErrNotFound) || ctx.Err() != nil {
						break
					}
				}
				switch {
				case errors.Is(err, gocql.ErrNotFound):
					if !c.Unacked(k) {
						ls.add(k, true)
					}
				case err != nil:
					if ctx.Err() == nil {
						ls.fail(fmt.Errorf("reading key %s: %w", strconv.FormatInt(k, 10), err))
					}
				case !bytes.Equal(val, vals.ForKey(k)):
					ls.add(k, false)
				}
			}
		}()
	}
	for _, k := range keys {
		select {
		case next <- k:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}
