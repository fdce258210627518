package node

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// migratingMeta is the main job's metadata in the middle of a scale-out:
// six nodes, 1,024 tablets at RF 3, some of them migrating.
func migratingMeta(tb testing.TB) *Meta {
	var nodes []*NodeMeta
	for i := range 6 {
		nodes = append(nodes, &NodeMeta{HostID: fmt.Sprintf("%08d-26cc-4365-91ec-b35d5cdc5376", i), Addr: fmt.Sprintf("127.0.0.%d", i+2), DC: "datacenter1", Rack: fmt.Sprintf("rack%d", i%3+1), Shards: 2 + 14*(i/3)})
	}
	m := testMeta(nodes...)
	ks := &engine.Keyspace{Name: "ks", Replication: map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "datacenter1": "3"}, TabletsEnabled: true}
	m.Keyspaces["ks"] = ks
	tm, err := allocateTablets(m, ks, 1024)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < len(tm.Tablets); i += 7 {
		t := &tm.Tablets[i]
		t.Pending = &Replica{Host: nodes[3+i%3].HostID, Shard: i % 16}
		t.Leaving = t.Replicas[0].Host
	}
	m.Tablets["t1"] = tm
	m.Tablets["empty"] = &TabletMap{}
	m.Tablets["odd"] = &TabletMap{Tablets: []Tablet{{}, {Replicas: []Replica{{Host: "", Shard: 0}}}, {Leaving: "gone"}}}
	return m
}

func gobRoundTrip(tb testing.TB, m *Meta) (*Meta, int) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(m); err != nil {
		tb.Fatal(err)
	}
	n := buf.Len()
	var out Meta
	if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
		tb.Fatal(err)
	}
	return &out, n
}

func TestTabletMapsSurviveTheWireEncoding(t *testing.T) {
	// The codec writes every field of a tablet by hand: a new field must be
	// added to it, or it would silently not travel.
	if n := reflect.TypeFor[Tablet]().NumField(); n != 3 {
		t.Fatalf("Tablet has %d fields; the tablet map codec (meta_codec.go) encodes 3", n)
	}
	if n := reflect.TypeFor[Replica]().NumField(); n != 2 {
		t.Fatalf("Replica has %d fields; the tablet map codec (meta_codec.go) encodes 2", n)
	}
	m := migratingMeta(t)
	got, size := gobRoundTrip(t, m)
	// gob decodes an empty tablet list as nil, as it did before the codec.
	m.Tablets["empty"].Tablets = nil
	if !reflect.DeepEqual(got.Tablets, m.Tablets) {
		t.Fatal("tablet maps differ after a gob round trip")
	}
	// The encoding is compact: a few bytes per replica, not a host id each.
	if size > 16<<10 {
		t.Errorf("a 1,024-tablet metadata epoch takes %d bytes on the wire, want under 16 KiB", size)
	}
	// Tablets decoded from one backing array stay independent.
	tm := got.Tablets["t1"]
	next := append([]Replica(nil), tm.Tablets[1].Replicas...)
	tm.Tablets[0].Replicas = append(tm.Tablets[0].Replicas, Replica{Host: "x", Shard: 9})
	if !reflect.DeepEqual(tm.Tablets[1].Replicas, next) {
		t.Fatal("appending to one decoded tablet's replicas changed the next tablet's")
	}
}

func TestCorruptTabletMapsFailCleanly(t *testing.T) {
	enc, err := migratingMeta(t).Tablets["t1"].GobEncode()
	if err != nil {
		t.Fatal(err)
	}
	var tm TabletMap
	if err := tm.GobDecode(enc); err != nil {
		t.Fatalf("decoding the whole encoding: %v", err)
	}
	for n := range len(enc) {
		if err := tm.GobDecode(enc[:n]); err == nil {
			t.Fatalf("decoding the first %d of %d bytes: no error", n, len(enc))
		}
	}
	if err := tm.GobDecode(append(bytes.Clone(enc), 0)); err == nil {
		t.Fatal("trailing bytes: no error")
	}
	bad := bytes.Clone(enc)
	bad[0] = 9
	if err := tm.GobDecode(bad); err == nil {
		t.Fatal("unknown version: no error")
	}
	// A huge claimed count fails instead of allocating.
	if err := tm.GobDecode([]byte{tabletMapCodecVersion, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Fatal("a tablet count beyond the input: no error")
	}
}

// BenchmarkMetaEpochOnTheWire is what publishing one epoch of the main
// job's metadata costs a member: gob-encoding it and decoding it.
func BenchmarkMetaEpochOnTheWire(b *testing.B) {
	m := migratingMeta(b)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		_, size = gobRoundTrip(b, m)
	}
	b.ReportMetric(float64(size), "bytes/epoch")
}
