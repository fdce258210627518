package runner

import (
	"context"
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

	mu      sync.Mutex
	seq     map[string]int
	next    int
	info    []results.NodeInfo
	watched map[string]bool
	deaths  *monitor.DeathMonitor
	disk    *monitor.DiskMonitor // set once the disk monitor exists: drain reads tablet counts
}

func newLiveCluster(p provision.Provider, spec provision.ClusterSpec, env *Env, readyTimeout time.Duration) *liveCluster {
	ctx, cancel := context.WithCancel(context.Background())
	lc := &liveCluster{p: p, spec: spec, env: env, ctx: ctx, cancel: cancel,
		seq: map[string]int{}, watched: map[string]bool{}}
	lc.c = cluster.New(p, cluster.Options{Emit: env.Emit, Logf: env.Logf, NodeReadyTimeout: readyTimeout})
	lc.deaths = monitor.NewDeathMonitor(env.Emit, env.Logf)
	if lp, ok := p.(*local.Provider); ok {
		lc.wg.Add(1)
		go func() { defer lc.wg.Done(); lc.watchExits(lp.Exits()) }()
	}
	return lc
}

func (lc *liveCluster) Create(ctx context.Context) error {
	err := lc.c.Create(ctx, lc.spec)
	lc.track(lc.c.Nodes())
	if _, isLocal := lc.p.(*local.Provider); err == nil && !isLocal {
		// Without process exits, deaths are seen in the cluster's down lists.
		lc.wg.Add(2)
		go func() { defer lc.wg.Done(); lc.deaths.PollDown(lc.ctx, lc.c, 5*time.Second) }()
		go func() { defer lc.wg.Done(); lc.followUnexpected() }()
	}
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
		// Suppressed stall reports count at the default threshold (25 ms).
		w := &monitor.LogWatcher{Node: n.Name, Emit: lc.env.Emit}
		if lc.p.Name() != "local" {
			w.Location = time.UTC // containers and machine images log in UTC; local nodes in ours
		}
		if err := w.Watch(lc.ctx, r); err != nil && lc.ctx.Err() == nil {
			lc.env.Logf("watching the log of %s: %v", n.Name, err)
		}
	}()
}

// watchExits feeds the death monitor with the local provider's process
// exits: a node that was normal and exits without being asked to, and
// without having been announced, ends the run. Nodes still starting are
// left to the wait that started them, which reports why they failed.
func (lc *liveCluster) watchExits(exits <-chan local.NodeExit) {
	for {
		select {
		case <-lc.ctx.Done():
			return
		case ex, ok := <-exits:
			if !ok {
				return
			}
			n := lc.c.Node(ex.Node.Name)
			wasNormal := n != nil && lc.c.State(n) == cluster.StateNormal
			cause := "process exited with status 0"
			if ex.Err != nil {
				cause = "process exited: " + ex.Err.Error()
			}
			if line := cluster.LastErrorLine(ex.Node.LogPath); line != "" && !ex.Requested {
				cause += "; last error in its log: " + line
			}
			if err := lc.deaths.Died(ex.Node.Name, cause, ex.Time, ex.Requested); err != nil && wasNormal {
				lc.c.SetState(n, cluster.StateDown)
				lc.env.Fail(err)
			}
		}
	}
}

// followUnexpected fails the run on deaths the death monitor saw itself
// (backends without process exits: the cluster's down lists).
func (lc *liveCluster) followUnexpected() {
	for {
		select {
		case <-lc.ctx.Done():
			return
		case err := <-lc.deaths.Unexpected():
			lc.env.Fail(err)
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
	l := nemesis.Load{Bytes: b}
	lc.mu.Lock()
	dm := lc.disk
	lc.mu.Unlock()
	if dm != nil {
		if s := dm.Sample(pctx, m); s.Error == "" {
			l.Tablets = int(s.Metrics["tablets_count"])
		}
	}
	return l, nil
}

func (lc *liveCluster) ExpectDeath(n nemesis.Node) { lc.deaths.ExpectDeath(n.Name) }

func (lc *liveCluster) CollectLogs(ctx context.Context, dir string) error {
	if c, ok := lc.p.(provision.LogCollector); ok {
		return c.CollectLogs(ctx, dir)
	}
	return nil
}

func (lc *liveCluster) Destroy(ctx context.Context) error {
	// Exits caused by Destroy are requested, so the death monitor stays
	// quiet; the log watchers get a moment to read the last lines.
	err := lc.c.Destroy(ctx)
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	lc.cancel()
	waitGroup(&lc.wg, 5*time.Second)
	return err
}
