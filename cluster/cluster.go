// Package cluster is the handle on a running cluster: its members (one
// Node per database node: name, rack, instance type, the identity the
// database reports for itself, the address the runner reaches it at,
// state), readiness checks through the database's own interfaces (REST,
// CQL), and topology changes (grow, decommission, remove) on top of a
// provision.Provider.
//
// Views of the cluster (live, down, joining and leaving lists, host id
// maps) hold the addresses the database gossips: its broadcast addresses.
// They are compared with each node's BroadcastAddress, learnt from the node
// itself once it answers, never with the address the runner reaches it at
// (a public, forwarded or loopback address may differ from it).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// Node states, as carried by node_state events.
const (
	StateStarted = "started" // process/instance started, not yet part of the cluster
	StateJoining = "joining"
	StateNormal  = "normal" // UN in every live node's view
	StateLeaving = "leaving"
	StateLeft    = "left" // gone from the others' host lists
	StateRemoved = "removed"
	StateDown    = "down" // stopped, killed, paused or failed to start
)

// Defaults for Options.
const (
	DefaultNodeReadyTimeout = 10 * time.Minute
	DefaultPollInterval     = time.Second
	progressEvery           = 5 * time.Second
)

// Options tune a Cluster. Every field is optional.
type Options struct {
	// NodeReadyTimeout bounds every wait on nodes (ready, gone).
	NodeReadyTimeout time.Duration
	// Logf receives progress lines (what is being waited for).
	Logf func(format string, args ...any)
	// Emit receives node_state events.
	Emit func(results.Event)
	// PollInterval is the pause between two readiness checks.
	PollInterval time.Duration
	// Instances are the plan's facts of each instance type (plan.Nodes):
	// a node's vCPUs and disk come from here, never from the catalog.
	Instances map[string]Instance
}

// Instance is what the plan says of one instance type's nodes.
type Instance struct {
	VCPUs int
	// DiskBytes is a node's disk as the run has it: the catalog's storage,
	// scaled when the backend is emulated (provision.Model.NodeDiskBytes).
	DiskBytes float64
}

// Node is the one handle on a database node above provision. The embedded
// provision.Node is the backend's handle: Name, ID, the requested DC and
// Rack, InstanceType, and Address with the ports, which is where the runner
// reaches the node (public, forwarded or loopback). The identity fields are
// what the database reports for itself, learnt once its REST API answers
// (empty before; read them with Cluster.Identity when racing with a wait).
type Node struct {
	provision.Node
	// Seq is the creation order in this cluster: larger is newer.
	Seq int
	Identity
	VCPUs     int
	DiskBytes float64 // the node's disk as the run has it (Instance.DiskBytes)
	AddedBy   string  // nemesis step that added it; "" for initial nodes
	State     string  // one of the State* constants; read it with Cluster.State when racing with changes
}

// Identity is who a node is in the database's own terms.
type Identity struct {
	// HostID is the node's host id (REST /storage_service/hostid/local).
	HostID string
	// BroadcastAddress is the address the node gossips (its entry in its own
	// /storage_service/host_id map): what the others' live, down, joining
	// and leaving lists and host id maps hold for it. On EC2 it is the
	// private IP; it differs from Address whenever the runner reaches the
	// node through a public or forwarded address.
	BroadcastAddress string
	// DataCenter and SnitchRack are the names the node's snitch gives its
	// DC and rack (REST /snitch/datacenter and /snitch/rack): Ec2Snitch
	// names them after the region and zone, whatever the scenario called them.
	DataCenter, SnitchRack string
}

// Info is the node as results describe it: the one place a results.NodeInfo is built.
func (n *Node) Info() results.NodeInfo {
	return results.NodeInfo{Name: n.Name, Address: n.Address, Rack: n.Rack, InstanceType: n.InstanceType,
		VCPUs: n.VCPUs, DiskBytes: n.DiskBytes, AddedBy: n.AddedBy}
}

