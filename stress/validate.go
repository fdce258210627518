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

// Check validates the rows a fill wrote: keys 0..Keys-1, read back at CL
// one by one (a sample) and by scanning token ranges end to end. Rows says
// how a key's rows are read and checked; nil is the built-in key/value
// table Keyspace.Table, each key holding keygen's value for the key (the
// workload's overwrites write the same value) of ValueMin..ValueMax bytes.
type Check struct {
	Keyspace, Table    string
	Keys               int64
	ValueMin, ValueMax int
	// Rows reads back a Regenerable model's keys (nil: the built-in table).
	Rows Validator
	// Unacked reports keys whose write failed: missing or wrong (a key of
	// several rows may be partly written), they are not lost.
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
	// Replicas, when set, names the nodes that own a partition key, given
	// as Validator.PartitionKey says it (nodetool style); asked for at most
	// MaxReplicaLookups lost keys.
	Replicas func(ctx context.Context, partitionKey string) ([]string, error)
	// After names when the check runs ("final" or a step), for the record.
	After string
}

// A Validator reads back and checks the rows of a Regenerable model's keys,
// so one validation (sample, scans, losses by range and replica) serves
// every such model: Validate reads a sampled key with CheckKey and a token
// range with ScanRange. A model implements it to be validated.
type Validator interface {
	// Token is the token of the partition key's rows are in.
	Token(key int64) int64
	// PartitionKey is that partition key in nodetool style (what
	// `nodetool getendpoints` and REST natural_endpoints take: a bigint in
	// decimal, a blob in hex), for the lost keys' replica lookup.
	PartitionKey(key int64) string
	// CheckKey reads key's rows at cl: RowsMissing when none is there,
	// RowsWrong when any differs from what the key regenerates.
	CheckKey(ctx context.Context, s *gocql.Session, cl gocql.Consistency, key int64) (RowState, error)
	// ScanRange reads tokens first..last (inclusive) at cl and calls found
	// for every key it finds rows of (once per key), RowsOK or RowsWrong.
	// A failed scan is retried from the start: found is called again.
	ScanRange(ctx context.Context, s *gocql.Session, cl gocql.Consistency, first, last int64, found func(key int64, st RowState)) error
}

// RowState is what reading a key back found.
type RowState int

// The states of a key read back.
const (
	RowsOK      RowState = iota // every row there, each as the key regenerates it
	RowsMissing                 // no row of the key
	RowsWrong                   // a row differs (or, for a model of several rows per key, is missing)
)

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
	if c.Rows == nil {
		kv, err := newKVRows(c)
		if err != nil {
			return v, fmt.Errorf("validate: %w", err)
		}
		c.Rows = kv
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
			if p := results.RingPartOf(c.Rows.Token(k)); scanned[p] {
				want[p] = append(want[p], k)
			}
		}
		for _, p := range parts {
			r := rangeOf(p)
			r.Scanned = true
			found, err := scanPart(ctx, s, c, r, ls)
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
		if err := readSample(ctx, s, c, keys, ls); err != nil {
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
		r := rangeOf(results.RingPartOf(c.Rows.Token(k)))
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
			nodes, err := c.Replicas(ctx, c.Rows.PartitionKey(k))
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

// scanPart reads part r end to end with c.Rows and returns the keys found;
// found keys of 0..Keys-1 that were wrong are added to ls.
func scanPart(ctx context.Context, s *gocql.Session, c Check, r *results.RangeCheck, ls *lossSet) (map[int64]bool, error) {
	var err error
	for attempt := 0; attempt < readAttempts; attempt++ {
		found := map[int64]bool{}
		var wrong []int64
		err = c.Rows.ScanRange(ctx, s, c.CL, r.First, r.Last, func(key int64, st RowState) {
			found[key] = true
			if st != RowsOK && key >= 0 && key < c.Keys && !c.Unacked(key) {
				wrong = append(wrong, key)
			}
		})
		if err == nil {
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
func readSample(ctx context.Context, s *gocql.Session, c Check, keys []int64, ls *lossSet) error {
	next := make(chan int64)
	var wg sync.WaitGroup
	for w := 0; w < c.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				var st RowState
				var err error
				for attempt := 0; attempt < readAttempts; attempt++ {
					if st, err = c.Rows.CheckKey(ctx, s, c.CL, k); err == nil || ctx.Err() != nil {
						break
					}
				}
				switch {
				case err != nil:
					if ctx.Err() == nil {
						ls.fail(fmt.Errorf("reading key %s: %w", strconv.FormatInt(k, 10), err))
					}
				case st == RowsMissing:
					if !c.Unacked(k) {
						ls.add(k, true)
					}
				case st == RowsWrong && !c.Unacked(k):
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

// kvRows reads back the built-in key/value table: one row per key, its
// value keygen's for the key.
type kvRows struct {
	sel, scan string
	vals      *keygen.Values
}

func newKVRows(c Check) (*kvRows, error) {
	if err := errors.Join(checkIdent("keyspace", c.Keyspace), checkIdent("table", c.Table)); err != nil {
		return nil, err
	}
	if c.ValueMin == 0 && c.ValueMax == 0 {
		c.ValueMin, c.ValueMax = 1024, 1024
	}
	vals, err := keygen.NewValues(c.ValueMin, max(c.ValueMin, c.ValueMax))
	if err != nil {
		return nil, err
	}
	return &kvRows{
		sel:  fmt.Sprintf("SELECT value FROM %s.%s WHERE key = ?", c.Keyspace, c.Table),
		scan: fmt.Sprintf("SELECT key, value FROM %s.%s WHERE token(key) >= ? AND token(key) <= ?", c.Keyspace, c.Table),
		vals: vals,
	}, nil
}

func (*kvRows) Token(key int64) int64 { return KeyToken(key) }

func (*kvRows) PartitionKey(key int64) string { return strconv.FormatInt(key, 10) }

func (r *kvRows) CheckKey(ctx context.Context, s *gocql.Session, cl gocql.Consistency, key int64) (RowState, error) {
	var val []byte
	err := s.Query(r.sel, key).WithContext(ctx).Consistency(cl).Scan(&val)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return RowsMissing, nil
	case err != nil:
		return RowsOK, err
	case !bytes.Equal(val, r.vals.ForKey(key)):
		return RowsWrong, nil
	}
	return RowsOK, nil
}

func (r *kvRows) ScanRange(ctx context.Context, s *gocql.Session, cl gocql.Consistency, first, last int64, found func(int64, RowState)) error {
	it := s.Query(r.scan, first, last).WithContext(ctx).Consistency(cl).PageSize(1000).Iter()
	var key int64
	var val []byte
	for it.Scan(&key, &val) {
		st := RowsOK
		if !bytes.Equal(val, r.vals.ForKey(key)) {
			st = RowsWrong
		}
		found(key, st)
	}
	return it.Close()
}
