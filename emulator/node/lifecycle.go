package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
	"github.com/elasticity-dev/elasticity/emulator/diskmodel"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Lifecycle: open, join, install cluster metadata (and log and emit what
// changed), close. State: metaMu.

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
		gens: map[string]int64{}, downSince: map[string]time.Time{}, tasks: newTaskManager(),
		subs: map[chan engine.Event]struct{}{}, migrations: map[string]bool{}, wake: make(chan struct{}, 1), metaDirty: make(chan struct{}, 1), statsTrigger: make(chan struct{}, 1), joined: make(chan struct{}), left: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.started = time.Now()
	storeBytes := cfg.DiskBytes
	if cfg.DiskFromFilesystem {
		var err error
		if storeBytes, err = diskmodel.FilesystemSize(cfg.DataDir); err != nil {
			return nil, fmt.Errorf("reading the data directory's filesystem: %w", err)
		}
	}
	cacheBytes := cfg.RowCacheBytes
	if cacheBytes <= 0 {
		cacheBytes = rowCacheSize(storeBytes)
	}
	st, err := openStore(filepath.Join(cfg.DataDir, "data"), storeBytes, cacheBytes, cfg.Life)
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
	// Stall reports are raw stderr lines, as Seastar prints them.
	n.stalls = capacity.NewStallDetector(cfg.VCPUs, cfg.StallReportsPerMinute, n.log.Raw)
	n.met = newMetrics(n)
	n.pool = newWorkPool()
	n.cap = capacity.New(capacity.Config{Shards: cfg.VCPUs, OpsPerShard: cfg.OpsPerVCPU, SlowFactor: cfg.SlowFactor,
		StallThreshold: cfg.StallThreshold, Detector: n.stalls, OnStall: func(_ int, d time.Duration) {
			n.met.stalls.Observe(float64(d.Microseconds()))
		},
		CompactionShares: n.newCompactionBacklog().shares, Held: cfg.Life.Held})
	n.chargeCompactions()
	n.criticalDiskMode = criticalDiskMode(cfg.Version)
	if cfg.DiskFromFilesystem {
		if n.disk, err = diskmodel.NewFilesystem(cfg.DataDir, storeReserve(storeBytes), n.log.Logf); err != nil {
			n.cap.Close()
			return fail(err)
		}
		n.log.Logf(scyllalog.Info, "disk_space_monitor", "Data directory %s: a filesystem of %d bytes, %d available", cfg.DataDir, n.disk.Capacity(), n.disk.Avail())
		n.setCriticalLevel(cfg.CriticalDiskLevel, storeReserve(storeBytes))
	} else {
		n.disk = diskmodel.New(cfg.DataDir, cfg.DiskBytes, n.log.Logf)
		n.disk.SetCriticalLevel(cfg.CriticalDiskLevel)
	}
	n.log.Logf(scyllalog.Info, "init", "Scylla version %s starting, host id %s, %d shards", cfg.Version, n.hostID, cfg.VCPUs)

	n.ln, err = net.Listen("tcp", net.JoinHostPort(cfg.ListenAddress, strconv.Itoa(cfg.InternodePort)))
	if err != nil {
		n.cap.Close()
		return fail(fmt.Errorf("listening for internode traffic: %w", err))
	}
	n.tr = newTransport(n.ctx, cfg.ListenAddress, n.handle, cfg.Peers, cfg.Life)
	n.tr.setServesAtOnce(n.servesAtOnce)
	go n.tr.serve(n.ln)
	cfg.Peers.add(n.internodeAddr(), n.tr)

	if m, err := n.loadMeta(); err != nil {
		n.Close()
		return nil, err
	} else if m != nil {
		n.view.Store(newView(m))
	} else {
		n.view.Store(newView(&Meta{Keyspaces: map[string]*engine.Keyspace{}, Tables: map[string]map[string]*engine.Table{},
			Nodes: map[string]*NodeMeta{}, Tablets: map[string]*TabletMap{}, Balancing: true}))
	}
	n.wg.Add(6)
	go n.metaSaver()
	go n.statsLoop()
	go n.stallTicker()
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
	id := newUUID()
	if err := n.store.PutMeta("host_id", []byte(id)); err != nil {
		return "", fmt.Errorf("storing host id: %w", err)
	}
	return id, nil
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
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

// installMeta makes m current if it is newer and has it persisted.
func (n *Node) installMeta(m *Meta) error {
	n.metaMu.Lock()
	defer n.metaMu.Unlock()
	old := n.view.Load()
	if old != nil && m.Epoch <= old.m.Epoch {
		return nil
	}
	// An epoch is written at once when none was for metaSaveInterval (so
	// the first one is: a restarted node must know it was a member), later
	// ones coalesced, the latest always: with 1,024 tablets every migration
	// step is a new epoch, and encoding and writing the whole map each time
	// was a tenth of a node's CPU while tablets moved (issue 17). ScyllaDB
	// appends each change to group 0's raft log instead (service/raft); a
	// node killed within the interval pulls the epochs it lost from its
	// peers when it restarts.
	if time.Since(n.metaSavedAt) >= metaSaveInterval {
		if err := n.saveMeta(m); err != nil {
			return err
		}
	} else {
		select {
		case n.metaDirty <- struct{}{}:
		default:
		}
	}
	nv := newView(m)
	n.view.Store(nv)
	n.afterMetaChange(old, nv)
	// storage_service::topology_transition and on_update_tablet_metadata
	// broadcast the topology state machine's event.
	n.wakeCoordinator()
	return nil
}

// metaSaveInterval bounds how often the cluster metadata file is rewritten.
const metaSaveInterval = 200 * time.Millisecond

// saveMeta writes m to the metadata file unless a newer epoch is there.
// Called with metaMu held.
func (n *Node) saveMeta(m *Meta) error {
	if m.Epoch <= n.metaSavedEpoch {
		return nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(m); err != nil {
		return fmt.Errorf("encoding cluster metadata: %w", err)
	}
	// A file replaced atomically, not a Pebble key: with thousands of
	// tablets every epoch is a large value, and the log would keep them all.
	tmp := n.metaPath() + ".tmp"
	n.cfg.Life.Hold() // nothing reaches the files of a paused or killed node
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("storing cluster metadata: %w", err)
	}
	if err := os.Rename(tmp, n.metaPath()); err != nil {
		return fmt.Errorf("storing cluster metadata: %w", err)
	}
	n.metaSavedEpoch, n.metaSavedAt = m.Epoch, time.Now()
	return nil
}

// saveLatestMeta writes the current epoch if it is not on disk yet.
func (n *Node) saveLatestMeta() {
	n.metaMu.Lock()
	defer n.metaMu.Unlock()
	if v := n.view.Load(); v != nil {
		if err := n.saveMeta(v.m); err != nil {
			n.log.Logf(scyllalog.Error, "storage_service", "%v", err)
		}
	}
}

// metaSaver writes the latest epoch metaSaveInterval after a deferred one.
func (n *Node) metaSaver() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.metaDirty:
		}
		select {
		case <-n.ctx.Done():
			return
		case <-time.After(metaSaveInterval):
		}
		n.saveLatestMeta()
	}
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
	if n.tr != nil {
		n.cfg.Peers.remove(n.internodeAddr(), n.tr)
	}
	n.cancel()
	if n.ln != nil {
		n.ln.Close()
	}
	if n.tr != nil {
		n.tr.direct.close() // waits for the calls in progress: they use the store
		n.tr.closeAll()
	}
	n.wg.Wait()
	n.saveLatestMeta()
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

// stallTicker lets the stall detector print suppressed counts once their
// minute is over (Seastar does it at the next task run).
func (n *Node) stallTicker() {
	defer n.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			n.stalls.Tick()
		}
	}
}

// setCriticalLevel sets critical_disk_utilization_level on a filesystem
// disk. The emulated store needs reserve bytes free to flush and compact
// (storeReserve), where ScyllaDB's critical mode keeps its sstable writes
// going: on a disk so small that the level leaves less than that, user
// writes are rejected from the lower level the store allows, and the node
// says so at startup.
func (n *Node) setCriticalLevel(level float64, reserve int64) {
	if level <= 0 || level > 1 {
		level = diskmodel.CriticalLevel
	}
	if size := n.disk.Capacity(); size > 0 {
		if most := 1 - float64(reserve)/float64(size); most < level {
			n.log.Logf(scyllalog.Warn, "disk_space_monitor", "critical_disk_utilization_level %.1f%% leaves less than the %d bytes the emulated store needs free on this %d-byte disk: user writes are rejected above %.1f%%",
				level*100, reserve, size, most*100)
			level = most
		}
	}
	n.disk.SetCriticalLevel(level)
}
