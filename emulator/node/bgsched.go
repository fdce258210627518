package node

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
)

// Background work runs at ScyllaDB's scheduling-group shares. Seastar's CPU
// scheduler gives each scheduling group CPU in proportion to its shares
// when groups compete (scylladb main.cc: "statement" 1000, "streaming"
// 200; "compaction" and "memtable" 1000, their actual shares set by the
// backlog controllers below). An emulated node's flushes and compactions
// are Go goroutines on OS threads that the host's scheduler treats like the
// request path, so a node's compaction took the CPU from every node's
// requests on a loaded host: a near-full 3-node cluster at 1,300 op/s had
// a write P99 of 10.7-16.5 ms, 2.4-3.0 ms with its background work at
// these shares (issue 17). Each flush, compaction or streamed tablet's
// goroutine is locked to its own thread, and that thread gets the Linux
// nice value whose weight stands to a nice-0 thread's as its group's
// shares to the statement group's 1000. The goroutine ends with its work,
// and Go ends a thread whose goroutine exits locked, so no other goroutine
// runs at that priority; threads a locked thread would start are started
// by Go's template thread instead, at normal priority (runtime/proc.go
// newm).

// onLowered, when set (tests), gets the nice value a background thread
// runs at, read back from the kernel.
var onLowered func(nice int)

// controlPoint is a backlog_controller control point: backlog in,
// shares out (scylladb backlog_controller.hh).
type controlPoint struct{ backlog, shares float64 }

// compactionControl is compaction_controller::default_control_points
// (backlog_controller.hh): backlog normalized by the shard's memory
// (compaction_manager.cc: backlog() / available_memory()), 50 shares at
// none, 100 at 1.5, default_compaction_maximum_shares (1000) at
// normalization_factor (30).
var compactionControl = []controlPoint{{0, 50}, {1.5, 100}, {30, 1000}}

// flushControl is flush_controller's (backlog_controller.hh) with the
// default unspooled_dirty_soft_limit 0.6 (db/config.cc): dirty memory as a
// share of the hard limit, 10 shares at the soft limit, 200 halfway to the
// hard limit, 1000 at it.
var flushControl = []controlPoint{{0, 0}, {0.6, 10}, {0.8, 200}, {1, 1000}}

// sharesAt is backlog_controller::adjust (replica/database.cc): linear
// between control points, the last point's shares beyond it.
func sharesAt(points []controlPoint, backlog float64) float64 {
	if backlog >= points[len(points)-1].backlog {
		return points[len(points)-1].shares
	}
	for i := 1; i < len(points); i++ {
		if backlog < points[i].backlog {
			lo, hi := points[i-1], points[i]
			return lo.shares + (hi.shares-lo.shares)*(backlog-lo.backlog)/(hi.backlog-lo.backlog)
		}
	}
	return points[len(points)-1].shares
}

// niceWeights is the Linux scheduler's weight of nice 0..19
// (kernel/sched/core.c sched_prio_to_weight).
var niceWeights = [20]float64{1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15}

// niceFor is the nice value whose weight is nearest shares/1000 of a
// nice-0 thread's (19, the lowest, below that).
func niceFor(shares float64) int {
	want := niceWeights[0] * shares / capacity.StatementShares // the reference a nice-0 thread stands for
	best := len(niceWeights) - 1
	for n, w := range niceWeights {
		if math.Abs(w-want) < math.Abs(niceWeights[best]-want) {
			best = n
		}
	}
	return best
}

// backgroundPriority sets the priority of the store's flushes and
// compactions from their backlog, as ScyllaDB's controllers set their
// groups' shares. Pebble calls FlushBegin and CompactionBegin on the
// goroutine that then does the work (compaction.go: go d.flush(), go
// d.compact(...)), with its mutex held, so the compaction backlog comes
// from the last reading, refreshed after every flush and compaction.
type backgroundPriority struct {
	memory int64        // the emulated shard memory the backlog is normalized by
	debt   atomic.Int64 // Pebble's compaction debt at the last reading

	refresh chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup

	// compacted, when set, gets the compaction work to charge, in bytes,
	// once it is known (the node charges them to its capacity model): a
	// major compaction's bytes read (manual > 0), and for each flush what
	// ScyllaDB's size-tiered strategy will compact of it (stcsCompacted).
	compacted atomic.Pointer[func(bytes int64)]
	// manual counts the major compactions (nodetool compact, cleanup)
	// running: theirs are charged by the bytes they read.
	manual atomic.Int32
	// live is the store's bytes at the last reading (the size tiers a
	// flushed sstable climbs).
	live atomic.Int64
	// compactionEnd, when set, sees every compaction as it ends: what a
	// test of the store's disk usage measures its transient room with.
	compactionEnd atomic.Pointer[func(pebble.CompactionInfo)]
}

