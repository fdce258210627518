package sbench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// A key is a partition: its pk and clustering-row-count rows of ck and a
// value of clustering-row-size (its rows' mean within 1%), written in
// batches of up to 64 KiB.
func TestKeyBytesIsAPartition(t *testing.T) {
	m := mustParse(t, "mode=write,clustering-row-count=1000,clustering-row-size=uniform:64..1024")
	var total int64
	const parts = 200
	for pk := int64(0); pk < parts; pk++ {
		total += 8
		for ck := int64(0); ck < 1000; ck++ {
			total += 8 + int64(m.size.forRow(pk, ck))
		}
	}
	got := float64(total) / parts
	if est := m.KeyBytes(); math.Abs(est-got) > 0.01*got {
		t.Errorf("a partition is estimated at %.0f B, its rows hold %.0f B on average", est, got)
	}
	// 64 rows of up to 1024 B a batch: 16 for 1000 rows.
	if w := m.KeyWrites(); w != 16 {
		t.Errorf("a partition is written in %g requests, want 16", w)
	}
	if c := mustParse(t, "mode=counter_update,clustering-row-count=10"); c.KeyBytes() != 8+10*(8+5*8) {
		t.Errorf("a counter partition is %g B, want pk, and 10 rows of ck and five counters", c.KeyBytes())
	}
}

// With partition-offset, key k is pk offset+k: a lost key's replicas are
// looked up for that pk, and its token is that pk's.
func TestLostKeyLookupNamesTheOffsetPK(t *testing.T) {
	m := mustParse(t, "mode=write,partition-offset=1000,clustering-row-count=3,clustering-row-size=16")
	s := node(t)
	prepare(t, s, m, 20)
	if err := s.Query("DELETE FROM scylla_bench.test WHERE pk = ?", int64(1007)).Exec(); err != nil {
		t.Fatal(err)
	}
	var tok int64
	if err := s.Query("SELECT token(pk) FROM scylla_bench.test WHERE pk = ?", int64(1008)).Scan(&tok); err != nil {
		t.Fatal(err)
	}
	if tok != m.Token(8) || m.PartitionKey(8) != "1008" {
		t.Errorf("key 8: token %d and partition key %s, want pk 1008's token %d", m.Token(8), m.PartitionKey(8), tok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var asked []string
	v, err := stress.Validate(ctx, s, stress.Check{Rows: m, Keys: 20, Sample: -1, Ranges: -1, CL: gocql.One, After: results.ValidationFinal,
		Replicas: func(_ context.Context, pk string) ([]string, error) {
			asked = append(asked, pk)
			return []string{"node-1"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Missing != 1 || len(v.Examples) != 1 || v.Examples[0] != 7 || len(asked) != 1 || asked[0] != "1007" {
		t.Errorf("partition 1007 deleted: missing %d, examples %v, replicas asked for %v; want key 7 missing, pk 1007 looked up", v.Missing, v.Examples, asked)
	}
}
