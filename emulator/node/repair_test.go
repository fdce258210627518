package node

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The REST and repair tests' members live in their own loopback range
// (127.0.47.0/24), apart from the topology tests' 127.0.9.0/24.
const restNet = "127.0.47."

// restMember starts member i (1, 2, …) of the REST tests' cluster.
func restMember(t *testing.T, i int, log *syncBuf) *Node {
	t.Helper()
	n := openMemberAt(t, fmt.Sprintf("%s%d", restNet, i), t.TempDir(), log)
	t.Cleanup(func() { n.Close() })
	return n
}

// openMemberAt starts (or restarts) a member on addr with its data in dir;
// its seed is the first address of addr's /24 (127.0.9.1 for the topology
// tests' members, as startMemberIn's).
func openMemberAt(t *testing.T, addr, dir string, log *syncBuf) *Node {
	t.Helper()
	return openConfigured(t, memberConfig(addr, "rack1", dir, log), nil)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 20 s", what)
		}
	}
}

// A row written while one of its three replicas was down is on all three
// after a repair of its range (repair/row_level.cc); a replica that is
// down fails the repair.
func TestRepairCopiesRowsAReplicaMissed(t *testing.T) {
	var log syncBuf
	a := restMember(t, 1, &log)
	restMember(t, 2, &log)
	dirC := t.TempDir()
	c := openMemberAt(t, restNet+"3", dirC, &log)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k := &engine.Keyspace{Name: "vn", Replication: map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"}, DurableWrites: true}
	if _, err := a.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: k}); err != nil {
		t.Fatal(err)
	}
	tb := &engine.Table{Keyspace: "vn", Name: "t", Columns: []engine.Column{
		{Name: "k", Type: "text", Kind: engine.PartitionKey}, {Name: "v", Type: "blob", Kind: engine.Regular, Position: -1}}}
	if _, err := a.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateTable, KeyspaceName: "vn", Table: tb}); err != nil {
		t.Fatal(err)
	}
	cID := c.hostID
	c.Close()
	waitFor(t, "the third member seen down", func() bool { return !a.isUp(cID) })
	key := []byte("written-while-down")
	m := engine.Mutation{Keyspace: "vn", Table: "t", PartitionKey: key, Cells: map[string][]byte{"v": []byte("x")}, Timestamp: time.Now().UnixMicro()}
	if err := a.Write(ctx, []engine.Mutation{m}, engine.Quorum); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.RESTHandler(nil))
	defer srv.Close()
	_, id := restCall(t, srv, "POST", "/storage_service/repair_async/vn")
	if _, st := restCall(t, srv, "GET", fmt.Sprintf("/storage_service/repair_status?id=%v", id)); st != "FAILED" {
		t.Errorf("repair with a replica down: %v, want FAILED", st)
	}

	c = openMemberAt(t, restNet+"3", dirC, &log)
	defer c.Close()
	waitFor(t, "the third member seen up", func() bool { return a.isUp(cID) && c.isUp(a.hostID) })
	tok := Token(key)
	if got := tokensIn(t, c, "vn", tok); got != 0 {
		t.Fatalf("the restarted replica already holds the row (%d)", got)
	}
	_, id = restCall(t, srv, "POST", fmt.Sprintf("/storage_service/repair_async/vn?startToken=%d&endToken=%d", tok-1, tok))
	if _, st := restCall(t, srv, "GET", fmt.Sprintf("/storage_service/repair_status?id=%v", id)); st != "SUCCESSFUL" {
		t.Fatalf("repair: %v\n%s", st, log.String())
	}
	if got := tokensIn(t, c, "vn", tok); got != 1 {
		t.Errorf("after repair the restarted replica holds %d rows of the token, want 1", got)
	}
}

// tokensIn counts n's local rows of ks.t at token tok.
func tokensIn(t *testing.T, n *Node, ks string, tok int64) int {
	c := 0
	for _, x := range localTokens(t, n, ks) {
		if x == tok {
			c++
		}
	}
	return c
}
