package node

import (
	"bufio"
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// TestFrameRoundTrip: data-path messages (binary) and the others (gob)
// come back as sent, interleaved on one stream.
func TestFrameRoundTrip(t *testing.T) {
	msgs := []*msg{
		{ID: 1, Op: opWrite, Muts: []engine.Mutation{{Keyspace: "ks", Table: "t", PartitionKey: []byte{1, 2}, Clustering: []byte{},
			Cells: map[string][]byte{"v": []byte("x"), "n": nil}, Timestamp: 1700000000000000, TTL: 3 * time.Second}}},
		{ID: 2, Op: opCounterApply, CL: engine.Quorum, Muts: []engine.Mutation{{Keyspace: "ks", Table: "c", PartitionKey: []byte{9},
			Counters: map[string]int64{"c": -5}}, {Keyspace: "ks", Table: "c", PartitionKey: []byte{8}, Delete: true}}},
		{ID: 3, Op: opRead, Read: &engine.Read{Keyspace: "ks", Table: "t", PartitionKey: []byte{1}, ClusteringPrefix: []byte{7}, Limit: 10}},
		{ID: 3, Resp: true, Op: opRead, Rows: []engine.Row{{Clustering: []byte{7, 1}, Cells: map[string][]byte{"v": {}}, Timestamp: -4}}, Temp: 0.625},
		{ID: 4, Resp: true, Op: opWrite, Err: "Overloaded", ErrCode: int(engine.CodeOverloaded)},
		{ID: 5, Op: opHeartbeat, Heartbeat: &heartbeat{HostID: "h", Addr: "127.0.0.2", Epoch: 3}},
		{ID: 6, Op: opTruncate, Table: [16]byte{1}},
		{ID: 7, Resp: true, Op: opRead, Err: "boom", ErrCode: -1},
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	fw := newFrameWriter(bw)
	for _, m := range msgs {
		if err := fw.write(m); err != nil {
			t.Fatalf("writing %+v: %v", m, err)
		}
	}
	bw.Flush()
	fr := newFrameReader(bufio.NewReader(&buf))
	for _, want := range msgs {
		got := new(msg)
		if err := fr.read(got); err != nil {
			t.Fatalf("reading %s: %v", want.Op, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip of %s:\n got %+v\nwant %+v", want.Op, got, want)
		}
	}
	if err := fr.read(new(msg)); err == nil {
		t.Error("reading past the end: no error")
	}
}

// TestFrameCorrupt: truncated or corrupt frames are errors, never panics.
func TestFrameCorrupt(t *testing.T) {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	fw := newFrameWriter(bw)
	fw.write(&msg{ID: 1, Op: opWrite, Muts: []engine.Mutation{{Keyspace: "ks", Table: "t", PartitionKey: []byte{1}, Cells: map[string][]byte{"v": []byte("abc")}}}})
	bw.Flush()
	full := buf.Bytes()
	for i := 0; i < len(full); i++ {
		for _, b := range [][]byte{full[:i], append(append([]byte(nil), full[:i]...), append([]byte{0xff}, full[i+1:]...)...)} {
			fr := newFrameReader(bufio.NewReader(bytes.NewReader(b)))
			_ = fr.read(new(msg)) // must not panic
		}
	}
	if err := newFrameReader(bufio.NewReader(bytes.NewReader(full[:len(full)-1]))).read(new(msg)); err == nil {
		t.Error("truncated frame: no error")
	}
	if err := decodeFast([]byte{hasMuts, 1, 0, 0, 0, 0, 200}, new(msg)); err == nil {
		t.Error("mutation count beyond the frame: no error")
	}
}
