// Package node is the cluster engine of an emulated ScyllaDB-like node:
// membership and failure detection, internode RPC, replication at a
// consistency level, storage in Pebble, tablets with a load balancer and
// streaming, and the capacity and disk models. It implements
// engine.Backend for the CQL front end.
package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
	"github.com/elasticity-dev/elasticity/emulator/diskmodel"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Timing of membership.
const (
	heartbeatInterval = 500 * time.Millisecond
	downAfter         = 2 * time.Second // 4 missed heartbeats
	publishTimeout    = 3 * time.Second
	numVnodeTokens    = 16
	streamChunkBytes  = 256 << 10
	cleanupInterval   = 2 * time.Second
	// streamShare is the share of a shard's time streaming takes while it
	// moves data at the configured rate.
	streamShare = 0.3
	// speculativeRetry is when a read asks one more replica.
	speculativeRetry = 50 * time.Millisecond
)

// Config configures a node.
type Config struct {
	ClusterName   string
	ListenAddress string
	DataDir       string
	DC, Rack      string
	Seeds         []string
	VCPUs         int
	CQLPort       int
	InternodePort int
	RESTPort      int
	// DiskBytes is the emulated disk capacity (0 = unlimited).
	DiskBytes int64
	// OpsPerVCPU is the modelled request capacity of one shard per second.
	OpsPerVCPU float64
	// StreamBytesPerSec is the node's streaming bandwidth (all shards).
	StreamBytesPerSec float64
	StallThreshold    time.Duration
	SlowFactor        float64
	Version           string
	InitialTablets    int
	Log               *scyllalog.Logger
}

// Node is a running emulated node.
type Node struct {
	cfg    Config
	log    *scyllalog.Logger
	hostID string
	store  *Store
	cap    *capacity.Model
	disk   *diskmodel.Disk
	tr     *transport
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	view   atomic.Pointer[view]
	metaMu sync.Mutex // installing metadata
	// coordMu serialises metadata changes made as topology coordinator.
	coordMu sync.Mutex

	fdMu     sync.Mutex
	lastSeen map[string]time.Time
	up       map[string]bool
	loads    map[string]int64

	subMu sync.Mutex
	subs  map[chan engine.Event]struct{}

	migMu      sync.Mutex
	migrations map[string]bool // "table/index" in flight
	finished   []*move         // streamed, waiting for the switch of ownership
	wake       chan struct{}
	idleEpoch  atomic.Uint64 // epoch at which the balancer last found nothing to do

	serving atomic.Bool
	// aheadEpoch is a newer metadata epoch heard in a heartbeat (at aheadAt,
	// under fdMu): this node should catch up before coordinating.
	aheadEpoch uint64
	aheadAt    time.Time
	paceMu     sync.Mutex
	paceNext   map[int]time.Time
	cleanMu    sync.Mutex
	cleanQ     [][2][]byte
	pulling    atomic.Bool
	started    time.Time
	left       chan struct{} // closed once this node has left the cluster
	leftOnce   sync.Once
	met        *metrics
	joined     chan struct{}
}

// view is an immutable snapshot derived from a Meta.
type view struct {
	m      *Meta
	schema *engine.Schema
	ring   []ringEntry
	dcs    []string
	byID   map[[16]byte]*engine.Table
	// tablets by table id (Meta keys them by hex string).
	tablets map[[16]byte]*TabletMap
}

func newView(m *Meta) *view {
	v := &view{m: m, byID: map[[16]byte]*engine.Table{}, tablets: map[[16]byte]*TabletMap{}}
	for k, tm := range m.Tablets {
		v.tablets[parseUUID(k)] = tm
	}
	v.schema = &engine.Schema{Version: schemaVersion(m), Keyspaces: m.Keyspaces, Tables: m.Tables}
	seen := map[string]bool{}
	for _, n := range sortedNodes(m) {
		if !seen[n.DC] {
			seen[n.DC] = true
			v.dcs = append(v.dcs, n.DC)
		}
		if n.State == engine.StateNormal || n.State == engine.StateLeaving {
			for _, t := range n.Tokens {
				v.ring = append(v.ring, ringEntry{token: t, host: n})
			}
		}
	}
	sort.Slice(v.ring, func(i, j int) bool { return v.ring[i].token < v.ring[j].token })
	for _, ts := range m.Tables {
		for _, t := range ts {
			v.byID[t.ID] = t
		}
	}
	return v
}

// Start is New followed by Join: it returns once the node is NORMAL.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	n, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := n.Join(ctx); err != nil {
		n.Close()
		return nil, err
	}
	n.MarkServing()
	return n, nil
}

