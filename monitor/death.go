package monitor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// StateDied is the node_state of a node whose process ended or that the
// cluster reports down.
const StateDied = "died"

// DeathMonitor fails a run when a node dies without the nemesis having said
// it would (roachtest's monitor.ExpectDeath). It is fed by process exits
// (FollowExits, from backends that are a provision.ExitNotifier) or the
// cluster's down lists (PollDown); each death is reported once until the
// node is seen alive again.
type DeathMonitor struct {
	emit func(results.Event)
	logf func(format string, args ...any)

	mu       sync.Mutex
	expected map[string]int
	dead     map[string]string // node -> how its death was seen: "exit" | "down"
	suspect  map[string]int    // node -> consecutive polls that saw it down
	errs     chan error
}

// NewDeathMonitor returns a monitor; emit and logf may be nil.
func NewDeathMonitor(emit func(results.Event), logf func(format string, args ...any)) *DeathMonitor {
	if emit == nil {
		emit = func(results.Event) {}
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &DeathMonitor{emit: emit, logf: logf, expected: map[string]int{}, dead: map[string]string{}, suspect: map[string]int{}, errs: make(chan error, 64)}
}

// ExpectDeath announces that node is about to stop on purpose: its next
// death is not a failure. Call it before stopping, killing or pausing it.
func (m *DeathMonitor) ExpectDeath(node string) {
	m.mu.Lock()
	m.expected[node]++
	m.mu.Unlock()
}

// Died records a death. It returns the error sent to Unexpected when nobody
// expected it, nil otherwise (also for a node already dead).
func (m *DeathMonitor) Died(node, cause string, t time.Time, requested bool) error {
	return m.died(node, cause, t, requested, "exit", true)
}

// deliver sends an unexpected death to Unexpected (dropped when 64 wait).
func (m *DeathMonitor) deliver(err error) {
	select {
	case m.errs <- err:
	default:
	}
}

// died records a death; deliver says whether an unexpected one goes to Unexpected.
func (m *DeathMonitor) died(node, cause string, t time.Time, requested bool, source string, deliver bool) error {
	m.mu.Lock()
	if m.dead[node] != "" {
		m.mu.Unlock()
		return nil
	}
	m.dead[node] = source
	expected := requested
	if !expected && m.expected[node] > 0 {
		m.expected[node]--
		expected = true
	}
	var err error
	if !expected {
		err = fmt.Errorf("node %s died unexpectedly at %s: %s", node, t.UTC().Format(time.RFC3339), cause)
	}
	m.mu.Unlock()
	m.emit(results.Event{Time: t.UTC(), Type: results.EventNodeState, Node: node, State: StateDied, Expected: expected, Message: cause})
	if err != nil {
		m.logf("%v", err)
		if deliver {
			m.deliver(err)
		}
	} else {
		m.logf("node %s stopped as expected: %s", node, cause)
	}
	return err
}

// Up records that node is alive again (restarted), so its next death
// counts. PollDown calls it for deaths it saw itself; after a process exit
// the caller that restarts the node says so.
func (m *DeathMonitor) Up(node string) {
	m.mu.Lock()
	was := m.dead[node] != ""
	delete(m.dead, node)
	m.mu.Unlock()
	if was {
		m.emit(results.Event{Time: time.Now().UTC(), Type: results.EventNodeState, Node: node, State: "up"})
	}
}

// Unexpected delivers every unexpected death.
func (m *DeathMonitor) Unexpected() <-chan error { return m.errs }

// FollowExits records the process exits a backend reports (see
// provision.ExitNotifier) until ctx ends or the channel is closed (provider
// destroyed). Exits the provider caused itself (StopNode, KillNode,
// RemoveNode, Destroy) are expected. A normal node that exits unannounced
// is marked down and its death goes to Unexpected; a node still starting is
// left to the wait that started it, which reports why it failed.
func (m *DeathMonitor) FollowExits(ctx context.Context, c *cluster.Cluster, exits <-chan provision.NodeExit) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-exits:
			if !ok {
				return
			}
			n := c.Node(e.Node.Name)
			wasNormal := n != nil && c.State(n) == cluster.StateNormal
			cause := "process exited with status 0"
			if e.Err != nil {
				cause = "process exited: " + e.Err.Error()
			}
			if line := cluster.LastErrorLine(e.Node.LogPath); line != "" && !e.Requested {
				cause += "; last error in its log: " + line
			}
			if err := m.died(e.Node.Name, cause, e.Time, e.Requested, "exit", false); err != nil && wasNormal {
				c.SetState(n, cluster.StateDown) // before the run hears of it
				m.deliver(err)
			}
		}
	}
}

// DownPolls is how many polls in a row must see a node down before it is
// taken for dead.
const DownPolls = 2

// PollDown asks the cluster every interval which nodes its live members see
// down and records those deaths (and recoveries), until ctx ends.
func (m *DeathMonitor) PollDown(ctx context.Context, c *cluster.Cluster, interval time.Duration) {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		m.pollOnce(ctx, c)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollOnce asks the first normal member that answers. Its lists hold
// broadcast addresses, matched with the ones the nodes reported.
func (m *DeathMonitor) pollOnce(ctx context.Context, c *cluster.Cluster) {
	for _, o := range c.Nodes() {
		if c.State(o) != cluster.StateNormal {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cl := c.Admin(o)
		down, err := cl.Down(cctx)
		var live []string
		if err == nil {
			live, err = cl.Live(cctx)
		}
		cancel()
		if err != nil {
			continue // ask the next member
		}
		// A node is dead when it is down in DownPolls polls in a row: a
		// failure detector on an overloaded machine (or network) flaps a
		// live node down and up again within seconds (seen rehearsing
		// 90pct-scaleout on aws-sim), a dead one stays down.
		seen := map[string]bool{}
		for _, a := range down {
			if n := c.ByBroadcast(a); n != nil && n != o {
				seen[n.Name] = true
				m.mu.Lock()
				m.suspect[n.Name]++
				k := m.suspect[n.Name]
				m.mu.Unlock()
				if k >= DownPolls {
					m.died(n.Name, fmt.Sprintf("reported down by %s in %d polls in a row", o.Name, k), time.Now(), false, "down", true)
				} else {
					m.logf("%s reported down by %s; dead if still down at the next poll", n.Name, o.Name)
				}
			}
		}
		m.mu.Lock()
		for name := range m.suspect {
			if !seen[name] {
				delete(m.suspect, name)
			}
		}
		m.mu.Unlock()
		for _, a := range live {
			if n := c.ByBroadcast(a); n != nil {
				// Gossip may still list a killed process as live for a
				// while, so only deaths seen here are undone here.
				m.mu.Lock()
				seenDown := m.dead[n.Name] == "down"
				m.mu.Unlock()
				if seenDown {
					m.Up(n.Name)
				}
			}
		}
		return
	}
}
