package cql_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// logCapture is a gocql logger that keeps what the driver logs.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) add(s string)              { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *logCapture) Print(v ...any)            { l.add(fmt.Sprint(v...)) }
func (l *logCapture) Printf(f string, v ...any) { l.add(fmt.Sprintf(f, v...)) }
func (l *logCapture) Println(v ...any)          { l.add(fmt.Sprintln(v...)) }
func (l *logCapture) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestShardAwarePort: SUPPORTED names the shard-aware port, a connection
// to it lands on the shard its source port names (port % shards,
// transport/server.cc with seastar's port-based load balancing), and the
// ScyllaDB Go driver fills its pool through it, one connection per shard,
// without its "wrong shard ... NAT" fallback.
func TestShardAwarePort(t *testing.T) {
	const shards = 4
	mem := enginetest.NewMemory("shard-aware")
	srv, hp := enginetest.StartServerOpts(t, "127.0.1.131:0", mem, cql.Options{Shards: shards})
	saLn, err := net.Listen("tcp", "127.0.1.131:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.ServeShardAware(ctx, saLn)
	saPort := saLn.Addr().(*net.TCPAddr).Port

	supported := func(rc *rawConn) map[string][]string {
		rc.send(1, &message.Options{})
		return rc.recv().Body.Message.(*message.Supported).Options
	}
	if got := supported(dialRaw(t, hp))["SCYLLA_SHARD_AWARE_PORT"]; len(got) != 1 || got[0] != strconv.Itoa(saPort) {
		t.Fatalf("SCYLLA_SHARD_AWARE_PORT %v, want %d", got, saPort)
	}
	for shard := range shards {
		src := 50000 + shard + shards*int(time.Now().UnixNano()%500)
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.1.131"), Port: src}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", saLn.Addr().String())
		if err != nil {
			t.Skipf("dialing from source port %d: %v", src, err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		rc := &rawConn{t: t, c: c, r: bufio.NewReader(c), codec: frame.NewCodec()}
		if got := supported(rc)["SCYLLA_SHARD"]; len(got) != 1 || got[0] != strconv.Itoa(src%shards) {
			t.Errorf("connection from port %d landed on shard %v, want %d", src, got, src%shards)
		}
		c.Close()
	}

	logs := &logCapture{}
	host, port, _ := net.SplitHostPort(hp)
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.Logger = logs
	cluster.Timeout, cluster.ConnectTimeout = 5*time.Second, 5*time.Second
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := map[int]int{}
	deadline := time.Now().Add(5 * time.Second)
	for len(seen) < shards && time.Now().Before(deadline) {
		seen = map[int]int{}
		iter := s.Query("SELECT port, shard_id FROM system.clients").Iter()
		var p, sh int
		for iter.Scan(&p, &sh) {
			seen[sh]++
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(seen) != shards {
		t.Errorf("connections per shard %v, want every one of %d shards", seen, shards)
	}
	if strings.Contains(logs.all(), "wrong shard") {
		t.Errorf("the driver fell back from the shard-aware port:\n%s", logs.all())
	}
}