// New opens the node's storage and starts its internode listener, gossip
// and balancer; its REST API can be served from here on (operation mode
// STARTING until Join makes it a member).
func New(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Log == nil {
		cfg.Log = scyllalog.New(os.Stderr)
	}
	if cfg.VCPUs < 1 {
		cfg.VCPUs = 1
	}
	if cfg.InitialTablets <= 0 {
		cfg.InitialTablets = 16
	}
	if cfg.StreamBytesPerSec <= 0 {
		cfg.StreamBytesPerSec = float64(cfg.VCPUs) * (8 << 20)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	n := &Node{cfg: cfg, log: cfg.Log, lastSeen: map[string]time.Time{}, up: map[string]bool{}, loads: map[string]int64{},
		subs: map[chan engine.Event]struct{}{}, migrations: map[string]bool{}, wake: make(chan struct{}, 1), joined: make(chan struct{}), left: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.started = time.Now()
	st, err := OpenStore(filepath.Join(cfg.DataDir, "data"), cfg.DiskBytes)
	if err != nil {
		return nil, err
	}
	n.store = st
	fail := func(err error) (*Node, error) {
		n.cancel()
		st.Close()
		return nil, err
	}
	if n.hostID, err = n.loadHostID(); err != nil {
		return fail(err)
	}
	n.cap = capacity.New(capacity.Config{Shards: cfg.VCPUs, OpsPerShard: cfg.OpsPerVCPU, SlowFactor: cfg.SlowFactor,
		StallThreshold: cfg.StallThreshold, OnStall: func(shard int, d time.Duration) {
			n.log.ShardLogf(shard, "main", scyllalog.Warn, "seastar", "%s", capacity.StallMessage(shard, d))
		}})
	n.disk = diskmodel.New(cfg.DataDir, cfg.DiskBytes, n.log.Logf)
	n.met = newMetrics(n)
	n.log.Logf(scyllalog.Info, "init", "Scylla version %s starting, host id %s, %d shards", cfg.Version, n.hostID, cfg.VCPUs)

	n.ln, err = net.Listen("tcp", net.JoinHostPort(cfg.ListenAddress, strconv.Itoa(cfg.InternodePort)))
	if err != nil {
		n.cap.Close()
		return fail(fmt.Errorf("listening for internode traffic: %w", err))
	}
	n.tr = newTransport(n.ctx, cfg.ListenAddress, n.handle)
	go n.tr.serve(n.ln)

	if m, err := n.loadMeta(); err != nil {
		n.Close()
		return nil, err
	} else if m != nil {
		n.view.Store(newView(m))
	} else {
		n.view.Store(newView(&Meta{Keyspaces: map[string]*engine.Keyspace{}, Tables: map[string]map[string]*engine.Table{},
			Nodes: map[string]*NodeMeta{}, Tablets: map[string]*TabletMap{}, Balancing: true}))
	}
	n.wg.Add(3)
	go n.cleanupLoop()
	go n.gossipLoop()
	go n.balancerLoop()
	return n, nil
}

// Join makes the node a NORMAL member (creating the cluster when it is the
// first seed) and waits for gossip to settle. On error the caller closes it.
func (n *Node) Join(ctx context.Context) error {
	if err := n.join(ctx); err != nil {
		return err
	}
	n.settle(ctx)
	close(n.joined)
	return nil
}

// settle waits (up to a few heartbeats) until every member is seen alive,
// as ScyllaDB waits for gossip to settle, so that the first requests do not
// see live replicas as down.
func (n *Node) settle(ctx context.Context) {
	deadline := time.Now().Add(downAfter + 2*heartbeatInterval)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		all := true
		for id, nm := range n.view.Load().m.Nodes {
			if nm.State != engine.StateLeft && !n.isUp(id) {
				all = false
				break
			}
		}
		if all {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *Node) loadHostID() (string, error) {
	b, err := n.store.GetMeta("host_id")
	if err != nil {
		return "", fmt.Errorf("reading host id: %w", err)
	}
	if b != nil {
		return string(b), nil
	}
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	id := formatUUID(u)
	if err := n.store.PutMeta("host_id", []byte(id)); err != nil {
		return "", fmt.Errorf("storing host id: %w", err)
	}
	return id, nil
}

func formatUUID(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func parseUUID(s string) [16]byte {
	var u [16]byte
	j := 0
	for i := 0; i < len(s) && j < 32; i++ {
		c := s[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			continue
		}
		if j%2 == 0 {
			u[j/2] = v << 4
		} else {
			u[j/2] |= v
		}
		j++
	}
	return u
}

func (n *Node) loadMeta() (*Meta, error) {
	b, err := os.ReadFile(n.metaPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading cluster metadata: %w", err)
	}
	var m Meta
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return nil, fmt.Errorf("decoding stored cluster metadata: %w", err)
	}
	return &m, nil
}

func (n *Node) metaPath() string { return filepath.Join(n.cfg.DataDir, "cluster-metadata.gob") }

// self is this node's member record.
func (n *Node) self() *NodeMeta {
	tokens := make([]int64, numVnodeTokens)
	h := parseUUID(n.hostID)
	for i := range tokens {
		tokens[i] = Token(append(h[:], byte(i)))
	}
	sort.Slice(tokens, func(i, j int) bool { return tokens[i] < tokens[j] })
	return &NodeMeta{HostID: n.hostID, Addr: n.cfg.ListenAddress, DC: n.cfg.DC, Rack: n.cfg.Rack, Shards: n.cfg.VCPUs,
		CQLPort: n.cfg.CQLPort, RESTPort: n.cfg.RESTPort, InternodePort: n.cfg.InternodePort, Tokens: tokens,
		StreamBPS: n.cfg.StreamBytesPerSec}
}

// join makes this node a NORMAL member.
func (n *Node) join(ctx context.Context) error {
	v := n.view.Load()
	if me := v.m.Nodes[n.hostID]; me != nil {
		if me.State == engine.StateLeft {
			return fmt.Errorf("this node (host id %s) was removed from the cluster; wipe %s to rejoin", n.hostID, n.cfg.DataDir)
		}
		if me.State == engine.StateNormal || me.State == engine.StateLeaving {
			n.log.Logf(scyllalog.Info, "storage_service", "Restarting as a member in state %s", me.State)
			return nil
		}
	}
	first := len(n.cfg.Seeds) == 0 || n.cfg.Seeds[0] == n.cfg.ListenAddress
	if first && v.m.Epoch == 0 {
		me := n.self()
		me.State = engine.StateNormal
		me.Since = 1
		m := v.m.clone()
		m.Nodes[n.hostID] = me
		m.Epoch = 1
		if err := n.installMeta(m); err != nil {
			return err
		}
		n.log.Logf(scyllalog.Info, "storage_service", "Created a new cluster %q as its first node", n.cfg.ClusterName)
		return nil
	}
	n.log.Logf(scyllalog.Info, "storage_service", "Joining the cluster through seeds %v", n.cfg.Seeds)
	backoff := 200 * time.Millisecond
	for attempt := 0; ; attempt++ {
		for _, s := range n.cfg.Seeds {
			if s == n.cfg.ListenAddress {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := n.tr.call(cctx, net.JoinHostPort(s, strconv.Itoa(n.cfg.InternodePort)), &msg{Op: opCoord, Coord: &coordOp{Kind: "join", Node: n.self()}})
			cancel()
			if err == nil {
				if me := n.view.Load().m.Nodes[n.hostID]; me != nil && me.State == engine.StateNormal {
					return nil
				}
				// Our copy may lag: pull it.
				n.pullMeta(ctx, net.JoinHostPort(s, strconv.Itoa(n.cfg.InternodePort)))
				if me := n.view.Load().m.Nodes[n.hostID]; me != nil && me.State == engine.StateNormal {
					return nil
				}
			} else if attempt%10 == 9 {
				n.log.Logf(scyllalog.Warn, "storage_service", "Joining through seed %s failed: %v", s, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("joining the cluster: %w", ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// installMeta makes m current if it is newer, persisting it first.
func (n *Node) installMeta(m *Meta) error {
	n.metaMu.Lock()
	defer n.metaMu.Unlock()
	old := n.view.Load()
	if old != nil && m.Epoch <= old.m.Epoch {
		return nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(m); err != nil {
		return fmt.Errorf("encoding cluster metadata: %w", err)
	}
	// A file replaced atomically, not a Pebble key: with thousands of
	// tablets every epoch is a large value, and the log would keep them all.
	tmp := n.metaPath() + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("storing cluster metadata: %w", err)
	}
	if err := os.Rename(tmp, n.metaPath()); err != nil {
		return fmt.Errorf("storing cluster metadata: %w", err)
	}
	nv := newView(m)
	n.view.Store(nv)
	n.afterMetaChange(old, nv)
	return nil
}

// afterMetaChange logs and emits events for the differences, and frees data
// this node no longer owns.
func (n *Node) afterMetaChange(old, nv *view) {
	if old == nil {
		return
	}
	for id, nm := range nv.m.Nodes {
		om := old.m.Nodes[id]
		if om == nil {
			if id != n.hostID {
				n.log.Logf(scyllalog.Info, "gossip", "InetAddress %s is now part of the cluster (%s)", nm.Addr, nm.State)
				n.markSeen(id)
			}
			if nm.State == engine.StateNormal && id != n.hostID {
				n.emit(engine.Event{Kind: engine.TopologyNewNode, Addr: net.ParseIP(nm.Addr), Port: nm.CQLPort})
			}
			continue
		}
		if om.State != nm.State {
			n.log.Logf(scyllalog.Info, "storage_service", "Node %s (%s) state jump to %s", nm.Addr, id, nm.State)
			// Clients hear of a node once it is NORMAL (it owns data).
			if nm.State == engine.StateNormal && om.State == engine.StateJoining && id != n.hostID {
				n.emit(engine.Event{Kind: engine.TopologyNewNode, Addr: net.ParseIP(nm.Addr), Port: nm.CQLPort})
			}
			if nm.State == engine.StateLeft {
				n.emit(engine.Event{Kind: engine.TopologyRemovedNode, Addr: net.ParseIP(nm.Addr), Port: nm.CQLPort})
			}
		}
	}
	if nv.m.LastChange != nil && nv.schema.Version != old.schema.Version {
		n.log.Logf(scyllalog.Info, "migration_manager", "Schema version changed to %s", formatUUID(nv.schema.Version))
		ch := *nv.m.LastChange
		n.emit(engine.Event{Kind: engine.SchemaChanged, Change: &ch})
	}
	// Dropped tables: remove their data.
	for id := range old.byID {
		if nv.byID[id] == nil {
			s := tableStart(id)
			n.cleanup(s, keyUpperBound(s))
		}
	}
	// Tablets moved away from this node: delete and compact their ranges.
	for key, otm := range old.m.Tablets {
		ntm := nv.m.Tablets[key]
		if ntm == nil || len(ntm.Tablets) != len(otm.Tablets) {
			continue
		}
		for i := range otm.Tablets {
			if hasReplica(otm.Tablets[i], n.hostID) && !hasReplica(ntm.Tablets[i], n.hostID) {
				id := parseUUID(key)
				first, last := tabletRange(i, len(ntm.Tablets))
				s, e := tokenRangeKeys(id, first, last)
				n.cleanup(s, e)
			}
		}
	}
	if ov, nvv := old.m.Nodes[n.hostID], nv.m.Nodes[n.hostID]; nvv != nil && (ov == nil || ov.State != nvv.State) {
		n.log.Logf(scyllalog.Info, "storage_service", "entering %s mode", operationMode(nvv.State))
		if nvv.State == engine.StateLeft {
			n.leftOnce.Do(func() { close(n.left) })
		}
	}
}

func hasReplica(t Tablet, host string) bool {
	for _, r := range t.Replicas {
		if r.Host == host {
			return true
		}
	}
	return t.Pending != nil && t.Pending.Host == host
}

func operationMode(s engine.NodeState) string {
	switch s {
	case engine.StateLeft:
		return "DECOMMISSIONED"
	case "":
		return "STARTING"
	}
	return string(s)
}

// OperationMode is the REST operation_mode. A member stays JOINING until
// MarkServing, so that waiters seeing NORMAL can connect with CQL at once.
func (n *Node) OperationMode() string {
	me := n.view.Load().m.Nodes[n.hostID]
	if me == nil {
		return "STARTING"
	}
	if me.State == engine.StateNormal && !n.serving.Load() {
		return string(engine.StateJoining)
	}
	return operationMode(me.State)
}

// MarkServing records that clients can now connect (the CQL server listens).
func (n *Node) MarkServing() { n.serving.Store(true) }

// Left is closed once this node has left the cluster (decommissioned or
// removed); it should then stop serving clients.
func (n *Node) Left() <-chan struct{} { return n.left }

// HostID is this node's host id.
func (n *Node) HostID() string { return n.hostID }

// Close stops the node: background work ends, data is flushed.
func (n *Node) Close() error {
	n.cancel()
	if n.ln != nil {
		n.ln.Close()
	}
	if n.tr != nil {
		n.tr.closeAll()
	}
	n.wg.Wait()
	n.cap.Close()
	n.subMu.Lock()
	for ch := range n.subs {
		delete(n.subs, ch)
		close(ch)
	}
	n.subMu.Unlock()
	if err := n.store.Close(); err != nil {
		return fmt.Errorf("closing storage: %w", err)
	}
	return nil
}

// cleanup deletes a key range at once (reads stop seeing it) and queues
// it for compaction, which the cleanup worker batches so that moving
// thousands of tablets does not mean thousands of flushes.
func (n *Node) cleanup(start, end []byte) {
	if err := n.store.DeleteRange(start, end, false); err != nil {
		n.log.Logf(scyllalog.Warn, "tablets", "Cleaning up a moved tablet: %v", err)
		return
	}
	n.cleanMu.Lock()
	n.cleanQ = append(n.cleanQ, [2][]byte{start, end})
	n.cleanMu.Unlock()
}

// cleanupLoop compacts deleted ranges (every few seconds) so that the real
// bytes on disk fall after tablets moved away.
func (n *Node) cleanupLoop() {
	defer n.wg.Done()
	t := time.NewTicker(cleanupInterval)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		n.cleanMu.Lock()
		q := n.cleanQ
		n.cleanQ = nil
		n.cleanMu.Unlock()
		if len(q) == 0 {
			continue
		}
		// Compact each range (adjacent ones merged): only files overlapping
		// moved tablets are rewritten, not everything the node holds.
		sort.Slice(q, func(i, j int) bool { return bytes.Compare(q[i][0], q[j][0]) < 0 })
		merged := [][2][]byte{q[0]}
		for _, r := range q[1:] {
			last := &merged[len(merged)-1]
			if bytes.Compare(r[0], last[1]) <= 0 {
				if bytes.Compare(r[1], last[1]) > 0 {
					last[1] = r[1]
				}
				continue
			}
			merged = append(merged, r)
		}
		if err := n.store.Flush(); err != nil {
			n.log.Logf(scyllalog.Warn, "compaction", "Flushing before cleanup: %v", err)
			continue
		}
		for _, r := range merged {
			if n.ctx.Err() != nil {
				return
			}
			if err := n.store.CompactRange(r[0], r[1]); err != nil && n.ctx.Err() == nil {
				n.log.Logf(scyllalog.Warn, "compaction", "Compacting a cleaned up range: %v", err)
			}
		}
	}
}

// ---- failure detection and gossip ----

type heartbeat struct {
	HostID string
	Addr   string
	Epoch  uint64
	Load   int64
}

func (n *Node) markSeen(host string) {
	n.fdMu.Lock()
	n.lastSeen[host] = time.Now()
	wasUp := n.up[host]
	n.up[host] = true
	n.fdMu.Unlock()
	if !wasUp {
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
		v := n.view.Load()
		hb := &heartbeat{HostID: n.hostID, Addr: n.cfg.ListenAddress, Epoch: v.m.Epoch, Load: n.disk.Used()}
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
				down = append(down, id)
			}
		}
		n.fdMu.Unlock()
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
	r, err := n.tr.call(ctx, addr, &msg{Op: opGetMeta})
	if err != nil || r.Meta == nil {
		return
	}
	if err := n.installMeta(r.Meta); err != nil {
		n.log.Logf(scyllalog.Error, "gossip", "Installing cluster metadata from %s: %v", addr, err)
	}
}

// ---- RPC dispatch ----

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
		return &msg{Heartbeat: &heartbeat{HostID: n.hostID, Addr: n.cfg.ListenAddress, Epoch: n.view.Load().m.Epoch, Load: n.disk.Used()}}, nil
	case opGetMeta:
		return &msg{Meta: n.view.Load().m}, nil
	case opPushMeta:
		if m.Meta == nil {
			return nil, errors.New("push_meta without metadata")
		}
		return nil, n.installMeta(m.Meta)
	case opWrite:
		return nil, n.localWrite(ctx, m.Muts)
	case opRead:
		if m.Read == nil {
			return nil, errors.New("read without a request")
		}
		rows, err := n.localRead(ctx, *m.Read)
		return &msg{Rows: rows}, err
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
// connection's reader, so it must not block).
func (n *Node) callAsync(ctx context.Context, host string, m *msg, done func(*msg, error)) {
	nm := n.view.Load().m.Nodes[host]
	if nm == nil {
		done(nil, fmt.Errorf("unknown host %s", host))
		return
	}
	c, err := n.tr.get(ctx, nm.internode())
	if err != nil {
		done(nil, err)
		return
	}
	c.start(ctx, m, done)
}

// ---- events ----

// Subscribe implements engine.Backend.
func (n *Node) Subscribe() (<-chan engine.Event, func()) {
	ch := make(chan engine.Event, 64)
	n.subMu.Lock()
	n.subs[ch] = struct{}{}
	n.subMu.Unlock()
	return ch, func() {
		n.subMu.Lock()
		if _, ok := n.subs[ch]; ok {
			delete(n.subs, ch)
			close(ch)
		}
		n.subMu.Unlock()
	}
}

func (n *Node) emit(ev engine.Event) {
	n.subMu.Lock()
	defer n.subMu.Unlock()
	for ch := range n.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

// ---- engine.Backend: metadata ----

// Schema implements engine.Backend.
func (n *Node) Schema() *engine.Schema { return n.view.Load().schema }

// ClusterName implements engine.Backend.
func (n *Node) ClusterName() string { return n.cfg.ClusterName }

func (n *Node) nodeInfo(nm *NodeMeta) engine.NodeInfo {
	toks := make([]string, len(nm.Tokens))
	for i, t := range nm.Tokens {
		toks[i] = strconv.FormatInt(t, 10)
	}
	return engine.NodeInfo{HostID: parseUUID(nm.HostID), Addr: net.ParseIP(nm.Addr), CQLPort: nm.CQLPort, DC: nm.DC, Rack: nm.Rack,
		Tokens: toks, ReleaseVersion: "3.0.8", ScyllaVersion: n.cfg.Version, State: nm.State, Up: n.isUp(nm.HostID), Shards: nm.Shards}
}

// Local implements engine.Backend.
func (n *Node) Local() engine.NodeInfo {
	nm := n.view.Load().m.Nodes[n.hostID]
	if nm == nil {
		nm = n.self()
		nm.State = engine.StateJoining
	}
	return n.nodeInfo(nm)
}

// Peers implements engine.Backend.
func (n *Node) Peers() []engine.NodeInfo {
	var out []engine.NodeInfo
	for _, nm := range sortedNodes(n.view.Load().m) {
		if nm.HostID == n.hostID || nm.State == engine.StateLeft {
			continue
		}
		out = append(out, n.nodeInfo(nm))
	}
	return out
}

// ApplySchema implements engine.Backend: the change is made by the topology
// coordinator and published to every live member before this returns.
func (n *Node) ApplySchema(ctx context.Context, ch engine.SchemaChange) (*engine.Schema, error) {
	if err := n.coord(ctx, &coordOp{Kind: "schema", Change: &ch}); err != nil {
		return nil, err
	}
	return n.view.Load().schema, nil
}

// Truncate implements engine.Backend.
func (n *Node) Truncate(ctx context.Context, keyspace, table string) error {
	v := n.view.Load()
	t := v.m.Tables[keyspace][table]
	if t == nil {
		return engine.Errorf(engine.CodeInvalid, "unconfigured table %s", table)
	}
	for id, nm := range v.m.Nodes {
		if nm.State == engine.StateLeft {
			continue
		}
		if !n.isUp(id) {
			return engine.Errorf(engine.CodeTruncateError, "Cannot truncate %s.%s: node %s is down", keyspace, table, nm.Addr)
		}
		if _, err := n.call(ctx, id, &msg{Op: opTruncate, Table: t.ID}); err != nil {
			return engine.Errorf(engine.CodeTruncateError, "Truncating %s.%s on %s: %v", keyspace, table, nm.Addr, err)
		}
	}
	return nil
}

// ---- replication ----

// replicasOf returns the natural and pending replicas of a token.
func (v *view) replicasOf(ks *engine.Keyspace, t *engine.Table, token int64) ([]Replica, []Replica) {
	if tm := v.tablets[t.ID]; tm != nil && len(tm.Tablets) > 0 {
		tb := &tm.Tablets[tm.index(token)]
		if tb.Pending != nil {
			return tb.Replicas, []Replica{*tb.Pending}
		}
		return tb.Replicas, nil
	}
	return vnodeReplicas(v.ring, ks, token, v.dcs), nil
}

func blockFor(cl engine.Consistency, rf int) int {
	switch cl {
	case engine.Any, engine.One, engine.LocalOne:
		return 1
	case engine.Two:
		return 2
	case engine.Three:
		return 3
	case engine.All:
		return rf
	}
	return rf/2 + 1
}

func (n *Node) lookup(v *view, ks, table string) (*engine.Keyspace, *engine.Table, error) {
	k := v.m.Keyspaces[ks]
	if k == nil {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s does not exist", ks)
	}
	t := v.m.Tables[ks][table]
	if t == nil {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", table)
	}
	return k, t, nil
}

// Write implements engine.Backend.
func (n *Node) Write(ctx context.Context, ms []engine.Mutation, cl engine.Consistency) error {
	start := time.Now()
	defer func() { n.met.writeLatency.Observe(float64(time.Since(start).Microseconds())) }()
	if len(ms) == 1 {
		return n.writeOne(ctx, &ms[0], cl)
	}
	errs := make(chan error, len(ms))
	for i := range ms {
		go func() { errs <- n.writeOne(ctx, &ms[i], cl) }()
	}
	var first error
	for range ms {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (n *Node) writeOne(ctx context.Context, m *engine.Mutation, cl engine.Consistency) error {
	v := n.view.Load()
	ks, t, err := n.lookup(v, m.Keyspace, m.Table)
	if err != nil {
		return err
	}
	reps, pending := v.replicasOf(ks, t, Token(m.PartitionKey))
	need := blockFor(cl, len(reps))
	var targets []string
	alive := 0
	for _, r := range reps {
		if n.isUp(r.Host) {
			alive++
			targets = append(targets, r.Host)
		}
	}
	if alive < need || len(reps) == 0 {
		n.met.unavailable.Inc()
		return &engine.Error{Code: engine.CodeUnavailable, Message: fmt.Sprintf("Cannot achieve consistency level for cl %s. Requires %d, alive %d", cl, need, alive),
			Consistency: cl, Required: need, Alive: alive}
	}
	for _, p := range pending {
		if n.isUp(p.Host) {
			targets = append(targets, p.Host)
			need++
		}
	}
	res := make(chan error, len(targets))
	one := []engine.Mutation{*m}
	local := false
	for _, h := range targets {
		if h == n.hostID {
			local = true
			continue
		}
		n.callAsync(ctx, h, &msg{Op: opWrite, Muts: one}, func(_ *msg, err error) { res <- err })
	}
	if local {
		res <- n.localWrite(ctx, one)
	}
	acks, fails := 0, 0
	var lastErr error
	for range targets {
		select {
		case err := <-res:
			if err == nil {
				acks++
				if acks >= need {
					return nil
				}
				continue
			}
			fails++
			lastErr = err
			if len(targets)-fails < need {
				var ee *engine.Error
				if errors.As(err, &ee) && (ee.Code == engine.CodeOverloaded || ee.Code == engine.CodeWriteFailure) {
					e := *ee
					e.Consistency, e.Required, e.Alive, e.Failures = cl, need, acks, fails
					if e.WriteType == "" {
						e.WriteType = "SIMPLE"
					}
					return &e
				}
				if errors.Is(err, context.DeadlineExceeded) {
					return n.writeTimeout(cl, need, acks)
				}
				return &engine.Error{Code: engine.CodeWriteFailure, Message: fmt.Sprintf("Operation failed for %s - received %d responses and %d failures: %v", cl, acks, fails, lastErr),
					Consistency: cl, Required: need, Alive: acks, Failures: fails, WriteType: "SIMPLE"}
			}
		case <-ctx.Done():
			return n.writeTimeout(cl, need, acks)
		}
	}
	return n.writeTimeout(cl, need, acks)
}

func (n *Node) writeTimeout(cl engine.Consistency, need, acks int) error {
	n.met.writeTimeouts.Inc()
	return &engine.Error{Code: engine.CodeWriteTimeout, Message: fmt.Sprintf("Operation timed out for %s - received only %d responses from %d CL=%s.", "write", acks, need, cl),
		Consistency: cl, Required: need, Alive: acks, WriteType: "SIMPLE"}
}

// shardOf is the shard owning a token on this node.
func (n *Node) shardOf(v *view, t *engine.Table, token int64) int {
	if tm := v.tablets[t.ID]; tm != nil && len(tm.Tablets) > 0 {
		tb := tm.Tablets[tm.index(token)]
		for _, r := range tb.Replicas {
			if r.Host == n.hostID {
				return r.Shard
			}
		}
		if tb.Pending != nil && tb.Pending.Host == n.hostID {
			return tb.Pending.Shard
		}
	}
	return int(uint64(token) % uint64(n.cfg.VCPUs))
}

// localWrite applies mutations as a replica.
func (n *Node) localWrite(ctx context.Context, ms []engine.Mutation) error {
	v := n.view.Load()
	ids := make([][16]byte, len(ms))
	for i := range ms {
		_, t, err := n.lookup(v, ms[i].Keyspace, ms[i].Table)
		if err != nil {
			return err
		}
		ids[i] = t.ID
		if err := n.cap.Do(ctx, n.shardOf(v, t, Token(ms[i].PartitionKey)), 1); err != nil {
			return err
		}
		if err := n.disk.CheckWrite(mutationSize(&ms[i])); err != nil {
			return err
		}
	}
	if err := n.store.Apply(ms, ids); err != nil {
		n.log.Logf(scyllalog.Error, "storage_proxy", "Failed to apply mutation: %v", err)
		return engine.Errorf(engine.CodeWriteFailure, "applying mutation: %v", err)
	}
	n.met.replicaWrites.Add(float64(len(ms)))
	return nil
}

func (n *Node) localRead(ctx context.Context, r engine.Read) ([]engine.Row, error) {
	v := n.view.Load()
	_, t, err := n.lookup(v, r.Keyspace, r.Table)
	if err != nil {
		return nil, err
	}
	if err := n.cap.Do(ctx, n.shardOf(v, t, Token(r.PartitionKey)), 1); err != nil {
		return nil, err
	}
	return n.store.Read(t.ID, r)
}

// Read implements engine.Backend.
func (n *Node) Read(ctx context.Context, r engine.Read, cl engine.Consistency) ([]engine.Row, error) {
	start := time.Now()
	defer func() { n.met.readLatency.Observe(float64(time.Since(start).Microseconds())) }()
	v := n.view.Load()
	ks, t, err := n.lookup(v, r.Keyspace, r.Table)
	if err != nil {
		return nil, err
	}
	reps, _ := v.replicasOf(ks, t, Token(r.PartitionKey))
	need := blockFor(cl, len(reps))
	var alive []string
	for _, rp := range reps {
		if n.isUp(rp.Host) {
			if rp.Host == n.hostID {
				alive = append([]string{rp.Host}, alive...)
			} else {
				alive = append(alive, rp.Host)
			}
		}
	}
	if len(alive) < need || len(reps) == 0 {
		n.met.unavailable.Inc()
		return nil, &engine.Error{Code: engine.CodeUnavailable, Message: fmt.Sprintf("Cannot achieve consistency level for cl %s. Requires %d, alive %d", cl, need, len(alive)),
			Consistency: cl, Required: need, Alive: len(alive)}
	}
	type result struct {
		rows []engine.Row
		err  error
	}
	// Ask the replicas the level needs; a failure or a slow answer
	// (speculativeRetry) brings in one more live replica, as ScyllaDB's
	// speculative retry does, so one paused replica does not fail reads.
	res := make(chan result, len(alive))
	send := func(h string) {
		go func() {
			if h == n.hostID {
				rows, err := n.localRead(ctx, r)
				res <- result{rows, err}
				return
			}
			m, err := n.call(ctx, h, &msg{Op: opRead, Read: &r})
			if err != nil {
				res <- result{nil, err}
				return
			}
			res <- result{m.Rows, nil}
		}()
	}
	sent := 0
	for ; sent < need; sent++ {
		send(alive[sent])
	}
	spec := time.NewTimer(speculativeRetry)
	defer spec.Stop()
	var got [][]engine.Row
	fails := 0
	var lastErr error
	for len(got)+fails < sent {
		select {
		case <-spec.C:
			if sent < len(alive) {
				send(alive[sent])
				sent++
			}
		case rr := <-res:
			if rr.err != nil {
				fails++
				lastErr = rr.err
				if sent < len(alive) {
					send(alive[sent])
					sent++
					continue
				}
				if len(alive)-fails < need {
					var ee *engine.Error
					if errors.As(rr.err, &ee) && ee.Code == engine.CodeOverloaded {
						return nil, ee
					}
					return nil, &engine.Error{Code: engine.CodeReadFailure, Message: fmt.Sprintf("Operation failed for %s - received %d responses and %d failures: %v", cl, len(got), fails, lastErr),
						Consistency: cl, Required: need, Alive: len(got), Failures: fails}
				}
				continue
			}
			got = append(got, rr.rows)
			if len(got) >= need {
				return mergeRows(got, r.Limit), nil
			}
		case <-ctx.Done():
			n.met.readTimeouts.Inc()
			return nil, &engine.Error{Code: engine.CodeReadTimeout, Message: fmt.Sprintf("Operation timed out for read - received only %d responses from %d CL=%s.", len(got), need, cl),
				Consistency: cl, Required: need, Alive: len(got)}
		}
	}
	return nil, &engine.Error{Code: engine.CodeReadFailure, Message: fmt.Sprintf("read failed: %v", lastErr), Consistency: cl, Required: need, Alive: len(got), Failures: fails}
}

// mergeRows merges replica answers by clustering key, newest row winning.
func mergeRows(sets [][]engine.Row, limit int) []engine.Row {
	if len(sets) == 1 {
		return sets[0]
	}
	by := map[string]engine.Row{}
	for _, s := range sets {
		for _, r := range s {
			k := string(r.Clustering)
			if o, ok := by[k]; !ok || r.Timestamp > o.Timestamp {
				by[k] = r
			}
		}
	}
	out := make([]engine.Row, 0, len(by))
	for _, r := range by {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Clustering, out[j].Clustering) < 0 })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// ---- streaming ----

type streamReq struct {
	Table   [16]byte
	Index   int
	Count   int
	Sources []string // host ids, in order of preference
	Rate    float64  // bytes per second
	Op      string   // bootstrap, decommission, removenode, rebalance
}

type scanReq struct {
	Table      [16]byte
	Start, End []byte
	Max        int
	Rate       float64
	Shard      int
}

// streamIn copies a tablet's rows from a source replica into this node.
func (n *Node) streamIn(ctx context.Context, req *streamReq) error {
	first, last := tabletRange(req.Index, req.Count)
	start, end := tokenRangeKeys(req.Table, first, last)
	var lastErr error = errors.New("no live source replica")
	for _, src := range req.Sources {
		if !n.isUp(src) {
			continue
		}
		cur := start
		var total int64
		ok := true
		for cur != nil {
			r, err := n.call(ctx, src, &msg{Op: opScan, Scan: &scanReq{Table: req.Table, Start: cur, End: end, Max: streamChunkBytes, Rate: req.Rate}})
			if err != nil {
				lastErr = err
				ok = false
				break
			}
			var b int64
			for _, kv := range r.KVs {
				b += int64(len(kv.K) + len(kv.V))
			}
			if err := n.disk.CheckWrite(b); err != nil {
				return err
			}
			if err := n.store.Ingest(r.KVs); err != nil {
				return fmt.Errorf("ingesting streamed rows: %w", err)
			}
			n.met.streamIn.Add(float64(b))
			total += b
			cur = r.Next
		}
		if ok {
			return nil
		}
	}
	return lastErr
}

// scanOut serves one streaming chunk, paced by the capacity model.
func (n *Node) scanOut(ctx context.Context, req *scanReq) (*msg, error) {
	kvs, next, err := n.store.Scan(req.Start, req.End, req.Max)
	if err != nil {
		return nil, fmt.Errorf("scanning for streaming: %w", err)
	}
	var b int64
	for _, kv := range kvs {
		b += int64(len(kv.K) + len(kv.V))
	}
	rate := req.Rate
	if rate <= 0 || math.IsInf(rate, 0) {
		rate = n.cfg.StreamBytesPerSec
	}
	// The chunk takes streaming time on the shard that owns the tablet here.
	shard := 0
	if len(req.Start) >= 25 {
		tok := int64(binary.BigEndian.Uint64(req.Start[17:25]) ^ (1 << 63))
		v := n.view.Load()
		if t := v.byID[req.Table]; t != nil {
			shard = n.shardOf(v, t, tok)
		}
	}
	// Data moves at the shard's streaming rate whatever the number of
	// migrations (a FIFO pacer per shard), and while it does, streaming
	// occupies streamShare of the shard's time in the capacity model, the
	// rest being left to requests, as ScyllaDB's scheduling groups do.
	end := n.pace(shard, time.Duration(float64(b)/rate*float64(time.Second)))
	if err := n.cap.Stream(ctx, shard, b, rate/streamShare); err != nil {
		return nil, err
	}
	if d := time.Until(end); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	n.met.streamOut.Add(float64(b))
	return &msg{KVs: kvs, Next: next}, nil
}

// pace reserves d of a shard's streaming bandwidth and returns when the
// reservation ends.
func (n *Node) pace(shard int, d time.Duration) time.Time {
	n.paceMu.Lock()
	defer n.paceMu.Unlock()
	if n.paceNext == nil {
		n.paceNext = map[int]time.Time{}
	}
	start := time.Now()
	if t := n.paceNext[shard]; t.After(start) {
		start = t
	}
	end := start.Add(d)
	n.paceNext[shard] = end
	return end
}
