package cql

import (
	"encoding/binary"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The virtual tables of db/virtual_tables.cc (and system.tablets of
// replica/tablets.cc) the emulator answers from what the node knows.

var nodeStart = time.Now()

func init() {
	scylla := func(vt *virtualTable) { vt.scylla = true }

	// versions_table: the node's version.
	scylla(defineVirtual("system", "versions", []vcol{{"key", "text"}, {"build_id", "text"}, {"build_mode", "text"}, {"version", "text"}},
		func(s *Server) []map[string][]byte {
			return []map[string][]byte{{"key": encText("local"), "version": encText(s.b.Local().ScyllaVersion),
				"build_mode": encText("release"), "build_id": encText("emulated")}}
		}))

	// one_row_table: one live row with an empty key (its only column).
	scylla(defineVirtual("system", "one_row", []vcol{{"system$dummy", "text"}}, func(*Server) []map[string][]byte {
		return []map[string][]byte{{"system$dummy": {}}}
	}))

	// protocol_servers_table: the CQL server and where it listens.
	scylla(defineVirtual("system", "protocol_servers", []vcol{
		{"name", "text"}, {"listen_addresses", "list<text>"}, {"protocol", "text"}, {"protocol_version", "text"},
	}, func(s *Server) []map[string][]byte {
		return []map[string][]byte{{"name": encText("native transport"), "protocol": encText("cql"),
			"protocol_version": encText("3.3.1"), "listen_addresses": encTextList(s.listenAddresses())}}
	}))

	// runtime_info_table: a group per partition, an item per row.
	scylla(defineVirtual("system", "runtime_info", []vcol{{"group", "text"}, {"item", "text"}, {"value", "text"}},
		func(s *Server) []map[string][]byte {
			item := func(g, i, v string) map[string][]byte {
				return map[string][]byte{"group": encText(g), "item": encText(i), "value": encText(v)}
			}
			return []map[string][]byte{
				item("gossip_active", "", "true"),
				item("uptime", "", strconv.Itoa(int(time.Since(nodeStart).Seconds()))+" seconds"),
				item("trace_probability", "", "0.0"),
				item("incremental_backup_enabled", "", "false"),
			}
		}))

	scylla(defineVirtual("system", "clients", []vcol{
		{"address", "inet"}, {"port", "int"}, {"client_type", "text"}, {"client_options", "map<text, text>"},
		{"connection_stage", "text"}, {"driver_name", "text"}, {"driver_version", "text"}, {"hostname", "text"},
		{"protocol_version", "int"}, {"scheduling_group", "text"}, {"shard_id", "int"}, {"ssl_cipher_suite", "text"},
		{"ssl_enabled", "boolean"}, {"ssl_protocol", "text"}, {"username", "text"},
	}, clientsRows))

	scylla(defineVirtual("system", "token_ring", []vcol{
		{"keyspace_name", "text"}, {"table_name", "text"}, {"start_token", "text"}, {"endpoint", "inet"},
		{"dc", "text"}, {"end_token", "text"}, {"rack", "text"},
	}, tokenRingRows))

	defineVirtual("system", "tablets", []vcol{
		{"table_id", "uuid"}, {"last_token", "bigint"}, {"keyspace_name", "text"}, {"new_replicas", "list<frozen<tuple<uuid, int>>>"},
		{"replicas", "list<frozen<tuple<uuid, int>>>"}, {"stage", "text"}, {"table_name", "text"}, {"tablet_count", "int"},
		{"transition", "text"},
	}, tabletsRows)
}

// listenAddresses are the CQL listeners as socket_address prints them.
func (s *Server) listenAddresses() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for ln := range s.listeners {
		out = append(out, ln.Addr().String())
	}
	sort.Strings(out)
	return out
}

// clientsRows is clients_table: one row per client connection, by address
// and port (client_data.cc: "cql", "READY" once STARTUP was answered).
func clientsRows(s *Server) []map[string][]byte {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var rows []map[string][]byte
	for _, c := range conns {
		addr, ok := c.nc.RemoteAddr().(*net.TCPAddr)
		if !ok {
			continue
		}
		c.mu.Lock()
		opts, version := c.startup, int(c.version)
		c.mu.Unlock()
		r := map[string][]byte{"address": encInet(addr.IP), "port": encInt(addr.Port), "client_type": encText("cql"),
			"shard_id": encInt(c.shard), "connection_stage": encText("ESTABLISHED"), "username": encText("anonymous"),
			"ssl_enabled": encBool(false)}
		if opts != nil {
			r["connection_stage"] = encText("READY")
			r["protocol_version"] = encInt(version)
			r["client_options"] = encTextMap(opts)
			if v, ok := opts["DRIVER_NAME"]; ok {
				r["driver_name"] = encText(v)
			}
			if v, ok := opts["DRIVER_VERSION"]; ok {
				r["driver_version"] = encText(v)
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		return string(rows[i]["address"])+string(rows[i]["port"]) < string(rows[j]["address"])+string(rows[j]["port"])
	})
	return rows
}

// ringNode is a node's place in the ring.
type ringNode struct {
	token int64
	node  engine.NodeInfo
}

// tokenRingRows is token_ring_table: for a vnode keyspace one row per
// range and replica under table "<ALL>" (storage_service describe_ring),
// for a tablet keyspace one row per tablet replica of each table.
func tokenRingRows(s *Server) []map[string][]byte {
	sch := schemaOf(s)
	nodes := append([]engine.NodeInfo{s.b.Local()}, s.b.Peers()...)
	byHost := map[[16]byte]engine.NodeInfo{}
	var ring []ringNode
	for _, n := range nodes {
		if n.State == engine.StateLeft || n.Addr == nil {
			continue
		}
		if _, dup := byHost[n.HostID]; dup {
			continue
		}
		byHost[n.HostID] = n
		for _, t := range n.Tokens {
			if v, err := strconv.ParseInt(t, 10, 64); err == nil {
				ring = append(ring, ringNode{v, n})
			}
		}
	}
	sort.Slice(ring, func(i, j int) bool { return ring[i].token < ring[j].token })
	row := func(ks, table, start, end string, n engine.NodeInfo) map[string][]byte {
		return map[string][]byte{"keyspace_name": encText(ks), "table_name": encText(table), "start_token": encText(start),
			"end_token": encText(end), "endpoint": encInet(n.Addr), "dc": encText(n.DC), "rack": encText(n.Rack)}
	}
	lister, _ := s.b.(engine.TabletLister)
	var rows []map[string][]byte
	for _, name := range sortedKeyspaces(sch) {
		ks := sch.Keyspaces[name]
		if ks.TabletsEnabled && lister != nil {
			for _, t := range sortedTables(sch) {
				if t.Keyspace != name {
					continue
				}
				for _, tb := range lister.Tablets(name, t.Name) {
					for _, r := range tb.Replicas {
						if n, ok := byHost[r.HostID]; ok {
							rows = append(rows, row(name, t.Name, strconv.FormatInt(tb.FirstToken, 10), strconv.FormatInt(tb.LastToken, 10), n))
						}
					}
				}
			}
			continue
		}
		rf := replicationFactor(ks)
		for i, rn := range ring {
			prev := ring[(i+len(ring)-1)%len(ring)].token
			for _, n := range ringReplicas(ring, i, rf) {
				rows = append(rows, row(name, "<ALL>", strconv.FormatInt(prev, 10), strconv.FormatInt(rn.token, 10), n))
			}
		}
	}
	return rows
}

// replicationFactor is a keyspace's total replica count.
func replicationFactor(ks *engine.Keyspace) int {
	total := 0
	for k, v := range ks.Replication {
		if k == "class" {
			continue
		}
		n, _ := strconv.Atoi(v)
		total += n
	}
	return max(total, 1)
}

// ringReplicas walks the ring clockwise from range i for rf distinct nodes.
func ringReplicas(ring []ringNode, i, rf int) []engine.NodeInfo {
	seen := map[[16]byte]bool{}
	var out []engine.NodeInfo
	for k := 0; k < len(ring) && len(out) < rf; k++ {
		n := ring[(i+k)%len(ring)].node
		if !seen[n.HostID] {
			seen[n.HostID] = true
			out = append(out, n)
		}
	}
	return out
}

// tabletsRows is system.tablets (replica/tablets.cc make_tablets_schema):
// one row per tablet, keyed by table id and the tablet's last token.
func tabletsRows(s *Server) []map[string][]byte {
	lister, ok := s.b.(engine.TabletLister)
	if !ok {
		return nil
	}
	var rows []map[string][]byte
	for _, t := range sortedTables(schemaOf(s)) {
		tablets := lister.Tablets(t.Keyspace, t.Name)
		for _, tb := range tablets {
			rows = append(rows, map[string][]byte{"table_id": encUUID(t.ID), "last_token": binary.BigEndian.AppendUint64(nil, uint64(tb.LastToken)),
				"keyspace_name": encText(t.Keyspace), "table_name": encText(t.Name), "tablet_count": encInt(len(tablets)),
				"replicas": encReplicaSet(tb.Replicas)})
		}
	}
	return rows
}

// encReplicaSet serializes a list<frozen<tuple<uuid, int>>> of replicas.
func encReplicaSet(rs []engine.TabletReplica) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(rs)))
	for _, r := range rs {
		out = binary.BigEndian.AppendUint32(out, 4+16+4+4)
		out = binary.BigEndian.AppendUint32(out, 16)
		out = append(out, r.HostID[:]...)
		out = binary.BigEndian.AppendUint32(out, 4)
		out = binary.BigEndian.AppendUint32(out, uint32(int32(r.Shard)))
	}
	return out
}
