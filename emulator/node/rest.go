package node

import (
	"encoding/json"
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

// RESTHandler serves the subset of ScyllaDB's REST API (port 10000) the
// framework uses, with ScyllaDB's paths and JSON shapes.
func (n *Node) RESTHandler(nativeTransport func() bool) http.Handler {
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	fail := func(w http.ResponseWriter, code int, err error) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"message": err.Error(), "code": code})
	}
	members := func(pred func(*NodeMeta) bool) []string {
		out := []string{}
		for _, nm := range sortedNodes(n.view.Load().m) {
			if pred(nm) {
				out = append(out, nm.Addr)
			}
		}
		sort.Strings(out)
		return out
	}
	mux.HandleFunc("GET /storage_service/host_id", func(w http.ResponseWriter, r *http.Request) {
		out := []kv{}
		for _, nm := range sortedNodes(n.view.Load().m) {
			if nm.State != engine.StateLeft {
				out = append(out, kv{nm.Addr, nm.HostID})
			}
		}
		js(w, out)
	})
	mux.HandleFunc("GET /storage_service/hostid/local", func(w http.ResponseWriter, r *http.Request) { js(w, n.hostID) })
	mux.HandleFunc("GET /gossiper/endpoint/live/", func(w http.ResponseWriter, r *http.Request) {
		js(w, members(func(nm *NodeMeta) bool { return nm.State != engine.StateLeft && n.isUp(nm.HostID) }))
	})
	mux.HandleFunc("GET /gossiper/endpoint/down/", func(w http.ResponseWriter, r *http.Request) {
		js(w, members(func(nm *NodeMeta) bool { return nm.State != engine.StateLeft && !n.isUp(nm.HostID) }))
	})
	mux.HandleFunc("GET /storage_service/nodes/joining", func(w http.ResponseWriter, r *http.Request) {
		js(w, members(func(nm *NodeMeta) bool { return nm.State == engine.StateJoining }))
	})
	mux.HandleFunc("GET /storage_service/nodes/leaving", func(w http.ResponseWriter, r *http.Request) {
		js(w, members(func(nm *NodeMeta) bool { return nm.State == engine.StateLeaving }))
	})
	mux.HandleFunc("GET /storage_service/operation_mode", func(w http.ResponseWriter, r *http.Request) { js(w, n.OperationMode()) })
	mux.HandleFunc("GET /storage_service/load", func(w http.ResponseWriter, r *http.Request) { js(w, float64(n.disk.Used())) })
	mux.HandleFunc("GET /storage_service/load_map", func(w http.ResponseWriter, r *http.Request) {
		out := []kv{}
		n.fdMu.Lock()
		loads := map[string]int64{}
		for k, v := range n.loads {
			loads[k] = v
		}
		n.fdMu.Unlock()
		loads[n.hostID] = n.disk.Used()
		for _, nm := range sortedNodes(n.view.Load().m) {
			if nm.State != engine.StateLeft {
				out = append(out, kv{nm.Addr, strconv.FormatInt(loads[nm.HostID], 10)})
			}
		}
		js(w, out)
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
	mux.HandleFunc("GET /snitch/datacenter", func(w http.ResponseWriter, r *http.Request) {
		if nm := hostOr(r); nm != nil {
			js(w, nm.DC)
			return
		}
		js(w, n.cfg.DC)
	})
	mux.HandleFunc("GET /snitch/rack", func(w http.ResponseWriter, r *http.Request) {
		if nm := hostOr(r); nm != nil {
			js(w, nm.Rack)
			return
		}
		js(w, n.cfg.Rack)
	})
	mux.HandleFunc("GET /storage_service/native_transport", func(w http.ResponseWriter, r *http.Request) {
		js(w, nativeTransport == nil || nativeTransport())
	})
	mux.HandleFunc("POST /storage_service/decommission", func(w http.ResponseWriter, r *http.Request) {
		if err := n.Decommission(r.Context()); err != nil {
			n.log.Logf(scyllalog.Error, "storage_service", "Decommission failed: %v", err)
			fail(w, http.StatusInternalServerError, err)
			return
		}
		js(w, nil)
	})
	mux.HandleFunc("POST /storage_service/remove_node", func(w http.ResponseWriter, r *http.Request) {
		h := r.URL.Query().Get("host_id")
		if h == "" {
			fail(w, http.StatusBadRequest, errMissing("host_id"))
			return
		}
		if err := n.RemoveNode(r.Context(), h); err != nil {
			n.log.Logf(scyllalog.Error, "storage_service", "removenode %s failed: %v", h, err)
			fail(w, http.StatusInternalServerError, err)
			return
		}
		js(w, nil)
	})
	mux.HandleFunc("POST /storage_service/tablets/balancing", func(w http.ResponseWriter, r *http.Request) {
		en, err := strconv.ParseBool(r.URL.Query().Get("enabled"))
		if err != nil {
			fail(w, http.StatusBadRequest, errMissing("enabled (true|false)"))
			return
		}
		if err := n.SetBalancing(r.Context(), en); err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		js(w, nil)
	})
	// nodetool flush: "Flush all memtables in all keyspaces" (scylladb
	// api/storage_service.cc force_flush: apilog.info("flush all tables"),
	// database::flush_all_tables on every shard; api-doc/storage_service.json).
	mux.HandleFunc("POST /storage_service/flush", func(w http.ResponseWriter, r *http.Request) {
		n.log.Logf(scyllalog.Info, "api", "flush all tables")
		if err := n.store.Flush(); err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		n.disk.Refresh()
		js(w, nil)
	})
	mux.HandleFunc("POST /storage_service/quiesce_topology", func(w http.ResponseWriter, r *http.Request) {
		if err := n.Quiesce(r.Context()); err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		js(w, nil)
	})
	n.restData(mux, js, fail)
	return mux
}

type errMissing string

func (e errMissing) Error() string { return "missing or invalid query parameter " + string(e) }