// Cluster is the handle on a running cluster. It is safe for concurrent use.
type Cluster struct {
	p    provision.Provider
	opts Options

	mu      sync.Mutex
	members []*Node // oldest first
	ever    []*Node // every node that was a member, oldest first
	seq     int     // Seq of the newest node
	admins  map[string]*scyllarest.Client
	probes  map[string]*scyllarest.Client
}

// New returns a handle on the cluster that p will create.
func New(p provision.Provider, opts Options) *Cluster {
	if opts.NodeReadyTimeout <= 0 {
		opts.NodeReadyTimeout = DefaultNodeReadyTimeout
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Emit == nil {
		opts.Emit = func(results.Event) {}
	}
	return &Cluster{p: p, opts: opts, admins: map[string]*scyllarest.Client{}, probes: map[string]*scyllarest.Client{}}
}

// Create starts the initial nodes and waits until every one is ready.
func (c *Cluster) Create(ctx context.Context, spec provision.ClusterSpec) error {
	pn, err := c.p.Create(ctx, spec)
	added := c.addMembers(pn, "")
	if err != nil {
		return fmt.Errorf("creating the cluster on %s: %w", c.p.Name(), err)
	}
	if len(added) == 0 {
		return fmt.Errorf("creating the cluster on %s: no node was created", c.p.Name())
	}
	if err := c.WaitReady(ctx, added); err != nil {
		return fmt.Errorf("waiting for the initial nodes: %w", err)
	}
	return nil
}

// Add starts new nodes that join the cluster and returns once they are
// started (state joining), not necessarily normal, so that callers time the
// start and the join apart. Follow it with WaitJoined. On error the nodes
// that were started are returned too (state down), so the caller can Drop them.
func (c *Cluster) Add(ctx context.Context, step string, specs []provision.NodeSpec) ([]*Node, error) {
	pn, err := c.p.AddNodes(ctx, specs)
	added := c.addMembers(pn, step)
	if err != nil {
		c.markDown(added)
		return added, fmt.Errorf("adding %d node(s) for %s: %w", len(specs), stepName(step), err)
	}
	for _, n := range added {
		c.SetState(n, StateJoining)
	}
	return added, nil
}

func stepName(step string) string {
	if step == "" {
		return "grow"
	}
	return "step " + step
}

func (c *Cluster) addMembers(pn []provision.Node, step string) []*Node {
	out := make([]*Node, 0, len(pn))
	c.mu.Lock()
	for _, p := range pn {
		c.seq++
		n := &Node{Node: p, Seq: c.seq, AddedBy: step, State: StateStarted}
		if it, ok := c.opts.Instances[p.InstanceType]; ok {
			n.VCPUs, n.DiskBytes = it.VCPUs, it.DiskBytes
		}
		out = append(out, n)
	}
	c.members = append(c.members, out...)
	c.ever = append(c.ever, out...)
	c.mu.Unlock()
	for _, n := range out {
		c.emitState(n, StateStarted, "")
	}
	return out
}

// WaitJoined is WaitReady for nodes that are joining: on failure the ones
// that did not become normal are marked down.
func (c *Cluster) WaitJoined(ctx context.Context, nodes []*Node) error {
	err := c.WaitReady(ctx, nodes)
	if err != nil {
		c.markDown(nodes)
	}
	return err
}

func (c *Cluster) markDown(nodes []*Node) {
	for _, n := range nodes {
		if c.State(n) != StateNormal {
			c.SetState(n, StateDown)
		}
	}
}

// WaitReady waits until every node is ready: REST operation_mode NORMAL on
// the node, its identity learnt from it (host id, broadcast address, DC and
// rack), the node UN in every live node's view (live, neither joining nor
// leaving, by its broadcast address), its CQL port answering and native
// transport on. Nodes that become ready are marked normal (node_state event).
func (c *Cluster) WaitReady(ctx context.Context, nodes []*Node) error {
	if len(nodes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.NodeReadyTimeout)
	defer cancel()
	start := time.Now()
	lastLog := start
	pending := slices.Clone(nodes)
	reasons := map[string]string{}
	for {
		views := c.views(ctx, pending)
		var still []*Node
		for _, n := range pending {
			if why := c.notReady(ctx, n, views); why != "" {
				// A check cut short by the deadline says nothing about the
				// node: the timeout reports the last real reason.
				if ctx.Err() == nil || reasons[n.Name] == "" {
					reasons[n.Name] = why
				}
				still = append(still, n)
				continue
			}
			if err := c.checkIdentity(ctx, n); err != nil {
				return err
			}
			delete(reasons, n.Name)
			c.becameNormal(ctx, n)
		}
		pending = still
		if len(pending) == 0 {
			return nil
		}
		if err := c.checkExited(pending); err != nil {
			return err
		}
		if time.Since(lastLog) >= progressEvery {
			lastLog = time.Now()
			c.progress("waiting %s for %d node(s) to be ready: %s", time.Since(start).Round(time.Second), len(pending), describe(pending, reasons))
		}
		t := time.NewTimer(c.opts.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("node(s) not ready after %s (%v): %s", time.Since(start).Round(time.Second), ctx.Err(), describe(pending, reasons))
		case <-t.C:
		}
	}
}

func describe(nodes []*Node, reasons map[string]string) string {
	parts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s (%s): %s", n.Name, n.Address, reasons[n.Name]))
	}
	return strings.Join(parts, "; ")
}

