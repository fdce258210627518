package cql_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/pierrec/lz4/v4"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// lz4Compressor is the client side of the protocol's LZ4 framing (the
// body's length, 4 bytes big endian, then an LZ4 block), for the driver.
type lz4Compressor struct{}

func (lz4Compressor) Name() string { return "lz4" }

func (lz4Compressor) Encode(b []byte) ([]byte, error) {
	out := make([]byte, 4+lz4.CompressBlockBound(len(b)))
	binary.BigEndian.PutUint32(out, uint32(len(b)))
	var c lz4.Compressor
	n, err := c.CompressBlock(b, out[4:])
	return out[:4+n], err
}

func (lz4Compressor) Decode(b []byte) ([]byte, error) {
	out := make([]byte, binary.BigEndian.Uint32(b))
	n, err := lz4.UncompressBlock(b[4:], out)
	return out[:n], err
}

// TestCompression: SUPPORTED offers lz4 and snappy; after STARTUP names
// one, the node's responses (READY first) are compressed and it reads
// compressed requests (transport/server.cc process_startup,
// response::compress_lz4/compress_snappy); the driver works over both.
func TestCompression(t *testing.T) {
	hp := enginetest.StartServer(t, "127.0.1.132:0", enginetest.NewMemory("comp"))
	rc := dialRaw(t, hp)
	rc.send(1, &message.Options{})
	if got := rc.recv().Body.Message.(*message.Supported).Options["COMPRESSION"]; strings.Join(got, ",") != "lz4,snappy" {
		t.Fatalf("SUPPORTED COMPRESSION %v", got)
	}
	rc.send(2, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "zstd"}})
	if pe, ok := rc.recv().Body.Message.(*message.ProtocolError); !ok || pe.ErrorMessage != "Unknown compression algorithm: zstd" {
		t.Fatalf("STARTUP with zstd: %v", pe)
	}

	// Raw: after READY, responses come back compressed (SUPPORTED here).
	c, err := net.DialTimeout("tcp", hp, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	codec := frame.NewCodec()
	hdr := make([]byte, 9)
	for i, m := range []message.Message{&message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"}}, &message.Options{}} {
		var buf bytes.Buffer
		if err := codec.EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, int16(i), m), &buf); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, hdr); err != nil {
			t.Fatal(err)
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[5:]))
		if _, err := io.ReadFull(c, body); err != nil {
			t.Fatal(err)
		}
		if len(body) > 0 && hdr[1]&0x01 == 0 {
			t.Fatalf("response header % x: not compressed", hdr)
		}
		if primitive.OpCode(hdr[4]) == primitive.OpCodeSupported {
			plain, err := lz4Compressor{}.Decode(body)
			if err != nil || !bytes.Contains(plain, []byte("SCYLLA_NR_SHARDS")) {
				t.Fatalf("SUPPORTED body does not decompress: %v", err)
			}
		} else if primitive.OpCode(hdr[4]) != primitive.OpCodeReady {
			t.Fatalf("response header % x", hdr)
		}
	}

	for _, comp := range []gocql.Compressor{lz4Compressor{}, gocql.SnappyCompressor{}} {
		host, port, _ := net.SplitHostPort(hp)
		cluster := gocql.NewCluster(host)
		fmt.Sscan(port, &cluster.Port)
		cluster.Compressor = comp
		cluster.Timeout, cluster.ConnectTimeout = 5*time.Second, 5*time.Second
		s, err := cluster.CreateSession()
		if err != nil {
			t.Fatalf("%s: %v", comp.Name(), err)
		}
		ks := "ks_" + comp.Name()
		big := strings.Repeat("compressible ", 1000)
		for _, q := range []string{
			"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}",
			"CREATE TABLE " + ks + ".t (k int PRIMARY KEY, v text)",
		} {
			if err := s.Query(q).Exec(); err != nil {
				t.Fatalf("%s: %s: %v", comp.Name(), q, err)
			}
		}
		if err := s.Query("INSERT INTO "+ks+".t (k, v) VALUES (?, ?)", 1, big).Exec(); err != nil {
			t.Fatalf("%s: insert: %v", comp.Name(), err)
		}
		var v string
		if err := s.Query("SELECT v FROM " + ks + ".t WHERE k = 1").Scan(&v); err != nil || v != big {
			t.Errorf("%s: read back %d bytes, %v", comp.Name(), len(v), err)
		}
		s.Close()
	}
}
