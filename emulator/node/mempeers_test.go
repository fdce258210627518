package node

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Nodes that share a Peers talk in memory, to the others over TCP, and a
// node of the process that closes (its death, as far as its peers can
// tell) ends its in-memory connections: its peers see it down, and once it
// is back on its data they reach it again through a new connection.
func TestNodesOfOneProcessTalkInMemory(t *testing.T) {
	var log syncBuf
	peers := NewPeers()
	withPeers := func(addr, rack, dir string) *Node {
		cfg := memberConfig(addr, rack, dir, &log)
		cfg.Peers = peers
		return openConfigured(t, cfg, nil)
	}
	a := withPeers("127.0.9.1", "rack1", t.TempDir())
	t.Cleanup(func() { a.Close() })
	bDir := t.TempDir()
	b := withPeers("127.0.9.2", "rack2", bDir)
	startMemberIn(t, "127.0.9.3", "rack3", &log, nil) // another process, as far as a and b know
	createTableRF(t, a, 20, 3)                        // at ALL: every replica answered
	connOf := func(n *Node, addr string) *rpcConn {
		n.tr.mu.Lock()
		defer n.tr.mu.Unlock()
		return n.tr.conns[addr]
	}
	// Heartbeats (gossip.go) connect a to b.
	waitFor(t, "a connects to b", func() bool { return connOf(a, "127.0.9.2:17931") != nil })
	if c := connOf(a, "127.0.9.2:17931"); c == nil {
		t.Fatal("a has no connection to b")
	} else if _, ok := c.nc.(*memConn); !ok {
		t.Fatalf("a's connection to b, a node of its process, is a %T", c.nc)
	}
	if c := connOf(a, "127.0.9.3:17931"); c == nil {
		t.Fatal("a has no connection to c")
	} else if _, ok := c.nc.(*memConn); ok {
		t.Fatal("a's connection to c, a node of no shared process, is in memory")
	}
	// The table's epoch reaches b as the very Meta a published (metaCall):
	// a decoded copy, as over the wire, would never be the same.
	waitFor(t, "b holding a's cluster metadata itself, not a copy", func() bool { return b.view.Load().m == a.view.Load().m })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	write := func(i int, cl engine.Consistency) error {
		m := engine.Mutation{Keyspace: "ks", Table: "t", PartitionKey: []byte(fmt.Sprintf("key-%d", i)),
			Cells: map[string][]byte{"v": []byte("x")}, Timestamp: time.Now().UnixMicro()}
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		defer wcancel()
		return a.Write(wctx, []engine.Mutation{m}, cl)
	}
	mine := connOf(a, "127.0.9.2:17931")
	b.Close()
	select {
	case <-mine.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("a's in-memory connection to b is still open 5 s after b closed")
	}
	waitFor(t, "a sees b down", func() bool { return !a.isUp(b.hostID) })
	if err := write(1, engine.All); err == nil {
		t.Fatal("a write at ALL succeeded with b down")
	}
	if err := write(2, engine.Quorum); err != nil {
		t.Fatalf("a write at QUORUM with b down: %v", err)
	}
	b = withPeers("127.0.9.2", "rack2", bDir)
	t.Cleanup(func() { b.Close() })
	waitFor(t, "a sees b up again", func() bool { return a.isUp(b.hostID) })
	if err := write(3, engine.All); err != nil {
		t.Fatalf("a write at ALL once b is back: %v", err)
	}
	if c := connOf(a, "127.0.9.2:17931"); c == nil || c == mine {
		t.Fatal("a did not connect to the restarted b anew")
	} else if _, ok := c.nc.(*memConn); !ok {
		t.Fatalf("a's connection to the restarted b is a %T", c.nc)
	}
}

// A node of the process that closes while its peers' replica writes and
// reads are calls into it (mempeers.go directServer) finishes those first
// and then closes its store: no call reaches a closed store (Pebble would
// panic, taking the process's other nodes with it), and QUORUM goes on
// with the other two replicas throughout.
func TestNodeOfOneProcessClosesUnderItsPeersCalls(t *testing.T) {
	var log syncBuf
	peers := NewPeers()
	withPeers := func(addr, rack string) *Node {
		cfg := memberConfig(addr, rack, t.TempDir(), &log)
		cfg.Peers = peers
		return openConfigured(t, cfg, nil)
	}
	a := withPeers("127.0.9.1", "rack1")
	t.Cleanup(func() { a.Close() })
	b := withPeers("127.0.9.2", "rack2")
	c := withPeers("127.0.9.3", "rack3")
	t.Cleanup(func() { c.Close() })
	createTableRF(t, a, 20, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var failures []error
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := []byte(fmt.Sprintf("w%d-%d", w, i))
				m := engine.Mutation{Keyspace: "ks", Table: "t", PartitionKey: key, Cells: map[string][]byte{"v": []byte("x")}, Timestamp: time.Now().UnixMicro()}
				err := a.Write(ctx, []engine.Mutation{m}, engine.Quorum)
				if err == nil {
					_, err = a.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: key}, engine.Quorum)
				}
				if err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := b.Close(); err != nil {
		t.Errorf("closing b under its peers' calls: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d QUORUM operations failed while one of three replicas closed, the first: %v", len(failures), failures[0])
	}
}
