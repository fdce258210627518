package node

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Meta is the cluster metadata: schema, members and tablet maps. It has a
// single writer, the topology coordinator (the oldest live normal node),
// which publishes every new epoch to all live members; other nodes forward
// changes to it. Heartbeats carry the epoch, so a node that missed an
// update pulls it.
type Meta struct {
	Epoch     uint64
	Keyspaces map[string]*engine.Keyspace
	Tables    map[string]map[string]*engine.Table
	// Types are the user-defined types, by keyspace and name.
	Types map[string]map[string]*engine.UserType
	// Functions are the user-defined functions and aggregates, by
	// keyspace and signature.
	Functions map[string]map[string]*engine.Function `json:",omitempty"`
	Nodes     map[string]*NodeMeta                   // host id -> node
	Tablets   map[string]*TabletMap
	// Balancing enables the tablet load balancer.
	Balancing bool
	// LastChange is the schema change of this epoch (for client events).
	LastChange *engine.SchemaChange
}

// NodeMeta is a member as the cluster knows it.
type NodeMeta struct {
	HostID        string
	Addr          string
	DC, Rack      string
	Shards        int
	CQLPort       int
	RESTPort      int
	InternodePort int
	Tokens        []int64
	State         engine.NodeState
	Since         uint64 // epoch it was added: older members coordinate
	StreamBPS     float64
	// DrainTotal is the tablet replicas it held when it started leaving.
	DrainTotal int
	Removing   bool // removenode (dead node) rather than decommission
	// Draining: a NORMAL node with a paused leave or remove request whose
	// tablets the balancer moves away (from 2026.1, tablet_draining.go).
	Draining bool
}

func (n *NodeMeta) internode() string { return n.Addr + ":" + strconv.Itoa(n.InternodePort) }

// Replica is one tablet replica.
type Replica struct {
	Host  string
	Shard int
}

// Tablet is one tablet of a table.
type Tablet struct {
	Replicas []Replica
	// Pending is the replica being built by a migration (writes go to it too).
	Pending *Replica
	// Leaving is the host the migration moves the tablet away from.
	Leaving string
}

// TabletMap holds a table's tablets; tablet i covers the tokens whose top
// log2(len) bits (of the sign-flipped token) equal i.
type TabletMap struct {
	Tablets []Tablet
}

func (tm *TabletMap) index(token int64) int {
	n := len(tm.Tablets)
	if n <= 1 {
		return 0
	}
	shift := 64 - bits.TrailingZeros(uint(n))
	return int((uint64(token) ^ (1 << 63)) >> shift)
}

// tabletRange is the inclusive token range of tablet i of n.
func tabletRange(i, n int) (first, last int64) {
	if n <= 1 {
		return -1 << 63, 1<<63 - 1
	}
	shift := 64 - bits.TrailingZeros(uint(n))
	lo := uint64(i) << shift
	hi := lo + (1 << shift) - 1
	return int64(lo ^ (1 << 63)), int64(hi ^ (1 << 63))
}

// cloneByKeyspace copies a keyspace → name → definition map, both levels
// (never nil), so that a schema change edits the copy only.
func cloneByKeyspace[D any](m map[string]map[string]D) map[string]map[string]D {
	c := make(map[string]map[string]D, len(m))
	for k, v := range m {
		t := make(map[string]D, len(v))
		for n, d := range v {
			t[n] = d
		}
		c[k] = t
	}
	return c
}

func (m *Meta) clone() *Meta {
	c := *m
	c.Keyspaces = map[string]*engine.Keyspace{}
	for k, v := range m.Keyspaces {
		c.Keyspaces[k] = v
	}
	c.Tables = cloneByKeyspace(m.Tables)
	c.Types = cloneByKeyspace(m.Types)
	c.Functions = cloneByKeyspace(m.Functions)
	c.Nodes = map[string]*NodeMeta{}
	for k, v := range m.Nodes {
		n := *v
		c.Nodes[k] = &n
	}
	c.Tablets = map[string]*TabletMap{}
	for k, v := range m.Tablets {
		tm := &TabletMap{Tablets: make([]Tablet, len(v.Tablets))}
		for i, t := range v.Tablets {
			nt := Tablet{Replicas: append([]Replica(nil), t.Replicas...), Leaving: t.Leaving}
			if t.Pending != nil {
				p := *t.Pending
				nt.Pending = &p
			}
			tm.Tablets[i] = nt
		}
		c.Tablets[k] = tm
	}
	c.LastChange = nil
	return &c
}

