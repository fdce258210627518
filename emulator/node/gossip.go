package node

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Gossip and failure detection: heartbeats carry the metadata epoch and disk
// load; a member missing heartbeats for downAfter is marked DOWN. State: fdMu.

type heartbeat struct {
	HostID string
	Addr   string
	Epoch  uint64
	Load   int64
	// Generation is the sender's gossip generation: the second it started
	// (gms/gossiper.cc: generation_number is the start time in seconds).
	Generation int64
}

// generation is this node's gossip generation.
func (n *Node) generation() int64 { return n.started.Unix() }

func (n *Node) markSeen(host string) {
	if host == n.hostID {
		// The failure detector tracks the others only: a node never
		// convicts itself (gms/gossiper.cc do_status_check skips the local endpoint).
		return
	}
	n.fdMu.Lock()
	n.lastSeen[host] = time.Now()
	delete(n.downSince, host)
	wasUp := n.up[host]
	n.up[host] = true
	n.fdMu.Unlock()
	if !wasUp {
		n.wakeCoordinator() // topology_coordinator on_up: _topo_sm.event.broadcast()
		if nm := n.view.Load().m.Nodes[host]; nm != nil && host != n.hostID {
			n.log.Logf(scyllalog.Info, "gossip", "InetAddress %s is now UP, status = %s", nm.Addr, nm.State)
			n.emit(engine.Event{Kind: engine.StatusUp, Addr: net.ParseIP(nm.Addr), Port: nm.CQLPort})
		}
	}
}

// epochAhead is the newer epoch a live member reported recently (0 if none).
func (n *Node) epochAhead() uint64 {
	n.fdMu.Lock()
	defer n.fdMu.Unlock()
	if time.Since(n.aheadAt) > 5*time.Second || n.aheadEpoch <= n.view.Load().m.Epoch {
		return 0
	}
	return n.aheadEpoch
}

// isUp says whether a member is alive (this node always is).
func (n *Node) isUp(host string) bool {
	if host == n.hostID {
		return true
	}
	n.fdMu.Lock()
	defer n.fdMu.Unlock()
	return n.up[host]
}

func (n *Node) gossipLoop() {
	defer n.wg.Done()
	t := time.NewTicker(heartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		n.cfg.Life.Hold() // a paused node sends no heartbeat
		v := n.view.Load()
		hb := &heartbeat{HostID: n.hostID, Addr: n.cfg.ListenAddress, Epoch: v.m.Epoch, Load: n.disk.Used(), Generation: n.generation()}
		for id, nm := range v.m.Nodes {
			if id == n.hostID || nm.State == engine.StateLeft {
				continue
			}
			go func() {
				ctx, cancel := context.WithTimeout(n.ctx, heartbeatInterval*2)
				defer cancel()
				r, err := n.tr.call(ctx, nm.internode(), &msg{Op: opHeartbeat, Heartbeat: hb})
				if err != nil || r.Heartbeat == nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						n.tr.drop(nm.internode())
					}
					return
				}
				n.seenHeartbeat(r.Heartbeat)
				if r.Heartbeat.Epoch > n.view.Load().m.Epoch {
					n.pullMeta(n.ctx, nm.internode())
				}
			}()
		}
		// Mark members DOWN after missed heartbeats.
		now := time.Now()
		var down []string
		n.fdMu.Lock()
		for id, up := range n.up {
			if up && now.Sub(n.lastSeen[id]) > downAfter {
				n.up[id] = false
				n.downSince[id] = now
				down = append(down, id)
			}
		}
		n.fdMu.Unlock()
		if len(down) > 0 {
			n.wakeCoordinator() // topology_coordinator on_down
		}
		for _, id := range down {
			if nm := v.m.Nodes[id]; nm != nil {
				n.log.Logf(scyllalog.Info, "gossip", "InetAddress %s is now DOWN, status = %s", nm.Addr, nm.State)
				n.emit(engine.Event{Kind: engine.StatusDown, Addr: net.ParseIP(nm.Addr), Port: nm.CQLPort})
			}
		}
	}
}

func (n *Node) seenHeartbeat(hb *heartbeat) {
	n.fdMu.Lock()
	if hb.Epoch > n.view.Load().m.Epoch {
		n.aheadEpoch, n.aheadAt = max(n.aheadEpoch, hb.Epoch), time.Now()
	}
	n.loads[hb.HostID] = hb.Load
	if hb.Generation != 0 {
		n.gens[hb.HostID] = hb.Generation
	}
	n.fdMu.Unlock()
	if n.view.Load().m.Nodes[hb.HostID] != nil {
		n.markSeen(hb.HostID)
	}
}

func (n *Node) pullMeta(ctx context.Context, addr string) {
	if !n.pulling.CompareAndSwap(false, true) {
		return
	}
	defer n.pulling.Store(false)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := n.metaCall(ctx, addr, &msg{Op: opGetMeta})
	if err != nil || r.Meta == nil {
		return
	}
	if err := n.installMeta(r.Meta); err != nil {
		n.log.Logf(scyllalog.Error, "gossip", "Installing cluster metadata from %s: %v", addr, err)
	}
}
