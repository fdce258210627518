// Package fakescylla is an in-process fake of a ScyllaDB cluster's admin
// surfaces for tests: the REST API (the paths and JSON shapes of real
// ScyllaDB), the Prometheus metrics endpoint and a CQL port that answers
// OPTIONS. Each node listens on its own loopback address; their membership
// views come from one shared, scriptable state.
package fakescylla

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Node is one fake node's state. Change it with Cluster.Update.
type Node struct {
	Addr string // where it serves (the address a client reaches it at)
	// Broadcast is the address it gossips, as ScyllaDB's broadcast_address
	// (listen_address when unset): what the host id map, the live, down,
	// joining and leaving lists and load_map hold. Empty means Addr.
	Broadcast       string
	HostID          string
	DC, Rack        string
	Mode            string // STARTING, JOINING, NORMAL, LEAVING, DECOMMISSIONED
	NativeTransport bool
	Down            bool // the others see it down
	Joining         bool
	Leaving         bool
	Load            float64 // bytes (REST load)
	DiskSize        float64 // node_filesystem_size_bytes; 0 = no filesystem series
	DiskAvail       float64
	// CPUSeconds are node_cpu_seconds_total by mode of each of the
	// machine's CPUs (cpu="0", "1" ...); none when nil.
	CPUSeconds []map[string]float64
	Metrics    map[string]float64 // extra series, e.g. "scylla_reactor_stalls"
	// JoinAfter makes a new node JOINING until this long after it was added.
	JoinAfter time.Duration
	// DecommissionTime is how long POST decommission takes.
	DecommissionTime time.Duration

	added   time.Time
	removed bool
}

// Cluster is the shared state of the fake nodes.
type Cluster struct {
	mu    sync.Mutex
	nodes map[string]*Node
	order []string
	// Calls records "METHOD path?query" of every REST call, for assertions.
	calls     []string
	balancing *bool
	servers   map[string][]io.Closer
}

// New returns an empty fake cluster.
func New() *Cluster {
	return &Cluster{nodes: map[string]*Node{}, servers: map[string][]io.Closer{}}
}

// Ports of one fake node.
// NodeExporter serves node_filesystem_* (as node_exporter beside a real
// node on 9100); ScyllaDB's Metrics port has none.
type Ports struct{ REST, Metrics, CQL, NodeExporter int }

// Start adds a node at addr (a loopback address) and serves its REST API,
// metrics and CQL on the given ports. init may adjust the node's state
// before it becomes visible.
func (c *Cluster) Start(addr string, ports Ports, init func(*Node)) error {
	n := &Node{Addr: addr, HostID: fmt.Sprintf("00000000-0000-4000-8000-%012d", len(c.order)+1), DC: "dc1", Rack: "rack1",
		Mode: "NORMAL", NativeTransport: true, added: time.Now()}
	if init != nil {
		init(n)
	}
	var closers []io.Closer
	closeAll := func() {
		for _, cl := range closers {
			cl.Close()
		}
	}
	for _, s := range []struct {
		port int
		h    http.Handler
	}{{ports.REST, c.RESTHandler(addr)}, {ports.Metrics, c.MetricsHandler(addr)}, {ports.NodeExporter, c.NodeExporterHandler(addr)}} {
		if s.port == 0 {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(s.port)))
		if err != nil {
			closeAll()
			return fmt.Errorf("fake node %s: %w", addr, err)
		}
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		closers = append(closers, srv)
	}
	if ports.CQL != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(ports.CQL)))
		if err != nil {
			closeAll()
			return fmt.Errorf("fake node %s: %w", addr, err)
		}
		go ServeCQL(ln)
		closers = append(closers, ln)
	}
	c.mu.Lock()
	c.nodes[addr] = n
	c.order = append(c.order, addr)
	c.servers[addr] = closers
	c.mu.Unlock()
	return nil
}

// Stop closes a node's listeners (the process "dies"); its state stays
// until Update or removal says otherwise.
func (c *Cluster) Stop(addr string) {
	c.mu.Lock()
	cls := c.servers[addr]
	delete(c.servers, addr)
	c.mu.Unlock()
	for _, cl := range cls {
		cl.Close()
	}
}

// Close stops every node.
func (c *Cluster) Close() {
	c.mu.Lock()
	addrs := make([]string, 0, len(c.servers))
	for a := range c.servers {
		addrs = append(addrs, a)
	}
	c.mu.Unlock()
	for _, a := range addrs {
		c.Stop(a)
	}
}

// Update changes a node's state under the lock.
func (c *Cluster) Update(addr string, fn func(*Node)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[addr]; n != nil {
		fn(n)
	}
}

// Remove makes a node leave the membership (as after decommission or removenode).
func (c *Cluster) Remove(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[addr]; n != nil {
		n.removed = true
	}
}

