package nemesis

import (
	"context"
	"sync"
	"testing"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/results"
)

// windowCluster behaves as ScyllaDB does after a join (scylladb
// service/topology_coordinator.cc, service/tablet_allocator.cc): quiesce
// returns at once while the balancer has not yet the new node's load stats,
// the new node then receives tablets over a few polls, and quiesce returns
// at once again between planning rounds.
type windowCluster struct {
	*fakeCluster
	mu       sync.Mutex
	polls    int // Load calls on new nodes so far
	quiesces int
	// balancedAt is the quiesce count when the new node first held tablets (-1: not yet).
	balancedAt int
}

func (w *windowCluster) Quiesce(ctx context.Context) error {
	w.mu.Lock()
	w.quiesces++
	w.mu.Unlock()
	return nil
}

func (w *windowCluster) Load(ctx context.Context, n *cluster.Node) (Load, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n.Seq <= 3 { // the original nodes
		return Load{Tablets: 16}, nil
	}
	w.polls++
	switch {
	case w.polls < 5: // load stats not yet known: nothing planned
		return Load{}, nil
	case w.polls < 9: // migrations under way, one per read
		if w.balancedAt < 0 {
			w.balancedAt = w.quiesces
		}
		return Load{Tablets: w.polls - 4}, nil
	}
	return Load{Tablets: 8}, nil
}

func TestDataBalancedWaitsOutTheQuiesceWindow(t *testing.T) {
	c := &windowCluster{fakeCluster: newFake("rack1", "rack2", "rack3"), balancedAt: -1}
	r := &recorder{}
	env := newEnv(c, r)
	if err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, Mode: results.ModeParallel, InstanceType: "i4i.large", Racks: []string{"rack1"}, CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.polls < 9 {
		t.Fatalf("data balanced after %d reads of the new node, before its tablet count settled at 8", c.polls)
	}
	if c.balancedAt != 0 {
		t.Errorf("quiesced %d times before the new node held tablets, want 0 (an early quiesce proves nothing)", c.balancedAt)
	}
	n := 0
	for _, e := range r.events {
		if e.Type == results.EventDataBalanced {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d data_balanced events", n)
	}
}
