// Package node is the cluster engine of an emulated ScyllaDB-like node:
// membership and failure detection, internode RPC, replication at a
// consistency level, storage in Pebble, tablets with a load balancer and
// streaming, and the capacity and disk models. It implements
// engine.Backend for the CQL front end.
//
// Files by subsystem: node.go (types), lifecycle.go (open, join, metadata
// install, close), gossip.go (heartbeats, failure detection), dispatch.go and
// rpc.go (internode RPC), backend.go (events, metadata), datapath.go
// (replicated reads and writes), topology_coordinator.go (node requests,
// schema changes, quiesce), tablet_balancer.go (migration planning),
// streaming.go (tablet streaming, cleanup), pacing.go (streaming bandwidth),
// meta.go (cluster metadata), store.go (Pebble), metrics.go; operations an
// operator asks for: cleanup.go (vnodes cleanup), repair.go, snapshot.go and
// store_snapshot.go, tasks.go (the task manager); the REST API: rest.go
// (membership), rest_router.go (Seastar's routing and errors), rest_ring.go,
// rest_ops.go and rest_compaction.go (keyspace operations, compaction),
// rest_snapshots.go, rest_gossip.go (gossip, failure detector, system),
// rest_data.go (natural endpoints, faults), toppartitions.go.
package node

import (
	"context"
	"net"
	"sort"
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
	// DiskFromFilesystem makes the disk the filesystem DataDir is on
	// (its size and space left from statfs), as a real node's is; the
	// image double's nodes have it. DiskBytes is then not used.
	DiskFromFilesystem bool
	// RowCacheBytes is the row cache's memory (RowCacheBytes); 0: sized
	// from the disk (rowCacheSize), for a node whose memory is not scaled.
	RowCacheBytes int64
	// CriticalDiskLevel is critical_disk_utilization_level (0: 0.98).
	CriticalDiskLevel float64
	// OpsPerVCPU is the modelled request capacity of one shard per second.
	OpsPerVCPU float64
	// CoordinatorUnits is what coordinating one request costs the
	// coordinator's shard, in replica operations (capacity.CoordinatorUnits;
	// 0: nothing, as before the coordinator was charged).
	CoordinatorUnits float64
	// StreamBytesPerSec is the node's streaming bandwidth (all shards).
	StreamBytesPerSec float64
	StallThreshold    time.Duration
	// StallReportsPerMinute is --blocked-reactor-reports-per-minute (0 = 5).
	StallReportsPerMinute int
	SlowFactor            float64
	Version               string
	InitialTablets        int
	// TimeScale multiplies ScyllaDB's own timers the emulator mirrors (the
	// topology coordinator's tablet load stats refresh interval), as the
	// scenario's local.time_scale multiplies its durations; 0 means 1.
	TimeScale float64
	Log       *scyllalog.Logger
	// Peers, when set, is shared by the nodes of this process: internode
	// connections between them are in memory (mempeers.go).
	Peers *Peers
	// Life, when set, is the node's process state in a process it shares
	// with other nodes (life.go): paused, killed or dead one by one.
	Life *Life
}

// Node is a running emulated node.
type Node struct {
	// criticalDiskMode: user writes are rejected above the critical disk
	// utilization level (from 2025.4.0; criticalDiskMode).
	criticalDiskMode bool
	cfg              Config
	log              *scyllalog.Logger
	hostID           string
	store            *Store
	cap              *capacity.Model
	pool             *workPool // local replica work of coordinated reads
	disk             *diskmodel.Disk
	tr               *transport
	ln               net.Listener
	ctx              context.Context
	cancel           context.CancelFunc
	wg               sync.WaitGroup

	// Lifecycle and metadata (lifecycle.go).
	view   atomic.Pointer[view]
	metaMu sync.Mutex // installing metadata
	// The epoch last written to the metadata file and when (metaMu), and
	// the saver's wake-up for a deferred write.
	metaSavedEpoch uint64
	metaSavedAt    time.Time
	metaDirty      chan struct{}
	serving        atomic.Bool
	started        time.Time
	joined         chan struct{}
	left           chan struct{} // closed once this node has left the cluster
	leftOnce       sync.Once
	met            *metrics
	stalls         *capacity.StallDetector

	// Topology coordinator (topology_coordinator.go): coordMu serialises
	// metadata changes made as topology coordinator; node requests wait in
	// reqQueue (node_requests.go).
	coordMu   sync.Mutex
	reqMu     sync.Mutex
	reqQueue  []*queuedRequest
	reqActive *queuedRequest
	reqSeq    uint64
	// tstate is the topology's "tablet_migration" transition state: set
	// while the balancer has a migration plan in progress (quiesce waits for it).
	tstate atomic.Bool
	// Tablet load stats (load_stats.go): hosts whose capacity the coordinator knows.
	statsMu       sync.Mutex
	statsKnown    map[string]bool
	statsAt       time.Time // last refresh, triggered or periodic
	statsPeriodAt time.Time // last periodic refresh (the refresher's own loop)
	statsTrigger  chan struct{}
	statsHold     atomic.Pointer[chan struct{}] // test injection: a refresh waits for it to close (wait_refresh_tablet_load_stats)
	statsLoggedAt uint64                        // epoch of the last "Cannot balance" line

	// Gossip and failure detection (gossip.go).
	fdMu     sync.Mutex
	lastSeen map[string]time.Time
	up       map[string]bool
	loads    map[string]int64
	// aheadEpoch is a newer metadata epoch heard in a heartbeat (at aheadAt,
	// under fdMu): this node should catch up before coordinating.
	aheadEpoch uint64
	aheadAt    time.Time
	pulling    atomic.Bool

	// Client events (backend.go).
	subMu sync.Mutex
	subs  map[chan engine.Event]struct{}

	// Tablet balancer (tablet_balancer.go).
	// peerHeat: the replicas' cache hit rates per table (hitrate.go).
	peerHeat   peerHeat
	migMu      sync.Mutex
	migrations map[string]bool // "table/index" in flight
	finished   []*move         // streamed, waiting for the switch of ownership
	// wake is the topology state machine's event (_topo_sm.event.broadcast):
	// an idle coordinator sleeps until it (tablet_balancer.go).
	wake chan struct{}

	// Streaming pace (pacing.go) and cleanup of ranges given away (streaming.go).
	paceMu   sync.Mutex
	paceNext map[int]time.Time
	cleanMu  sync.Mutex
	cleanQ   [][2][]byte

	// Counter leaders' row locks (counter.go).
	counterLocks counterLocks
	paxos        paxosLocks

	// What the REST API's switches set (rest_ops.go), and the failure
	// detector's generations and down times as the API shows them (gossip.go).
	api     apiState
	tasks   *taskManager // the task manager's registered tasks (tasks.go)
	repairs repairJobs   // repair_async requests (repair.go)
	// topSampler counts partitions for toppartitions queries (toppartitions.go).
	topSampler topSampler
	gens       map[string]int64
	downSince  map[string]time.Time
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
	v.schema = &engine.Schema{Version: schemaVersion(m), Keyspaces: m.Keyspaces, Tables: m.Tables, Types: m.Types, Functions: m.Functions}
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
