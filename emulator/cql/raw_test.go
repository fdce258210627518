package cql_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// rawConn is a hand-driven protocol client.
type rawConn struct {
	t     *testing.T
	c     net.Conn
	r     *bufio.Reader
	codec frame.Codec
}

func dialRaw(t *testing.T, hp string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", hp, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return &rawConn{t: t, c: c, r: bufio.NewReader(c), codec: frame.NewCodec()}
}

func (rc *rawConn) send(stream int16, msg message.Message) {
	rc.t.Helper()
	if err := rc.codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, stream, msg), rc.c); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawConn) sendRaw(b []byte) {
	rc.t.Helper()
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawConn) recv() *frame.Frame {
	rc.t.Helper()
	f, err := rc.codec.DecodeFrame(rc.r)
	if err != nil {
		rc.t.Fatalf("reading response: %v", err)
	}
	return f
}

// expectClosed asserts the server closes the connection.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := rc.r.ReadByte(); err != io.EOF {
		rc.t.Fatalf("connection not closed by server: %v", err)
	}
}

func header(version byte, stream int16, opcode byte, length int32) []byte {
	h := []byte{version, 0, 0, 0, opcode, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(h[2:4], uint16(stream))
	binary.BigEndian.PutUint32(h[5:9], uint32(length))
	return h
}

func protocolError(t *testing.T, f *frame.Frame, stream int16) string {
	t.Helper()
	pe, ok := f.Body.Message.(*message.ProtocolError)
	if !ok {
		t.Fatalf("want PROTOCOL_ERROR, got %T %v", f.Body.Message, f.Body.Message)
	}
	if f.Header.StreamId != stream {
		t.Fatalf("error on stream %d, want %d", f.Header.StreamId, stream)
	}
	return pe.ErrorMessage
}

// alive checks that a fresh connection still gets answers.
func alive(t *testing.T, hp string) {
	t.Helper()
	rc := dialRaw(t, hp)
	rc.send(1, &message.Options{})
	if _, ok := rc.recv().Body.Message.(*message.Supported); !ok {
		t.Fatal("server stopped answering OPTIONS")
	}
}

func TestRawProtocolErrors(t *testing.T) {
	mem := enginetest.NewMemory("raw")
	srv, hp := enginetest.StartServerOpts(t, "127.0.1.8:0", mem, cql.Options{MaxFrameBytes: 4096, Shards: 3})
	defer func() {
		st := srv.Stats()
		if st.Requests == 0 || st.Errors == 0 || st.Accepted < 10 || st.InFlight != 0 {
			t.Errorf("stats %+v", st)
		}
	}()

	t.Run("options", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.send(3, &message.Options{})
		f := rc.recv()
		sup := f.Body.Message.(*message.Supported).Options
		if sup["SCYLLA_NR_SHARDS"][0] != "3" || sup["SCYLLA_SHARDING_IGNORE_MSB"][0] != "12" || sup["CQL_VERSION"][0] != "3.3.1" ||
			sup["SCYLLA_PARTITIONER"][0] != "org.apache.cassandra.dht.Murmur3Partitioner" || sup["SCYLLA_SHARDING_ALGORITHM"][0] != "biased-token-round-robin" {
			t.Fatalf("SUPPORTED: %v", sup)
		}
		if f.Header.StreamId != 3 {
			t.Fatalf("stream %d", f.Header.StreamId)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.sendRaw(append(header(4, 5, byte(primitive.OpCodeQuery), 3), 0xff, 0xff, 0xff))
		protocolError(t, rc.recv(), 5)
		// The connection stays usable.
		rc.send(6, &message.Options{})
		if f := rc.recv(); f.Header.StreamId != 6 {
			t.Fatalf("stream %d", f.Header.StreamId)
		}
	})
	t.Run("huge declared lengths", func(t *testing.T) {
		rc := dialRaw(t, hp)
		// A QUERY whose string claims 2 GiB: must not allocate it.
		rc.sendRaw(append(header(4, 4, byte(primitive.OpCodeQuery), 4), 0x7f, 0xff, 0xff, 0xff))
		protocolError(t, rc.recv(), 4)
		// An EXECUTE with 65535 values in 12 bytes.
		rc.sendRaw(append(header(4, 5, byte(primitive.OpCodeExecute), 12), 0, 1, 1, 0, 1, 1, 0xff, 0xff, 0, 0, 0, 0))
		protocolError(t, rc.recv(), 5)
	})
	t.Run("oversized", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.sendRaw(header(4, 7, byte(primitive.OpCodeQuery), 1<<20))
		msg := protocolError(t, rc.recv(), 7)
		if !regexp.MustCompile(`too big`).MatchString(msg) {
			t.Fatalf("message %q", msg)
		}
		rc.expectClosed()
	})
	t.Run("negative length", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.sendRaw(header(4, 8, byte(primitive.OpCodeQuery), -5))
		protocolError(t, rc.recv(), 8)
		rc.expectClosed()
	})
	t.Run("unknown opcode", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.sendRaw(append(header(4, 9, 0x42, 2), 1, 2))
		protocolError(t, rc.recv(), 9)
		rc.send(10, &message.Options{})
		if f := rc.recv(); f.Header.StreamId != 10 {
			t.Fatalf("stream %d", f.Header.StreamId)
		}
	})
	t.Run("response opcode", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.sendRaw(header(4, 11, byte(primitive.OpCodeReady), 0))
		protocolError(t, rc.recv(), 11)
	})
	t.Run("v5 startup", func(t *testing.T) {
		rc := dialRaw(t, hp)
		body := []byte{0, 1, 0, 11, 'C', 'Q', 'L', '_', 'V', 'E', 'R', 'S', 'I', 'O', 'N', 0, 5, '3', '.', '0', '.', '0'}
		rc.sendRaw(append(header(5, 0, byte(primitive.OpCodeStartup), int32(len(body))), body...))
		f := rc.recv()
		if f.Header.Version != primitive.ProtocolVersion4 {
			t.Fatalf("answered in v%d", f.Header.Version)
		}
		msg := protocolError(t, f, 0)
		// The message drivers parse to downgrade.
		if !regexp.MustCompile(`Invalid or unsupported protocol version \(5\); the lowest supported version is 3 and the greatest is 4$`).MatchString(msg) {
			t.Fatalf("message %q", msg)
		}
		rc.expectClosed()
	})
	t.Run("v2 startup", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.sendRaw([]byte{2, 0, 1, byte(primitive.OpCodeStartup), 0, 0, 0, 0})
		var h [8]byte
		if _, err := io.ReadFull(rc.r, h[:]); err != nil {
			t.Fatal(err)
		}
		if h[0] != 0x82 || h[2] != 1 || h[3] != byte(primitive.OpCodeError) {
			t.Fatalf("v2 error header % x", h)
		}
		body := make([]byte, binary.BigEndian.Uint32(h[4:8]))
		if _, err := io.ReadFull(rc.r, body); err != nil {
			t.Fatal(err)
		}
		if binary.BigEndian.Uint32(body) != uint32(primitive.ErrorCodeProtocolError) {
			t.Fatalf("code % x", body[:4])
		}
		rc.expectClosed()
	})
	t.Run("garbage CQL", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.send(12, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
		if _, ok := rc.recv().Body.Message.(*message.Ready); !ok {
			t.Fatal("no READY")
		}
		for i, q := range []string{"", "  ;", "SELECT", "SELECT * FROM", "INSERT INTO t (a) VALUES (1, 2)", "\x00\xff garbage", "CREATE TABLE t (", "UPDATE t SET a = 1"} {
			rc.send(int16(20+i), &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
			f := rc.recv()
			if _, ok := f.Body.Message.(*message.SyntaxError); !ok {
				t.Fatalf("%q: want SyntaxError, got %T %v", q, f.Body.Message, f.Body.Message)
			}
		}
	})
	t.Run("execute unknown id", func(t *testing.T) {
		rc := dialRaw(t, hp)
		id := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		rc.send(13, &message.Execute{QueryId: id, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		f := rc.recv()
		up, ok := f.Body.Message.(*message.Unprepared)
		if !ok || string(up.Id) != string(id) {
			t.Fatalf("want Unprepared with the id, got %T %v", f.Body.Message, f.Body.Message)
		}
	})
	t.Run("pipelined streams", func(t *testing.T) {
		rc := dialRaw(t, hp)
		for i := int16(0); i < 200; i++ {
			rc.send(i, &message.Query{Query: "SELECT release_version FROM system.local", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		}
		seen := map[int16]bool{}
		for i := 0; i < 200; i++ {
			f := rc.recv()
			if _, ok := f.Body.Message.(*message.RowsResult); !ok {
				t.Fatalf("got %T", f.Body.Message)
			}
			seen[f.Header.StreamId] = true
		}
		if len(seen) != 200 {
			t.Fatalf("%d distinct streams answered", len(seen))
		}
	})
	t.Run("events", func(t *testing.T) {
		rc := dialRaw(t, hp)
		rc.send(1, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeTopologyChange, primitive.EventTypeStatusChange, primitive.EventTypeSchemaChange}})
		if _, ok := rc.recv().Body.Message.(*message.Ready); !ok {
			t.Fatal("no READY after REGISTER")
		}
		mem.Emit(engineEvent())
		f := rc.recv()
		ev, ok := f.Body.Message.(*message.TopologyChangeEvent)
		if !ok || f.Header.StreamId != -1 || ev.ChangeType != primitive.TopologyChangeTypeNewNode || !ev.Address.Addr.Equal(net.ParseIP("127.0.1.99")) {
			t.Fatalf("event: stream %d %T %v", f.Header.StreamId, f.Body.Message, f.Body.Message)
		}
		other := dialRaw(t, hp)
		if _, ok := rawQuery(t, other, "CREATE KEYSPACE ev WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").(*message.SchemaChangeResult); !ok {
			t.Fatal("no SCHEMA_CHANGE result")
		}
		f = rc.recv()
		sc, ok := f.Body.Message.(*message.SchemaChangeEvent)
		if !ok || sc.Keyspace != "ev" || sc.ChangeType != primitive.SchemaChangeTypeCreated || sc.Target != primitive.SchemaChangeTargetKeyspace {
			t.Fatalf("schema event: %T %v", f.Body.Message, f.Body.Message)
		}
	})
	alive(t, hp)
}

func engineEvent() engine.Event {
	return engine.Event{Kind: engine.TopologyNewNode, Addr: net.ParseIP("127.0.1.99"), Port: 9042}
}

// TestServeReturnClosesConnections checks connections end with their Serve
// call, whether its ctx ends or its listener is closed.
func TestServeReturnClosesConnections(t *testing.T) {
	for _, how := range []string{"ctx", "listener"} {
		t.Run(how, func(t *testing.T) {
			srv := cql.NewServer(enginetest.NewMemory("x"), cql.Options{})
			defer srv.Close()
			ln, err := net.Listen("tcp", "127.0.1.16:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, ln) }()
			rc := dialRaw(t, ln.Addr().String())
			rc.send(1, &message.Options{})
			rc.recv()
			if how == "ctx" {
				cancel()
			} else {
				ln.Close()
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Serve: %v", err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Serve did not return")
			}
			rc.expectClosed()
		})
	}
}

// TestInFlightBound pipelines more requests than MaxInFlight against a slow
// backend: all are answered and never more than the bound run at once.
func TestInFlightBound(t *testing.T) {
	var running, peak atomic.Int32
	f := &enginetest.Faulty{Backend: enginetest.NewMemory("slow"), WriteErr: func([]engine.Mutation, engine.Consistency) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
		running.Add(-1)
		return nil
	}}
	_, hp := enginetest.StartServerOpts(t, "127.0.1.17:0", f, cql.Options{MaxInFlight: 3})
	rc := dialRaw(t, hp)
	rawQuery(t, rc, "CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	rawQuery(t, rc, "CREATE TABLE b.t (k int PRIMARY KEY)")
	const n = 20
	for i := 0; i < n; i++ {
		rc.send(int16(100+i), &message.Query{Query: "INSERT INTO b.t (k) VALUES (1)", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	}
	for i := 0; i < n; i++ {
		if _, ok := rc.recv().Body.Message.(*message.VoidResult); !ok {
			t.Fatal("insert failed")
		}
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Fatalf("peak concurrency %d, bound 3", p)
	}
}
