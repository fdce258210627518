package node

import (
	"encoding/binary"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	dto "github.com/prometheus/client_model/go"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// sumSeries sums a family's series over shards.
func sumSeries(f *dto.MetricFamily) float64 {
	var sum float64
	for _, m := range f.Metric {
		sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	return sum
}

// The compaction manager's metrics (scylladb/scylladb
// compaction/compaction_manager.cc, register_metrics) are exported per
// shard with ScyllaDB's names and types; scylla_compaction_manager_compactions
// counts the store's running compactions: above 0 while writes keep
// Pebble compacting, 0 again once they have settled, with the completed
// ones counted.
func TestCompactionManagerMetrics(t *testing.T) {
	n := startTestNode(t, Config{VCPUs: 2, InternodePort: 17913, DiskBytes: 64 << 20})
	fams := scrapeNode(t, n)
	types := map[string]dto.MetricType{
		"scylla_compaction_manager_compactions":           dto.MetricType_GAUGE,
		"scylla_compaction_manager_pending_compactions":   dto.MetricType_GAUGE,
		"scylla_compaction_manager_completed_compactions": dto.MetricType_COUNTER,
		"scylla_compaction_manager_failed_compactions":    dto.MetricType_COUNTER,
		"scylla_compaction_manager_postponed_compactions": dto.MetricType_GAUGE,
		"scylla_compaction_manager_backlog":               dto.MetricType_GAUGE,
		"scylla_compaction_manager_normalized_backlog":    dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		f := fams[name]
		if f == nil {
			t.Fatalf("%s not exported", name)
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want a %v", name, f.GetType(), typ)
		}
		if len(f.Metric) != 2 {
			t.Fatalf("%s: %d series, want one per shard (2)", name, len(f.Metric))
		}
		shards := map[string]bool{}
		for _, m := range f.Metric {
			if len(m.Label) != 1 || m.Label[0].GetName() != "shard" {
				t.Errorf("%s labels %v, want shard only", name, m.Label)
			}
			shards[m.Label[0].GetValue()] = true
		}
		if !shards["0"] || !shards["1"] {
			t.Errorf("%s shards %v", name, shards)
		}
	}
	if v := sumSeries(fams["scylla_compaction_manager_compactions"]); v != 0 {
		t.Fatalf("%v compactions running on an empty node", v)
	}

	// Keep writing 1 KiB rows (a 512 KiB memtable on a 64 MiB disk: a
	// flush every ~500 rows, L0 compactions soon after) until a scrape
	// sees a compaction running.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			writeRows(t, n.store, 2000)
		}
	}()
	var peak float64
	deadline := time.Now().Add(30 * time.Second)
	for peak == 0 && time.Now().Before(deadline) {
		peak = max(peak, sumSeries(scrapeNode(t, n)["scylla_compaction_manager_compactions"]))
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	<-done
	if peak == 0 {
		t.Fatal("no running compaction seen in 30 s of writes")
	}
	var running float64 = -1
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if running = sumSeries(scrapeNode(t, n)["scylla_compaction_manager_compactions"]); running == 0 {
			break
		}
	}
	if running != 0 {
		t.Fatalf("%v compactions still running 30 s after the writes stopped", running)
	}
	// The running gauge adds the model's live count to Pebble's figures,
	// which a scrape reads at most every 100 ms, and Pebble may start a
	// compaction after the gauge read 0: so the counter is compared with
	// the store's count once the two agree, i.e. once Pebble is idle and
	// the cached reading caught up. A counter that never reaches the
	// store's count (or runs past it) fails after 10 s.
	var done1 float64
	var count int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		done1 = sumSeries(scrapeNode(t, n)["scylla_compaction_manager_completed_compactions"])
		count = n.store.db.Metrics().Compact.Count
		if done1 >= 1 && done1 == float64(count) {
			break
		}
	}
	if done1 < 1 {
		t.Fatalf("completed_compactions %v 10 s after compactions ran", done1)
	}
	if done1 != float64(count) {
		t.Errorf("completed_compactions summed over shards %v, the store's count %d", done1, count)
	}
	t.Logf("peak %v running; %v completed", peak, done1)
}

