package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/local"
	"github.com/elasticity-dev/elasticity/results"
)

// liveCluster adapts cluster.Cluster to the runner and the nemesis, and
// adds what a run needs around it: a log watcher per node (stalls, errors)
// and a death monitor that fails the run when a node dies unannounced.
type liveCluster struct {
	c    *cluster.Cluster
	p    provision.Provider
	spec provision.ClusterSpec
	env  *Env

	ctx    context.Context // lives until Destroy: log watchers, death monitor
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	seq      map[string]int
	next     int
	expected map[string]bool
	info     []results.NodeInfo
	watched  map[string]bool
}

func newLiveCluster(p provision.Provider, spec provision.ClusterSpec, env *Env, readyTimeout time.Duration) *liveCluster {
	ctx, cancel := context.WithCancel(context.Background())
	lc := &liveCluster{p: p, spec: spec, env: env, ctx: ctx, cancel: cancel,
		seq: map[string]int{}, expected: map[string]bool{}, watched: map[string]bool{}}
	lc.c = cluster.New(p, cluster.Options{Emit: env.Emit, Logf: env.Logf, NodeReadyTimeout: readyTimeout})
	if lp, ok := p.(*local.Provider); ok {
		lc.wg.Add(1)
		go func() { defer lc.wg.Done(); lc.watchExits(lp.Exits()) }()
	}
	return lc
}

func (lc *liveCluster) Create(ctx context.Context) error {
	err := lc.c.Create(ctx, lc.spec)
	lc.track(lc.c.Nodes())
	return err
}

// track records new members: creation order, description, log watcher.
func (lc *liveCluster) track(nodes []*cluster.Node) {
	for _, n := range nodes {
		lc.mu.Lock()
		if _, ok := lc.seq[n.Name]; ok {
			lc.mu.Unlock()
			continue
		}
		lc.next++
		lc.seq[n.Name] = lc.next
		lc.info = append(lc.info, n.Info())
		start := !lc.watched[n.Name]
		lc.watched[n.Name] = true
		lc.mu.Unlock()
		if start {
			lc.watchLog(n.Node)
		}
	}
}

func (lc *liveCluster) watchLog(n provision.Node) {
	r, err := lc.p.Logs(lc.ctx, n)
	if err != nil {
		lc.env.Logf("not watching the log of %s: %v", n.Name, err)
		return
	}
	lc.wg.Add(1)
	go func() {
		defer lc.wg.Done()
		defer r.Close()
		if err := monitor.Watch(lc.ctx, n.Name, r, lc.env.Emit); err != nil && lc.ctx.Err() == nil {
			lc.env.Logf("watching the log of %s: %v", n.Name, err)
		}
	}()
}

// watchExits is the death monitor: a node that exits without being asked
// to, and without having been announced, ends the run. Nodes still starting
// are left to the wait that started them, which reports why they failed.
func (lc *liveCluster) watchExits(exits <-chan local.NodeExit) {
	for {
		select {
		case <-lc.ctx.Done():
			return
		case ex, ok := <-exits:
			if !ok {
				return
			}
			if ex.Requested {
				continue
			}
			lc.mu.Lock()
			expected := lc.expected[ex.Node.Name]
			lc.mu.Unlock()
			n := lc.c.Node(ex.Node.Name)
			state := ""
			if n != nil {
				state = lc.c.State(n)
			}
			lc.env.Emit(results.Event{Type: results.EventNodeState, Node: ex.Node.Name, State: "died", Expected: expected, Message: errString(ex.Err)})
			if expected || state != cluster.StateNormal {
				continue
			}
			msg := fmt.Sprintf("%s (%s) died unexpectedly", ex.Node.Name, ex.Node.Address)
			if ex.Err != nil {
				msg += ": " + ex.Err.Error()
			}
			if line := cluster.LastErrorLine(ex.Node.LogPath); line != "" {
				msg += "; its log says: " + line
			}
			lc.c.SetState(n, cluster.StateDown)
			lc.env.Fail(errors.New(msg))
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func (lc *liveCluster) Hosts() []string { return lc.c.Hosts() }

func (lc *liveCluster) Info() []results.NodeInfo {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return append([]results.NodeInfo(nil), lc.info...)
}

func (lc *liveCluster) toNemesis(n *cluster.Node) nemesis.Node {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return nemesis.Node{Name: n.Name, Rack: n.Rack, InstanceType: n.InstanceType, Address: n.Address, Seq: lc.seq[n.Name]}
}

func (lc *liveCluster) Nodes() []nemesis.Node {
	var out []nemesis.Node
	for _, n := range lc.c.Nodes() {
		if s := lc.c.State(n); s == cluster.StateNormal || s == cluster.StateJoining {
			out = append(out, lc.toNemesis(n))
		}
	}
	return out
}

func (lc *liveCluster) member(n nemesis.Node) (*cluster.Node, error) {
	m := lc.c.Node(n.Name)
	if m == nil {
		return nil, fmt.Errorf("%s is not a member of the cluster", n.Name)
	}
	return m, nil
}

func (lc *liveCluster) AddNodes(ctx context.Context, step string, specs []provision.NodeSpec) ([]nemesis.Node, error) {
	added, err := lc.c.Add(ctx, step, specs)
	lc.track(added)
	out := make([]nemesis.Node, 0, len(added))
	for _, n := range added {
		out = append(out, lc.toNemesis(n))
	}
	return out, err
}

func (lc *liveCluster) WaitNormal(ctx context.Context, nodes []nemesis.Node) error {
	ms := make([]*cluster.Node, 0, len(nodes))
	for _, n := range nodes {
		m, err := lc.member(n)
		if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	err := lc.c.WaitReady(ctx, ms)
	if err != nil {
		for _, m := range ms {
			if lc.c.State(m) != cluster.StateNormal {
				lc.c.SetState(m, cluster.StateDown)
			}
		}
	}
	return err
}

func (lc *liveCluster) Decommission(ctx context.Context, n nemesis.Node) error {
	m, err := lc.member(n)
	if err != nil {
		return err
	}
	return lc.c.Leave(ctx, m)
}

func (lc *liveCluster) Remove(ctx context.Context, n nemesis.Node) error {
	m, err := lc.member(n)
	if err != nil {
		return err
	}
	return lc.c.Drop(ctx, m)
}

func (lc *liveCluster) Quiesce(ctx context.Context) error { return lc.c.Quiesce(ctx) }

func (lc *liveCluster) Load(ctx context.Context, n nemesis.Node) (nemesis.Load, error) {
	m, err := lc.member(n)
	if err != nil {
		return nemesis.Load{}, err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := lc.c.Admin(m).Load(pctx)
	if err != nil {
		return nemesis.Load{}, err
	}
	return nemesis.Load{Bytes: b}, nil
}

func (lc *liveCluster) ExpectDeath(n nemesis.Node) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.expected[n.Name] = true
}

func (lc *liveCluster) CollectLogs(ctx context.Context, dir string) error {
	if c, ok := lc.p.(provision.LogCollector); ok {
		return c.CollectLogs(ctx, dir)
	}
	return nil
}

func (lc *liveCluster) Destroy(ctx context.Context) error {
	lc.mu.Lock()
	for name := range lc.seq {
		lc.expected[name] = true // every exit from here on is asked for
	}
	lc.mu.Unlock()
	err := lc.c.Destroy(ctx)
	lc.cancel()
	waitGroup(&lc.wg, 5*time.Second)
	return err
}
