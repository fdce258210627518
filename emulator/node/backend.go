package node

import (
	"context"
	"math"
	"net"
	"strconv"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// engine.Backend outside the data path: client events (topology and schema
// changes) and cluster metadata.

// ---- events ----

// Subscribe implements engine.Backend.
func (n *Node) Subscribe() (<-chan engine.Event, func()) {
	ch := make(chan engine.Event, 64)
	n.subMu.Lock()
	n.subs[ch] = struct{}{}
	n.subMu.Unlock()
	return ch, func() {
		n.subMu.Lock()
		if _, ok := n.subs[ch]; ok {
			delete(n.subs, ch)
			close(ch)
		}
		n.subMu.Unlock()
	}
}

func (n *Node) emit(ev engine.Event) {
	n.subMu.Lock()
	defer n.subMu.Unlock()
	for ch := range n.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

// ---- engine.Backend: metadata ----

// Schema implements engine.Backend.
func (n *Node) Schema() *engine.Schema { return n.view.Load().schema }

// ClusterName implements engine.Backend.
func (n *Node) ClusterName() string { return n.cfg.ClusterName }

func (n *Node) nodeInfo(nm *NodeMeta) engine.NodeInfo {
	toks := make([]string, len(nm.Tokens))
	for i, t := range nm.Tokens {
		toks[i] = strconv.FormatInt(t, 10)
	}
	return engine.NodeInfo{HostID: parseUUID(nm.HostID), Addr: net.ParseIP(nm.Addr), CQLPort: nm.CQLPort, DC: nm.DC, Rack: nm.Rack,
		Tokens: toks, ReleaseVersion: "3.0.8", ScyllaVersion: n.cfg.Version, State: nm.State, Up: n.isUp(nm.HostID), Shards: nm.Shards}
}

// Local implements engine.Backend.
func (n *Node) Local() engine.NodeInfo {
	nm := n.view.Load().m.Nodes[n.hostID]
	if nm == nil {
		nm = n.self()
		nm.State = engine.StateJoining
	}
	return n.nodeInfo(nm)
}

// ReportsWaits implements engine.WaitReporter: replica writes and reads
// call engine.WillWait before they wait (capacity queues, replicas'
// answers, internode calls, a store holding writes back).
func (n *Node) ReportsWaits() {}

// Peers implements engine.Backend.
func (n *Node) Peers() []engine.NodeInfo {
	var out []engine.NodeInfo
	for _, nm := range sortedNodes(n.view.Load().m) {
		if nm.HostID == n.hostID || nm.State == engine.StateLeft {
			continue
		}
		out = append(out, n.nodeInfo(nm))
	}
	return out
}

// ApplySchema implements engine.Backend: the change is made by the topology
// coordinator and published to every live member before this returns.
func (n *Node) ApplySchema(ctx context.Context, ch engine.SchemaChange) (*engine.Schema, error) {
	if err := n.coord(ctx, &coordOp{Kind: "schema", Change: &ch}); err != nil {
		return nil, err
	}
	return n.view.Load().schema, nil
}

// Truncate implements engine.Backend.
func (n *Node) Truncate(ctx context.Context, keyspace, table string) error {
	v := n.view.Load()
	t := v.m.Tables[keyspace][table]
	if t == nil {
		return engine.Errorf(engine.CodeInvalid, "unconfigured table %s", table)
	}
	for id, nm := range v.m.Nodes {
		if nm.State == engine.StateLeft {
			continue
		}
		if !n.isUp(id) {
			return engine.Errorf(engine.CodeTruncateError, "Cannot truncate %s.%s: node %s is down", keyspace, table, nm.Addr)
		}
		if _, err := n.call(ctx, id, &msg{Op: opTruncate, Table: t.ID}); err != nil {
			return engine.Errorf(engine.CodeTruncateError, "Truncating %s.%s on %s: %v", keyspace, table, nm.Addr, err)
		}
	}
	return nil
}

// TabletRoute implements engine.TabletRouter, as ScyllaDB's
// tablet_effective_replication_map::check_locality (locator/tablets.cc):
// nothing when this node is a replica of the key's tablet on the client's
// shard, or its pending replica there; otherwise the tablet's range
// (previous tablet's last token, its last token] (the minimum token,
// math.MinInt64, for the first tablet) and its replicas.
func (n *Node) TabletRoute(keyspace, table string, partitionKey []byte, shard int) *engine.TabletRoute {
	v := n.view.Load()
	t := v.m.Tables[keyspace][table]
	if t == nil {
		return nil
	}
	tm := v.tablets[t.ID]
	if tm == nil || len(tm.Tablets) == 0 {
		return nil // a vnode keyspace: check_locality of a vnode map is always nullopt
	}
	i := tm.index(Token(partitionKey))
	tb := &tm.Tablets[i]
	for _, r := range tb.Replicas {
		if r.Host == n.hostID {
			if r.Shard == shard {
				return nil
			}
			return n.tabletRoute(tm, i)
		}
	}
	if p := tb.Pending; p != nil && p.Host == n.hostID && p.Shard == shard {
		return nil
	}
	return n.tabletRoute(tm, i)
}

// Tablets implements engine.TabletLister: every tablet of a table's map.
func (n *Node) Tablets(keyspace, table string) []engine.TabletRoute {
	v := n.view.Load()
	t := v.m.Tables[keyspace][table]
	if t == nil || v.tablets[t.ID] == nil {
		return nil
	}
	tm := v.tablets[t.ID]
	out := make([]engine.TabletRoute, 0, len(tm.Tablets))
	for i := range tm.Tablets {
		out = append(out, *n.tabletRoute(tm, i))
	}
	return out
}

func (n *Node) tabletRoute(tm *TabletMap, i int) *engine.TabletRoute {
	_, last := tabletRange(i, len(tm.Tablets))
	first := int64(math.MinInt64)
	if i > 0 {
		_, first = tabletRange(i-1, len(tm.Tablets))
	}
	rt := &engine.TabletRoute{FirstToken: first, LastToken: last}
	for _, r := range tm.Tablets[i].Replicas {
		rt.Replicas = append(rt.Replicas, engine.TabletReplica{HostID: parseUUID(r.Host), Shard: r.Shard})
	}
	return rt
}
