package profile

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"
)

// Token range queries mirror cassandra-stress's TokenRangeQuery
// (operations/userdefined/TokenRangeQuery.java, TokenRangeIterator.java,
// StressProfile.loadTokenRangesV3): one operation reads one page of
// page_size rows of a token range, `SELECT token(pk...), <columns> FROM t
// WHERE token(pk...) > start AND token(pk...) <= end`; the next operation
// of the scan reads its next page, and once a range is exhausted the scan
// takes the next range of the cluster's ring. The ranges are the ring's
// (every node's tokens, sorted; the range that wraps around split at the
// ends of the token space, as the driver's TokenRange.unwrap does).
//
// Where this differs: cassandra-stress keeps a scan per client thread and
// stops when every range was read unless -tokenrange wrap is given; here
// scans in progress are shared by the workers (any worker continues one),
// and the ranges are always re-used in order (a run is bounded by its
// phases, not by a count of operations). -tokenrange split-factor is a
// command-line option, which the profile form does not have: the ring's
// ranges are read as they are. The bounds are bind markers of a prepared
// statement, not literals in a new statement per range.

// TokenRangeQuery is one token_range_queries entry (StressYaml.TokenRangeQueryDef).
type TokenRangeQuery struct {
	Name     string
	Columns  string // the columns read; "*" for all the table's
	PageSize int    // rows per operation; default 5000
	Line     int    // of its name
	// columnsLine is the YAML line of columns (its errors').
	columnsLine int
}

// scanQuery is a token range query bound to the profile's table.
type scanQuery struct {
	TokenRangeQuery
	CQL string // two markers: the range's start (exclusive) and end (inclusive)
}

// scanCQL is q's statement: TokenRangeQuery.buildQuery with markers for
// the bounds, its columns' "*" replaced by the table's columns
// (sanitizeColumns: the token column comes first).
func (p *Profile) scanCQL(q TokenRangeQuery) (*scanQuery, error) {
	t := p.table
	cols := q.Columns
	if cols == "*" {
		var names []string
		for _, c := range t.cols {
			names = append(names, c.name)
		}
		cols = strings.Join(names, ", ")
	}
	var pk []string
	for _, c := range t.pk {
		pk = append(pk, c.name)
	}
	token := "token(" + strings.Join(pk, ", ") + ")"
	cql := fmt.Sprintf("SELECT %s, %s FROM %s.%s WHERE %s > ? AND %s <= ?", token, cols, strings.ToLower(p.Keyspace), p.Table, token, token)
	if _, err := parseCQL(cql); err != nil {
		return nil, fmt.Errorf("columns %q: %v", q.Columns, err)
	}
	return &scanQuery{TokenRangeQuery: q, CQL: cql}, nil
}

// tokenRange is (start, end] on the Murmur3 ring.
type tokenRange struct{ start, end int64 }

// ringRanges are the ranges between the sorted tokens: (t[i-1], t[i]],
// and the wrapping one unwrapped into (t[last], max] and (min, t[0]]
// (none when t[0] is the minimum token: a range (t, t] is the whole ring
// to the database). No tokens: the whole ring, (min, max].
func ringRanges(tokens []int64) []tokenRange {
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	if len(tokens) == 0 {
		return []tokenRange{{math.MinInt64, math.MaxInt64}}
	}
	var out []tokenRange
	if tokens[0] != math.MinInt64 { // (min, min] would be the whole ring, not an empty range
		out = append(out, tokenRange{math.MinInt64, tokens[0]})
	}
	for i := 1; i < len(tokens); i++ {
		out = append(out, tokenRange{tokens[i-1], tokens[i]})
	}
	if last := tokens[len(tokens)-1]; last != math.MaxInt64 {
		out = append(out, tokenRange{last, math.MaxInt64})
	}
	return out
}

