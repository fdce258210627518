package nemesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
)

// Wait names, used for timeout overrides and in messages.
const (
	WaitStart    = "start"             // new nodes started by the backend
	WaitJoin     = "nodes_normal"      // new nodes up and normal
	WaitLeave    = "decommission"      // nodes left (decommission or drain)
	WaitBalance  = "data_balanced"     // quiesce: no migrations in flight
	WaitRecovery = "latency_recovered" // P99 back within target
	WaitHook     = "hook"              // external command
	WaitCleanup  = "cleanup"           // nodetool cleanup on the old nodes after a grow
)

// Timeout is the pair of limits of one wait: past Soft a warning is
// recorded, past Hard the step fails.
type Timeout struct {
	Soft time.Duration `yaml:"soft" json:"soft"`
	Hard time.Duration `yaml:"hard" json:"hard"`
}

// Policy derives timeouts from the data a wait has to move and the
// streaming bandwidth, as SCT's adaptive timeouts do: a wait that streams
// 400 GB must not be cut off at the limit that suits 4 GB.
type Policy struct {
	// DataBytes returns the cluster's current data volume (all replicas).
	DataBytes func() float64
	// StreamBytesPerSec is the streaming bandwidth one operation can count on.
	StreamBytesPerSec float64
	// Base is the fixed part of every wait (start-up, gossip, schema pull).
	Base time.Duration
	// Ceilings cap the derived hard timeout per wait name (a backend's
	// default limits): derived values adapt below them.
	Ceilings map[string]time.Duration
	// Overrides replace derived timeouts per wait name (from the scenario).
	Overrides map[string]Timeout
}

// Defaults when a Policy leaves them zero.
const (
	DefaultBase              = 60 * time.Second
	DefaultStreamBytesPerSec = 50e6
	// softFactor leaves room for streaming at half the expected bandwidth;
	// hardFactor past that declares the operation stuck.
	softFactor = 2.0
	hardFactor = 4.0
)

// Derive returns the timeouts of a wait that moves moveBytes.
func (p Policy) Derive(moveBytes float64) Timeout {
	base := p.Base
	if base <= 0 {
		base = DefaultBase
	}
	bw := p.StreamBytesPerSec
	if bw <= 0 {
		bw = DefaultStreamBytesPerSec
	}
	if moveBytes < 0 {
		moveBytes = 0
	}
	stream := time.Duration(moveBytes / bw * float64(time.Second))
	soft := base + time.Duration(softFactor*float64(stream))
	return Timeout{Soft: soft, Hard: time.Duration(hardFactor * float64(soft))}
}

// For returns the timeouts of a named wait: the step's override, else the
// policy's override, else the derived value capped by the wait's ceiling.
// A partial override (only Soft or only Hard) keeps the derived other half;
// Soft never exceeds Hard.
func (p Policy) For(wait string, moveBytes float64, step map[string]Timeout) Timeout {
	t := p.Derive(moveBytes)
	if c, ok := p.Ceilings[wait]; ok && c > 0 && t.Hard > c {
		t.Hard = c
	}
	for _, o := range []map[string]Timeout{p.Overrides, step} {
		if ov, ok := o[wait]; ok {
			if ov.Soft > 0 {
				t.Soft = ov.Soft
			}
			if ov.Hard > 0 {
				t.Hard = ov.Hard
			}
		}
	}
	if t.Soft > t.Hard {
		t.Soft = t.Hard
	}
	return t
}

func (p Policy) dataBytes() float64 {
	if p.DataBytes == nil {
		return 0
	}
	return p.DataBytes()
}

// ErrHardTimeout marks a wait that passed its hard timeout.
var ErrHardTimeout = errors.New("hard timeout")

// wait runs fn under the hard timeout and records a warning when the soft
// timeout passes first. fn must honour its context.
//
// Every heartbeat it reports that it is still waiting, with what the watched
// nodes hold (the data still to arrive on new nodes or to leave old ones).
func wait(ctx context.Context, env *Env, what string, t Timeout, watch []*cluster.Node, fn func(ctx context.Context) error) error {
	hctx, cancel := context.WithTimeoutCause(ctx, t.Hard, ErrHardTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(hctx) }()
	soft := time.NewTimer(t.Soft)
	defer soft.Stop()
	every := env.Heartbeat
	if every <= 0 {
		every = DefaultHeartbeat
	}
	beat := time.NewTicker(every)
	defer beat.Stop()
	start := time.Now()
	for {
		select {
		case <-beat.C:
			env.progress(fmt.Sprintf("%s: still waiting after %s%s", what, time.Since(start).Round(time.Second), loads(hctx, env, watch)))
		case err := <-done:
			if err != nil && context.Cause(hctx) == ErrHardTimeout && ctx.Err() == nil {
				return fmt.Errorf("%s: still not done after the hard timeout of %s: %w", what, t.Hard, ErrHardTimeout)
			}
			return err
		case <-soft.C:
			env.warn(fmt.Sprintf("%s is taking longer than the soft timeout of %s (hard timeout %s)", what, t.Soft, t.Hard))
		case <-hctx.Done():
			// Give fn a moment to notice; never hang on one that does not.
			select {
			case err := <-done:
				if err == nil || ctx.Err() != nil {
					return err
				}
			case <-time.After(5 * time.Second):
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: still not done after the hard timeout of %s: %w", what, t.Hard, ErrHardTimeout)
		}
	}
}

// DefaultHeartbeat is how often a long wait says it is still waiting.
const DefaultHeartbeat = 15 * time.Second

// loads describes what the nodes hold, e.g. "; node-4: 52.1 MB, 128 tablets".
func loads(ctx context.Context, env *Env, nodes []*cluster.Node) string {
	out := ""
	for _, n := range nodes {
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		l, err := env.Cluster.Load(lctx, n)
		cancel()
		if err != nil {
			continue
		}
		out += fmt.Sprintf("; %s: %.1f MB, %d tablets", n.Name, l.Bytes/1e6, l.Tablets)
	}
	return out
}