func tableKey(id [16]byte) string { return fmt.Sprintf("%x", id) }

// schemaVersion derives a UUID-shaped version from the schema content.
func schemaVersion(m *Meta) [16]byte {
	b, _ := json.Marshal(struct {
		K map[string]*engine.Keyspace
		T map[string]map[string]*engine.Table
		U map[string]map[string]*engine.UserType `json:",omitempty"`
		F map[string]map[string]*engine.Function `json:",omitempty"`
	}{m.Keyspaces, m.Tables, m.Types, m.Functions})
	v := md5.Sum(b)
	v[6] = v[6]&0x0f | 0x30 // version 3 (name based, md5)
	v[8] = v[8]&0x3f | 0x80
	return v
}

// replicationFactors returns the replication factor per DC ("" for
// SimpleStrategy) and whether the strategy is SimpleStrategy.
func replicationFactors(ks *engine.Keyspace, dcs []string) (map[string]int, bool) {
	class := ks.Replication["class"]
	out := map[string]int{}
	if strings.HasSuffix(class, "SimpleStrategy") {
		rf, _ := strconv.Atoi(ks.Replication["replication_factor"])
		out[""] = rf
		return out, true
	}
	for k, v := range ks.Replication {
		if k == "class" {
			continue
		}
		rf, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		if k == "replication_factor" {
			for _, dc := range dcs {
				out[dc] = rf
			}
			continue
		}
		out[k] = rf
	}
	return out, false
}