// view is what one node reports about the others.
type view struct {
	live, joining, leaving map[string]bool
	err                    error
}

// views asks every node that should have an opinion: the normal members and
// the nodes being waited for.
func (c *Cluster) views(ctx context.Context, waiting []*Node) map[string]*view {
	observers := c.membersIn(StateNormal)
	for _, n := range waiting {
		if !slices.Contains(observers, n) {
			observers = append(observers, n)
		}
	}
	out := make(map[string]*view, len(observers))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, o := range observers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := &view{}
			cl := c.probe(o)
			var live, joining, leaving []string
			live, v.err = cl.Live(ctx)
			if v.err == nil {
				joining, v.err = cl.Joining(ctx)
			}
			if v.err == nil {
				leaving, v.err = cl.Leaving(ctx)
			}
			v.live, v.joining, v.leaving = set(live), set(joining), set(leaving)
			mu.Lock()
			out[o.Name] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func set(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// notReady returns why n is not ready, or "".
func (c *Cluster) notReady(ctx context.Context, n *Node, views map[string]*view) string {
	cl := c.probe(n)
	mode, err := cl.OperationMode(ctx)
	if err != nil {
		return "REST: " + err.Error()
	}
	if mode != "NORMAL" {
		return "operation_mode " + mode
	}
	id, err := c.learn(ctx, n)
	if err != nil {
		return err.Error()
	}
	own := views[n.Name]
	for name, v := range views {
		if v.err != nil {
			// A member that does not answer has no opinion if n itself sees it down.
			if own != nil && own.err == nil && !own.live[c.broadcastOf(name)] {
				continue
			}
			return fmt.Sprintf("no view from %s: %v", name, v.err)
		}
		switch {
		case !v.live[id.BroadcastAddress]:
			return "not live in " + name + "'s view"
		case v.joining[id.BroadcastAddress]:
			return "joining in " + name + "'s view"
		case v.leaving[id.BroadcastAddress]:
			return "leaving in " + name + "'s view"
		}
	}
	if on, err := cl.NativeTransportRunning(ctx); err != nil {
		return "native_transport: " + err.Error()
	} else if !on {
		return "native transport not running"
	}
	if err := PingCQL(ctx, n.Address, n.CQLPort, 3*time.Second); err != nil {
		return err.Error()
	}
	return ""
}

// broadcastOf is the broadcast address of the member called name, or "".
func (c *Cluster) broadcastOf(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.Name == name {
			return m.BroadcastAddress
		}
	}
	return ""
}

// learn reads n's identity from n itself, once: its host id, then the
// address its own host id map gives that host id (the address it gossips),
// then the DC and rack its snitch reports. The REST paths are ScyllaDB's
// (api/token_metadata.cc: host_id keys are the gossiper's addresses; the
// snitch endpoints without host= answer for the node's own broadcast
// address). A node that has not yet put itself in its host id map is not
// ready.
func (c *Cluster) learn(ctx context.Context, n *Node) (Identity, error) {
	if id := c.Identity(n); id.BroadcastAddress != "" {
		return id, nil
	}
	cl := c.probe(n)
	var id Identity
	var err error
	if id.HostID, err = cl.HostID(ctx); err != nil {
		return id, fmt.Errorf("reading its host id: %w", err)
	}
	if id.HostID == "" {
		return id, errors.New("its host id is empty")
	}
	ids, err := cl.HostIDs(ctx)
	if err != nil {
		return id, fmt.Errorf("reading its host id map: %w", err)
	}
	for addr, h := range ids {
		if h == id.HostID {
			id.BroadcastAddress = addr
		}
	}
	if id.BroadcastAddress == "" {
		return id, fmt.Errorf("its host id %s is not in its own host id map yet", id.HostID)
	}
	if id.DataCenter, err = cl.Datacenter(ctx, ""); err != nil {
		return id, fmt.Errorf("reading its data centre: %w", err)
	}
	if id.SnitchRack, err = cl.Rack(ctx, ""); err != nil {
		return id, fmt.Errorf("reading its rack: %w", err)
	}
	c.mu.Lock()
	n.Identity = id
	c.mu.Unlock()
	if id.BroadcastAddress != n.Address {
		c.opts.Logf("%s: reached at %s, broadcasts %s (host id %s, DC %s, rack %s)", n.Name, n.Address, id.BroadcastAddress, id.HostID, id.DataCenter, id.SnitchRack)
	}
	return id, nil
}

// Identity reads n's identity under the cluster's lock (zero until learnt).
func (c *Cluster) Identity(n *Node) Identity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.Identity
}

