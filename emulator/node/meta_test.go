package node

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

func TestTabletIndexAndRangeAgree(t *testing.T) {
	for _, n := range []int{1, 2, 8, 64} {
		tm := &TabletMap{Tablets: make([]Tablet, n)}
		prevLast := int64(0)
		for i := 0; i < n; i++ {
			first, last := tabletRange(i, n)
			if i == 0 && first != -1<<63 {
				t.Fatalf("n=%d: first tablet starts at %d", n, first)
			}
			if i > 0 && first != prevLast+1 {
				t.Fatalf("n=%d: tablet %d starts at %d, previous ended at %d", n, i, first, prevLast)
			}
			prevLast = last
			for _, tok := range []int64{first, last, first/2 + last/2} {
				if got := tm.index(tok); got != i {
					t.Fatalf("n=%d: token %d in tablet %d, index says %d", n, tok, i, got)
				}
			}
		}
		if prevLast != 1<<63-1 {
			t.Fatalf("n=%d: last tablet ends at %d", n, prevLast)
		}
	}
}

func testMeta(nodes ...*NodeMeta) *Meta {
	m := &Meta{Keyspaces: map[string]*engine.Keyspace{}, Tables: map[string]map[string]*engine.Table{}, Nodes: map[string]*NodeMeta{}, Tablets: map[string]*TabletMap{}, Balancing: true}
	for i, n := range nodes {
		n.Since = uint64(i + 1)
		if n.State == "" {
			n.State = engine.StateNormal
		}
		m.Nodes[n.HostID] = n
	}
	return m
}

func TestAllocateTabletsOnePerRackEvenShards(t *testing.T) {
	m := testMeta(
		&NodeMeta{HostID: "a", DC: "dc1", Rack: "r1", Shards: 2},
		&NodeMeta{HostID: "b", DC: "dc1", Rack: "r2", Shards: 2},
		&NodeMeta{HostID: "c", DC: "dc1", Rack: "r3", Shards: 2},
		&NodeMeta{HostID: "d", DC: "dc1", Rack: "r1", Shards: 2},
	)
	ks := &engine.Keyspace{Name: "ks", Replication: map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"}, TabletsEnabled: true}
	tm, err := allocateTablets(m, ks, 16)
	if err != nil {
		t.Fatal(err)
	}
	m.Tablets["x"] = tm
	for i, tb := range tm.Tablets {
		racks := map[string]bool{}
		for _, r := range tb.Replicas {
			racks[m.Nodes[r.Host].Rack] = true
		}
		if len(tb.Replicas) != 3 || len(racks) != 3 {
			t.Fatalf("tablet %d replicas %v: want 3 in distinct racks", i, tb.Replicas)
		}
	}
	load := shardLoad(m)
	// r2 and r3 hold every tablet (16 over 2 shards), r1's two nodes half each.
	for h, want := range map[string][]int{"b": {8, 8}, "c": {8, 8}, "a": {4, 4}, "d": {4, 4}} {
		if fmt.Sprint(load[h]) != fmt.Sprint(want) {
			t.Errorf("host %s shard load %v, want %v", h, load[h], want)
		}
	}
	if _, err := allocateTablets(m, &engine.Keyspace{Replication: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "5"}, TabletsEnabled: true}, 4); err == nil {
		t.Error("RF 5 on 4 nodes: no error")
	}
}