// clusterTokens reads every node's tokens as the driver's metadata does
// (system.local and system.peers).
func clusterTokens(s *gocql.Session) ([]int64, error) {
	var out []int64
	for _, q := range []string{"SELECT tokens FROM system.local", "SELECT tokens FROM system.peers"} {
		iter := s.Query(q).Consistency(gocql.One).Iter()
		var toks []string
		for iter.Scan(&toks) {
			for _, t := range toks {
				v, err := strconv.ParseInt(t, 10, 64)
				if err != nil {
					iter.Close()
					return nil, fmt.Errorf("%s: token %q: %w", q, t, err)
				}
				out = append(out, v)
			}
			toks = toks[:0]
		}
		if err := iter.Close(); err != nil {
			return nil, fmt.Errorf("reading the ring's tokens (%s): %w", q, err)
		}
	}
	return out, nil
}

// scans are the token range scans of one operation: the ranges in order,
// the next one to start, and those in progress with their paging state.
type scans struct {
	mu     sync.Mutex
	ranges []tokenRange
	next   int
	open   []scanState
	rows   atomic.Int64 // rows read (TokenRangeQuery's rowCount)
}

// scanState is a range being read and where its next page starts.
type scanState struct {
	r    int
	page []byte
}

// take returns a scan in progress, or starts the next range (wrapping).
func (s *scans) take() scanState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.open); n > 0 {
		st := s.open[n-1]
		s.open = s.open[:n-1]
		return st
	}
	st := scanState{r: s.next}
	s.next = (s.next + 1) % len(s.ranges)
	return st
}

// put gives back a scan with pages left.
func (s *scans) put(st scanState) {
	s.mu.Lock()
	s.open = append(s.open, st)
	s.mu.Unlock()
}

// scanOp reads one page of a token range for operation typ.
func (e *engine) scanOp(w *worker, typ int) error {
	sc := e.scans[typ]
	st := sc.take()
	r := sc.ranges[st.r]
	as := w.qargs[typ]
	as[0].B = binary.BigEndian.AppendUint64(as[0].B[:0], uint64(r.start))
	as[1].B = binary.BigEndian.AppendUint64(as[1].B[:0], uint64(r.end))
	iter := w.queries[typ].PageState(st.page).Iter()
	next := append([]byte(nil), iter.PageState()...)
	sc.rows.Add(int64(iter.NumRows()))
	if err := iter.Close(); err != nil {
		sc.put(st) // the next operation reads the page again
		return err
	}
	if len(next) > 0 {
		sc.put(scanState{r: st.r, page: next})
	}
	return nil
}

// loaderRanges are loader i of n's share of the ring's ranges: every n-th
// from the i-th, so the loaders of one job scan the ring once between them
// (as the loaders' keys are split, stress.Binding.Loader), spread over the
// ring; with fewer ranges than loaders, the i%len-th alone. n <= 1: all.
func loaderRanges(ranges []tokenRange, i, n int) []tokenRange {
	if n <= 1 || len(ranges) == 0 {
		return ranges
	}
	if len(ranges) < n {
		return []tokenRange{ranges[i%len(ranges)]}
	}
	var out []tokenRange
	for k := i; k < len(ranges); k += n {
		out = append(out, ranges[k])
	}
	return out
}

// prepareScans reads the ring's ranges once for the token range queries
// (StressProfile.maybeLoadTokenRanges), each of which scans them in order.
func (e *engine) prepareScans() error {
	e.scans = make([]*scans, len(e.m.ops))
	var ranges []tokenRange
	for i, o := range e.m.ops {
		if o.scan == nil {
			continue
		}
		if ranges == nil {
			tokens, err := clusterTokens(e.s)
			if err != nil {
				return fmt.Errorf("profile: token range query %s: %w", o.Name, err)
			}
			ranges = loaderRanges(ringRanges(tokens), e.loader, e.loaders)
		}
		e.scans[i] = &scans{ranges: ranges}
	}
	return nil
}