// ByBroadcast returns the member whose broadcast address is addr (an entry
// of a live, down, joining or leaving list, or a host id map key), or nil.
func (c *Cluster) ByBroadcast(addr string) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.BroadcastAddress == addr && addr != "" {
			return m
		}
	}
	return nil
}

// ReachAddress is the address the runner reaches the member at whose
// broadcast address (before it told it: the address the backend expects it
// to gossip) is addr, or "" when no member has it: what a driver that
// discovers peers by the addresses they report needs to connect to them.
func (c *Cluster) ReachAddress(addr string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.BroadcastAddress == addr || (m.BroadcastAddress == "" && m.GossipAddress() == addr) {
			return m.Address
		}
	}
	return ""
}

// DataCenter is the DC the ready members report (their snitch's name for
// it), the one a keyspace's replication must name; "" before any node is
// ready. It is an error when members report different DCs: the framework
// runs one-DC clusters.
func (c *Cluster) DataCenter() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dc := ""
	for _, m := range c.members {
		switch {
		case m.DataCenter == "":
		case dc == "":
			dc = m.DataCenter
		case m.DataCenter != dc:
			return "", fmt.Errorf("nodes report different data centres: %s and %s (%s)", dc, m.DataCenter, m.Name)
		}
	}
	if dc == "" {
		return "", errors.New("no node has reported its data centre yet")
	}
	return dc, nil
}

func (c *Cluster) becameNormal(ctx context.Context, n *Node) {
	if c.State(n) != StateNormal {
		c.SetState(n, StateNormal)
	}
}