// applySchemaChange applies ch to a copy of m (the caller bumps the epoch).
// It returns nil, nil for a no-op IF [NOT] EXISTS.
func applySchemaChange(m *Meta, ch engine.SchemaChange, initialTablets int) (*Meta, error) {
	switch ch.Kind {
	case engine.CreateKeyspace:
		if ch.Keyspace == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "CREATE KEYSPACE without a definition")
		}
		if m.Keyspaces[ch.Keyspace.Name] != nil {
			if ch.IfNotExists {
				return nil, nil
			}
			return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: fmt.Sprintf("Keyspace '%s' already exists", ch.Keyspace.Name), Keyspace: ch.Keyspace.Name}
		}
		n := m.clone()
		ks := *ch.Keyspace
		n.Keyspaces[ks.Name] = &ks
		n.Tables[ks.Name] = map[string]*engine.Table{}
		return n, nil
	case engine.DropKeyspace:
		if m.Keyspaces[ch.KeyspaceName] == nil {
			if ch.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeConfigError, "Cannot drop non existing keyspace '%s'.", ch.KeyspaceName)
		}
		n := m.clone()
		for _, t := range n.Tables[ch.KeyspaceName] {
			delete(n.Tablets, tableKey(t.ID))
		}
		delete(n.Keyspaces, ch.KeyspaceName)
		delete(n.Tables, ch.KeyspaceName)
		delete(n.Types, ch.KeyspaceName)
		delete(n.Functions, ch.KeyspaceName)
		return n, nil
	case engine.CreateType, engine.DropType:
		return applyTypeChange(m, ch)
	case engine.CreateFunction, engine.DropFunction:
		fns, noop, err := engine.ApplyFunctionChange(m.Functions, ch)
		if err != nil || noop {
			return nil, err
		}
		n := m.clone()
		n.Functions = fns
		return n, nil
	case engine.AlterKeyspace:
		if ch.Keyspace == nil || m.Keyspaces[ch.Keyspace.Name] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown keyspace %s", ch.KeyspaceName)
		}
		n := m.clone()
		ks := *ch.Keyspace
		n.Keyspaces[ks.Name] = &ks
		return n, nil
	case engine.AlterTable:
		if ch.Table == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "ALTER TABLE without a definition")
		}
		old := m.Tables[ch.Table.Keyspace][ch.Table.Name]
		if old == nil || old.ID != ch.Table.ID {
			return nil, engine.Errorf(engine.CodeInvalid, "Table '%s.%s' doesn't exist", ch.Table.Keyspace, ch.Table.Name)
		}
		n := m.clone()
		t := *ch.Table
		n.Tables[t.Keyspace][t.Name] = &t
		return n, nil
	case engine.CreateTable:
		if ch.Table == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "CREATE TABLE without a definition")
		}
		ks := m.Keyspaces[ch.Table.Keyspace]
		if ks == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Keyspace '%s' doesn't exist", ch.Table.Keyspace)
		}
		if m.Tables[ch.Table.Keyspace][ch.Table.Name] != nil {
			if ch.IfNotExists {
				return nil, nil
			}
			return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: fmt.Sprintf("Table '%s.%s' already exists", ch.Table.Keyspace, ch.Table.Name), Keyspace: ch.Table.Keyspace, Table: ch.Table.Name}
		}
		n := m.clone()
		t := *ch.Table
		n.Tables[t.Keyspace][t.Name] = &t
		if ks.TabletsEnabled {
			count := ks.Tablets
			if count <= 0 {
				count = initialTablets
			}
			tm, err := allocateTablets(n, ks, nextPow2(count))
			if err != nil {
				return nil, err
			}
			n.Tablets[tableKey(t.ID)] = tm
		}
		return n, nil
	case engine.DropTable:
		t := m.Tables[ch.KeyspaceName][ch.TableName]
		if t == nil {
			if ch.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Table '%s.%s' doesn't exist", ch.KeyspaceName, ch.TableName)
		}
		n := m.clone()
		delete(n.Tablets, tableKey(t.ID))
		delete(n.Tables[ch.KeyspaceName], ch.TableName)
		return n, nil
	}
	return nil, engine.Errorf(engine.CodeInvalid, "unknown schema change %d", ch.Kind)
}