// Calls returns the REST calls seen so far.
func (c *Cluster) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

// Balancing is the last tablet balancing setting, or nil.
func (c *Cluster) Balancing() *bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.balancing
}

// members returns the nodes in the ring, in join order; callers hold mu.
func (c *Cluster) members() []*Node {
	var out []*Node
	for _, a := range c.order {
		n := c.nodes[a]
		if !n.removed {
			if n.JoinAfter > 0 && time.Since(n.added) < n.JoinAfter {
				n.Joining, n.Mode = true, "JOINING"
			} else if n.JoinAfter > 0 && n.Joining {
				n.Joining, n.Mode, n.JoinAfter = false, "NORMAL", 0
			}
			out = append(out, n)
		}
	}
	return out
}

// RESTHandler serves the ScyllaDB REST API of the node at addr.
func (c *Cluster) RESTHandler(addr string) http.Handler {
	mux := http.NewServeMux()
	get := func(path string, fn func(self *Node, members []*Node, r *http.Request) any) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			c.mu.Lock()
			c.calls = append(c.calls, "GET "+r.URL.RequestURI())
			self := c.nodes[addr]
			v := fn(self, c.members(), r)
			c.mu.Unlock()
			writeJSON(w, v)
		})
	}
	addrs := func(members []*Node, keep func(*Node) bool) []string {
		out := []string{}
		for _, m := range members {
			if keep(m) {
				out = append(out, m.gossip())
			}
		}
		return out
	}
	// ?host= names a node by the address it gossips (api/token_metadata.cc).
	byHost := func(r *http.Request) *Node {
		h := r.URL.Query().Get("host")
		for _, m := range c.nodes {
			if h != "" && m.gossip() == h {
				return m
			}
		}
		return nil
	}
	get("/storage_service/host_id", func(_ *Node, ms []*Node, _ *http.Request) any {
		out := []map[string]string{}
		for _, m := range ms {
			out = append(out, map[string]string{"key": m.gossip(), "value": m.HostID})
		}
		return out
	})
	get("/storage_service/hostid/local", func(s *Node, _ []*Node, _ *http.Request) any { return s.HostID })
	get("/gossiper/endpoint/live/", func(_ *Node, ms []*Node, _ *http.Request) any {
		return addrs(ms, func(m *Node) bool { return !m.Down })
	})
	get("/gossiper/endpoint/down/", func(_ *Node, ms []*Node, _ *http.Request) any {
		return addrs(ms, func(m *Node) bool { return m.Down })
	})
	get("/storage_service/nodes/joining", func(_ *Node, ms []*Node, _ *http.Request) any {
		return addrs(ms, func(m *Node) bool { return m.Joining })
	})
	get("/storage_service/nodes/leaving", func(_ *Node, ms []*Node, _ *http.Request) any {
		return addrs(ms, func(m *Node) bool { return m.Leaving })
	})
	get("/storage_service/operation_mode", func(s *Node, _ []*Node, _ *http.Request) any { return s.Mode })
	get("/storage_service/load", func(s *Node, _ []*Node, _ *http.Request) any { return s.Load })
	get("/storage_service/load_map", func(_ *Node, ms []*Node, _ *http.Request) any {
		out := []map[string]any{}
		for _, m := range ms {
			out = append(out, map[string]any{"key": m.gossip(), "value": m.Load})
		}
		return out
	})
	get("/storage_service/native_transport", func(s *Node, _ []*Node, _ *http.Request) any { return s.NativeTransport })
	get("/snitch/datacenter", func(s *Node, _ []*Node, r *http.Request) any {
		if h := byHost(r); h != nil {
			return h.DC
		}
		return s.DC
	})
	get("/snitch/rack", func(s *Node, _ []*Node, r *http.Request) any {
		if h := byHost(r); h != nil {
			return h.Rack
		}
		return s.Rack
	})
	post := func(path string, fn func(w http.ResponseWriter, r *http.Request)) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			c.mu.Lock()
			c.calls = append(c.calls, "POST "+r.URL.RequestURI())
			c.mu.Unlock()
			fn(w, r)
		})
	}
	post("/storage_service/decommission", func(w http.ResponseWriter, r *http.Request) {
		var d time.Duration
		c.Update(addr, func(n *Node) { n.Mode, n.Leaving, d = "LEAVING", true, n.DecommissionTime })
		select {
		case <-r.Context().Done():
			return
		case <-time.After(d):
		}
		c.Update(addr, func(n *Node) { n.Mode, n.Leaving, n.removed = "DECOMMISSIONED", false, true })
		writeJSON(w, nil)
	})
	post("/storage_service/remove_node", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("host_id")
		c.mu.Lock()
		var found *Node
		for _, m := range c.members() {
			if m.HostID == id {
				found = m
			}
		}
		if found != nil {
			found.removed = true
		}
		c.mu.Unlock()
		if found == nil {
			http.Error(w, `{"message": "std::runtime_error (removenode: host id `+id+` not found)", "code": 500}`, http.StatusInternalServerError)
			return
		}
		writeJSON(w, nil)
	})
	post("/storage_service/quiesce_topology", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, nil) })
	post("/storage_service/tablets/balancing", func(w http.ResponseWriter, r *http.Request) {
		b, err := strconv.ParseBool(r.URL.Query().Get("enabled"))
		if err != nil {
			http.Error(w, `{"message": "bad enabled", "code": 400}`, http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.balancing = &b
		c.mu.Unlock()
		writeJSON(w, nil)
	})
	return mux
}

// gossip is the address the node gossips.
func (n *Node) gossip() string {
	if n.Broadcast != "" {
		return n.Broadcast
	}
	return n.Addr
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if v == nil {
		w.Write([]byte("null"))
		return
	}
	json.NewEncoder(w).Encode(v)
}

// NodeExporterHandler serves node_exporter's filesystem series of the node
// (none when DiskSize is 0) and its CPU time (node_cpu_seconds_total).
func (c *Cluster) NodeExporterHandler(addr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		n := c.nodes[addr]
		var b strings.Builder
		if n.DiskSize > 0 {
			fmt.Fprintf(&b, "# TYPE node_filesystem_size_bytes gauge\nnode_filesystem_size_bytes{device=\"/dev/nvme0n1\",fstype=\"xfs\",mountpoint=\"/var/lib/scylla\"} %g\nnode_filesystem_size_bytes{device=\"/dev/root\",fstype=\"ext4\",mountpoint=\"/\"} 8e9\n", n.DiskSize)
			fmt.Fprintf(&b, "# TYPE node_filesystem_avail_bytes gauge\nnode_filesystem_avail_bytes{device=\"/dev/nvme0n1\",fstype=\"xfs\",mountpoint=\"/var/lib/scylla\"} %g\nnode_filesystem_avail_bytes{device=\"/dev/root\",fstype=\"ext4\",mountpoint=\"/\"} 4e9\n", n.DiskAvail)
		}
		if len(n.CPUSeconds) > 0 {
			b.WriteString("# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n# TYPE node_cpu_seconds_total counter\n")
			for cpu, modes := range n.CPUSeconds {
				for _, mode := range slices.Sorted(maps.Keys(modes)) {
					fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"%s\"} %g\n", cpu, mode, modes[mode])
				}
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, b.String())
	})
}