// checkIdentity fails when the provider can tell that what answered for n
// is not the node it started (a node that died on a taken address while
// another cluster's node answers there); an exit of n's process is said
// first, with its log's error.
func (c *Cluster) checkIdentity(ctx context.Context, n *Node) error {
	ic, ok := c.p.(provision.IdentityChecker)
	if !ok {
		return nil
	}
	err := ic.CheckIdentity(ctx, n.Node)
	if err == nil {
		return nil
	}
	if exited := c.checkExited([]*Node{n}); exited != nil {
		return exited
	}
	return fmt.Errorf("%s (%s) answered as ready, but not from the process started for it: %w", n.Name, n.Address, err)
}

// checkExited fails when the provider knows a waited-for process has ended.
func (c *Cluster) checkExited(nodes []*Node) error {
	pc, ok := c.p.(provision.ProcessChecker)
	if !ok {
		return nil
	}
	for _, n := range nodes {
		exited, err := pc.NodeExited(n.Name)
		if !exited {
			continue
		}
		msg := fmt.Sprintf("%s (%s) exited while waiting for it to be ready", n.Name, n.Address)
		if err != nil {
			msg += ": " + err.Error()
		}
		if line := LastErrorLine(n.LogPath); line != "" {
			msg += "; its log says: " + line
		}
		return errors.New(msg)
	}
	return nil
}

// LastErrorLine returns the last "Startup failed" or ERROR line of the end
// of a log file, or "".
func LastErrorLine(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		_, _ = f.Seek(st.Size()-tail, 0)
	}
	buf := make([]byte, tail)
	k, _ := f.Read(buf)
	lines := strings.Split(string(buf[:k]), "\n")
	var lastErr string
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.Contains(l, "Startup failed") {
			return l
		}
		if lastErr == "" && strings.HasPrefix(l, "ERROR") {
			lastErr = l
		}
	}
	return lastErr
}

// Leave asks n to leave (POST decommission on n) and returns when it is
// gone from the other nodes' host lists (state left); Drop releases it.
func (c *Cluster) Leave(ctx context.Context, n *Node) error {
	c.SetState(n, StateLeaving)
	if err := c.Admin(n).Decommission(ctx); err != nil {
		// ScyllaDB may drop the connection as the node shuts its API down;
		// only an answer from the node is a failure.
		if !scyllarest.IsConnectionError(err) || ctx.Err() != nil {
			c.SetState(n, StateNormal)
			return fmt.Errorf("decommissioning %s (%s): %w", n.Name, n.Address, err)
		}
		c.opts.Logf("decommission of %s: connection ended (%v); checking the other nodes", n.Name, err)
	}
	if err := c.waitGone(ctx, n); err != nil {
		return fmt.Errorf("decommissioning %s: %w", n.Name, err)
	}
	c.SetState(n, StateLeft)
	return nil
}

// RemoveDead removes a dead node through a live one (POST remove_node with
// its host id), waits until it is gone, then releases it with the provider.
func (c *Cluster) RemoveDead(ctx context.Context, n *Node) error {
	var lastErr error
	for _, o := range c.membersIn(StateNormal) {
		if o == n {
			continue
		}
		id := c.Identity(n).HostID
		if id == "" {
			// A node that died before it told its identity: the others may
			// know it by the address the backend expects it to gossip.
			ids, err := c.Admin(o).HostIDs(ctx)
			if err != nil {
				lastErr = err
				continue
			}
			id = ids[n.GossipAddress()]
			if id == "" {
				return fmt.Errorf("removing %s: %s does not know its host id", n.Name, o.Name)
			}
		}
		err := c.Admin(o).RemoveNode(ctx, id)
		if scyllarest.IsConnectionError(err) && ctx.Err() == nil {
			lastErr = err
			continue
		}
		if err != nil {
			return fmt.Errorf("removing %s (host id %s) through %s: %w", n.Name, id, o.Name, err)
		}
		c.SetState(n, StateLeft)
		if err := c.waitGone(ctx, n); err != nil {
			return fmt.Errorf("removing %s: %w", n.Name, err)
		}
		return c.release(ctx, n)
	}
	return fmt.Errorf("removing %s: no live node answered: %v", n.Name, lastErr)
}

