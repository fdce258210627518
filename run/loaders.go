package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/fleet"
)

// loaderBinary is the executable the loaders run `stress` with: the runner
// itself for local loaders; for remote ones aws.loader_binary, else the slim
// elasticity-loader built next to the runner (make build), else the runner.
func loaderBinary(p *plan.Plan, runner string, remote bool) (string, error) {
	if !remote {
		return runner, nil
	}
	if p.Load.LoaderBinary != "" {
		return p.Load.LoaderBinary, nil
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", fmt.Errorf("aws.loader_binary: the runner is %s/%s and cannot copy itself to linux/amd64 loaders; build one with GOOS=linux GOARCH=amd64 go build -o elasticity-loader-linux ./cmd/elasticity-loader and set aws.loader_binary", runtime.GOOS, runtime.GOARCH)
	}
	if runner == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("finding this executable to copy to the loaders: %w", err)
		}
		runner = exe
	}
	// The loader binary links only the load generator: a fifth of the
	// runner's size, a third of its resident memory on the loaders.
	if slim := filepath.Join(filepath.Dir(runner), slimLoader); isExecutable(slim) {
		return slim, nil
	}
	return runner, nil
}

// slimLoader is the file name of cmd/elasticity-loader's binary.
const slimLoader = "elasticity-loader"

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// fleetLoad runs the fills, the calibration and the workload on loader
// machines (or processes) through stress/fleet, and merges what they measure
// into the run's latency stream. The schema is still created from the runner.
type fleetLoad struct {
	*stressLoad
	f     *fleet.Fleet
	shell fleet.Shell
	hosts []string
}

// newFleetLoad launches the loaders the scenario asks for and installs
// elasticity on them; it returns nil when the run has no loaders.
func newFleetLoad(ctx context.Context, env *Env, lc *liveCluster, base *stressLoad, binary string) (*fleetLoad, error) {
	spec := env.Plan.Load.Loaders
	if spec.Count <= 0 {
		return nil, nil
	}
	ll, ok := lc.p.(provision.LoaderLauncher)
	if !ok {
		return nil, fmt.Errorf("backend %s cannot start loader machines", lc.p.Name())
	}
	env.Logf("loaders: starting %d × %s to run the workload (merged into latency.jsonl; each loader's own records in loaders/)", spec.Count, orDefault(spec.InstanceType, "process"))
	loaders, err := ll.LaunchLoaders(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("starting the loaders: %w", err)
	}
	remote := false
	for _, l := range loaders {
		remote = remote || !l.Local
	}
	var shell fleet.Shell = fleet.LocalShell{}
	if remote {
		sh, err := sshShell(env)
		if err != nil {
			return nil, fmt.Errorf("loaders: %w", err)
		}
		shell = sh
	}
	bin, err := loaderBinary(env.Plan, binary, remote)
	if err != nil {
		closeShell(shell)
		return nil, err
	}
	env.Logf("loaders: running %s stress", bin)
	f, err := fleet.New(fleet.Options{Loaders: loaders, Shell: shell, Binary: bin, Dir: env.Dir, Logf: env.Logf,
		RemotePath: "/tmp/elasticity-" + env.RunID + "/elasticity"})
	if err != nil {
		closeShell(shell)
		return nil, err
	}
	if err := f.Install(ctx); err != nil {
		closeShell(shell)
		return nil, err
	}
	return &fleetLoad{stressLoad: base, f: f, shell: shell, hosts: lc.loaderHosts()}, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func closeShell(s fleet.Shell) {
	if c, ok := s.(io.Closer); ok {
		_ = c.Close()
	}
}

// loaderHosts are the contact points as loaders see them: private addresses
// inside a cloud network.
func (lc *liveCluster) loaderHosts() []string {
	var out []string
	for _, n := range lc.c.Nodes() {
		if lc.c.State(n) != cluster.StateNormal {
			continue
		}
		out = append(out, orDefault(n.PrivateAddress, n.Address))
	}
	return out
}

// share is loader i's part of job, its records named after the loader.
func (l *fleetLoad) share(job stress.Job, i int, source string) stress.Job {
	j := job.Share(i, l.f.Len())
	j.Source = source
	return j
}

func (l *fleetLoad) Fill(ctx context.Context, upTo int64, done func() bool, sink func(results.LatencyRecord), progress func(int64)) (int64, error) {
	n := l.f.Len()
	base := l.keys.Load()
	if upTo > 0 && upTo <= base {
		return base, nil
	}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var written atomic.Int64
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-fctx.Done():
				return
			case <-t.C:
				progress(base + written.Load())
				if done() {
					stop()
					return
				}
			}
		}
	}()
	job := fillJob(l.p, l.hosts, base)
	job.DC = l.dc // the nodes' own DC (Ec2Snitch names it on AWS)
	totals, err := l.f.Stream(fctx, func(i int) stress.Job {
		j := l.share(job, i, fmt.Sprintf("fill-loader-%d", i+1))
		if upTo > base {
			// Each loader stops itself at its part of the keys (it checks
			// every 50 ms; the merged records arrive a second late).
			j.Keys = fillShareKeys(upTo-base, i, n)
		}
		return j
	}, func(r results.LatencyRecord) {
		written.Add(r.Count)
		sink(r)
	})
	// Every key below base + n·(fewest attempted by a loader) was written
	// (failed writes aside, as with one loader): reads stay among those.
	var least int64
	for i, t := range totals {
		if i == 0 || t.Attempted() < least {
			least = t.Attempted()
		}
	}
	keys := base + int64(n)*least
	l.keys.Store(keys)
	progress(keys)
	if ctx.Err() != nil {
		return keys, nil
	}
	return keys, err
}

// fillShareKeys is loader i of n's part of k keys written together: it
// writes every n-th key from the i-th, so those below k (at least one, as
// 0 would mean no limit).
func fillShareKeys(k int64, i, n int) int64 {
	return max(1, (k-int64(i)+int64(n)-1)/int64(n))
}

func (l *fleetLoad) Calibrate(ctx context.Context) (results.CapacityProbe, error) {
	// The loaders probe together: each up to its share of the concurrency.
	job := calibrationJob(l.p, l.hosts, l.keys.Load(), l.calibrationCeiling())
	job.DC = l.dc // the nodes' own DC (Ec2Snitch names it on AWS)
	job.CalibrateMaxConcurrency = max(64, job.CalibrateMaxConcurrency/l.f.Len())
	cals, err := l.f.Calibrate(ctx, func(i int) stress.Job {
		j := l.share(job, i, fmt.Sprintf("calibration-loader-%d", i+1))
		j.CalibrateStartConcurrency = l.kneeOf(i)
		return j
	})
	l.calibrated(cals)
	for i, c := range cals {
		l.env.Logf("calibration: loader-%d: %.0f ops/s (concurrency %d)", i+1, c.MaxOpsPerSec, c.Concurrency)
	}
	if err != nil && ctx.Err() != nil {
		return results.CapacityProbe{}, err
	}
	return l.capacity(cals, err)
}

func (l *fleetLoad) Run(ctx context.Context, rate float64, sink func(results.LatencyRecord)) error {
	job := workloadJob(l.p, l.hosts, l.keys.Load(), rate)
	job.DC = l.dc // the nodes' own DC (Ec2Snitch names it on AWS)
	_, err := l.f.Stream(ctx, func(i int) stress.Job {
		return l.share(job, i, fmt.Sprintf("loader-%d", i+1))
	}, sink)
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("the loaders stopped before the run ended")
	}
	return err
}

func (l *fleetLoad) Close() {
	l.stressLoad.Close()
	closeShell(l.shell)
}
