package nemesis

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// racksOf lists the racks of the current members in first-seen order.
func racksOf(nodes []*cluster.Node) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		if !seen[n.Rack] {
			seen[n.Rack] = true
			out = append(out, n.Rack)
		}
	}
	return out
}

// GrowBatches plans a grow step: CountPerRack rounds over the racks; serial
// adds one node at a time (rack by rack, round by round), parallel adds
// everything in one batch.
func GrowBatches(s Step, racks []string) [][]provision.NodeSpec {
	if len(s.Racks) > 0 {
		racks = s.Racks
	}
	per := s.CountPerRack
	if per <= 0 {
		per = 1
	}
	var all []provision.NodeSpec
	for round := 0; round < per; round++ {
		for _, r := range racks {
			all = append(all, provision.NodeSpec{Rack: r, InstanceType: s.InstanceType})
		}
	}
	if s.Mode == results.ModeParallel {
		return [][]provision.NodeSpec{all}
	}
	out := make([][]provision.NodeSpec, len(all))
	for i, sp := range all {
		out[i] = []provision.NodeSpec{sp}
	}
	return out
}

// ShrinkTargets picks the nodes a shrink or drain step removes: the named
// ones, else the newest CountPerRack of every rack, else the newest Count
// (1 when nothing is said). Serial steps remove them one at a time.
func ShrinkTargets(s Step, nodes []*cluster.Node) ([][]*cluster.Node, error) {
	byName := map[string]*cluster.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	newest := append([]*cluster.Node(nil), nodes...)
	sort.SliceStable(newest, func(i, j int) bool { return newest[i].Seq > newest[j].Seq })
	var picked []*cluster.Node
	switch {
	case len(s.Nodes) > 0:
		for _, name := range s.Nodes {
			n, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("node %q is not a member of the cluster", name)
			}
			picked = append(picked, n)
		}
	case s.CountPerRack > 0:
		racks := racksOf(nodes)
		if len(s.Racks) > 0 {
			racks = s.Racks
		}
		for _, rack := range racks {
			k := 0
			for _, n := range newest {
				if n.Rack == rack && k < s.CountPerRack {
					picked = append(picked, n)
					k++
				}
			}
			if k < s.CountPerRack {
				return nil, fmt.Errorf("rack %s has %d nodes, cannot remove %d", rack, k, s.CountPerRack)
			}
		}
		sort.SliceStable(picked, func(i, j int) bool { return picked[i].Seq > picked[j].Seq })
	default:
		c := s.Count
		if c <= 0 {
			c = 1
		}
		if c >= len(newest) {
			return nil, fmt.Errorf("cannot remove %d of %d nodes", c, len(newest))
		}
		picked = newest[:c]
	}
	if len(picked) >= len(nodes) {
		return nil, fmt.Errorf("cannot remove all %d nodes", len(nodes))
	}
	if s.Mode == results.ModeParallel {
		return [][]*cluster.Node{picked}, nil
	}
	out := make([][]*cluster.Node, len(picked))
	for i, n := range picked {
		out[i] = []*cluster.Node{n}
	}
	return out, nil
}

