package nemesis

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/results"
)

type recordingCleaner struct {
	mu      sync.Mutex
	cleaned []string
}

func (c *recordingCleaner) Cleanup(_ context.Context, n *cluster.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cleaned = append(c.cleaned, n.Name)
	return nil
}

// Each serial grow cleans up every node that was a member before it (the
// first batch's new node is old for the second), after the data is balanced.
func TestGrowCleansUpTheOldNodes(t *testing.T) {
	c := newFake("rack1", "rack2")
	r := &recorder{}
	env := newEnv(c, r)
	cl := &recordingCleaner{}
	env.Cleanup = Cleanup{Cleaner: cl}
	if err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, Mode: results.ModeSerial, InstanceType: "i4i.large", CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	if len(cl.cleaned) != 2+3 {
		t.Fatalf("cleaned %v, want the 2 old nodes, then those 2 and the first new one", cl.cleaned)
	}
	got := strings.Join(r.types(), " ")
	want := "cycle_start(Cycle #1) step_requested(Cycle #1) nodes_normal(Cycle #1) data_balanced(Cycle #1) cleanup_start(Cycle #1) cleanup_end(Cycle #1) step_end(Cycle #1) cycle_end(Cycle #1)"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("events:\n got %s\nwant %s ...", got, want)
	}
}

// A tablets keyspace is not cleaned up: the step records why.
func TestGrowRecordsSkippedCleanup(t *testing.T) {
	c := newFake("rack1")
	r := &recorder{}
	env := newEnv(c, r)
	env.Cleanup = Cleanup{Skip: "tablets keyspace"}
	if err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, InstanceType: "i4i.large", CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, e := range r.events {
		if e.Type == results.EventCleanupSkipped {
			msg = e.Message
		}
		if e.Type == results.EventCleanupStart {
			t.Fatal("cleanup ran on a tablets keyspace")
		}
	}
	if msg != "tablets keyspace" {
		t.Fatalf("no cleanup_skipped with the reason in %v", r.types())
	}
}
