package stress

import (
	"context"
	"slices"
	"testing"

	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// drawn runs ops operations of loader i's share of j through the engine's
// seq mapping (globalSeq) and its key picker, as a bound model would, and
// returns the keys its writes chose.
func drawn(t *testing.T, j Job, i, n, ops int) []int64 {
	t.Helper()
	w, err := j.Share(i, n).Workload()
	if err != nil {
		t.Fatal(err)
	}
	b := w.binding()
	keys, err := NewKeyPicker(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	op := globalSeq(func(_ context.Context, _ int, seq uint64) error {
		got = append(got, keys.WriteKey(seq))
		return nil
	}, b)
	for seq := uint64(0); seq < uint64(ops); seq++ {
		_ = op(context.Background(), opWrite, seq)
	}
	return got
}

// Two loaders sharing a job draw their own keys: random keys differ and
// together are the single loader's draws, a sequential range and new keys
// are covered once; a job alone keeps today's stream.
func TestSharesDrawTheirOwnKeys(t *testing.T) {
	j := DefaultJob()
	j.Hosts, j.Keys = []string{"h"}, 1000
	alone := drawn(t, j, 0, 1, 40)
	for seq, k := range alone {
		if want := int64(keygen.Mix64(uint64(seq)) % 1000); k != want {
			t.Fatalf("alone: op %d drew key %d, today's stream %d", seq, k, want)
		}
	}
	a, b := drawn(t, j, 0, 2, 20), drawn(t, j, 1, 2, 20)
	if slices.Equal(a, b) {
		t.Fatalf("both loaders drew %v", a)
	}
	both := slices.Concat(a, b)
	slices.Sort(both)
	sorted := slices.Clone(alone)
	slices.Sort(sorted)
	if !slices.Equal(both, sorted) {
		t.Fatalf("uniform: the loaders drew %v together, one loader alone %v", both, sorted)
	}

	for _, c := range []struct {
		dist string
		keys int64
	}{{"sequential", 10}, {"sequential", 11}, {"uniform", 0}} {
		j.Distribution, j.Keys = c.dist, c.keys
		ops := int(max(c.keys, 10))
		var all []int64
		for i := range 2 {
			mine := (ops + 1 - i) / 2 // new keys: i, i+2 ...
			if c.keys > 0 {
				_, part := keygen.Part(0, c.keys, i, 2) // a sequential range: its own part
				mine = int(part)
			}
			all = append(all, drawn(t, j, i, 2, mine)...)
		}
		slices.Sort(all)
		for k, got := range all {
			if got != int64(k) {
				t.Fatalf("%s over %d keys: two loaders wrote %v, want each of 0..%d once", c.dist, c.keys, all, ops-1)
			}
		}
	}
}

// Job.Share marks the loader, which the stress command's flags carry.
func TestShareCarriesTheLoader(t *testing.T) {
	j := DefaultJob()
	j.Hosts = []string{"h"}
	s := j.Share(2, 3)
	got, err := ParseJob(s.Args())
	if err != nil || got.Loader != 2 || got.Loaders != 3 {
		t.Fatalf("share 2 of 3 decoded as loader %d of %d (%v)", got.Loader, got.Loaders, err)
	}
	if _, err := ParseJob(append(j.Args(), "--loader=3", "--loaders=3")); err == nil {
		t.Fatal("--loader 3 of --loaders 3 accepted")
	}
}
