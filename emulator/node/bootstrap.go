package node

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Bootstrap of vnodes keyspaces (dht/range_streamer.cc,
// service/storage_service.cc bootstrap): a joining node streams, for every
// vnodes keyspace, the token ranges it will own from the replicas that
// owned them before it (tablets keyspaces get their replicas from the load
// balancer instead). The coordinator asks for it while the node is joining
// and, to catch up with the rows written meanwhile (the emulator does not
// send writes to a pending replica), once more when it is normal. The old
// replicas keep their copy until nodetool cleanup.

// hasVnodeTables says whether m has a vnodes keyspace with a table.
func hasVnodeTables(m *Meta) bool {
	for ks, k := range m.Keyspaces {
		if !k.TabletsEnabled && len(m.Tables[ks]) > 0 {
			return true
		}
	}
	return false
}

// bootstrapVnodes has the joining member host stream its vnodes ranges.
func (n *Node) bootstrapVnodes(ctx context.Context, host string) error {
	m := n.view.Load().m
	if !hasVnodeTables(m) {
		return nil
	}
	_, err := n.call(ctx, host, &msg{Op: opVnodeBootstrap, Meta: m})
	return err
}

// rangeIntervals are a ring range (start, end] as inclusive token intervals.
func rangeIntervals(r tokenRange) [][2]int64 {
	switch {
	case r.start == r.end:
		return [][2]int64{{math.MinInt64, math.MaxInt64}}
	case r.start < r.end:
		return [][2]int64{{r.start + 1, r.end}}
	}
	out := [][2]int64{{math.MinInt64, r.end}}
	if r.start < math.MaxInt64 {
		out = append(out, [2]int64{r.start + 1, math.MaxInt64})
	}
	return out
}

// vnodeBootstrap pulls into this node the rows of the vnodes ranges it
// owns once normal in m, from their replicas in the ring without it.
func (n *Node) vnodeBootstrap(ctx context.Context, m *Meta) error {
	if m == nil || m.Nodes[n.hostID] == nil {
		return errors.New("bootstrap without this node in the metadata")
	}
	withMe, without := m.clone(), m.clone()
	in, out := *m.Nodes[n.hostID], *m.Nodes[n.hostID]
	in.State, out.State = engine.StateNormal, engine.StateJoining
	withMe.Nodes[n.hostID], without.Nodes[n.hostID] = &in, &out
	nv, ov := newView(withMe), newView(without)
	for ks, k := range nv.m.Keyspaces {
		tables := nv.m.Tables[ks]
		if k.TabletsEnabled || len(tables) == 0 || len(ov.ring) == 0 {
			continue
		}
		var bytesBefore int64 = n.disk.Used()
		for _, r := range vnodeRanges(nv, k) {
			if !r.hasReplica(n.hostID) {
				continue
			}
			var sources []string
			for _, rep := range vnodeReplicas(ov.ring, k, r.end, ov.dcs) {
				if rep.Host != n.hostID {
					sources = append(sources, rep.Host)
				}
			}
			for _, iv := range rangeIntervals(r) {
				for _, t := range tables {
					if err := n.pullFromAny(ctx, sources, t, iv); err != nil {
						return fmt.Errorf("bootstrap of %s.%s: %w", ks, t.Name, err)
					}
				}
			}
		}
		n.disk.Refresh()
		n.log.Logf(scyllalog.Info, "range_streamer", "Bootstrap with %d old replicas for keyspace=%s succeeded, %d bytes on disk before", len(ov.m.Nodes)-1, ks, bytesBefore)
	}
	return nil
}

// pullFromAny merges a table's rows of the interval from the first source
// that answers.
func (n *Node) pullFromAny(ctx context.Context, sources []string, t *engine.Table, iv [2]int64) error {
	start, end := tokenRangeKeys(t.ID, iv[0], iv[1])
	err := errors.New("no live source replica")
	for _, src := range sources {
		if !n.isUp(src) {
			continue
		}
		if err = n.pullRepair(ctx, src, t.ID, start, end); err == nil {
			return nil
		}
	}
	return err
}