func TestPlanMovesTabletsToNewNodeAndDrainsLeaving(t *testing.T) {
	a := &NodeMeta{HostID: "a", DC: "dc1", Rack: "r1", Shards: 2}
	m := testMeta(a, &NodeMeta{HostID: "b", DC: "dc1", Rack: "r2", Shards: 2}, &NodeMeta{HostID: "c", DC: "dc1", Rack: "r3", Shards: 2})
	ks := &engine.Keyspace{Name: "ks", Replication: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3"}, TabletsEnabled: true}
	tm, _ := allocateTablets(m, ks, 16)
	m.Tablets["x"] = tm
	m.Nodes["d"] = &NodeMeta{HostID: "d", DC: "dc1", Rack: "r1", Shards: 2, State: engine.StateNormal, Since: 9}
	n := &Node{hostID: "a", up: map[string]bool{"b": true, "c": true, "d": true}, migrations: map[string]bool{}}
	v := newView(m)
	moves := n.plan(v, shardLoad(m), map[string]int{})
	if len(moves) == 0 || len(moves) > migrationLimit(m.Nodes["d"]) {
		t.Fatalf("moves %v: want 1..%d (bounded)", moves, migrationLimit(m.Nodes["d"]))
	}
	for _, mv := range moves {
		if mv.from.Host != "a" || mv.to.Host != "d" {
			t.Errorf("move %+v: want a -> d (same rack)", mv)
		}
	}
	// A leaving node is drained before balancing.
	m.Nodes["a"].State = engine.StateLeaving
	moves = n.plan(newView(m), shardLoad(m), map[string]int{})
	for _, mv := range moves {
		if mv.from.Host != "a" || mv.op != "decommission" {
			t.Errorf("move %+v while a is leaving", mv)
		}
	}
}

func TestBlockForAndMergeRows(t *testing.T) {
	for cl, want := range map[engine.Consistency]int{engine.One: 1, engine.Quorum: 2, engine.LocalQuorum: 2, engine.All: 3} {
		if got := blockFor(cl, 3); got != want {
			t.Errorf("blockFor(%s, 3) = %d, want %d", cl, got, want)
		}
	}
	rows := mergeRows([][]engine.Row{
		{{Clustering: []byte{1}, Timestamp: 5, Cells: map[string][]byte{"v": []byte("old")}}},
		{{Clustering: []byte{1}, Timestamp: 9, Cells: map[string][]byte{"v": []byte("new")}}, {Clustering: []byte{0}, Timestamp: 1}},
	}, 0)
	if len(rows) != 2 || rows[0].Clustering[0] != 0 || string(rows[1].Cells["v"]) != "new" {
		t.Errorf("merged rows %+v", rows)
	}
}

// Single-row answers merge without a map exactly as any answers do: the
// newest row, the first of equally new ones; answers of several rows or of
// different clustering keys go the general way.
func TestSingleRowAnswersMergeAsAnyDo(t *testing.T) {
	row := func(ck byte, ts int64, v string) []engine.Row {
		return []engine.Row{{Clustering: []byte{ck}, Timestamp: ts, Cells: map[string][]byte{"v": []byte(v)}}}
	}
	for i, sets := range [][][]engine.Row{
		{row(1, 5, "a"), row(1, 9, "b")},
		{row(1, 9, "a"), row(1, 5, "b")},
		{row(1, 7, "a"), row(1, 7, "b"), row(1, 7, "c")},
		{nil, row(1, 3, "b")},
		{nil, nil},
		{{}, row(2, 1, "x"), nil},
		{{{Timestamp: 4, Cells: map[string][]byte{"v": []byte("p")}}}, {{Clustering: []byte{}, Timestamp: 6}}},
	} {
		got, ok := mergeSingleRows(sets)
		if !ok {
			t.Errorf("case %d: single-row answers not merged by mergeSingleRows", i)
			continue
		}
		if want := mergeRowsByKey(sets, 0); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("case %d: %v, want %v", i, got, want)
		}
	}
	for i, sets := range [][][]engine.Row{
		{row(1, 5, "a"), row(2, 9, "b")},
		{row(1, 5, "a"), append(row(1, 5, "a"), row(2, 1, "c")...)},
	} {
		if _, ok := mergeSingleRows(sets); ok {
			t.Errorf("case %d: answers %v taken as single rows", i, sets)
		}
	}
}

