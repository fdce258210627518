package node

import (
	"testing"
	"time"
)

// The load stats refresher sleeps until its next refresh is due on the
// coordinator, and elsewhere looks again after coordinatorPoll, not a
// tenth of the interval: at the local backend's time scale (0.0025: a
// 150 ms interval) that was a wake-up every 15 ms on every node.
func TestStatsRefresherSleepsUntilDue(t *testing.T) {
	n := startTestNode(t, Config{VCPUs: 1, InternodePort: 17915, TimeScale: 0.0025})
	interval := n.statsInterval()
	if interval != 150*time.Millisecond {
		t.Fatalf("interval at time scale 0.0025: %v, want 150ms", interval)
	}
	if got := n.statsWait(false); got != coordinatorPoll {
		t.Errorf("a node that is not the coordinator sleeps %v, want %v", got, coordinatorPoll)
	}
	n.statsMu.Lock()
	n.statsPeriodAt = time.Now()
	n.statsMu.Unlock()
	if got := n.statsWait(true); got < interval-20*time.Millisecond || got > interval {
		t.Errorf("the coordinator right after a refresh sleeps %v, want about the interval %v", got, interval)
	}
	n.statsMu.Lock()
	n.statsPeriodAt = time.Now().Add(-2 * interval)
	n.statsMu.Unlock()
	if got := n.statsWait(true); got > time.Millisecond {
		t.Errorf("the coordinator with a refresh overdue sleeps %v, want at once", got)
	}
}
