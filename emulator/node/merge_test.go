package node

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRowMergerMatchesMergeCells: whichever way Pebble feeds a key's
// operands (Merge with the newest then MergeOlder, as compactions and reads
// do, or MergeNewer), the merged row holds the same cells, the winner of
// compareCells per cell: with the newer timestamp winning and ties broken
// by whichever operand came last, the two orders disagreed.
func TestRowMergerMatchesMergeCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randomRow := func() []byte {
		var cs []cell
		for _, name := range []string{"a", "b", "c"} {
			if rng.IntN(4) == 0 {
				continue
			}
			c := cell{Name: name, TS: int64(rng.IntN(4)), Value: []byte(fmt.Sprint(rng.IntN(1000)))}
			switch rng.IntN(10) {
			case 0:
				c.Null, c.Value = true, nil
			case 1:
				c.Expiry = int64(rng.IntN(3))
				if c.Expiry != 0 {
					c.TTL = int64(rng.IntN(3))
				}
			}
			cs = append(cs, c)
		}
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		return encodeRow(nil, cs)
	}
	show := func(b []byte) string {
		cs, err := decodeRow(b)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(cs, func(x, y cell) int { return strings.Compare(x.Name, y.Name) })
		return fmt.Sprintf("%+v", cs)
	}
	for range 5000 {
		n := 2 + rng.IntN(3)
		ops := make([][]byte, n) // newest first
		for i := range ops {
			ops[i] = randomRow()
		}
		// What mergeCells makes of them, oldest first (the newer added
		// later wins ties, as Pebble's newer operand does).
		var want []cell
		for i := n - 1; i >= 0; i-- {
			cs, _ := decodeRow(ops[i])
			want = mergeCells(want, cs)
		}
		wantS := show(encodeRow(nil, want))

		finish := func(m *rowMerger) string {
			b, _, err := m.Finish(true)
			if err != nil {
				t.Fatal(err)
			}
			return show(b)
		}
		// Newest first, then older ones.
		m := &rowMerger{only: slices.Clone(ops[0])}
		for _, o := range ops[1:] {
			buf := slices.Clone(o)
			if err := m.MergeOlder(buf); err != nil {
				t.Fatal(err)
			}
			clear(buf) // Pebble may reuse an operand's buffer
		}
		if got := finish(m); got != wantS {
			t.Fatalf("newest first %v:\n got  %s\n want %s", ops, got, wantS)
		}
		// Oldest first, then newer ones.
		m = &rowMerger{only: slices.Clone(ops[n-1])}
		for i := n - 2; i >= 0; i-- {
			buf := slices.Clone(ops[i])
			if err := m.MergeNewer(buf); err != nil {
				t.Fatal(err)
			}
			clear(buf)
		}
		if got := finish(m); got != wantS {
			t.Fatalf("oldest first %v:\n got  %s\n want %s", ops, got, wantS)
		}
	}
}

// TestCompareCellsAsScylla: ties of write timestamps break as
// compare_atomic_cell_for_merge (mutation/atomic_cell.cc) breaks them.
func TestCompareCellsAsScylla(t *testing.T) {
	live := func(ts int64, v string) cell { return cell{Name: "v", TS: ts, Value: []byte(v)} }
	for _, c := range []struct {
		what   string
		winner cell
		loser  cell
	}{
		{"the newer write", live(2, "a"), live(1, "z")},
		{"a tombstone over a live cell", cell{Name: "v", TS: 1, Null: true}, live(1, "z")},
		{"an expiring cell over a non-expiring one", cell{Name: "v", TS: 1, Expiry: 5, Value: []byte("a")}, live(1, "z")},
		{"the later expiry", cell{Name: "v", TS: 1, Expiry: 6, Value: []byte("a")}, cell{Name: "v", TS: 1, Expiry: 5, Value: []byte("z")}},
		// cqlpy test_using_timestamp.py
		// test_rewrite_different_values_using_same_timestamp_and_expiration.
		{"the lower TTL on equal expiries", cell{Name: "v", TS: 1, Expiry: 5, TTL: 2, Value: []byte("a")}, cell{Name: "v", TS: 1, Expiry: 5, TTL: 3, Value: []byte("z")}},
		{"the larger value", live(1, "b"), live(1, "a")},
		{"the later deletion", cell{Name: "v", TS: 1, Null: true, Expiry: 9}, cell{Name: "v", TS: 1, Null: true, Expiry: 8}},
	} {
		if compareCells(c.winner, c.loser) <= 0 || compareCells(c.loser, c.winner) >= 0 {
			t.Errorf("%s: %+v should beat %+v", c.what, c.winner, c.loser)
		}
		for _, order := range [][]cell{{c.winner, c.loser}, {c.loser, c.winner}} {
			if got := mergeCells([]cell{order[0]}, []cell{order[1]}); compareCells(got[0], c.winner) != 0 {
				t.Errorf("%s: merging %+v gave %+v", c.what, order, got)
			}
		}
	}
}

// TestRowMergerKeepsTTL: a cell's TTL survives the row encoding and decides
// a merge of two cells with equal timestamps and expiries, as
// compare_atomic_cell_for_merge (mutation/atomic_cell.cc) decides it.
func TestRowMergerKeepsTTL(t *testing.T) {
	older := encodeRow(nil, []cell{{Name: "v", TS: 1000, Expiry: 100, TTL: 3, Value: []byte{2}}})
	newer := encodeRow(nil, []cell{{Name: "v", TS: 1000, Expiry: 100, TTL: 2, Value: []byte{1}}})
	for _, ops := range [][2][]byte{{newer, older}, {older, newer}} {
		m := &rowMerger{only: slices.Clone(ops[0])}
		if err := m.MergeOlder(slices.Clone(ops[1])); err != nil {
			t.Fatal(err)
		}
		b, _, err := m.Finish(true)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := decodeRow(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].TTL != 2 || string(cs[0].Value) != "\x01" {
			t.Errorf("merged %+v, want the TTL 2 cell with value 1", cs)
		}
	}
}
