package node

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Cache hit rates, the input of heat-weighted load balancing (hwlb.go).
//
// A replica counts its table's reads that the row cache answered whole
// and those that missed (row_cache stats reads_with_no_misses and
// reads_with_misses) and turns their one-minute moving rates into the
// table's hit rate every 2 s, or 500 ms while it moves by more than 1%
// (service/misc_services.cc cache_hitrate_calculator). A read's answer
// carries that rate (the cache_temperature of storage_proxy's read
// responses), and the coordinator keeps what each replica last said per
// table (replica/table.cc set_hit_rate). ScyllaDB also gossips the rates
// (CACHE_HITRATES) for a coordinator that has not read from a replica
// yet; here such a replica counts as cold until its first answer, which
// get_hit_rate also says for a node whose gossip has no rate for the table.
//
// The calculator's timers are ScyllaDB's, so --time-scale scales them;
// they run when a read's answer needs the rate, not on a timer of their
// own, so that an idle node does no work for them.

const (
	hitRateWindow     = time.Minute // the moving average of the rates
	hitRatePeriod     = 2 * time.Second
	hitRateFastPeriod = 500 * time.Millisecond // while the rate moves by > 1%
	// hitRateStale: a replica not heard of for this long is tried as if
	// hot (table::get_hit_rate's caller in consistency_level.cc); a
	// request-level timer, not scaled.
	hitRateStale = time.Second
	maxHitRate   = 0.95 // consistency_level.cc max_hit_rate
)

// tableHeat is one table's cache statistics on this replica.
type tableHeat struct {
	hits, misses atomic.Uint64
	rate         atomic.Uint32 // float32 bits: the table's global cache hit rate

	mu           sync.Mutex
	lastH, lastM uint64
	rh, rm       float64 // moving averages of hits and misses per second
	at, next     time.Time
}

// count records one read of the table: whole from the cache or not.
func (h *tableHeat) count(hit bool) {
	if hit {
		h.hits.Add(1)
	} else {
		h.misses.Add(1)
	}
}

// temperature is the table's hit rate, recalculated first when due.
func (h *tableHeat) temperature(now time.Time, scale float64) float32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !now.Before(h.next) {
		h.recalculate(now, scale)
	}
	return math.Float32frombits(h.rate.Load())
}

// recalculate is recalculate_hitrates for one table. Called with mu held.
func (h *tableHeat) recalculate(now time.Time, scale float64) {
	hits, misses := h.hits.Load(), h.misses.Load()
	if !h.at.IsZero() {
		dt := now.Sub(h.at).Seconds()
		alpha := 1 - math.Exp(-dt/(hitRateWindow.Seconds()*scale))
		h.rh += alpha * (float64(hits-h.lastH)/dt - h.rh)
		h.rm += alpha * (float64(misses-h.lastM)/dt - h.rm)
	}
	h.at, h.lastH, h.lastM = now, hits, misses
	var rate float32
	if h.rh > 0 {
		rate = float32(h.rh / (h.rh + h.rm))
	}
	old := math.Float32frombits(h.rate.Swap(math.Float32bits(rate)))
	period := hitRatePeriod
	if math.Abs(float64(old-rate)) > 0.01 {
		period = hitRateFastPeriod
	}
	h.next = now.Add(time.Duration(float64(period) * scale))
}

// heatOf is the table's statistics on this store.
func (s *Store) heatOf(id [16]byte) *tableHeat {
	if h, ok := s.heat.Load(id); ok {
		return h.(*tableHeat)
	}
	h, _ := s.heat.LoadOrStore(id, &tableHeat{})
	return h.(*tableHeat)
}

// cacheTemperature is this replica's hit rate for a table, what its read
// answers carry.
func (n *Node) cacheTemperature(id [16]byte) float32 {
	s := n.cfg.TimeScale
	if s <= 0 {
		s = 1
	}
	return n.store.heatOf(id).temperature(time.Now(), s)
}

// peerRate is what a replica last said of a table's hit rate.
type peerRate struct {
	rate    float32
	updated time.Time
}

// peerHeat is the coordinator's view of the replicas' hit rates
// (table::_cluster_cache_hit_rates).
type peerHeat struct {
	mu sync.Mutex
	m  map[[16]byte]map[string]peerRate
}

// set is table::set_hit_rate.
func (p *peerHeat) set(table [16]byte, host string, rate float32, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[[16]byte]map[string]peerRate{}
	}
	t := p.m[table]
	if t == nil {
		t = map[string]peerRate{}
		p.m[table] = t
	}
	t[host] = peerRate{rate, now}
}

// hitRates sets rates[i] to hosts[i]'s hit rate as filter_for_query weighs
// it (consistency_level.cc get_hit_rate: capped at maxHitRate, and a replica
// not heard of for hitRateStale tried as hot, its time renewed).
func (p *peerHeat) hitRates(rates []float32, table [16]byte, hosts []string, me string, mine float32, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.m[table]
	for i, h := range hosts {
		if h == me {
			rates[i] = min(mine, maxHitRate)
			continue
		}
		r, ok := t[h]
		switch {
		case !ok:
			rates[i] = 0
		case now.Sub(r.updated) > hitRateStale:
			t[h] = peerRate{r.rate, now}
			rates[i] = maxHitRate
		default:
			rates[i] = min(r.rate, maxHitRate)
		}
	}
}

// hwlbOrder orders a read's live replicas (nearest first) as
// filter_for_query does when the table's cache hit rates differ by more
// than 1%: the bf replicas miss_equalizing_combination chose, then the
// one for a speculative retry, then the rest. With rates alike, or when
// every live replica is needed, the order stays.
func (n *Node) hwlbOrder(table [16]byte, alive []string, bf int) {
	if bf >= len(alive) {
		return
	}
	var mine float32
	if slices.Contains(alive, n.hostID) {
		mine = n.cacheTemperature(table)
	}
	var buf [8]float32 // a read's replicas: no allocation for up to RF 8
	rates := buf[:]
	if len(alive) > len(buf) {
		rates = make([]float32, len(alive))
	}
	rates = rates[:len(alive)]
	n.peerHeat.hitRates(rates, table, alive, n.hostID, mine, time.Now())
	if slices.Max(rates)-slices.Min(rates) <= 0.01 {
		return
	}
	me := len(alive) + 1 // not a replica
	if alive[0] == n.hostID {
		me = 0 // the local node comes first when it is a replica
	}
	chosen := missEqualizingCombination(rates, me, bf, true)
	for i := 1; i < len(chosen); i++ {
		if chosen[i] == chosen[i-1] {
			return // scylladb#9285: keep the proximity order
		}
	}
	ordered := make([]string, 0, len(alive))
	for _, i := range chosen {
		ordered = append(ordered, alive[i])
	}
	for i, h := range alive {
		if !slices.Contains(chosen, i) {
			ordered = append(ordered, h)
		}
	}
	copy(alive, ordered)
}