func TestCanLose(t *testing.T) {
	m := testMeta(&NodeMeta{HostID: "a", DC: "dc1"}, &NodeMeta{HostID: "b", DC: "dc1"}, &NodeMeta{HostID: "c", DC: "dc1"})
	m.Keyspaces["ks"] = &engine.Keyspace{Name: "ks", Replication: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3"}, TabletsEnabled: true}
	if err := canLose(m, m.Nodes["a"]); err == nil {
		t.Error("removing one of 3 nodes at RF=3: no error")
	}
	m.Nodes["d"] = &NodeMeta{HostID: "d", DC: "dc1", State: engine.StateNormal}
	if err := canLose(m, m.Nodes["a"]); err != nil {
		t.Errorf("removing one of 4 nodes at RF=3: %v", err)
	}
}

func TestMetaChangesEmitClientEvents(t *testing.T) {
	n := &Node{cfg: Config{DataDir: t.TempDir()}, hostID: "a", log: nil, up: map[string]bool{}, lastSeen: map[string]time.Time{},
		subs: map[chan engine.Event]struct{}{}, migrations: map[string]bool{}, left: make(chan struct{})}
	n.log = scyllalog.New(io.Discard)
	m := testMeta(&NodeMeta{HostID: "a", Addr: "127.0.0.2", DC: "dc1"})
	m.Epoch = 1
	n.view.Store(newView(m))
	events, cancel := n.Subscribe()
	defer cancel()
	next := func(f func(*Meta)) {
		c := n.view.Load().m.clone()
		f(c)
		c.Epoch++
		if err := n.installMeta(c); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(kind engine.EventKind) {
		t.Helper()
		select {
		case ev := <-events:
			if ev.Kind != kind {
				t.Fatalf("event %v, want %v", ev.Kind, kind)
			}
		default:
			t.Fatalf("no event, want %v", kind)
		}
	}
	next(func(m *Meta) {
		m.Nodes["b"] = &NodeMeta{HostID: "b", Addr: "127.0.0.3", DC: "dc1", State: engine.StateJoining}
	})
	expect(engine.StatusUp) // a joining member is seen alive
	next(func(m *Meta) { m.Nodes["b"].State = engine.StateNormal })
	expect(engine.TopologyNewNode)
	next(func(m *Meta) {
		ch := engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: &engine.Keyspace{Name: "ks"}}
		m.Keyspaces["ks"] = ch.Keyspace
		m.Tables["ks"] = map[string]*engine.Table{}
		m.LastChange = &ch
	})
	expect(engine.SchemaChanged)
	next(func(m *Meta) { m.Nodes["b"].State = engine.StateLeft })
	expect(engine.TopologyRemovedNode)
	// The metadata survives a restart (Close saves the latest epoch).
	n.saveLatestMeta()
	if got, err := n.loadMeta(); err != nil || got.Epoch != n.view.Load().m.Epoch {
		t.Fatalf("stored metadata epoch %v, err %v", got, err)
	}
}

// TestMetaEpochsAreSavedCoalesced: epochs installed in quick succession
// (tablet migration steps) are not each written to the metadata file; the
// latest is, when the saver or Close gets to it.
func TestMetaEpochsAreSavedCoalesced(t *testing.T) {
	n := &Node{cfg: Config{DataDir: t.TempDir()}, hostID: "a", up: map[string]bool{}, lastSeen: map[string]time.Time{},
		subs: map[chan engine.Event]struct{}{}, migrations: map[string]bool{}, left: make(chan struct{}), metaDirty: make(chan struct{}, 1)}
	n.log = scyllalog.New(io.Discard)
	m := testMeta(&NodeMeta{HostID: "a", Addr: "127.0.0.2", DC: "dc1"})
	for e := uint64(1); e <= 20; e++ {
		c := m.clone()
		c.Epoch = e
		if err := n.installMeta(c); err != nil {
			t.Fatal(err)
		}
	}
	saved, err := n.loadMeta()
	if err != nil || saved == nil {
		t.Fatalf("nothing saved: %v", err)
	}
	if saved.Epoch == 20 {
		t.Errorf("every epoch written at once; want the later ones deferred")
	}
	if len(n.metaDirty) != 1 {
		t.Error("no deferred save queued for the saver")
	}
	n.saveLatestMeta()
	if saved, err = n.loadMeta(); err != nil || saved.Epoch != 20 {
		t.Fatalf("latest epoch not saved: %+v, %v", saved, err)
	}
}
