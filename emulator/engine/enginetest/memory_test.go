package enginetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

func setup(t *testing.T) *Memory {
	t.Helper()
	m := NewMemory("c")
	ctx := context.Background()
	if _, err := m.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: &engine.Keyspace{Name: "ks", Replication: map[string]string{"class": "x"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateTable, Table: &engine.Table{Keyspace: "ks", Name: "t",
		Columns: []engine.Column{{Name: "k", Type: "blob", Kind: engine.PartitionKey}, {Name: "c", Type: "blob", Kind: engine.Clustering}, {Name: "v", Type: "blob", Kind: engine.Regular, Position: -1}}}}); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMemoryRows(t *testing.T) {
	m := setup(t)
	ctx := context.Background()
	w := func(c string, v string, ts int64, ttl time.Duration) {
		t.Helper()
		if err := m.Write(ctx, []engine.Mutation{{Keyspace: "ks", Table: "t", PartitionKey: []byte("p"), Clustering: []byte(c), Cells: map[string][]byte{"v": []byte(v)}, Timestamp: ts, TTL: ttl}}, engine.Quorum); err != nil {
			t.Fatal(err)
		}
	}
	read := func(prefix string, limit int) []engine.Row {
		t.Helper()
		rows, err := m.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: []byte("p"), ClusteringPrefix: []byte(prefix), Limit: limit}, engine.One)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	w("b", "1", 10, 0)
	w("a", "2", 10, 0)
	w("ab", "3", 10, 0)
	w("b", "old", 5, 0) // loses to the newer cell
	w("c", "gone", 10, time.Nanosecond)
	time.Sleep(time.Millisecond)
	rows := read("", 0)
	if len(rows) != 3 || string(rows[0].Clustering) != "a" || string(rows[1].Clustering) != "ab" || string(rows[2].Cells["v"]) != "1" {
		t.Fatalf("rows: %+v", rows)
	}
	if rows := read("a", 0); len(rows) != 2 {
		t.Fatalf("prefix: %+v", rows)
	}
	if rows := read("", 1); len(rows) != 1 {
		t.Fatalf("limit: %+v", rows)
	}
	if err := m.Write(ctx, []engine.Mutation{{Keyspace: "ks", Table: "t", PartitionKey: []byte("p"), Clustering: []byte("a"), Delete: true, Timestamp: 20}}, engine.One); err != nil {
		t.Fatal(err)
	}
	if rows := read("", 0); len(rows) != 2 {
		t.Fatalf("after row delete: %+v", rows)
	}
	if err := m.Write(ctx, []engine.Mutation{{Keyspace: "ks", Table: "nosuch", PartitionKey: []byte("p")}}, engine.One); err == nil {
		t.Fatal("write to unknown table accepted")
	}
	if err := m.Truncate(ctx, "ks", "t"); err != nil {
		t.Fatal(err)
	}
	if rows := read("", 0); len(rows) != 0 {
		t.Fatalf("after truncate: %+v", rows)
	}
}

func TestMemorySchema(t *testing.T) {
	m := NewMemory("c")
	ch, cancel := m.Subscribe()
	defer cancel()
	v0 := m.Schema().Version
	ctx := context.Background()
	ks := engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: &engine.Keyspace{Name: "ks"}}
	if _, err := m.ApplySchema(ctx, ks); err != nil {
		t.Fatal(err)
	}
	if m.Schema().Version == v0 {
		t.Fatal("schema version unchanged")
	}
	if ev := <-ch; ev.Kind != engine.SchemaChanged || ev.Change.Keyspace.Name != "ks" {
		t.Fatalf("event %+v", ev)
	}
	_, err := m.ApplySchema(ctx, ks)
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Code != engine.CodeAlreadyExists {
		t.Fatalf("duplicate keyspace: %v", err)
	}
	ks.IfNotExists = true
	if _, err := m.ApplySchema(ctx, ks); err != nil {
		t.Fatal(err)
	}
	// Equal content gives an equal version (as on every node of a cluster).
	other := NewMemory("c")
	if _, err := other.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: &engine.Keyspace{Name: "ks"}}); err != nil {
		t.Fatal(err)
	}
	if other.Schema().Version != m.Schema().Version {
		t.Fatal("schema versions differ for equal schemas")
	}
	if _, err := m.ApplySchema(ctx, engine.SchemaChange{Kind: engine.DropKeyspace, KeyspaceName: "ks"}); err != nil {
		t.Fatal(err)
	}
	if m.Schema().Keyspaces["ks"] != nil {
		t.Fatal("keyspace not dropped")
	}
}

func TestNull(t *testing.T) {
	n := NewNull()
	ctx := context.Background()
	if err := n.Write(ctx, []engine.Mutation{{Keyspace: "x", Table: "y"}}, engine.All); err != nil {
		t.Fatal(err)
	}
	if rows, err := n.Read(ctx, engine.Read{Keyspace: "x", Table: "y"}, engine.All); err != nil || rows != nil {
		t.Fatal(rows, err)
	}
}
