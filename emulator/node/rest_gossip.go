package node

import (
	"fmt"
	"net/http"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Gossip, failure detection and system routes of the REST API
// (api/gossiper.cc, api/failure_detector.cc, api/system.cc).

// endpointState is failure_detector's endpoint_state
// (api-doc/failure_detector.json).
type endpointState struct {
	Addrs            string `json:"addrs"`
	IsAlive          bool   `json:"is_alive"`
	Generation       int64  `json:"generation"`
	Version          int64  `json:"version"`
	UpdateTime       int64  `json:"update_time"`
	ApplicationState []any  `json:"application_state"`
}

// gossipMembers are the members gossip knows: every member that has not left.
func (n *Node) gossipMembers() []*NodeMeta {
	var out []*NodeMeta
	for _, nm := range sortedNodes(n.view.Load().m) {
		if nm.State != engine.StateLeft {
			out = append(out, nm)
		}
	}
	return out
}

// memberByAddr finds a member by address, as gossiper::get_host_id does
// (it throws for an address gossip does not know: a 500).
func (n *Node) memberByAddr(addr string) (*NodeMeta, error) {
	for _, nm := range n.gossipMembers() {
		if nm.Addr == addr {
			return nm, nil
		}
	}
	return nil, runtimeError("Host %s does not have HOST_ID application_state", addr)
}

// gossipFacts are what this node's failure detector holds of a member:
// its generation, when it was last heard from and, if it is unreachable,
// since when.
func (n *Node) gossipFacts(nm *NodeMeta) (gen int64, seen, downSince time.Time, down bool) {
	if nm.HostID == n.hostID {
		return n.generation(), time.Now(), time.Time{}, false
	}
	n.fdMu.Lock()
	defer n.fdMu.Unlock()
	gen, seen = n.gens[nm.HostID], n.lastSeen[nm.HostID]
	if n.up[nm.HostID] {
		return gen, seen, time.Time{}, false
	}
	downSince, ok := n.downSince[nm.HostID]
	if !ok {
		downSince = n.started // never heard from since this node started
	}
	return gen, seen, downSince, true
}

func (n *Node) restGossip(rt *restRouter) {
	rt.handle("GET /gossiper/endpoint/live", func(r *http.Request) (any, error) {
		return n.members(func(nm *NodeMeta) bool { return nm.State != engine.StateLeft && n.isUp(nm.HostID) }), nil
	})
	rt.handle("GET /gossiper/endpoint/down", func(r *http.Request) (any, error) {
		return n.members(func(nm *NodeMeta) bool { return nm.State != engine.StateLeft && !n.isUp(nm.HostID) }), nil
	})
	// gossiper::get_endpoint_downtime: microseconds since the member was
	// marked unreachable, 0 for a live one.
	rt.handle("GET /gossiper/downtime/{addr}", func(r *http.Request) (any, error) {
		nm, err := n.memberByAddr(r.PathValue("addr"))
		if err != nil {
			return nil, err
		}
		if _, _, since, down := n.gossipFacts(nm); down {
			return time.Since(since).Microseconds(), nil
		}
		return 0, nil
	})
	rt.handle("GET /gossiper/generation_number/{addr}", func(r *http.Request) (any, error) {
		nm, err := n.memberByAddr(r.PathValue("addr"))
		if err != nil {
			return nil, err
		}
		gen, _, _, _ := n.gossipFacts(nm)
		return gen, nil
	})
	// The heart beat version counts heartbeats since the generation began:
	// one per heartbeat interval.
	rt.handle("GET /gossiper/heart_beat_version/{addr}", func(r *http.Request) (any, error) {
		nm, err := n.memberByAddr(r.PathValue("addr"))
		if err != nil {
			return nil, err
		}
		gen, seen, _, _ := n.gossipFacts(nm)
		return heartBeatVersion(gen, seen), nil
	})
	rt.handle("GET /failure_detector/endpoints", func(r *http.Request) (any, error) {
		out := []endpointState{}
		for _, nm := range n.gossipMembers() {
			gen, seen, _, down := n.gossipFacts(nm)
			out = append(out, endpointState{Addrs: nm.Addr, IsAlive: !down, Generation: gen, Version: heartBeatVersion(gen, seen),
				UpdateTime: seen.UnixMilli(), ApplicationState: []any{}})
		}
		return out, nil
	})
	rt.handle("GET /failure_detector/endpoints/states/{addr}", func(r *http.Request) (any, error) {
		nm, err := n.memberByAddr(r.PathValue("addr"))
		if err != nil {
			return fmt.Sprintf("unknown endpoint %s", r.PathValue("addr")), nil
		}
		gen, seen, _, _ := n.gossipFacts(nm)
		return fmt.Sprintf("/%s\n  generation:%d\n  heartbeat:%d\n  DC:%s\n  RACK:%s\n  HOST_ID:%s\n  STATUS:%s\n",
			nm.Addr, gen, heartBeatVersion(gen, seen), nm.DC, nm.Rack, nm.HostID, operationMode(nm.State)), nil
	})
	rt.handle("GET /failure_detector/simple_states", func(r *http.Request) (any, error) {
		out := []kv{}
		for _, nm := range n.gossipMembers() {
			state := "UP"
			if !n.isUp(nm.HostID) {
				state = "DOWN"
			}
			out = append(out, kv{nm.Addr, state})
		}
		return out, nil
	})
	count := func(up bool) restFunc {
		return func(r *http.Request) (any, error) {
			c := 0
			for _, nm := range n.gossipMembers() {
				if n.isUp(nm.HostID) == up {
					c++
				}
			}
			return c, nil
		}
	}
	rt.handle("GET /failure_detector/count/endpoint/up", count(true))
	rt.handle("GET /failure_detector/count/endpoint/down", count(false))
	rt.handle("GET /failure_detector/phi", func(r *http.Request) (any, error) { return 8, nil })
	// "We no longer have a phi failure detector, just returning the empty
	// value is good enough."
	rt.handle("GET /failure_detector/endpoint_phi_values", func(r *http.Request) (any, error) { return []any{}, nil })

	rt.handle("GET /system/uptime_ms", func(r *http.Request) (any, error) { return time.Since(n.started).Milliseconds(), nil })
	// The sstable formats (sstables/sstables_manager.cc): the highest the
	// cluster's features allow, mt, and the one written, sstable_format of
	// the scylla.yaml ScyllaDB ships (conf/scylla.yaml: sstable_format: mt).
	rt.handle("GET /system/highest_supported_sstable_version", func(r *http.Request) (any, error) { return "mt", nil })
	rt.handle("GET /system/chosen_sstable_version", func(r *http.Request) (any, error) { return "mt", nil })
}

func heartBeatVersion(gen int64, seen time.Time) int64 {
	if gen == 0 || seen.IsZero() {
		return 0
	}
	return max(0, int64(seen.Sub(time.Unix(gen, 0))/heartbeatInterval))
}

// restErrorInjection adds v2/error_injection as a release build has it
// (api/error_injection.cc over utils/error_injection.hh's
// error_injection<false>): enabling and disabling are accepted and do
// nothing, and no injection is ever enabled.
func (n *Node) restErrorInjection(rt *restRouter) {
	void := func(r *http.Request) (any, error) { return voidReply{}, nil }
	rt.handle("POST /v2/error_injection/injection/{injection}", void)
	rt.handle("DELETE /v2/error_injection/injection/{injection}", void)
	rt.handle("DELETE /v2/error_injection/injection", void)
	rt.handle("POST /v2/error_injection/injection/{injection}/message", void)
	rt.handle("GET /v2/error_injection/injection", func(r *http.Request) (any, error) { return []string{}, nil })
}
