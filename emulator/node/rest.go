package node

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

type kv struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// RESTHandler serves ScyllaDB's REST API (port 10000) as far as a cluster of
// this emulator can answer it, with ScyllaDB's paths, parameters, JSON
// shapes and errors (api/api-doc/*.json; routing and errors: rest_router.go).
// The groups: membership and topology operations here, the ring
// (rest_ring.go), per-keyspace operations and compaction (rest_ops.go),
// snapshots (rest_snapshots.go), gossip, failure detection and system
// (rest_gossip.go), data lookups and faults (rest_data.go).
func (n *Node) RESTHandler(nativeTransport func() bool) http.Handler {
	rt := newRESTRouter()
	n.restMembership(rt, nativeTransport)
	n.restRing(rt)
	n.restOps(rt)
	n.restSnapshots(rt)
	n.restGossip(rt)
	n.restData(rt)
	n.restTasks(rt)
	n.restTopPartitions(rt)
	n.restErrorInjection(rt)
	return rt
}

// members lists the addresses of the members pred selects, sorted.
func (n *Node) members(pred func(*NodeMeta) bool) []string {
	out := []string{}
	for _, nm := range sortedNodes(n.view.Load().m) {
		if pred(nm) {
			out = append(out, nm.Addr)
		}
	}
	sort.Strings(out)
	return out
}

// restMembership adds storage_service's membership and topology operations
// (api/storage_service.cc) and the snitch (api/endpoint_snitch.cc).
func (n *Node) restMembership(rt *restRouter, nativeTransport func() bool) {
	rt.handle("GET /storage_service/host_id", func(r *http.Request) (any, error) {
		out := []kv{}
		for _, nm := range sortedNodes(n.view.Load().m) {
			if nm.State != engine.StateLeft {
				out = append(out, kv{nm.Addr, nm.HostID})
			}
		}
		return out, nil
	})
	rt.handle("GET /storage_service/hostid/local", func(r *http.Request) (any, error) { return n.hostID, nil })
	rt.handle("GET /storage_service/nodes/joining", func(r *http.Request) (any, error) {
		return n.members(func(nm *NodeMeta) bool { return nm.State == engine.StateJoining }), nil
	})
	rt.handle("GET /storage_service/nodes/leaving", func(r *http.Request) (any, error) {
		return n.members(func(nm *NodeMeta) bool { return nm.State == engine.StateLeaving }), nil
	})
	rt.handle("GET /storage_service/operation_mode", func(r *http.Request) (any, error) { return n.OperationMode(), nil })
	rt.handle("GET /storage_service/load", func(r *http.Request) (any, error) { return float64(n.disk.Used()), nil })
	rt.handle("GET /storage_service/load_map", func(r *http.Request) (any, error) {
		n.fdMu.Lock()
		loads := map[string]int64{}
		for k, v := range n.loads {
			loads[k] = v
		}
		n.fdMu.Unlock()
		loads[n.hostID] = n.disk.Used()
		out := []kv{}
		for _, nm := range sortedNodes(n.view.Load().m) {
			if nm.State != engine.StateLeft {
				out = append(out, kv{nm.Addr, strconv.FormatInt(loads[nm.HostID], 10)})
			}
		}
		return out, nil
	})
	hostOr := func(r *http.Request) *NodeMeta {
		h := r.URL.Query().Get("host")
		for _, nm := range n.view.Load().m.Nodes {
			if (h == "" && nm.HostID == n.hostID) || nm.Addr == h {
				return nm
			}
		}
		return nil
	}
	rt.handle("GET /snitch/datacenter", func(r *http.Request) (any, error) {
		if nm := hostOr(r); nm != nil {
			return nm.DC, nil
		}
		return n.cfg.DC, nil
	})
	rt.handle("GET /snitch/rack", func(r *http.Request) (any, error) {
		if nm := hostOr(r); nm != nil {
			return nm.Rack, nil
		}
		return n.cfg.Rack, nil
	})
	// The emulator places nodes by the DC and rack it is given, as
	// GossipingPropertyFileSnitch does from cassandra-rackdc.properties.
	rt.handle("GET /snitch/name", func(r *http.Request) (any, error) {
		return "org.apache.cassandra.locator.GossipingPropertyFileSnitch", nil
	})
	rt.handle("GET /storage_service/native_transport", func(r *http.Request) (any, error) {
		return nativeTransport == nil || nativeTransport(), nil
	})
	rt.handle("POST /storage_service/decommission", func(r *http.Request) (any, error) {
		if err := n.Decommission(r.Context()); err != nil {
			n.log.Logf(scyllalog.Error, "storage_service", "Decommission failed: %v", err)
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	})
	rt.handle("POST /storage_service/remove_node", func(r *http.Request) (any, error) {
		h := r.URL.Query().Get("host_id")
		if err := n.RemoveNode(r.Context(), h); err != nil {
			n.log.Logf(scyllalog.Error, "storage_service", "removenode %s failed: %v", h, err)
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	}, "host_id")
	rt.handle("POST /storage_service/tablets/balancing", func(r *http.Request) (any, error) {
		en, err := strconv.ParseBool(r.URL.Query().Get("enabled"))
		if err != nil {
			return nil, badParam("enabled (%s): type error - should be bool", r.URL.Query().Get("enabled"))
		}
		if err := n.SetBalancing(r.Context(), en); err != nil {
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	}, "enabled")
	rt.handle("POST /storage_service/quiesce_topology", func(r *http.Request) (any, error) {
		if err := n.Quiesce(r.Context()); err != nil {
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	})
	rt.handle("GET /storage_service/cluster_name", func(r *http.Request) (any, error) { return n.cfg.ClusterName, nil })
	rt.handle("GET /storage_service/partitioner_name", func(r *http.Request) (any, error) {
		return "org.apache.cassandra.dht.Murmur3Partitioner", nil
	})
	rt.handle("GET /storage_service/release_version", func(r *http.Request) (any, error) { return "3.0.8", nil })
	rt.handle("GET /storage_service/scylla_release_version", func(r *http.Request) (any, error) { return n.cfg.Version, nil })
	rt.handle("GET /storage_service/schema_version", func(r *http.Request) (any, error) {
		return formatUUID(n.view.Load().schema.Version), nil
	})
}