// A node-wide count split over shards sums to the count, and each shard's
// share only grows with it.
func TestShareOf(t *testing.T) {
	for _, shards := range []int{1, 2, 3, 16} {
		prev := make([]float64, shards)
		for c := int64(0); c < 40; c++ {
			var sum float64
			for s := range shards {
				v := shareOf(c, s, shards)
				if v < prev[s] {
					t.Fatalf("shard %d of %d: %v after %v (count %d)", s, shards, v, prev[s], c)
				}
				prev[s] = v
				sum += v
			}
			if sum != float64(c) {
				t.Fatalf("%d shards, count %d: shares sum to %v", shards, c, sum)
			}
		}
	}
}

// A compaction of the store is charged to the capacity model: its bytes
// take the shards' time in the compaction group (at streaming's cost per
// byte), the shards show it as utilization with no request served, and the
// compaction manager counts a compaction running until the model has run
// it, as ScyllaDB's does until the compaction task ends.
func TestStoreCompactionsTakeTheShards(t *testing.T) {
	// 1 MiB/s of streaming per node: 2 shards compact 1/0.3 × 0.5 MiB/s each.
	n := startTestNode(t, Config{VCPUs: 2, InternodePort: 17914, DiskBytes: 256 << 20, StreamBytesPerSec: 1 << 20})
	writeRows(t, n.store, 3000)
	if err := n.store.Flush(); err != nil {
		t.Fatal(err)
	}
	writeRows(t, n.store, 3000) // the same keys again: a second sstable to merge
	if err := n.store.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := n.store.MajorCompact([]byte{0}, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	backlog := n.cap.CompactionBacklog()
	if len(backlog) != 2 || backlog[0] < 100*time.Millisecond || backlog[1] < 100*time.Millisecond {
		t.Fatalf("model's compaction backlog %v after compacting ~6 MiB, want some on both shards", backlog)
	}
	fams := scrapeNode(t, n)
	if running := sumSeries(fams["scylla_compaction_manager_compactions"]); running < 1 {
		t.Errorf("compaction_manager_compactions %v while the model still runs a compaction", running)
	}
	// The backlog gauges count the model's work not yet run, at the
	// shard's compaction rate (1 MiB/s of streaming over 2 shards, at
	// streamShare of a shard), over the shard's half of the store's
	// memory: the figure the controller's shares come from.
	memory := float64(n.store.bg.memory) / 2
	if got := len(fams["scylla_compaction_manager_normalized_backlog"].GetMetric()); got != 2 {
		t.Fatalf("%d normalized_backlog series, want one per shard", got)
	}
	for _, m := range fams["scylla_compaction_manager_normalized_backlog"].GetMetric() {
		shard, _ := strconv.Atoi(m.Label[0].GetValue())
		got := m.GetGauge().GetValue()
		want := backlog[shard].Seconds() * (1 << 20) / 2 / streamShare / memory
		if got < 0.8*want || got > 1.1*want {
			t.Errorf("shard %d normalized_backlog %.2f, want about %.2f (model work %v)", shard, got, want, backlog[shard])
		}
	}
	if b := sumSeries(fams["scylla_compaction_manager_backlog"]); b < 1<<20 {
		t.Errorf("compaction_manager_backlog %.0f bytes summed over shards while the model has %v of compaction to run", b, backlog)
	}
	time.Sleep(1100 * time.Millisecond) // a whole utilization window
	var util float64
	for _, u := range n.cap.Utilization() {
		util += u
	}
	if util < 1.5 {
		t.Errorf("shards' utilization %.2f with compaction running and no requests, want both busy", util)
	}
	deadline := time.Now().Add(30 * time.Second)
	for sumSeries(scrapeNode(t, n)["scylla_compaction_manager_compactions"]) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("compactions still running 30 s later; model backlog %v", n.cap.CompactionBacklog())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b := sumSeries(scrapeNode(t, n)["scylla_compaction_manager_normalized_backlog"]); b > 0.01 {
		t.Errorf("normalized_backlog %.3f summed over shards once the compactions ran", b)
	}
	t.Logf("model's compaction backlog after compacting: %v", backlog)
}

// A compaction costs the bytes it read; Pebble's moves and delete-only
// compactions read none.
func TestCompactedBytes(t *testing.T) {
	in := []pebble.LevelInfo{{Level: 0, Tables: []pebble.TableInfo{{Size: 100}, {Size: 50}}}, {Level: 5, Tables: []pebble.TableInfo{{Size: 1000}}}}
	for reason, want := range map[string]int64{"default": 1150, "move": 0, "delete-only": 0} {
		if got := compactedBytes(pebble.CompactionInfo{Reason: reason, Input: in}); got != want {
			t.Errorf("%s compaction: %d bytes, want %d", reason, got, want)
		}
	}
}

// A flush is charged what ScyllaDB's size-tiered strategy compacts of it
// over its life, log_4(store/flush) times its bytes (stcsCompacted), not
// what Pebble's leveled tree rewrites; Pebble's own compactions are not
// charged, a major compaction is, by its bytes.
func TestFlushesAreChargedAtSizeTieredAmplification(t *testing.T) {
	s, _ := openTestStore(t, 0)
	var charged atomic.Int64
	f := func(b int64) { charged.Add(b) }
	s.bg.compacted.Store(&f)
	writeRows(t, s, 32_000) // ~32 MiB
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.bg.live.Load() < 16<<20 || s.db.Metrics().Compact.NumInProgress > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("store's live bytes %d after writing ~32 MiB", s.bg.live.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	live := s.bg.live.Load()
	charged.Store(0)
	ids := [][16]byte{{3}}
	v := make([]byte, 1024)
	for i := range 1000 { // ~1 MiB more, overwrites
		k := binary.BigEndian.AppendUint64(nil, uint64(i*31))
		if err := s.Apply([]engine.Mutation{{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: 2}}, ids, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for s.db.Metrics().Compact.NumInProgress > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := charged.Load()
	// ~1 MiB flushed into ~33 MiB: log_4(33) ≈ 2.5 tiers.
	lo, hi := stcsCompacted(900<<10, live), stcsCompacted(1300<<10, live+(2<<20))
	if got < lo || got > hi {
		t.Errorf("a ~1 MiB flush into %d MiB charged %d bytes, want %d..%d (size-tiered, not Pebble's leveled rewrites)", live>>20, got, lo, hi)
	}
	charged.Store(0)
	if err := s.MajorCompact([]byte{0}, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	if got := charged.Load(); got < 1<<20 {
		t.Errorf("a major compaction of %d MiB (1 MiB in L0) charged %d bytes, want the bytes it read", live>>20, got)
	}
	// More overwrites flushed, then the store's own compaction of the range.
	for i := range 1000 {
		k := binary.BigEndian.AppendUint64(nil, uint64(i*17))
		if err := s.Apply([]engine.Mutation{{PartitionKey: k, Cells: map[string][]byte{"v": v}, Timestamp: 3}}, ids, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	charged.Store(0)
	if err := s.CompactRange([]byte{0}, []byte{0xff}); err != nil {
		t.Fatal(err)
	}
	if got := charged.Load(); got != 0 {
		t.Errorf("the store's own compaction of a range charged %d bytes, want none", got)
	}
}

func TestStcsCompacted(t *testing.T) {
	for _, c := range []struct{ flushed, live, want int64 }{
		{1 << 20, 64 << 20, 3 << 20}, // three tiers of 4×
		{1 << 20, 4 << 20, 1 << 20},
		{1 << 20, 1 << 20, 0}, // the store's only sstable
		{0, 1 << 20, 0},
	} {
		if got := stcsCompacted(c.flushed, c.live); got < c.want-1 || got > c.want+1 {
			t.Errorf("stcsCompacted(%d, %d) = %d, want %d", c.flushed, c.live, got, c.want)
		}
	}
}
