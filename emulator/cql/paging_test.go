package cql_test

import (
	"slices"
	"testing"

	"github.com/gocql/gocql"
)

// A page that is full carries a paging state even when no row follows,
// and the request for the next page gets an empty page without one: the
// pager is exhausted only by a short page or by the query's LIMIT
// (service/pager/query_pagers.cc query_pager::handle_result, `_exhausted =
// (replica_row_count < page_size && !short_read) || _max == 0`). Clients
// that page by hand until a short page (test/cqlpy's paging tests) loop
// forever when a full last page comes without a state.
func TestFullLastPageHasPagingState(t *testing.T) {
	_, s, exec := memorySession(t, "paging", "127.0.1.242:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, x int, PRIMARY KEY (p, c))`)
	exec(`CREATE INDEX ON ks.t (x)`)
	for c := 0; c < 6; c++ {
		exec(`INSERT INTO ks.t (p, c, x) VALUES (1, ?, 3)`, c)
		exec(`INSERT INTO ks.t (p, c, x) VALUES (?, 0, 3)`, 10+c)
	}
	// pages returns the sizes of the pages a client reading pages of n
	// until one is short gets, and whether each came with a paging state.
	pages := func(q string, n int) (sizes []int, states []bool) {
		t.Helper()
		var state []byte
		for len(sizes) < 20 {
			iter := s.Query(q).PageSize(n).PageState(state).Iter()
			state = iter.PageState()
			sizes, states = append(sizes, iter.NumRows()), append(states, len(state) > 0)
			if err := iter.Close(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if len(state) == 0 {
				break
			}
		}
		return sizes, states
	}
	for _, c := range []struct {
		q      string
		n      int
		sizes  []int
		states []bool
	}{
		// One partition, 6 rows in pages of 3: two full pages, then an empty one.
		{`SELECT c FROM ks.t WHERE p = 1`, 3, []int{3, 3, 0}, []bool{true, true, false}},
		{`SELECT c FROM ks.t WHERE p = 1`, 4, []int{4, 2}, []bool{true, false}},
		// LIMIT reached on a full page: no state (_max == 0).
		{`SELECT c FROM ks.t WHERE p = 1 LIMIT 3`, 3, []int{3}, []bool{false}},
		{`SELECT c FROM ks.t WHERE p = 1 LIMIT 5`, 3, []int{3, 2}, []bool{true, false}},
		// A scan (12 rows) and a query by a secondary index (12 rows).
		{`SELECT p, c FROM ks.t`, 4, []int{4, 4, 4, 0}, []bool{true, true, true, false}},
		{`SELECT p, c FROM ks.t LIMIT 8`, 4, []int{4, 4}, []bool{true, false}},
		{`SELECT p FROM ks.t WHERE x = 3`, 6, []int{6, 6, 0}, []bool{true, true, false}},
	} {
		sizes, states := pages(c.q, c.n)
		if !slices.Equal(sizes, c.sizes) || !slices.Equal(states, c.states) {
			t.Errorf("%s in pages of %d: sizes %v states %v, want %v %v", c.q, c.n, sizes, states, c.sizes, c.states)
		}
	}
	// Reading through the driver's iterator still gets every row once.
	iter := s.Query(`SELECT p, c FROM ks.t`).PageSize(3).Consistency(gocql.One).Iter()
	seen := map[[2]int]bool{}
	var p, c int
	for iter.Scan(&p, &c) {
		if seen[[2]int{p, c}] {
			t.Errorf("row (%d, %d) twice", p, c)
		}
		seen[[2]int{p, c}] = true
	}
	if err := iter.Close(); err != nil || len(seen) != 12 {
		t.Errorf("scan in pages of 3: %d rows, %v", len(seen), err)
	}
}
