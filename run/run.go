package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// RunOptions control Run.
type RunOptions struct {
	Out    string
	Force  bool
	Stdout io.Writer
	Stderr io.Writer
	// Binary and BinaryArgs start local nodes (`Binary BinaryArgs... node ...`).
	Binary     string
	BinaryArgs []string
	// FaultArgs injects faults into emulated nodes (tests).
	FaultArgs func(n provision.Node) []string
	// Finalize computes result.json and the reports (reporting.Finalize).
	Finalize func(dir, status, reason string) (*results.Result, error)
	// Baseline is what the plan's baseline rules are judged against.
	Baseline *results.Baseline
}

// Run executes a resolved plan end to end on its backend; see Execute for the results.
func Run(ctx context.Context, p *plan.Plan, o RunOptions) (*results.Result, error) {
	be, err := provision.Lookup(p.Backend)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	// live is the cluster NewCluster made: the disk monitor and the
	// loaders read its nodes and its backend, so they are wired with it
	// here rather than found again behind the Cluster interface.
	var live *liveCluster
	deps := Deps{
		Finalize: o.Finalize,
		NewCluster: func(ctx context.Context, env *Env) (Cluster, error) {
			prov, err := be.New(ctx, &p.Provision, provision.BuildOptions{Dir: env.Dir, Binary: o.Binary, BinaryArgs: o.BinaryArgs, FaultArgs: o.FaultArgs, Logf: env.Logf})
			if err != nil {
				return nil, fmt.Errorf("backend %s: %w", p.Backend, err)
			}
			spec := p.Provision.Cluster
			spec.RunID, spec.Dir = env.RunID, env.Dir
			live = newLiveCluster(prov, spec, env, p.Waits.NodeReady)
			return live, nil
		},
		NewDisk: func(ctx context.Context, env *Env, c Cluster) (Disk, error) {
			return newDiskMonitor(live, env), nil
		},
		NewLoad: func(ctx context.Context, env *Env, c Cluster) (Load, error) {
			l, err := newStressLoad(ctx, env, c)
			if err != nil {
				return nil, err
			}
			if p.Load.Loaders.Count == 0 {
				return l, nil
			}
			fl, err := newFleetLoad(ctx, env, live, l, o.Binary)
			if err != nil {
				l.Close()
				return nil, err
			}
			return fl, nil
		},
	}
	return Execute(ctx, p, Options{Out: o.Out, Force: o.Force, Stdout: o.Stdout, Stderr: o.Stderr, Deps: deps, TeardownTimeout: p.Waits.Teardown, Baseline: o.Baseline})
}

// DefaultRunsDir holds the run directories by default (and is the history
// that baseline rules look previous runs up in).
const DefaultRunsDir = "runs"

// NewRunID returns a short unique id: date, time and random suffix.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// DefaultOut is the default results directory of a scenario.
func DefaultOut(name string, now time.Time) string {
	return filepath.Join(DefaultRunsDir, fmt.Sprintf("%s-%s", name, now.Format("20060102-150405")))
}
