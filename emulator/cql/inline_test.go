package cql_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
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

// waitReporting is a backend that says when its writes wait
// (engine.WaitReporter), as the emulated node does: a write of key slowKey
// waits slow (or until gate closes) after saying so, every write calls
// onWrite.
type waitReporting struct {
	engine.Backend
	slowKey int32
	slow    time.Duration
	gate    chan struct{}
	onWrite func()
}

func (waitReporting) ReportsWaits() {}

func (b waitReporting) Write(ctx context.Context, ms []engine.Mutation, cl engine.Consistency) error {
	if b.onWrite != nil {
		b.onWrite()
	}
	if len(ms) == 1 && len(ms[0].PartitionKey) == 4 && int32(binary.BigEndian.Uint32(ms[0].PartitionKey)) == b.slowKey {
		engine.WillWait(ctx)
		if b.gate != nil {
			<-b.gate
		} else {
			time.Sleep(b.slow)
		}
	}
	return b.Backend.Write(ctx, ms, cl)
}

// preparedInsert creates b.t and prepares an insert of k on rc.
func preparedInsert(t *testing.T, rc *rawConn) []byte {
	t.Helper()
	rawQuery(t, rc, "CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	rawQuery(t, rc, "CREATE TABLE b.t (k int PRIMARY KEY)")
	rc.send(2, &message.Prepare{Query: "INSERT INTO b.t (k) VALUES (?)"})
	p, ok := rc.recv().Body.Message.(*message.PreparedResult)
	if !ok {
		t.Fatal("preparing the insert failed")
	}
	return p.PreparedQueryId
}

func executeInsert(rc *rawConn, stream int16, id []byte, k int32) {
	v := binary.BigEndian.AppendUint32(nil, uint32(k))
	rc.send(stream, &message.Execute{QueryId: id, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne,
		PositionalValues: []*primitive.Value{primitive.NewValue(v)}}})
}

// A plain EXECUTE is served on the connection's reading goroutine when the
// backend reports its waits; one that waits passes the reading on first,
// so the requests pipelined behind it are answered while it waits (here:
// until they are; were they held up behind it, reading their answers
// would time out).
func TestRequestsBehindAWaitingOneAreServed(t *testing.T) {
	b := waitReporting{Backend: enginetest.NewMemory("waits"), slowKey: 1, gate: make(chan struct{})}
	_, hp := enginetest.StartServerOpts(t, "127.0.1.17:0", b, cql.Options{})
	rc := dialRaw(t, hp)
	id := preparedInsert(t, rc)
	executeInsert(rc, 10, id, 1)
	for k := int32(2); k <= 5; k++ {
		executeInsert(rc, int16(10+k-1), id, k)
	}
	for range 4 {
		f := rc.recv()
		if _, ok := f.Body.Message.(*message.VoidResult); !ok || f.Header.StreamId == 10 {
			t.Fatalf("stream %d answered %v while the insert on stream 10 waits", f.Header.StreamId, f.Body.Message)
		}
	}
	close(b.gate)
	if f := rc.recv(); f.Header.StreamId != 10 {
		t.Fatalf("stream %d answered last, want the waiting insert's 10", f.Header.StreamId)
	}
}

// Requests served on the reading goroutine count against MaxInFlight as
// those of workers do.
func TestInFlightBoundWithRequestsServedOnTheReader(t *testing.T) {
	var running, peak atomic.Int32
	b := waitReporting{Backend: enginetest.NewMemory("waits"), slow: 10 * time.Millisecond, onWrite: func() {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
	}}
	b.slowKey = 7 // every insert below writes k = 7
	done := func() { running.Add(-1) }
	_, hp := enginetest.StartServerOpts(t, "127.0.1.17:0", countDone{b, done}, cql.Options{MaxInFlight: 3})
	rc := dialRaw(t, hp)
	id := preparedInsert(t, rc)
	running.Store(0)
	peak.Store(0)
	const n = 20
	for i := range n {
		executeInsert(rc, int16(100+i), id, 7)
	}
	for range n {
		if _, ok := rc.recv().Body.Message.(*message.VoidResult); !ok {
			t.Fatal("insert failed")
		}
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Fatalf("peak concurrency %d, bound 3", p)
	}
}

// countDone calls done when a write returns.
type countDone struct {
	waitReporting
	done func()
}

func (c countDone) Write(ctx context.Context, ms []engine.Mutation, cl engine.Consistency) error {
	defer c.done()
	return c.waitReporting.Write(ctx, ms, cl)
}

// countingListener's connections count their writes.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// Requests that arrive together are answered together: the reader queues
// the answers of those it serves while it holds more requests, and writes
// them with one write (as Seastar's output_stream batches a connection's
// answers until it is flushed), not one each: at most one write for every
// maxQueued answers. Fewer is not wrong: a write still in progress (the
// previous round's, descheduled before it let go of the writer) carries
// what is queued meanwhile, and CI once saw 20 answers go in 1 write.
func TestAnswersToPipelinedRequestsShareAWrite(t *testing.T) {
	b := waitReporting{Backend: enginetest.NewMemory("coalesce"), slowKey: -1}
	ln, err := net.Listen("tcp", "127.0.1.17:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := cql.NewServer(b, cql.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, cl) }()
	t.Cleanup(func() { cancel(); srv.Close(); <-done })
	rc := dialRaw(t, ln.Addr().String())
	id := preparedInsert(t, rc)
	codec := frame.NewCodec()
	// n EXECUTEs in one write(2), so the server reads them at once; an
	// answer waits for at most 8 (maxQueued) to be served.
	for _, c := range []struct{ n, writes int64 }{{5, 1}, {20, 3}} {
		before := cl.writes.Load()
		var buf bytes.Buffer
		for k := range c.n {
			v := binary.BigEndian.AppendUint32(nil, uint32(k))
			f := frame.NewFrame(primitive.ProtocolVersion4, int16(20+k), &message.Execute{QueryId: id, Options: &message.QueryOptions{
				Consistency: primitive.ConsistencyLevelOne, PositionalValues: []*primitive.Value{primitive.NewValue(v)}}})
			if err := codec.EncodeFrame(f, &buf); err != nil {
				t.Fatal(err)
			}
		}
		rc.sendRaw(buf.Bytes())
		for k := range c.n {
			f := rc.recv()
			if _, ok := f.Body.Message.(*message.VoidResult); !ok || f.Header.StreamId != int16(20+k) {
				t.Fatalf("answer %d: stream %d %v, want stream %d VOID", k, f.Header.StreamId, f.Body.Message, 20+k)
			}
		}
		if n := cl.writes.Load() - before; n < 1 || n > c.writes {
			t.Fatalf("%d answers took %d writes, want 1 to %d", c.n, n, c.writes)
		}
	}
}
