package run

import (
	"context"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/monitor"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// liveCluster adapts cluster.Cluster to the runner and the nemesis, and
// adds what a run needs around it: a log watcher per node (stalls, errors)
// and a death monitor that fails the run when a node dies unannounced.
// Nodes are the cluster's own *cluster.Node handles.
type liveCluster struct {
	c    *cluster.Cluster
	p    provision.Provider
	spec provision.ClusterSpec
	env  *Env

	ctx    context.Context // lives until Destroy: log watchers, death monitor
	cancel context.CancelFunc
	wg     sync.WaitGroup

	deaths *monitor.DeathMonitor
}

func newLiveCluster(p provision.Provider, spec provision.ClusterSpec, env *Env, readyTimeout time.Duration) *liveCluster {
	ctx, cancel := context.WithCancel(context.Background())
	lc := &liveCluster{p: p, spec: spec, env: env, ctx: ctx, cancel: cancel}
	lc.c = cluster.New(p, cluster.Options{Emit: env.Emit, Logf: env.Logf, NodeReadyTimeout: readyTimeout, Instances: instances(env.Plan)})
	lc.deaths = monitor.NewDeathMonitor(env.Emit, env.Logf)
	if en, ok := p.(provision.ExitNotifier); ok {
		lc.wg.Add(2)
		go func() { defer lc.wg.Done(); lc.deaths.FollowExits(lc.ctx, lc.c, en.Exits()) }()
		go func() { defer lc.wg.Done(); lc.followUnexpected() }()
	}
	return lc
}

func (lc *liveCluster) Create(ctx context.Context) error {
	err := lc.c.Create(ctx, lc.spec)
	lc.watchLogs(lc.c.Nodes())
	if _, exits := lc.p.(provision.ExitNotifier); err == nil && !exits {
		// Without process exits, deaths are seen in the cluster's down lists.
		lc.wg.Add(2)
		go func() { defer lc.wg.Done(); lc.deaths.PollDown(lc.ctx, lc.c, 5*time.Second) }()
		go func() { defer lc.wg.Done(); lc.followUnexpected() }()
	}
	return err
}

// watchLogs starts a log watcher per new node (each node is returned once,
// by Create or by AddNodes).
func (lc *liveCluster) watchLogs(nodes []*cluster.Node) {
	for _, n := range nodes {
		lc.watchLog(n)
	}
}

func (lc *liveCluster) watchLog(n *cluster.Node) {
	r, err := lc.p.Logs(lc.ctx, n.Node)
	if err != nil {
		lc.env.Logf("not watching the log of %s: %v", n.Name, err)
		return
	}
	lc.wg.Add(1)
	go func() {
		defer lc.wg.Done()
		defer r.Close()
		// The node's own "command used" line sets the stall threshold
		// and records it.
		w := &monitor.LogWatcher{Node: n.Name, Emit: lc.env.Emit}
		if lc.p.Name() != "local" {
			w.Location = time.UTC // containers and machine images log in UTC; local nodes in ours
		}
		if err := w.Watch(lc.ctx, r); err != nil && lc.ctx.Err() == nil {
			lc.env.Logf("watching the log of %s: %v", n.Name, err)
		}
	}()
}

// followUnexpected fails the run on the deaths the death monitor reports:
// a normal node whose process exited unannounced, or one the cluster's down
// lists show. Nodes still starting are left to the wait that started them,
// which reports why they failed.
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

// DataCenter is the DC the nodes report (their snitch's name), which the
// keyspace's replication must name.
func (lc *liveCluster) DataCenter() (string, error) { return lc.c.DataCenter() }

func (lc *liveCluster) Info() []results.NodeInfo { return lc.c.Info() }

// ReachAddress is the address the runner reaches a node at (AddressTranslator).
func (lc *liveCluster) ReachAddress(addr string) string { return lc.c.ReachAddress(addr) }

// Nodes lists the members a nemesis step may act on: normal or joining.
func (lc *liveCluster) Nodes() []*cluster.Node {
	var out []*cluster.Node
	for _, n := range lc.c.Nodes() {
		if s := lc.c.State(n); s == cluster.StateNormal || s == cluster.StateJoining {
			out = append(out, n)
		}
	}
	return out
}

func (lc *liveCluster) AddNodes(ctx context.Context, step string, specs []provision.NodeSpec) ([]*cluster.Node, error) {
	added, err := lc.c.Add(ctx, step, specs)
	lc.watchLogs(added)
	return added, err
}

func (lc *liveCluster) WaitNormal(ctx context.Context, nodes []*cluster.Node) error {
	return lc.c.WaitJoined(ctx, nodes)
}

func (lc *liveCluster) Decommission(ctx context.Context, n *cluster.Node) error {
	return lc.c.Leave(ctx, n)
}

func (lc *liveCluster) Remove(ctx context.Context, n *cluster.Node) error {
	return lc.c.Drop(ctx, n)
}

func (lc *liveCluster) Quiesce(ctx context.Context) error { return lc.c.Quiesce(ctx) }

func (lc *liveCluster) Flush(ctx context.Context) error { return lc.c.Flush(ctx) }

// Compactions reads the running compactions of the normal and joining nodes.
func (lc *liveCluster) Compactions(ctx context.Context) (map[string]int, error) {
	return monitor.Compactions(ctx, lc.Nodes())
}

// Load is what n still holds: REST load, and the tablets its metrics count.
func (lc *liveCluster) Load(ctx context.Context, n *cluster.Node) (nemesis.Load, error) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := lc.c.Admin(n).Load(pctx)
	if err != nil {
		return nemesis.Load{}, err
	}
	l := nemesis.Load{Bytes: b}
	if t, err := monitor.Tablets(pctx, n); err == nil {
		l.Tablets = t
	}
	return l, nil
}

// KeyspaceCleanup runs nodetool cleanup of keyspace on n (KeyspaceCleaner).
func (lc *liveCluster) KeyspaceCleanup(ctx context.Context, n *cluster.Node, keyspace string) error {
	return lc.c.Admin(n).KeyspaceCleanup(ctx, keyspace)
}

// keyspaceCleaner runs nodetool cleanup of one keyspace on a node.
type keyspaceCleaner struct {
	c        KeyspaceCleaner
	keyspace string
}

func (k keyspaceCleaner) Cleanup(ctx context.Context, n *cluster.Node) error {
	return k.c.KeyspaceCleanup(ctx, n, k.keyspace)
}

func (lc *liveCluster) ExpectDeath(n *cluster.Node) { lc.deaths.ExpectDeath(n.Name) }

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
