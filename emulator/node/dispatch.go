package node

import (
	"context"
	"errors"
	"fmt"
)

// Internode RPC dispatch: which subsystem serves each message (the transport
// itself is in rpc.go).

func (n *Node) handle(ctx context.Context, m *msg) (*msg, error) {
	switch m.Op {
	case opHeartbeat:
		if m.Heartbeat != nil {
			n.seenHeartbeat(m.Heartbeat)
			if m.Heartbeat.Epoch > n.view.Load().m.Epoch {
				if nm := n.view.Load().m.Nodes[m.Heartbeat.HostID]; nm != nil {
					go n.pullMeta(n.ctx, nm.internode())
				}
			}
		}
		return &msg{Heartbeat: &heartbeat{HostID: n.hostID, Addr: n.cfg.ListenAddress, Epoch: n.view.Load().m.Epoch, Load: n.disk.Used(), Generation: n.generation()}}, nil
	case opGetMeta:
		return &msg{Meta: n.view.Load().m}, nil
	case opPushMeta:
		if m.Meta == nil {
			return nil, errors.New("push_meta without metadata")
		}
		return nil, n.installMeta(m.Meta)
	case opWrite:
		return nil, n.localWrite(ctx, m.Muts, false)
	case opCounterApply:
		return nil, n.localWrite(ctx, m.Muts, true)
	case opCounterLead:
		if len(m.Muts) != 1 {
			return nil, errors.New("counter_lead without one mutation")
		}
		return nil, n.leadCounter(ctx, &m.Muts[0], m.CL)
	case opPaxosLock, opPaxosUnlock:
		return n.servePaxosLock(ctx, m)
	case opRangeRead:
		if m.Range == nil {
			return nil, errors.New("range_read without a request")
		}
		rows, err := n.localReadRange(ctx, m.Range)
		return &msg{RangeRows: rows}, err
	case opRead:
		if m.Read == nil {
			return nil, errors.New("read without a request")
		}
		n.met.remoteReads.Add(1)
		v := n.view.Load()
		_, t, err := n.lookup(v, m.Read.Keyspace, m.Read.Table)
		if err != nil {
			return nil, err
		}
		rows, err := n.readTable(ctx, v, t, *m.Read)
		if err != nil {
			return nil, err
		}
		// The answer carries the table's cache hit rate here, as
		// storage_proxy's read answers carry its cache_temperature.
		temp := n.cacheTemperature(t.ID)
		return &msg{Rows: rows, Temp: temp}, nil
	case opCoord:
		if m.Coord == nil {
			return nil, errors.New("coord without an operation")
		}
		return nil, n.handleCoord(ctx, m.Coord)
	case opStream:
		if m.Stream == nil {
			return nil, errors.New("stream without a request")
		}
		return nil, n.streamIn(ctx, m.Stream)
	case opScan:
		if m.Scan == nil {
			return nil, errors.New("scan without a request")
		}
		return n.scanOut(ctx, m.Scan)
	case opVnodeBootstrap:
		return nil, n.vnodeBootstrap(ctx, m.Meta)
	case opRepairPull:
		return nil, n.repairPull(ctx, m.Scan)
	case opTruncate:
		s := tableStart(m.Table)
		return nil, n.store.DeleteRange(s, keyUpperBound(s), true)
	}
	return nil, fmt.Errorf("unknown internode operation %q", m.Op)
}

// call sends m to a member (or handles it locally).
func (n *Node) call(ctx context.Context, host string, m *msg) (*msg, error) {
	if host == n.hostID {
		return n.handle(ctx, m)
	}
	nm := n.view.Load().m.Nodes[host]
	if nm == nil {
		return nil, fmt.Errorf("unknown host %s", host)
	}
	return n.tr.call(ctx, nm.internode(), m)
}

// callAsync sends m to a remote member; done gets the answer (from the
// connection's reader, or the member itself when it is a node of this
// process: mempeers.go; so it must not block, nor change the answer,
// which may be shared).
func (n *Node) callAsync(ctx context.Context, host string, m *msg, done func(*msg, error)) {
	nm := n.view.Load().m.Nodes[host]
	if nm == nil {
		done(nil, fmt.Errorf("unknown host %s", host))
		return
	}
	if directOp(m.Op) {
		if d := n.tr.peers.direct(nm.internode()); d != nil && d.call(m, done) {
			return
		}
	}
	c, err := n.tr.get(ctx, nm.internode())
	if err != nil {
		done(nil, err)
		return
	}
	c.start(ctx, m, done)
}

// servesAtOnce says whether this node serves a data path request of a node
// of its process without waiting: its shard's queue would not make it
// sleep (capacity.Model.Immediate) and, for a write, its store is not
// stalling writes. The caller's goroutine then serves it (mempeers.go).
func (n *Node) servesAtOnce(m *msg) bool {
	v := n.view.Load()
	switch m.Op {
	case opWrite, opCounterApply:
		if n.store.writesStalled() {
			return false
		}
		for i := range m.Muts {
			if !n.immediate(v, m.Muts[i].Keyspace, m.Muts[i].Table, m.Muts[i].PartitionKey) {
				return false
			}
		}
		return true
	case opRead:
		return m.Read != nil && n.immediate(v, m.Read.Keyspace, m.Read.Table, m.Read.PartitionKey)
	}
	return false
}

// immediate: a unit of request work on the partition's shard runs at once.
func (n *Node) immediate(v *view, ks, table string, pk []byte) bool {
	_, t, err := n.lookup(v, ks, table)
	if err != nil {
		return true // answered at once, with the error
	}
	return n.cap.Immediate(n.shardOf(v, t, Token(pk)), 1)
}
