// Package nemesis changes a running cluster's topology under load — grow,
// shrink, drain — and runs holds and external hooks, recording for every
// topology step the moments a report needs: requested, nodes normal, data
// balanced, latency recovered, ended.
//
// The package talks to the cluster through the small Cluster interface so
// that it is independent of the backend and testable with fakes; the phase
// runner adapts the cluster package to it. Nodes are cluster.Node, the one
// node handle above provision.
package nemesis

import (
	"context"
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// Load is what a node still holds; drain polls it until nothing is left.
type Load struct {
	Bytes   float64
	Tablets int
}

// Empty reports whether nothing is left on the node.
func (l Load) Empty() bool { return l.Bytes <= 0 && l.Tablets <= 0 }

// Cluster is the part of a running cluster the nemesis acts on.
type Cluster interface {
	// Nodes lists the current members (normal or joining), oldest first.
	Nodes() []*cluster.Node
	// AddNodes starts new nodes that join the cluster; it returns once they
	// are started, not necessarily normal.
	AddNodes(ctx context.Context, step string, specs []provision.NodeSpec) ([]*cluster.Node, error)
	// WaitNormal returns when every given node is up and normal (UN).
	WaitNormal(ctx context.Context, nodes []*cluster.Node) error
	// Decommission asks a node to leave and returns when it has left.
	Decommission(ctx context.Context, n *cluster.Node) error
	// Remove releases a node that has left (stops the process, frees resources).
	Remove(ctx context.Context, n *cluster.Node) error
	// Quiesce returns when no topology work or tablet migration is in flight.
	Quiesce(ctx context.Context) error
	// Load reports what a node still holds.
	Load(ctx context.Context, n *cluster.Node) (Load, error)
	// ExpectDeath announces that a node is about to stop on purpose.
	ExpectDeath(n *cluster.Node)
}

// Step is one nemesis step, already resolved from the scenario.
type Step struct {
	Name         string
	Kind         results.StepKind
	Mode         string   // serial | parallel (topology steps)
	Racks        []string // grow: racks to add to; shrink/drain with CountPerRack: racks to remove from (every rack when empty)
	InstanceType string   // grow: instance type of the new nodes
	CountPerRack int      // grow/shrink/drain: nodes per rack
	Count        int      // shrink/drain: total nodes, when not per rack
	Nodes        []string // drain/decommission: explicit node names
	Duration     time.Duration
	// Hook.
	Command []string
	HookEnv map[string]string
	// IgnoreFailure keeps the run going when the hook fails (a warning is recorded).
	IgnoreFailure bool
	// Timeouts overrides the derived timeouts per wait (WaitJoin, WaitBalance ...).
	Timeouts map[string]Timeout
	// PollInterval is how often drain progress is polled (default 2 s).
	PollInterval time.Duration
	// Plan holds the plan's estimates of each batch's durations, by
	// duration name (recorded with the batch's step_requested event).
	Plan []map[string]float64
}

// planOf is the plan's estimate of batch i (1-based); nil when there is none.
func (s Step) planOf(i int) map[string]float64 {
	if i < 1 || i > len(s.Plan) {
		return nil
	}
	return s.Plan[i-1]
}

// Info summarises the step for the run_start setup.
func (s Step) Info() results.NemesisInfo {
	return results.NemesisInfo{Name: s.Name, Kind: s.Kind, Mode: s.Mode, InstanceType: s.InstanceType, CountPerRack: s.CountPerRack}
}

// IsTopology reports whether the step changes the cluster's membership.
func (s Step) IsTopology() bool { return s.Kind.IsTopology() }

// Recovery answers when latency was back within target after a moment
// (monitor.Recovery watches the workload's records).
type Recovery interface {
	// Wait returns when latency has recovered after since (a step's
	// request): the start of the first run of consecutive intervals within
	// target, as results.SustainedRecovery judges it; it blocks until there is one.
	Wait(ctx context.Context, since time.Time) (time.Time, error)
}

// Env is what steps share: the cluster, the event sink and the clocks.
type Env struct {
	Cluster Cluster
	Emit    func(results.Event)
	Logf    func(format string, args ...any)
	// Progress reports what the run is waiting for (terminal and progress events).
	Progress func(phase results.Phase, msg string)
	Cycles   *Cycles
	Recovery Recovery // nil: latency_recovered is not awaited
	// Cleanup: nodetool cleanup on the old nodes after a grow (vnodes), or
	// why it is skipped (tablets).
	Cleanup  Cleanup
	Timeouts Policy
	LogDir   string // hook output goes to LogDir/hooks
	// Heartbeat is how often long waits report progress (default DefaultHeartbeat).
	Heartbeat time.Duration
	// BalancePoll is the pause between the reads of the data-balanced check
	// (default 2 s).
	BalancePoll time.Duration
	Now         func() time.Time
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Env) emit(ev results.Event) {
	if ev.Time.IsZero() {
		ev.Time = e.now()
	}
	if e.Emit != nil {
		e.Emit(ev)
	}
}

func (e *Env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

func (e *Env) progress(msg string) {
	if e.Progress != nil {
		e.Progress(results.PhaseNemesis, msg)
	}
}

func (e *Env) warn(msg string) {
	e.logf("warning: %s", msg)
	e.emit(results.Event{Type: results.EventWarning, Phase: results.PhaseNemesis, Message: msg})
}

// Run executes one step. A topology step produces one cycle per serial
// operation or one for a parallel batch.
func Run(ctx context.Context, env *Env, s Step) error {
	if env.Cycles == nil {
		env.Cycles = &Cycles{}
	}
	var err error
	switch s.Kind {
	case results.KindGrow:
		err = runGrow(ctx, env, s)
	case results.KindShrink:
		err = runShrink(ctx, env, s, false)
	case results.KindDrain:
		err = runShrink(ctx, env, s, true)
	case results.KindHold:
		err = runHold(ctx, env, s)
	case results.KindHook:
		err = runHook(ctx, env, s)
	default:
		err = fmt.Errorf("unknown nemesis kind %q", s.Kind)
	}
	if err != nil {
		return fmt.Errorf("nemesis step %q (%s): %w", s.Name, s.Kind, err)
	}
	return nil
}

func runHold(ctx context.Context, env *Env, s Step) error {
	cyc := env.Cycles.Start(env, s.Name)
	defer env.Cycles.End(env, cyc, s.Name)
	env.emit(results.Event{Type: results.EventStepRequested, Step: s.Name, Cycle: cyc, Kind: results.KindHold})
	err := sleepCountdown(ctx, env, s.Duration, fmt.Sprintf("%s: holding", s.Name))
	env.emit(results.Event{Type: results.EventStepEnd, Step: s.Name, Cycle: cyc, Kind: results.KindHold})
	return err
}

// sleepCountdown waits d, reporting the time left every few seconds.
func sleepCountdown(ctx context.Context, env *Env, d time.Duration, what string) error {
	if d <= 0 {
		return nil
	}
	end := time.Now().Add(d)
	every := 10 * time.Second
	if d < time.Minute {
		every = 5 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	timer := time.NewTimer(d)
	defer timer.Stop()
	env.progress(fmt.Sprintf("%s, %s left", what, d.Round(time.Second)))
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		case <-tick.C:
			env.progress(fmt.Sprintf("%s, %s left", what, time.Until(end).Round(time.Second)))
		}
	}
}
