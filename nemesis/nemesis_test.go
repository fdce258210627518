package nemesis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

type fakeCluster struct {
	mu       sync.Mutex
	nodes    []*cluster.Node
	seq      int
	expected []string
	removed  []string
	load     map[string]int // polls left before a drained node is empty
	failAdd  error
	joinWait time.Duration
	// coord, when set, admits one join or leave at a time, as the topology
	// coordinator does (each taking joinWait).
	coord *sync.Mutex
}

func newFake(racks ...string) *fakeCluster {
	f := &fakeCluster{load: map[string]int{}}
	for _, r := range racks {
		f.add(r, "i4i.large")
	}
	return f
}

func (f *fakeCluster) add(rack, it string) *cluster.Node {
	f.seq++
	n := &cluster.Node{Node: provision.Node{Name: fmt.Sprintf("node-%d", f.seq), Rack: rack, InstanceType: it, Address: fmt.Sprintf("127.0.5.%d", f.seq)}, Seq: f.seq}
	f.nodes = append(f.nodes, n)
	return n
}

func (f *fakeCluster) Nodes() []*cluster.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*cluster.Node(nil), f.nodes...)
}

func (f *fakeCluster) AddNodes(ctx context.Context, step string, specs []provision.NodeSpec) ([]*cluster.Node, error) {
	if f.failAdd != nil {
		return nil, f.failAdd
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*cluster.Node
	for _, s := range specs {
		out = append(out, f.add(s.Rack, s.InstanceType))
	}
	return out, nil
}

func (f *fakeCluster) WaitNormal(ctx context.Context, nodes []*cluster.Node) error {
	if f.coord != nil {
		f.coord.Lock()
		defer f.coord.Unlock()
	}
	select {
	case <-time.After(f.joinWait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeCluster) Decommission(ctx context.Context, n *cluster.Node) error {
	if f.coord != nil {
		f.coord.Lock()
		defer f.coord.Unlock()
		time.Sleep(f.joinWait)
	}
	for {
		f.mu.Lock()
		left := f.load[n.Name]
		f.mu.Unlock()
		if left <= 0 {
			break
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeCluster) Remove(ctx context.Context, n *cluster.Node) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, m := range f.nodes {
		if m.Name == n.Name {
			f.nodes = append(f.nodes[:i], f.nodes[i+1:]...)
			break
		}
	}
	f.removed = append(f.removed, n.Name)
	return nil
}

func (f *fakeCluster) Quiesce(ctx context.Context) error { return nil }

func (f *fakeCluster) Load(ctx context.Context, n *cluster.Node) (Load, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := f.load[n.Name]
	if left > 0 {
		f.load[n.Name] = left - 1
	}
	return Load{Bytes: float64(left) * 1e6, Tablets: left}, nil
}

func (f *fakeCluster) ExpectDeath(n *cluster.Node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expected = append(f.expected, n.Name)
}

type recorder struct {
	mu     sync.Mutex
	events []results.Event
	logs   []string
}

func (r *recorder) emit(e results.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type == results.EventProgress || e.Type == results.EventNodeState || e.Type == results.EventNodeOp {
			continue
		}
		s := e.Type
		if e.Cycle != "" {
			s += "(" + e.Cycle + ")"
		}
		out = append(out, s)
	}
	return out
}

func newEnv(c Cluster, r *recorder) *Env {
	return &Env{
		Cluster: c,
		Emit:    r.emit,
		Logf: func(f string, a ...any) {
			r.mu.Lock()
			r.logs = append(r.logs, fmt.Sprintf(f, a...))
			r.mu.Unlock()
		},
		Cycles:      &Cycles{next: 1},
		Timeouts:    Policy{Base: 5 * time.Second},
		BalancePoll: 5 * time.Millisecond,
	}
}

func TestGrowSerialOneCyclePerNode(t *testing.T) {
	c := newFake("rack1", "rack2", "rack3")
	r := &recorder{}
	env := newEnv(c, r)
	err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, Mode: results.ModeSerial, InstanceType: "i4i.4xlarge", CountPerRack: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.types(), " ")
	var want []string
	for i := 1; i <= 3; i++ {
		c := fmt.Sprintf("(Cycle #%d)", i)
		want = append(want, "cycle_start"+c, "step_requested"+c, "nodes_normal"+c, "data_balanced"+c, "step_end"+c, "cycle_end"+c)
	}
	if got != strings.Join(want, " ") {
		t.Fatalf("events:\n got %s\nwant %s", got, strings.Join(want, " "))
	}
	nodes := c.Nodes()
	if len(nodes) != 6 || nodes[3].Rack != "rack1" || nodes[5].Rack != "rack3" || nodes[4].InstanceType != "i4i.4xlarge" {
		t.Fatalf("nodes after grow: %+v", nodes)
	}
}

func TestGrowParallelOneCycle(t *testing.T) {
	c := newFake("a", "b", "c")
	r := &recorder{}
	env := newEnv(c, r)
	if err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, Mode: results.ModeParallel, InstanceType: "i4i.xlarge", CountPerRack: 2}); err != nil {
		t.Fatal(err)
	}
	if env.Cycles.Count() != 2 {
		t.Fatalf("cycles: %d, want 1 nemesis cycle after #0", env.Cycles.Count())
	}
	for _, e := range r.events {
		if e.Type == results.EventNodesNormal && len(e.Nodes) != 6 {
			t.Fatalf("nodes_normal names %v, want 6", e.Nodes)
		}
	}
}