// stcsMinThreshold is size-tiered compaction's min_threshold: four
// similar-sized sstables make a compaction (scylladb schema/schema.hh:
// DEFAULT_MIN_COMPACTION_THRESHOLD 4), in the default strategy of a table (docs/cql/compaction.rst: class default
// SizeTieredCompactionStrategy).
const stcsMinThreshold = 4

// stcsCompacted is what size-tiered compaction reads, over the life of the
// data, for an sstable of flushed bytes in a store of live bytes: the
// sstable is compacted once in each tier it climbs, from its own size to
// the store's, each tier min_threshold times the one below, so
// log_4(live/flushed) times (the write amplification ScyllaDB documents
// for STCS, docs/architecture/compaction/compaction-strategies.rst: O(log
// N)). ScyllaDB flushes a shard's memtable into one sstable per tablet and
// compacts each tablet's sstables apart (replica/compaction_group.hh), so
// per tablet both sizes are divided by the tablets: the ratio is the same.
func stcsCompacted(flushed, live int64) int64 {
	if flushed <= 0 || live <= flushed {
		return 0
	}
	tiers := math.Log(float64(live)/float64(flushed)) / math.Log(stcsMinThreshold)
	return int64(float64(flushed) * tiers)
}

// newBackgroundPriority returns the controllers of a store whose emulated
// memory is memory bytes.
func newBackgroundPriority(memory int64) *backgroundPriority {
	return &backgroundPriority{memory: max(memory, 1), refresh: make(chan struct{}, 1), stop: make(chan struct{})}
}

// compactionShares is the compaction group's shares at the last reading.
func (b *backgroundPriority) compactionShares() float64 {
	return sharesAt(compactionControl, float64(b.debt.Load())/float64(b.memory))
}

// flushShares is the memtable group's shares while bytes of memtables
// are flushed: ScyllaDB's hard dirty limit is half the memory
// (replica/database.cc: _dirty_memory_manager, available_memory * 0.50).
func (b *backgroundPriority) flushShares(bytes uint64) float64 {
	return sharesAt(flushControl, float64(bytes)/(float64(b.memory)/2))
}

// listen adds the controllers to Pebble's events; start reads the debt.
func (b *backgroundPriority) listen(l *pebble.EventListener) {
	l.FlushBegin = func(i pebble.FlushInfo) {
		if !i.Ingest {
			lowerThreadPriority(niceFor(b.flushShares(i.InputBytes)))
		}
	}
	l.CompactionBegin = func(pebble.CompactionInfo) {
		lowerThreadPriority(niceFor(b.compactionShares()))
	}
	poke := func() {
		select {
		case b.refresh <- struct{}{}:
		default:
		}
	}
	// The store is one Pebble tree (leveled: a flushed byte was read by
	// 12.7 compactions on a full emulated i4i.large, 20 MB flushed for 265
	// MB read) where ScyllaDB's tables are size-tiered (3.4 tiers on the
	// same node, stcsCompacted): the model charges ScyllaDB's compaction
	// work for each flush, not the work Pebble does for its own shape, nor
	// Pebble's rewrites of the ranges a moved tablet left (ScyllaDB drops
	// the tablet's sstables). Major compactions are charged by their bytes.
	l.FlushEnd = func(i pebble.FlushInfo) {
		poke()
		f := b.compacted.Load()
		if f == nil || i.Err != nil || i.Ingest {
			return
		}
		var out int64
		for _, t := range i.Output {
			out += int64(t.Size)
		}
		if w := stcsCompacted(out, b.live.Load()); w > 0 {
			(*f)(w)
		}
	}
	l.CompactionEnd = func(i pebble.CompactionInfo) {
		poke()
		if f := b.compactionEnd.Load(); f != nil {
			(*f)(i)
		}
		if f := b.compacted.Load(); f != nil && i.Err == nil && b.manual.Load() > 0 {
			(*f)(compactedBytes(i))
		}
	}
}