// Drop releases a node the cluster no longer has (e.g. one that failed to
// join) with the provider's RemoveNode, and forgets it.
func (c *Cluster) Drop(ctx context.Context, n *Node) error { return c.release(ctx, n) }

func (c *Cluster) release(ctx context.Context, n *Node) error {
	err := c.p.RemoveNode(ctx, n.Node)
	c.mu.Lock()
	c.members = slices.DeleteFunc(c.members, func(m *Node) bool { return m == n })
	delete(c.admins, n.Name)
	delete(c.probes, n.Name)
	c.mu.Unlock()
	c.SetState(n, StateRemoved)
	if err != nil {
		return fmt.Errorf("releasing %s on %s: %w", n.Name, c.p.Name(), err)
	}
	return nil
}

// addressInViews is n's broadcast address, or the best guess before n told it.
func (c *Cluster) addressInViews(n *Node) string {
	if a := c.Identity(n).BroadcastAddress; a != "" {
		return a
	}
	return n.GossipAddress()
}

// waitGone waits until no other member lists n in its host ids (by host
// id, or by address before n told its host id) or leaving list.
func (c *Cluster) waitGone(ctx context.Context, n *Node) error {
	self := c.Identity(n)
	addr := c.addressInViews(n)
	ctx, cancel := context.WithTimeout(ctx, c.opts.NodeReadyTimeout)
	defer cancel()
	start, lastLog := time.Now(), time.Now()
	for {
		why := ""
		answered := 0
		for _, o := range c.membersIn(StateNormal) {
			if o == n {
				continue
			}
			cl := c.probe(o)
			ids, err := cl.HostIDs(ctx)
			if err != nil {
				why = fmt.Sprintf("%s: %v", o.Name, err)
				continue
			}
			answered++
			leaving, err := cl.Leaving(ctx)
			if err != nil {
				why = fmt.Sprintf("%s: %v", o.Name, err)
				continue
			}
			if _, ok := ids[addr]; ok || (self.HostID != "" && slices.Contains(slices.Collect(maps.Values(ids)), self.HostID)) {
				why = "still in " + o.Name + "'s host ids"
				break
			}
			if slices.Contains(leaving, addr) {
				why = "still leaving in " + o.Name + "'s view"
				break
			}
		}
		if why == "" && answered > 0 {
			return nil
		}
		if answered == 0 && why == "" {
			why = "no other live node to ask"
		}
		if time.Since(lastLog) >= progressEvery {
			lastLog = time.Now()
			c.progress("waiting %s for %s (%s) to leave: %s", time.Since(start).Round(time.Second), n.Name, n.Address, why)
		}
		t := time.NewTimer(c.opts.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s (%s) not gone after %s (%v): %s", n.Name, n.Address, time.Since(start).Round(time.Second), ctx.Err(), why)
		case <-t.C:
		}
	}
}

