package node

import (
	"math"
	"net/http"
	"sort"
	"strconv"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The ring as the REST API shows it: tokens, describe_ring,
// range_to_endpoint_map, tokens_endpoint and ownership (api/token_metadata.cc,
// api/storage_service.cc rest_describe_ring, rest_get_range_to_endpoint_map,
// rest_get_token_endpoint, rest_get_ownership, rest_get_effective_ownership;
// service/storage_service.cc get_ownership, effective_ownership).

// tokenRange is (start, end] with its natural replicas.
type tokenRange struct {
	start, end int64
	replicas   []Replica
}

// width is the range's share of the ring (dht::token::describe_ownership):
// a ring of one token owns all of it.
func (r tokenRange) width() float64 {
	if r.start == r.end {
		return 1
	}
	return float64(uint64(r.end-r.start)) / math.Pow(2, 64)
}

// hasReplica says whether host is one of the range's natural replicas.
func (r tokenRange) hasReplica(host string) bool {
	for _, rep := range r.replicas {
		if rep.Host == host {
			return true
		}
	}
	return false
}

// vnodeRanges are the ring's ranges with the keyspace's replicas: a token's
// range runs from the previous ring token (the last one for the first)
// (locator/token_metadata.cc, abstract_replication_strategy get_ranges).
func vnodeRanges(v *view, k *engine.Keyspace) []tokenRange {
	out := make([]tokenRange, 0, len(v.ring))
	for i, e := range v.ring {
		prev := v.ring[(i+len(v.ring)-1)%len(v.ring)].token
		out = append(out, tokenRange{start: prev, end: e.token, replicas: vnodeReplicas(v.ring, k, e.token, v.dcs)})
	}
	return out
}

// tabletRanges are a table's tablets as ranges: tablet i ends at its last
// token and starts after the previous one's (locator/tablets.cc
// tablet_map::get_token_range; the first starts at the minimum token).
func tabletRanges(tm *TabletMap) []tokenRange {
	out := make([]tokenRange, 0, len(tm.Tablets))
	for i, tb := range tm.Tablets {
		first, last := tabletRange(i, len(tm.Tablets))
		start := first - 1
		if first == math.MinInt64 {
			start = math.MinInt64
		}
		out = append(out, tokenRange{start: start, end: last, replicas: tb.Replicas})
	}
	return out
}

// keyspaceRanges resolves keyspace (and table, "" for none) to its ranges,
// with the API's checks: a tablets keyspace needs a table (ensure_tablets_disabled).
func (n *Node) keyspaceRanges(v *view, ks, table, endpoint string) ([]tokenRange, error) {
	k := v.m.Keyspaces[ks]
	if k == nil {
		return nil, noSuchKeyspace(ks)
	}
	if table == "" {
		if k.TabletsEnabled {
			return nil, badParam("%s is per-table in keyspace '%s'. Please provide table name using 'cf' parameter.", endpoint, ks)
		}
		return vnodeRanges(v, k), nil
	}
	t := v.m.Tables[ks][table]
	if t == nil {
		return nil, noSuchTable(ks, table)
	}
	if tm := v.tablets[t.ID]; tm != nil && len(tm.Tablets) > 0 {
		return tabletRanges(tm), nil
	}
	return vnodeRanges(v, k), nil
}

func (v *view) addrs(reps []Replica) []string {
	out := []string{}
	for _, r := range reps {
		if nm := v.m.Nodes[r.Host]; nm != nil {
			out = append(out, nm.Addr)
		}
	}
	return out
}

type endpointDetail struct {
	Host       string `json:"host"`
	Datacenter string `json:"datacenter"`
	Rack       string `json:"rack,omitempty"`
}

type ringRange struct {
	StartToken      string           `json:"start_token"`
	EndToken        string           `json:"end_token"`
	Endpoints       []string         `json:"endpoints"`
	RPCEndpoints    []string         `json:"rpc_endpoints"`
	EndpointDetails []endpointDetail `json:"endpoint_details"`
}

// ownership sums, per member address, the ring share of the ranges it is a
// replica of; every member that owns tokens is listed, with 0 if it owns none.
func ownership(v *view, ranges []tokenRange) []kv {
	own := map[string]float64{}
	for _, nm := range v.m.Nodes {
		if nm.State == engine.StateNormal || nm.State == engine.StateLeaving {
			own[nm.Addr] += 0
		}
	}
	for _, r := range ranges {
		for _, a := range v.addrs(r.replicas) {
			own[a] += r.width()
		}
	}
	out := make([]kv, 0, len(own))
	for a, f := range own {
		out = append(out, kv{a, strconv.FormatFloat(float64(float32(f)), 'g', -1, 32)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// systemTracesKeyspace is how ScyllaDB defines system_traces (tracing/
// trace_keyspace_helper.cc: SimpleStrategy, RF 2); effective ownership with
// no keyspace is computed for it.
var systemTracesKeyspace = &engine.Keyspace{Name: "system_traces",
	Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "2"}}

func (n *Node) restRing(rt *restRouter) {
	rt.handle("GET /storage_service/keyspaces", func(r *http.Request) (any, error) {
		return n.keyspaceNames(r.URL.Query().Get("type"), r.URL.Query().Get("replication")), nil
	})
	rt.handle("GET /storage_service/tokens", func(r *http.Request) (any, error) {
		out := []string{}
		for _, e := range n.view.Load().ring {
			out = append(out, strconv.FormatInt(e.token, 10))
		}
		return out, nil
	})
	rt.handle("GET /storage_service/tokens/{endpoint}", func(r *http.Request) (any, error) {
		out := []string{}
		for _, e := range n.view.Load().ring {
			if e.host.Addr == r.PathValue("endpoint") {
				out = append(out, strconv.FormatInt(e.token, 10))
			}
		}
		return out, nil
	})
	rt.handle("GET /storage_service/tokens_endpoint", func(r *http.Request) (any, error) {
		v := n.view.Load()
		q := r.URL.Query()
		if (q.Get("keyspace") == "") != (q.Get("cf") == "") {
			return nil, badParam("Either provide both keyspace and table (for tablet table) or neither (for vnodes)")
		}
		out := []kv{}
		if q.Get("keyspace") == "" {
			for _, e := range v.ring {
				out = append(out, kv{strconv.FormatInt(e.token, 10), e.host.Addr})
			}
			return out, nil
		}
		ranges, err := n.keyspaceRanges(v, q.Get("keyspace"), q.Get("cf"), "storage_service/tokens_endpoint")
		if err != nil {
			return nil, err
		}
		for _, tr := range ranges {
			if a := v.addrs(tr.replicas); len(a) > 0 {
				out = append(out, kv{strconv.FormatInt(tr.end, 10), a[0]})
			}
		}
		return out, nil
	})
	rt.handle("GET /storage_service/describe_ring/{keyspace}", func(r *http.Request) (any, error) {
		v := n.view.Load()
		ranges, err := n.keyspaceRanges(v, r.PathValue("keyspace"), r.URL.Query().Get("table"), "storage_service/describe_ring")
		if err != nil {
			return nil, err
		}
		out := []ringRange{}
		for _, tr := range ranges {
			rr := ringRange{StartToken: strconv.FormatInt(tr.start, 10), EndToken: strconv.FormatInt(tr.end, 10),
				Endpoints: v.addrs(tr.replicas), RPCEndpoints: v.addrs(tr.replicas), EndpointDetails: []endpointDetail{}}
			for _, rep := range tr.replicas {
				if nm := v.m.Nodes[rep.Host]; nm != nil {
					rr.EndpointDetails = append(rr.EndpointDetails, endpointDetail{nm.Addr, nm.DC, nm.Rack})
				}
			}
			out = append(out, rr)
		}
		return out, nil
	})
	rt.handle("GET /storage_service/range_to_endpoint_map/{keyspace}", func(r *http.Request) (any, error) {
		v := n.view.Load()
		ranges, err := n.keyspaceRanges(v, r.PathValue("keyspace"), r.URL.Query().Get("cf"), "storage_service/range_to_endpoint_map")
		if err != nil {
			return nil, err
		}
		type maplist struct {
			Key   []string `json:"key"`
			Value []string `json:"value"`
		}
		out := []maplist{}
		for _, tr := range ranges {
			out = append(out, maplist{[]string{strconv.FormatInt(tr.start, 10), strconv.FormatInt(tr.end, 10)}, v.addrs(tr.replicas)})
		}
		return out, nil
	})
	// nodetool status's "Owns" without a keyspace: each node's primary
	// share of the token ring; refused while a keyspace uses tablets.
	rt.handle("GET /storage_service/ownership", func(r *http.Request) (any, error) {
		v := n.view.Load()
		for _, k := range v.m.Keyspaces {
			if k.TabletsEnabled {
				return nil, badParam("storage_service/ownership cannot be used when a keyspace uses tablets")
			}
		}
		ranges := make([]tokenRange, 0, len(v.ring))
		for i, e := range v.ring {
			prev := v.ring[(i+len(v.ring)-1)%len(v.ring)].token
			ranges = append(ranges, tokenRange{start: prev, end: e.token, replicas: []Replica{{Host: e.host.HostID}}})
		}
		return ownership(v, ranges), nil
	})
	rt.handle("GET /storage_service/ownership/{keyspace}", func(r *http.Request) (any, error) {
		v := n.view.Load()
		ks := r.PathValue("keyspace")
		if ks != "null" {
			ranges, err := n.keyspaceRanges(v, ks, r.URL.Query().Get("cf"), "storage_service/ownership")
			if err != nil {
				return nil, err
			}
			return ownership(v, ranges), nil
		}
		if len(v.m.Keyspaces) > 0 {
			return nil, runtimeError("Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless")
		}
		return ownership(v, vnodeRanges(v, systemTracesKeyspace)), nil
	})
}

// systemKeyspaces are the keyspaces ScyllaDB creates itself, as the CQL
// front end lists them; localKeyspaces those of LocalStrategy (each node
// its own data), the rest are replicated (db/system_keyspace.cc,
// db/system_distributed_keyspace.cc, tracing/trace_keyspace_helper.cc).
var (
	systemKeyspaces = []string{"system", "system_auth", "system_distributed", "system_distributed_everywhere", "system_schema", "system_traces"}
	localKeyspaces  = map[string]bool{"system": true, "system_schema": true}
)

// keyspaceNames answers storage_service/keyspaces?type=&replication=
// (api/column_family.cc get_keyspaces): type user, non_local_strategy or
// all (the default); replication tablets, vnodes or all.
func (n *Node) keyspaceNames(typ, replication string) []string {
	v := n.view.Load()
	out := []string{}
	if typ != "user" {
		for _, ks := range systemKeyspaces {
			if typ != "non_local_strategy" || !localKeyspaces[ks] {
				out = append(out, ks)
			}
		}
	}
	out = append(out, n.sortedKeyspaces()...)
	if replication == "" || replication == "all" {
		return out
	}
	filtered := []string{}
	for _, ks := range out {
		k := v.m.Keyspaces[ks]
		if (k != nil && k.TabletsEnabled) == (replication == "tablets") {
			filtered = append(filtered, ks)
		}
	}
	return filtered
}
