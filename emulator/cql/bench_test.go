package cql_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// BenchmarkPreparedInsertNull measures the front end's per-request cost: a
// prepared INSERT through gocql against a backend that does nothing.
func BenchmarkPreparedInsertNull(b *testing.B) {
	hp := enginetest.StartServer(b, "127.0.1.3:0", enginetest.NewNull())
	s := newSession(b, hp, "")
	if err := s.Query(`CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		b.Fatal(err)
	}
	if err := s.Query(`CREATE TABLE bench.kv (pk bigint PRIMARY KEY, v blob)`).Exec(); err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 128)
	b.Run("serial", func(b *testing.B) {
		q := s.Query(`INSERT INTO bench.kv (pk, v) VALUES (?, ?)`).Consistency(gocql.Quorum)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := q.Bind(int64(i), val).Exec(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(16)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			q := s.Query(`INSERT INTO bench.kv (pk, v) VALUES (?, ?)`).Consistency(gocql.Quorum)
			i := int64(0)
			for pb.Next() {
				i++
				if err := q.Bind(i, val).Exec(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkServerExecuteRaw isolates the server's cost per request: a raw
// client pipelines pre-encoded EXECUTE frames (prepared INSERT, Null
// backend) and reads the answers with a fixed buffer, so nearly all
// allocations and CPU counted are the server's.
func BenchmarkServerExecuteRaw(b *testing.B) {
	hp := enginetest.StartServer(b, "127.0.1.12:0", enginetest.NewNull())
	s := newSession(b, hp, "")
	for _, q := range []string{
		`CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE bench.kv (pk bigint PRIMARY KEY, v blob)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			b.Fatal(err)
		}
	}
	c, err := net.Dial("tcp", hp)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	codec := frame.NewCodec()
	br := bufio.NewReader(c)
	if err := codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 0, &message.Prepare{Query: `INSERT INTO bench.kv (pk, v) VALUES (?, ?)`}), c); err != nil {
		b.Fatal(err)
	}
	f, err := codec.DecodeFrame(br)
	if err != nil {
		b.Fatal(err)
	}
	id := f.Body.Message.(*message.PreparedResult).PreparedQueryId
	var buf bytes.Buffer
	exec := &message.Execute{QueryId: id, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelQuorum,
		PositionalValues: []*primitive.Value{primitive.NewValue(make([]byte, 8)), primitive.NewValue(make([]byte, 128))}}}
	if err := codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 1, exec), &buf); err != nil {
		b.Fatal(err)
	}
	req := buf.Bytes()
	const window = 64
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		w := bufio.NewWriter(c)
		for i := 0; i < b.N; i++ {
			binary.BigEndian.PutUint16(req[2:4], uint16(i%window))
			w.Write(req)
			if i%window == window-1 {
				w.Flush()
			}
		}
		w.Flush()
	}()
	hdr := make([]byte, 9)
	body := make([]byte, 1<<16)
	for i := 0; i < b.N; i++ {
		if _, err := io.ReadFull(br, hdr); err != nil {
			b.Fatal(err)
		}
		n := binary.BigEndian.Uint32(hdr[5:9])
		if _, err := io.ReadFull(br, body[:n]); err != nil {
			b.Fatal(err)
		}
		if primitive.OpCode(hdr[4]) != primitive.OpCodeResult {
			b.Fatalf("opcode %v", hdr[4])
		}
	}
}