// MetricsHandler serves the node's ScyllaDB metrics in the Prometheus text
// format. scylla_reactor_stalls is a histogram, as Seastar exports it.
func (c *Cluster) MetricsHandler(addr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		n := c.nodes[addr]
		var b strings.Builder
		names := make([]string, 0, len(n.Metrics))
		for k := range n.Metrics {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if k == "scylla_reactor_stalls" {
				v := n.Metrics[k]
				fmt.Fprintf(&b, "# TYPE %s histogram\n%s_bucket{le=\"640\"} 0\n%s_bucket{le=\"+Inf\"} %g\n%s_sum %g\n%s_count %g\n", k, k, k, v, k, v*50000, k, v)
				continue
			}
			fmt.Fprintf(&b, "# TYPE %s counter\n%s{shard=\"0\"} %g\n%s{shard=\"1\"} 0\n", k, k, n.Metrics[k], k)
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, b.String())
	})
}

// ServeCQL answers OPTIONS frames with SUPPORTED (empty string multimap)
// until ln is closed.
func ServeCQL(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			for {
				_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
				var hdr [9]byte
				if _, err := io.ReadFull(conn, hdr[:]); err != nil {
					return
				}
				l := int(hdr[5])<<24 | int(hdr[6])<<16 | int(hdr[7])<<8 | int(hdr[8])
				if _, err := io.CopyN(io.Discard, conn, int64(l)); err != nil {
					return
				}
				op := byte(0x06)
				body := []byte{0, 0} // empty [string multimap]
				if hdr[4] != 0x05 {
					op, body = 0x00, []byte{0, 0, 0x0a, 0, 0, 0}
				}
				resp := append([]byte{0x80 | hdr[0], 0, hdr[2], hdr[3], op, 0, 0, 0, byte(len(body))}, body...)
				if _, err := conn.Write(resp); err != nil {
					return
				}
			}
		}()
	}
}

// ErrNotFound is returned by Node for an unknown address.
var ErrNotFound = errors.New("fakescylla: no such node")

// Node returns a copy of a node's state.
func (c *Cluster) Node(addr string) (Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[addr]
	if n == nil {
		return Node{}, ErrNotFound
	}
	return *n, nil
}

// Members lists the addresses in the ring.
func (c *Cluster) Members() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.members() {
		out = append(out, m.Addr)
	}
	return out
}
