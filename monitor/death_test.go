package monitor

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/cluster/fakescylla"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

type events struct {
	mu sync.Mutex
	l  []results.Event
}

func (e *events) emit(ev results.Event) { e.mu.Lock(); e.l = append(e.l, ev); e.mu.Unlock() }
func (e *events) list() []results.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]results.Event(nil), e.l...)
}

func TestDeathMonitorExpected(t *testing.T) {
	ev := &events{}
	m := NewDeathMonitor(ev.emit, t.Logf)
	m.ExpectDeath("node-2")
	if err := m.Died("node-2", "killed by nemesis", time.Now(), false); err != nil {
		t.Fatalf("expected death reported: %v", err)
	}
	if err := m.Died("node-2", "again", time.Now(), false); err != nil {
		t.Fatal("a dead node's second report counts once")
	}
	if err := m.Died("node-4", "stopped by provider", time.Now(), true); err != nil {
		t.Fatal(err)
	}
	m.Up("node-2")
	if err := m.Died("node-2", "segfault", time.Now(), false); err == nil || !strings.Contains(err.Error(), "node-2 died unexpectedly") {
		t.Fatalf("err = %v", err)
	}
	select {
	case err := <-m.Unexpected():
		if !strings.Contains(err.Error(), "segfault") {
			t.Fatal(err)
		}
	default:
		t.Fatal("nothing on Unexpected")
	}
	var states []string
	for _, e := range ev.list() {
		states = append(states, e.Node+":"+e.State)
	}
	if got := strings.Join(states, ","); got != "node-2:died,node-4:died,node-2:up,node-2:died" {
		t.Fatalf("events %s", got)
	}
	if l := ev.list(); !l[0].Expected || l[3].Expected {
		t.Fatalf("expected flags: %+v", l)
	}
}

func TestDeathMonitorFollowExits(t *testing.T) {
	p := fakescylla.NewProvider("127.0.4.81", fakescylla.Ports{REST: 19300, CQL: 19342}, "")
	defer p.FC.Close()
	c := cluster.New(p, cluster.Options{NodeReadyTimeout: 5 * time.Second, PollInterval: 50 * time.Millisecond})
	ctx := context.Background()
	if err := c.Create(ctx, provision.ClusterSpec{Racks: []string{"r1", "r2", "r3"}, NodesPerRack: 1, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	m := NewDeathMonitor(nil, t.Logf)
	ch := make(chan provision.NodeExit, 3)
	ch <- provision.NodeExit{Node: provision.Node{Name: "node-1"}, Err: nil, Time: time.Now(), Requested: true}
	ch <- provision.NodeExit{Node: provision.Node{Name: "node-9"}, Err: errors.New("exit status 1"), Time: time.Now()} // not a member: its wait reports it
	ch <- provision.NodeExit{Node: provision.Node{Name: "node-3"}, Err: errors.New("signal: killed"), Time: time.Now()}
	close(ch)
	m.FollowExits(ctx, c, ch)
	select {
	case err := <-m.Unexpected():
		if !strings.Contains(err.Error(), "node-3") || !strings.Contains(err.Error(), "signal: killed") {
			t.Fatalf("Unexpected delivered %v, want node-3's death", err)
		}
	default:
		t.Fatal("nothing on Unexpected")
	}
	select {
	case err := <-m.Unexpected():
		t.Fatalf("a second death delivered: %v", err)
	default:
	}
	if s := c.State(c.Node("node-3")); s != cluster.StateDown {
		t.Fatalf("node-3 state %s, want down", s)
	}
	if s := c.State(c.Node("node-1")); s != cluster.StateNormal {
		t.Fatalf("node-1 state %s after a requested exit", s)
	}
}

func TestDeathMonitorPollDown(t *testing.T) {
	p := fakescylla.NewProvider("127.0.4.71", fakescylla.Ports{REST: 19300, CQL: 19342}, "")
	// The down and live lists hold the addresses the nodes gossip, not the ones the runner uses.
	p.BroadcastBase = netip.MustParseAddr("10.1.0.1")
	defer p.FC.Close()
	c := cluster.New(p, cluster.Options{NodeReadyTimeout: 5 * time.Second, PollInterval: 50 * time.Millisecond})
	ctx := context.Background()
	if err := c.Create(ctx, provision.ClusterSpec{Racks: []string{"r1", "r2", "r3"}, NodesPerRack: 1, InstanceType: "i4i.large"}); err != nil {
		t.Fatal(err)
	}
	m := NewDeathMonitor(nil, t.Logf)
	n2, n3 := c.Nodes()[1], c.Nodes()[2]
	m.ExpectDeath(n2.Name)
	p.StopNode(ctx, n2.Node)
	c.SetState(n2, cluster.StateDown)
	m.pollOnce(ctx, c)
	if err := next(m); err != nil {
		t.Fatalf("expected death: %v", err)
	}
	// Down in one poll and up at the next: a flap of the failure detector.
	p.FC.Update(n3.Address, func(n *fakescylla.Node) { n.Down = true })
	m.pollOnce(ctx, c)
	p.FC.Update(n3.Address, func(n *fakescylla.Node) { n.Down = false })
	m.pollOnce(ctx, c)
	if err := next(m); err != nil {
		t.Fatalf("a node down in one poll only is not dead: %v", err)
	}
	// Down in two polls in a row: dead.
	p.FC.Update(n3.Address, func(n *fakescylla.Node) { n.Down = true })
	m.pollOnce(ctx, c)
	if err := next(m); err != nil {
		t.Fatalf("dead after one poll: %v", err)
	}
	m.pollOnce(ctx, c)
	if err := next(m); err == nil || !strings.Contains(err.Error(), "node-3") {
		t.Fatalf("Unexpected = %v", err)
	}
	// node-2 back: seen up, so a later death counts again.
	p.FC.Update(n2.Address, func(n *fakescylla.Node) { n.Down = false })
	m.pollOnce(ctx, c)
	m.mu.Lock()
	_, dead := m.dead[n2.Name]
	m.mu.Unlock()
	if dead {
		t.Fatal("node-2 still dead after it was seen live")
	}
	pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	m.PollDown(pctx, c, 50*time.Millisecond) // returns at ctx end
}

// next is the next unexpected death delivered, or nil.
func next(m *DeathMonitor) error {
	select {
	case err := <-m.Unexpected():
		return err
	default:
		return nil
	}
}