// applyTypeChange is CREATE TYPE and DROP TYPE
// (cql3/statements/create_type_statement.cc, drop_type_statement.cc).
func applyTypeChange(m *Meta, ch engine.SchemaChange) (*Meta, error) {
	if m.Keyspaces[ch.KeyspaceName] == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s doesn't exist", ch.KeyspaceName)
	}
	if ch.Kind == engine.CreateType {
		if ch.Type == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "CREATE TYPE without a definition")
		}
		if m.Types[ch.KeyspaceName][ch.Type.Name] != nil {
			if ch.IfNotExists {
				return nil, nil
			}
			return nil, &engine.Error{Code: engine.CodeInvalid, Message: fmt.Sprintf("A user type of name %s.%s already exists", ch.KeyspaceName, ch.Type.Name)}
		}
		n := m.clone()
		if n.Types[ch.KeyspaceName] == nil {
			n.Types[ch.KeyspaceName] = map[string]*engine.UserType{}
		}
		ut := *ch.Type
		n.Types[ch.KeyspaceName][ut.Name] = &ut
		return n, nil
	}
	if m.Types[ch.KeyspaceName][ch.TableName] == nil {
		if ch.IfExists {
			return nil, nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "No user type named %s exists.", ch.TableName)
	}
	n := m.clone()
	delete(n.Types[ch.KeyspaceName], ch.TableName)
	return n, nil
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// shardLoad counts tablet replicas (including pending ones) per host and shard.
func shardLoad(m *Meta) map[string][]int {
	load := map[string][]int{}
	for _, n := range m.Nodes {
		load[n.HostID] = make([]int, max(n.Shards, 1))
	}
	add := func(r Replica) {
		if l := load[r.Host]; l != nil && r.Shard < len(l) {
			l[r.Shard]++
		}
	}
	for _, tm := range m.Tablets {
		for _, t := range tm.Tablets {
			for _, r := range t.Replicas {
				add(r)
			}
			if t.Pending != nil {
				add(*t.Pending)
			}
		}
	}
	return load
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// leastLoadedShard picks the shard with the fewest tablets.
func leastLoadedShard(l []int) int {
	best := 0
	for i := range l {
		if l[i] < l[best] {
			best = i
		}
	}
	return best
}

// density is tablets per shard of a host.
func density(l []int) float64 { return float64(sum(l)) / float64(len(l)) }

// allocateTablets places count tablets of a new table: per DC, RF replicas on
// distinct nodes, spread over racks, on the least loaded shards.
func allocateTablets(m *Meta, ks *engine.Keyspace, count int) (*TabletMap, error) {
	var dcs []string
	byDC := map[string][]*NodeMeta{}
	for _, n := range sortedNodes(m) {
		if n.State != engine.StateNormal {
			continue
		}
		if byDC[n.DC] == nil {
			dcs = append(dcs, n.DC)
		}
		byDC[n.DC] = append(byDC[n.DC], n)
	}
	rfs, simple := replicationFactors(ks, dcs)
	if simple && len(dcs) > 0 {
		// SimpleStrategy ignores datacenters; emulated clusters have one.
		rfs = map[string]int{dcs[0]: rfs[""]}
	}
	load := shardLoad(m)
	tm := &TabletMap{Tablets: make([]Tablet, count)}
	for i := range tm.Tablets {
		for _, dc := range dcs {
			rf := rfs[dc]
			if rf > len(byDC[dc]) {
				return nil, engine.Errorf(engine.CodeConfigError, "Datacenter %s doesn't have enough token-owning nodes for replication_factor=%d", dc, rf)
			}
			used := map[string]bool{}
			usedRack := map[string]int{}
			for k := 0; k < rf; k++ {
				var best *NodeMeta
				for _, n := range byDC[dc] {
					if used[n.HostID] {
						continue
					}
					if best == nil || usedRack[n.Rack] < usedRack[best.Rack] ||
						(usedRack[n.Rack] == usedRack[best.Rack] && density(load[n.HostID]) < density(load[best.HostID])) {
						best = n
					}
				}
				sh := leastLoadedShard(load[best.HostID])
				load[best.HostID][sh]++
				used[best.HostID] = true
				usedRack[best.Rack]++
				tm.Tablets[i].Replicas = append(tm.Tablets[i].Replicas, Replica{Host: best.HostID, Shard: sh})
			}
		}
	}
	return tm, nil
}

func sortedNodes(m *Meta) []*NodeMeta {
	out := make([]*NodeMeta, 0, len(m.Nodes))
	for _, n := range m.Nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Since != out[j].Since {
			return out[i].Since < out[j].Since
		}
		return out[i].HostID < out[j].HostID
	})
	return out
}

// ringEntry is one vnode token.
type ringEntry struct {
	token int64
	host  *NodeMeta
}

// vnodeReplicas walks the token ring of normal nodes (vnode keyspaces).
func vnodeReplicas(ring []ringEntry, ks *engine.Keyspace, token int64, dcs []string) []Replica {
	if len(ring) == 0 {
		return nil
	}
	rfs, simple := replicationFactors(ks, dcs)
	want := 0
	for _, v := range rfs {
		want += v
	}
	i := sort.Search(len(ring), func(i int) bool { return ring[i].token >= token })
	seen := map[string]bool{}
	perDC := map[string]int{}
	var out []Replica
	for k := 0; k < len(ring) && len(out) < want; k++ {
		e := ring[(i+k)%len(ring)]
		if seen[e.host.HostID] {
			continue
		}
		dc := e.host.DC
		if simple {
			dc = ""
		}
		if perDC[dc] >= rfs[dc] {
			continue
		}
		seen[e.host.HostID] = true
		perDC[dc]++
		out = append(out, Replica{Host: e.host.HostID, Shard: int(uint64(token) % uint64(max(e.host.Shards, 1)))})
	}
	return out
}