// start reads db's compaction debt after every flush and compaction (not
// in the event: Metrics takes the mutex Pebble holds there) until close.
func (b *backgroundPriority) start(db *pebble.DB) {
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		for {
			select {
			case <-b.stop:
				return
			case <-b.refresh:
				m := db.Metrics()
				b.debt.Store(int64(m.Compact.EstimatedDebt))
				b.live.Store(int64(m.Total().Size))
			}
		}
	}()
}

// close stops the readings (before the database closes).
func (b *backgroundPriority) close() {
	close(b.stop)
	b.done.Wait()
}

// inBackground runs fn on a goroutine of its own at shares, and waits for
// it: a streamed tablet is written by a request worker, which must not
// keep the lower priority.
func inBackground(shares float64, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		lowerThreadPriority(niceFor(shares))
		errc <- fn()
	}()
	return <-errc
}

// compactedBytes is what a compaction read and rewrote: its input tables,
// unless it only moved or deleted files (Pebble's "move" and
// "delete-only" compactions read nothing).
func compactedBytes(i pebble.CompactionInfo) int64 {
	if i.Reason == "move" || i.Reason == "delete-only" {
		return 0
	}
	var b uint64
	for _, l := range i.Input {
		for _, t := range l.Tables {
			b += t.Size
		}
	}
	return int64(b)
}

// chargeCompactions has the store's compactions take their time on the
// capacity model's shards, in the compaction group at the shares its
// backlog controller gives (compactionControl): each flush's size-tiered
// compactions (stcsCompacted) and major compactions. A compaction costs what
// streaming the same bytes costs (both read and write whole sstables):
// streamShare of a shard's time at its streaming bandwidth. One Pebble
// store serves every shard, so each compaction is split across them.
func (n *Node) chargeCompactions() {
	shards := max(1, n.cfg.VCPUs)
	perShard := compactionRate(n.cfg)
	f := func(bytes int64) {
		for i := range shards {
			n.cap.Compact(i, bytes/int64(shards), perShard)
		}
	}
	n.store.bg.compacted.Store(&f)
}

// compactionRate is the bytes a shard compacts per second alone: what it
// streams in streamShare of its time.
func compactionRate(cfg Config) float64 {
	return cfg.StreamBytesPerSec / float64(max(1, cfg.VCPUs)) / streamShare
}

// compactionBacklog is the compaction work a shard has before it, in
// bytes and normalized, as compaction_manager's backlog() counts the work
// its strategy still has to do and normalizes it by the shard's memory
// (compaction_manager.cc: backlog() / available_memory(), the controller's
// input and the normalized_backlog gauge): the bytes of the compactions
// the store has run whose cost the shard's model has not yet run. Pebble's
// own compaction debt is not counted: the host runs Pebble's compactions
// as soon as Pebble picks them, and the model is what stands for the
// shard's CPU, so its unrun work is what compaction is behind by.
type compactionBacklog struct {
	memory   int64   // the store's emulated memory, over every shard
	shards   int     // the node's shards
	perShard float64 // bytes a shard compacts per second alone
}

// bytes is a shard's backlog with work of model time not yet run.
func (c compactionBacklog) bytes(work time.Duration) float64 {
	return work.Seconds() * c.perShard
}

// normalized is bytes over the shard's memory.
func (c compactionBacklog) normalized(work time.Duration) float64 {
	return c.bytes(work) / (float64(c.memory) / float64(max(1, c.shards)))
}

// shares is the compaction group's shares at that backlog.
func (c compactionBacklog) shares(work time.Duration) float64 {
	return sharesAt(compactionControl, c.normalized(work))
}

// newCompactionBacklog is the backlog of n's store and model.
func (n *Node) newCompactionBacklog() compactionBacklog {
	return compactionBacklog{memory: n.store.bg.memory, shards: max(1, n.cfg.VCPUs), perShard: compactionRate(n.cfg)}
}