// Flush flushes the memtables of every normal member (nodetool flush on
// each node, as SCT's flush_all_nodes does), all at once.
func (c *Cluster) Flush(ctx context.Context) error {
	nodes := c.membersIn(StateNormal)
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Admin(n).Flush(ctx); err != nil {
				errs[i] = fmt.Errorf("flushing %s: %w", n.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Quiesce blocks until topology work (joins, leaves, tablet migrations) is
// done: quiesce_topology on a live node.
func (c *Cluster) Quiesce(ctx context.Context) error {
	return c.onLive(ctx, "quiescing topology", func(cl *scyllarest.Client) error { return cl.QuiesceTopology(ctx) })
}

// Replicas names the members that are the natural replicas of a partition
// key given in nodetool style (REST natural_endpoints, answered by the
// first normal member; addresses no member has are kept as they are).
func (c *Cluster) Replicas(ctx context.Context, keyspace, table, key string) ([]string, error) {
	var addrs []string
	err := c.onLive(ctx, "looking up the replicas of key "+key, func(cl *scyllarest.Client) error {
		var err error
		addrs, err = cl.NaturalEndpoints(ctx, keyspace, table, key)
		return err
	})
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if m := c.ByBroadcast(a); m != nil {
			a = m.Name
		}
		out = append(out, a)
	}
	return out, err
}

// onLive runs fn against the first normal member that answers.
func (c *Cluster) onLive(ctx context.Context, what string, fn func(*scyllarest.Client) error) error {
	var lastErr error
	for _, n := range c.membersIn(StateNormal) {
		err := fn(c.Admin(n))
		if err == nil {
			return nil
		}
		if !scyllarest.IsConnectionError(err) || ctx.Err() != nil {
			return fmt.Errorf("%s through %s: %w", what, n.Name, err)
		}
		lastErr = err
	}
	if lastErr == nil {
		return fmt.Errorf("%s: no normal node in the cluster", what)
	}
	return fmt.Errorf("%s: no live node answered: %w", what, lastErr)
}

// Info describes every node that was ever a member, oldest first.
func (c *Cluster) Info() []results.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]results.NodeInfo, len(c.ever))
	for i, n := range c.ever {
		out[i] = n.Info()
	}
	return out
}

// Nodes returns the current members, oldest first.
func (c *Cluster) Nodes() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// Node returns the member called name, or nil.
func (c *Cluster) Node(name string) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

func (c *Cluster) membersIn(state string) []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Node
	for _, m := range c.members {
		if m.State == state {
			out = append(out, m)
		}
	}
	return out
}

// Hosts returns the CQL contact points: the addresses of the normal members.
func (c *Cluster) Hosts() []string {
	var hosts []string
	for _, n := range c.membersIn(StateNormal) {
		hosts = append(hosts, n.Address)
	}
	sort.Strings(hosts)
	return hosts
}

// State reads n's state under the cluster's lock.
func (c *Cluster) State(n *Node) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.State
}

// SetState records a state change of n and emits a node_state event. The
// nemesis uses it for changes the cluster does not make itself (down after a
// kill, normal again after a restart).
func (c *Cluster) SetState(n *Node, state string) {
	c.mu.Lock()
	changed := n.State != state
	n.State = state
	c.mu.Unlock()
	if changed {
		c.emitState(n, state, "")
	}
}

// progress logs what a wait is waiting for and emits it as a progress event.
func (c *Cluster) progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.opts.Logf("%s", msg)
	c.opts.Emit(results.Event{Time: time.Now().UTC(), Type: results.EventProgress, Message: msg})
}

func (c *Cluster) emitState(n *Node, state, msg string) {
	c.opts.Emit(results.Event{Time: time.Now().UTC(), Type: results.EventNodeState, Node: n.Name, State: state, Message: msg})
}

// Admin is the REST client of n (default timeouts and retries).
func (c *Cluster) Admin(n *Node) *scyllarest.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.admins[n.Name]
	if !ok {
		cl = scyllarest.New(n.Address, n.RESTPort)
		c.admins[n.Name] = cl
	}
	return cl
}

// probe is a REST client for polling: short timeout, no retry, so that one
// frozen node does not stall a wait loop.
func (c *Cluster) probe(n *Node) *scyllarest.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.probes[n.Name]
	if !ok {
		cl = scyllarest.New(n.Address, n.RESTPort)
		cl.Timeout = 3 * time.Second
		cl.Attempts = 1
		c.probes[n.Name] = cl
	}
	return cl
}

// Destroy tears the cluster down through the provider.
func (c *Cluster) Destroy(ctx context.Context) error {
	if err := c.p.Destroy(ctx); err != nil {
		return fmt.Errorf("destroying the cluster on %s: %w", c.p.Name(), err)
	}
	return nil
}
