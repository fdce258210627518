package node

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
)

// TestTabletRouteIsCheckLocality: a node answers a single-partition request
// with its tablet's routing exactly when ScyllaDB's check_locality
// (locator/tablets.cc) would: not when it holds a replica on the client's
// shard or is the pending replica there; otherwise the tablet's range
// (previous last token, last token], the minimum token for the first
// tablet, and its replicas.
func TestTabletRouteIsCheckLocality(t *testing.T) {
	var log syncBuf
	a := startMember(t, "127.0.9.1", &log, nil)
	b := startMember(t, "127.0.9.2", &log, nil)
	createTable(t, a, 0) // RF 1 over 8 tablets: each node holds some
	v := a.view.Load()
	tbl := v.m.Tables["ks"]["t"]
	tm := v.tablets[tbl.ID]
	if tm == nil || len(tm.Tablets) != 8 {
		t.Fatalf("table ks.t has no tablet map of 8 tablets: %+v", tm)
	}
	seen := map[string]int{}
	for i := range 400 {
		pk := []byte(fmt.Sprintf("key-%d", i))
		ti := tm.index(Token(pk))
		tb := tm.Tablets[ti]
		owner := tb.Replicas[0]
		seen[owner.Host]++
		for _, n := range []*Node{a, b} {
			got := n.TabletRoute("ks", "t", pk, owner.Shard)
			if n.hostID == owner.Host {
				if got != nil {
					t.Fatalf("%s holds tablet %d of key %s on shard %d, and still returned routing %+v", n.cfg.ListenAddress, ti, pk, owner.Shard, got)
				}
				if got := n.TabletRoute("ks", "t", pk, owner.Shard+1); got == nil {
					t.Fatalf("%s answered a request for key %s on shard %d without routing: its replica is on shard %d", n.cfg.ListenAddress, pk, owner.Shard+1, owner.Shard)
				}
				continue
			}
			if got == nil {
				t.Fatalf("%s is not a replica of key %s's tablet %d and returned no routing", n.cfg.ListenAddress, pk, ti)
			}
			first, last := tabletRange(ti, 8)
			if ti == 0 {
				first = math.MinInt64
			} else {
				first-- // (previous tablet's last token, last]
			}
			if got.FirstToken != first || got.LastToken != last {
				t.Fatalf("tablet %d routed as (%d, %d], want (%d, %d]", ti, got.FirstToken, got.LastToken, first, last)
			}
			if tok := Token(pk); !(tok > got.FirstToken && tok <= got.LastToken) {
				t.Fatalf("key %s's token %d is outside its routing (%d, %d]", pk, tok, got.FirstToken, got.LastToken)
			}
			if len(got.Replicas) != 1 || got.Replicas[0].HostID != parseUUID(owner.Host) || got.Replicas[0].Shard != owner.Shard {
				t.Fatalf("tablet %d routed to %+v, want host %s shard %d", ti, got.Replicas, owner.Host, owner.Shard)
			}
		}
	}
	if seen[a.hostID] == 0 || seen[b.hostID] == 0 {
		t.Fatalf("every key's tablet is on one node (%v): the test checked only one side", seen)
	}

	// A migration's pending replica is routed correctly on its shard.
	pk := []byte("key-1")
	ti := tm.index(Token(pk))
	other := b
	if tm.Tablets[ti].Replicas[0].Host == b.hostID {
		other = a
	}
	nv := *v
	nv.tablets = maps.Clone(v.tablets)
	moving := *tm
	moving.Tablets = slices.Clone(tm.Tablets)
	moving.Tablets[ti].Pending = &Replica{Host: other.hostID, Shard: 0}
	nv.tablets[tbl.ID] = &moving
	other.view.Store(&nv)
	if got := other.TabletRoute("ks", "t", pk, 0); got != nil {
		t.Errorf("the pending replica of key-1's tablet returned routing %+v", got)
	}
	if got := other.TabletRoute("ks", "t", pk, 1); got == nil {
		t.Errorf("the pending replica, asked on another shard, returned no routing")
	}

	// Unknown tables and tables without tablets have no routing.
	if got := a.TabletRoute("ks", "nope", pk, 0); got != nil {
		t.Errorf("an unknown table returned routing %+v", got)
	}
	if got := a.TabletRoute("system", "local", pk, 0); got != nil {
		t.Errorf("system.local (no tablets) returned routing %+v", got)
	}
}