// A parallel step's nodes are requested together and, as the topology
// coordinator admits one node request at a time, join or leave one after
// another: each node's moments are node_op events and result.json's
// node_ops show the queue.
func TestParallelStepsRecordEachNode(t *testing.T) {
	c := newFake("a", "b", "c")
	c.coord, c.joinWait = &sync.Mutex{}, 60*time.Millisecond
	r := &recorder{}
	env := newEnv(c, r)
	if err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, Mode: results.ModeParallel, InstanceType: "i4i.xlarge", CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), env, Step{Name: "shrink", Kind: results.KindShrink, Mode: results.ModeParallel, CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := results.OpenJSONL(filepath.Join(dir, results.FileEvents))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.events {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	res, err := results.Compute(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		step string
		join bool
	}{{"grow", true}, {"shrink", false}} {
		var ops []results.NodeOp
		for _, s := range res.Steps {
			if s.Step == want.step {
				ops = append(ops, s.NodeOps...)
			}
		}
		if len(ops) != 3 {
			t.Fatalf("%s: node ops %+v, want 3", want.step, ops)
		}
		var done []time.Time
		for _, op := range ops {
			at := op.LeftAt
			if want.join {
				at = op.JoinedAt
			}
			if at == nil || !op.RequestedAt.Equal(ops[0].RequestedAt) && want.join {
				t.Fatalf("%s: %+v: every node requested at once, each done", want.step, ops)
			}
			done = append(done, *at)
		}
		slices.SortFunc(done, time.Time.Compare)
		for i := 1; i < len(done); i++ {
			if gap := done[i].Sub(done[i-1]); gap < 40*time.Millisecond {
				t.Fatalf("%s: nodes done %v apart, want one after another (%+v)", want.step, gap, ops)
			}
		}
	}
}

func TestShrinkNewestFirstAndExpected(t *testing.T) {
	c := newFake("a", "b", "c", "a", "b", "c")
	r := &recorder{}
	env := newEnv(c, r)
	if err := Run(context.Background(), env, Step{Name: "shrink", Kind: results.KindShrink, CountPerRack: 1}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.removed, ","); got != "node-6,node-5,node-4" {
		t.Fatalf("removed %s, want newest first", got)
	}
	if got := strings.Join(c.expected, ","); got != "node-6,node-5,node-4" {
		t.Fatalf("expected deaths %s", got)
	}
	if env.Cycles.Count() != 4 {
		t.Fatalf("cycles %d", env.Cycles.Count())
	}
}

func TestShrinkRefusesEverything(t *testing.T) {
	c := newFake("a", "b")
	if _, err := ShrinkTargets(Step{Count: 2}, c.Nodes()); err == nil {
		t.Fatal("removing every node should fail")
	}
	if _, err := ShrinkTargets(Step{Nodes: []string{"node-9"}}, c.Nodes()); err == nil {
		t.Fatal("unknown node should fail")
	}
}

func TestDrainPollsUntilEmpty(t *testing.T) {
	c := newFake("a", "b", "c", "a")
	c.load["node-4"] = 4
	r := &recorder{}
	env := newEnv(c, r)
	err := Run(context.Background(), env, Step{Name: "drain", Kind: results.KindDrain, Nodes: []string{"node-4"}, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	polls := 0
	for _, l := range r.logs {
		if strings.Contains(l, "drain progress") {
			polls++
		}
	}
	if polls < 3 {
		t.Fatalf("want one log line per poll, got %d: %v", polls, r.logs)
	}
	if len(c.Nodes()) != 3 || c.removed[0] != "node-4" {
		t.Fatalf("node-4 not removed: %v", c.Nodes())
	}
}

func TestGrowFailureFailsStep(t *testing.T) {
	c := newFake("a")
	c.failAdd = errors.New("init - Startup failed: boom")
	r := &recorder{}
	env := newEnv(c, r)
	err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, InstanceType: "x"})
	if err == nil || !strings.Contains(err.Error(), "Startup failed") {
		t.Fatalf("err = %v", err)
	}
	ts := r.types()
	if ts[len(ts)-1] != "cycle_end(Cycle #1)" {
		t.Fatalf("cycle must be closed on failure: %v", ts)
	}
}

func TestHardTimeoutFailsSoftWarns(t *testing.T) {
	c := newFake("a")
	c.joinWait = time.Hour
	r := &recorder{}
	env := newEnv(c, r)
	s := Step{Name: "grow", Kind: results.KindGrow, InstanceType: "x", Timeouts: map[string]Timeout{WaitJoin: {Soft: 20 * time.Millisecond, Hard: 80 * time.Millisecond}}}
	start := time.Now()
	err := Run(context.Background(), env, s)
	if !errors.Is(err, ErrHardTimeout) {
		t.Fatalf("err = %v, want hard timeout", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	warned := false
	for _, e := range r.events {
		if e.Type == results.EventWarning && strings.Contains(e.Message, "soft timeout") {
			warned = true
		}
	}
	if !warned {
		t.Fatal("no soft-timeout warning")
	}
}

func TestPolicyDerive(t *testing.T) {
	p := Policy{Base: time.Minute, StreamBytesPerSec: 100e6}
	got := p.Derive(60e9) // 600 s of streaming
	if got.Soft != time.Minute+1200*time.Second || got.Hard != 4*got.Soft {
		t.Fatalf("derive: %+v", got)
	}
	small := p.Derive(0)
	if small.Soft != time.Minute {
		t.Fatalf("derive(0): %+v", small)
	}
	p.Overrides = map[string]Timeout{WaitJoin: {Hard: time.Second}}
	o := p.For(WaitJoin, 60e9, map[string]Timeout{WaitJoin: {Soft: 2 * time.Second}})
	if o.Soft != time.Second || o.Hard != time.Second {
		t.Fatalf("override: %+v (soft is capped by hard)", o)
	}
	p.Overrides = nil
	p.Ceilings = map[string]time.Duration{WaitJoin: time.Hour}
	if c := p.For(WaitJoin, 60e9, nil); c.Hard != time.Hour || c.Soft != time.Minute+1200*time.Second {
		t.Fatalf("ceiling: %+v", c)
	}
}

func TestHookCapturesOutputAndTimesOut(t *testing.T) {
	dir := t.TempDir()
	c := newFake("a")
	r := &recorder{}
	env := newEnv(c, r)
	env.LogDir = dir
	err := Run(context.Background(), env, Step{Name: "say", Kind: results.KindHook, Command: []string{"sh", "-c", "echo hello $GREETING on $ELASTICITY_NODES"}, HookEnv: map[string]string{"GREETING": "there"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "hooks", "say.log"))
	if !strings.Contains(string(b), "hello there on node-1") {
		t.Fatalf("hook log: %q", b)
	}
	start := time.Now()
	err = Run(context.Background(), env, Step{Name: "slow", Kind: results.KindHook, Command: []string{"sleep", "30"}, Duration: 200 * time.Millisecond})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("slow hook: err=%v after %s", err, time.Since(start))
	}
}

func TestHoldCountsDown(t *testing.T) {
	r := &recorder{}
	env := newEnv(newFake("a"), r)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, env, Step{Name: "h", Kind: results.KindHold, Duration: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Fatalf("hold must stop on cancel: %v", err)
	}
}

func TestLongWaitsReportProgress(t *testing.T) {
	c := newFake("a")
	c.joinWait = 100 * time.Millisecond
	r := &recorder{}
	env := newEnv(c, r)
	env.Heartbeat = 20 * time.Millisecond
	var mu sync.Mutex
	var lines []string
	env.Progress = func(phase results.Phase, msg string) { mu.Lock(); lines = append(lines, msg); mu.Unlock() }
	if err := Run(context.Background(), env, Step{Name: "grow", Kind: results.KindGrow, InstanceType: "x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		if strings.Contains(l, "still waiting after") && strings.Contains(l, "node-2:") {
			return
		}
	}
	t.Fatalf("no heartbeat naming the new node: %q", lines)
}

func TestShrinkOnlyNamedRacks(t *testing.T) {
	c := newFake("a", "b", "c", "a", "b", "c")
	batches, err := ShrinkTargets(Step{CountPerRack: 1, Racks: []string{"a"}}, c.Nodes())
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || batches[0][0].Name != "node-4" {
		t.Fatalf("targets %+v, want the newest of rack a only", batches)
	}
}
