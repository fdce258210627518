package node

import "time"

// Pacing: streaming is rate-limited by reserving time on a shard, FIFO, so
// that migrations sharing a shard share its bandwidth. State: paceMu.

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
