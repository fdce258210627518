package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The mutations of a partition that one of them deletes are applied in
// the order given (the CQL layer's order of a batch: its deletions before
// the later writes they do not cover, as ScyllaDB applies one merged
// mutation per partition, batch_statement.cc). They were each written
// concurrently, so a partition deletion at t and a write at t+1 of one
// batch left the write or nothing, at random (test/cqlpy
// test_static_and_regular_index_operations).
func TestBatchDeletionThenWriteOfOnePartition(t *testing.T) {
	var log syncBuf
	n := openConfigured(t, memberConfig("127.0.48.1", "rack1", t.TempDir(), &log), nil)
	t.Cleanup(func() { n.Close() })
	createTableRF(t, n, 0, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lost := 0
	for i := range 200 {
		pk := []byte(fmt.Sprintf("p%d", i))
		ms := []engine.Mutation{
			{Keyspace: "ks", Table: "t", PartitionKey: pk, Delete: true, Timestamp: 100},
			{Keyspace: "ks", Table: "t", PartitionKey: pk, Cells: map[string][]byte{"v": []byte("6")}, Timestamp: 101},
			// another partition's write, in parallel
			{Keyspace: "ks", Table: "t", PartitionKey: append(pk, 'x'), Cells: map[string][]byte{"v": []byte("7")}, Timestamp: 101},
		}
		if err := n.Write(ctx, ms, engine.One); err != nil {
			t.Fatal(err)
		}
		for _, k := range [][]byte{pk, append(pk, 'x')} {
			rows, err := n.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: k}, engine.One)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of 200 batches lost a write that followed the deletion of its partition", lost)
	}
}