func names(nodes []*cluster.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func mode(s Step) string {
	if s.Mode == "" {
		return results.ModeSerial
	}
	return s.Mode
}

func runGrow(ctx context.Context, env *Env, s Step) error {
	batches := GrowBatches(s, racksOf(env.Cluster.Nodes()))
	for i, b := range batches {
		if err := growBatch(ctx, env, s, b, i+1, len(batches)); err != nil {
			return err
		}
	}
	return nil
}

func growBatch(ctx context.Context, env *Env, s Step, specs []provision.NodeSpec, i, n int) error {
	cyc := env.Cycles.Start(env, s.Name)
	defer env.Cycles.End(env, cyc, s.Name)
	base := results.Event{Step: s.Name, Cycle: cyc, Kind: results.KindGrow, Mode: mode(s)}
	members := len(env.Cluster.Nodes())
	// New nodes receive their share of the data: bytes × added / (members + added).
	move := env.Timeouts.dataBytes() * float64(len(specs)) / float64(members+len(specs))
	what := fmt.Sprintf("%s %d/%d: adding %d × %s", s.Name, i, n, len(specs), s.InstanceType)
	env.logf("%s (%s)", what, specRacks(specs))
	env.progress(what)

	ev := base
	ev.Type, ev.Time, ev.PlanSeconds = results.EventStepRequested, env.now(), s.planOf(i)
	requested := ev.Time
	env.emit(ev)

	var added []*cluster.Node
	t := env.Timeouts.For(WaitStart, 0, s.Timeouts)
	err := wait(ctx, env, what+": starting nodes", t, nil, func(ctx context.Context) error {
		var err error
		added, err = env.Cluster.AddNodes(ctx, s.Name, specs)
		return err
	})
	if err != nil {
		return fmt.Errorf("adding nodes: %w", err)
	}
	for _, nd := range added {
		ev := base
		ev.Type, ev.Node, ev.State, ev.Time = results.EventNodeOp, nd.Name, results.NodeOpRequested, requested
		env.emit(ev)
	}
	env.progress(fmt.Sprintf("%s: waiting for %s to be up and normal", what, strings.Join(names(added), ", ")))
	t = env.Timeouts.For(WaitJoin, move, s.Timeouts)
	if err := wait(ctx, env, what+": waiting for nodes to be normal", t, added, func(ctx context.Context) error {
		// Each node on its own, so that the moment each one joined is
		// recorded: the coordinator admits one at a time.
		return eachNode(ctx, added, func(ctx context.Context, nd *cluster.Node) error {
			if err := env.Cluster.WaitNormal(ctx, []*cluster.Node{nd}); err != nil {
				return err
			}
			ev := base
			ev.Type, ev.Node, ev.State = results.EventNodeOp, nd.Name, results.NodeOpJoined
			env.emit(ev)
			return nil
		})
	}); err != nil {
		return fmt.Errorf("waiting for %s to join: %w", strings.Join(names(added), ", "), err)
	}
	ev = base
	ev.Type, ev.Nodes = results.EventNodesNormal, names(added)
	env.emit(ev)
	return finishTopology(ctx, env, s, base, requested, what, move, added, func(ctx context.Context) error {
		return cleanupAfterGrow(ctx, env, s, base, what, added)
	})
}

// finishTopology waits for balance, runs afterBalance (cleanup after a
// grow; nil: nothing), waits for latency recovery and ends the step.
// Latency recovery is judged from the request, as the offline reduction
// judges it (results.SustainedRecovery), but awaited only once balanced and
// cleaned up: SCT's cleanup is part of the add-node disruption, under load.
func finishTopology(ctx context.Context, env *Env, s Step, base results.Event, requested time.Time, what string, move float64, watch []*cluster.Node, afterBalance func(context.Context) error) error {
	env.progress(what + ": waiting for data to be balanced (no tablet migrations in flight)")
	t := env.Timeouts.For(WaitBalance, move, s.Timeouts)
	if err := wait(ctx, env, what+": waiting for data to be balanced", t, watch, balanced(env, s, watch)); err != nil {
		return fmt.Errorf("waiting for data to be balanced: %w", err)
	}
	balanced := env.now()
	ev := base
	ev.Type, ev.Time = results.EventDataBalanced, balanced
	env.emit(ev)
	if afterBalance != nil {
		if err := afterBalance(ctx); err != nil {
			return err
		}
	}

	if env.Recovery != nil {
		env.progress(what + ": waiting for P99 latency to recover")
		t = env.Timeouts.For(WaitRecovery, 0, s.Timeouts)
		var at time.Time
		err := wait(ctx, env, what+": waiting for latency to recover", t, nil, func(ctx context.Context) error {
			var err error
			at, err = env.Recovery.Wait(ctx, requested)
			return err
		})
		switch {
		case err == nil:
			ev = base
			ev.Type, ev.Time = results.EventLatencyRecov, at
			env.emit(ev)
		case errors.Is(err, ErrHardTimeout) && ctx.Err() == nil:
			// Slow recovery is a finding to report, not a broken run.
			env.warn(fmt.Sprintf("%s: latency did not recover within %s", what, t.Hard))
		default:
			return err
		}
	}
	ev = base
	ev.Type = results.EventStepEnd
	env.emit(ev)
	return nil
}

func specRacks(specs []provision.NodeSpec) string {
	r := make([]string, len(specs))
	for i, s := range specs {
		r[i] = s.Rack
	}
	return "racks " + strings.Join(r, ", ")
}

func runShrink(ctx context.Context, env *Env, s Step, drain bool) error {
	batches, err := ShrinkTargets(s, env.Cluster.Nodes())
	if err != nil {
		return err
	}
	for i, b := range batches {
		if err := shrinkBatch(ctx, env, s, b, drain, i+1, len(batches)); err != nil {
			return err
		}
	}
	return nil
}

func shrinkBatch(ctx context.Context, env *Env, s Step, nodes []*cluster.Node, drain bool, i, n int) error {
	cyc := env.Cycles.Start(env, s.Name)
	defer env.Cycles.End(env, cyc, s.Name)
	kind, verb := results.KindShrink, "decommissioning"
	if drain {
		kind, verb = results.KindDrain, "draining"
	}
	base := results.Event{Step: s.Name, Cycle: cyc, Kind: kind, Mode: mode(s)}
	members := len(env.Cluster.Nodes())
	move := env.Timeouts.dataBytes() * float64(len(nodes)) / float64(max(members, 1))
	what := fmt.Sprintf("%s %d/%d: %s %s", s.Name, i, n, verb, strings.Join(names(nodes), ", "))
	env.logf("%s", what)
	env.progress(what)

	ev := base
	ev.Type, ev.Nodes, ev.Time, ev.PlanSeconds = results.EventStepRequested, names(nodes), env.now(), s.planOf(i)
	requested := ev.Time
	env.emit(ev)
	// Announce the departures first: a leaving node's exit is not a failure.
	for _, nd := range nodes {
		env.Cluster.ExpectDeath(nd)
	}
	t := env.Timeouts.For(WaitLeave, move, s.Timeouts)
	var watch []*cluster.Node
	if !drain { // drain polls and logs its own progress
		watch = nodes
	}
	err := wait(ctx, env, what, t, watch, func(ctx context.Context) error {
		if drain {
			return drainNodes(ctx, env, s, base, nodes)
		}
		return decommissionAll(ctx, env, base, nodes)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	ev = base
	ev.Type, ev.Nodes = results.EventNodesNormal, names(nodes)
	env.emit(ev)
	for _, nd := range nodes {
		if err := env.Cluster.Remove(ctx, nd); err != nil {
			return fmt.Errorf("removing %s after it left: %w", nd.Name, err)
		}
		env.emit(results.Event{Type: results.EventNodeState, Node: nd.Name, State: "removed", Expected: true, Step: s.Name})
	}
	return finishTopology(ctx, env, s, base, requested, what, move, nil, nil)
}

// decommissionAll decommissions the nodes concurrently and waits for all,
// recording when each was requested and when each had left (node_op
// events). Before ScyllaDB 2026.1 the topology coordinator executes one
// node request at a time (scylladb service/topology_coordinator.cc), so a
// parallel step's nodes leave one after another; from 2026.1 they are
// drained together and only their final step is one at a time
// (results.ScaleIn). Nothing here waits on either order: each node's own
// decommission call returns when it has left.
func decommissionAll(ctx context.Context, env *Env, base results.Event, nodes []*cluster.Node) error {
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, nd := range nodes {
		ev := base
		ev.Type, ev.Node, ev.State = results.EventNodeOp, nd.Name, results.NodeOpRequested
		env.emit(ev)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := env.Cluster.Decommission(ctx, nd); err != nil {
				errs[i] = fmt.Errorf("decommissioning %s: %w", nd.Name, err)
				return
			}
			ev := base
			ev.Type, ev.Node, ev.State = results.EventNodeOp, nd.Name, results.NodeOpLeft
			env.emit(ev)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// eachNode runs fn for every node concurrently; the first failure cancels
// the others and is returned.
func eachNode(ctx context.Context, nodes []*cluster.Node, fn func(context.Context, *cluster.Node) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, nd); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}

// drainNodes evacuates the nodes (decommission) while polling what is left
// on them, logging every poll, until the decommissions return and nothing
// is left.
func drainNodes(ctx context.Context, env *Env, s Step, base results.Event, nodes []*cluster.Node) error {
	poll := s.PollInterval
	if poll <= 0 {
		poll = 2 * time.Second
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- decommissionAll(dctx, env, base, nodes) }()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	start := env.now()
	pollOnce := func() {
		var parts []string
		for _, nd := range nodes {
			l, err := env.Cluster.Load(ctx, nd)
			if err != nil {
				parts = append(parts, fmt.Sprintf("%s: unreadable (%v)", nd.Name, err))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: %.1f MB, %d tablets left", nd.Name, l.Bytes/1e6, l.Tablets))
		}
		msg := fmt.Sprintf("%s: drain progress after %s — %s", s.Name, env.now().Sub(start).Round(time.Second), strings.Join(parts, "; "))
		if env.Progress != nil {
			env.progress(msg) // prints the line too
		} else {
			env.logf("%s", msg)
		}
	}
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			env.logf("%s: drained %s in %s", s.Name, strings.Join(names(nodes), ", "), env.now().Sub(start).Round(time.Millisecond))
			return nil
		case <-tick.C:
			pollOnce()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
