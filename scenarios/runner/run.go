package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/local"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// ProviderOptions is what a provider factory gets besides the scenario.
type ProviderOptions struct {
	Dir        string // the run directory
	Binary     string // the elasticity executable (local nodes)
	BinaryArgs []string
	// FaultArgs adds arguments to one local node's command line (fault injection in tests).
	FaultArgs func(n provision.Node) []string
	Logf      func(format string, args ...any)
}

// ProviderFactory builds the backend of a run.
type ProviderFactory func(ctx context.Context, sc *scenarios.Scenario, o ProviderOptions) (provision.Provider, error)

var (
	providersMu sync.Mutex
	providers   = map[string]ProviderFactory{scenarios.BackendLocal: newLocalProvider}
)

// RegisterProvider makes a backend available to runs (docker, aws, static
// register themselves the same way local does).
func RegisterProvider(name string, f ProviderFactory) {
	providersMu.Lock()
	defer providersMu.Unlock()
	providers[name] = f
}

func lookupProvider(name string, extra map[string]ProviderFactory) (ProviderFactory, error) {
	if f, ok := extra[name]; ok {
		return f, nil
	}
	providersMu.Lock()
	defer providersMu.Unlock()
	if f, ok := providers[name]; ok {
		return f, nil
	}
	var names []string
	for n := range providers {
		names = append(names, n)
	}
	return nil, fmt.Errorf("backend %q is not available (have: %s)", name, strings.Join(names, ", "))
}

func newLocalProvider(ctx context.Context, sc *scenarios.Scenario, o ProviderOptions) (provision.Provider, error) {
	return local.New(local.Options{
		Binary:                 o.Binary,
		BinaryArgs:             o.BinaryArgs,
		BaseAddress:            sc.Local.BaseAddress,
		StorageScaleMiBPerGB:   sc.Local.StorageScaleMiBPerGB,
		OpsPerVCPU:             sc.Local.OpsPerVCPU,
		StreamMiBPerVCPU:       sc.Local.StreamMiBPerVCPU,
		BlockedReactorNotifyMS: sc.Local.BlockedReactorNotifyMS,
		FaultArgs:              o.FaultArgs,
		Logf:                   o.Logf,
	}), nil
}

// RunOptions control Run.
type RunOptions struct {
	Out    string
	Force  bool
	Stdout io.Writer
	Stderr io.Writer
	// Binary and BinaryArgs start local nodes (`Binary BinaryArgs... node ...`).
	Binary     string
	BinaryArgs []string
	// Backend overrides the scenario's backend.
	Backend string
	// Providers add or replace backends for this run.
	Providers map[string]ProviderFactory
	// FaultArgs injects faults into local nodes (tests).
	FaultArgs func(n provision.Node) []string
	// Finalize computes result.json and the reports (reporting.Finalize).
	Finalize func(dir, status, reason string) (*results.Result, error)
}

// Run executes a loaded scenario end to end; see Execute for the results.
func Run(ctx context.Context, sc *scenarios.Scenario, o RunOptions) (*results.Result, error) {
	if o.Backend != "" && o.Backend != sc.Backend {
		cp := *sc
		cp.Backend = o.Backend
		sc = &cp
	}
	factory, err := lookupProvider(sc.Backend, o.Providers)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	p, err := PlanFor(sc)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	p.Spec.Dir = o.Out
	deps := Deps{
		Finalize: o.Finalize,
		NewCluster: func(ctx context.Context, env *Env) (Cluster, error) {
			prov, err := factory(ctx, sc, ProviderOptions{Dir: env.Dir, Binary: o.Binary, BinaryArgs: o.BinaryArgs, FaultArgs: o.FaultArgs, Logf: env.Logf})
			if err != nil {
				return nil, fmt.Errorf("backend %s: %w", sc.Backend, err)
			}
			return newLiveCluster(prov, p.Spec, env, sc.Timeouts.NodeReady.D()), nil
		},
		NewDisk: func(ctx context.Context, env *Env, c Cluster) (Disk, error) {
			lc, ok := c.(*liveCluster)
			if !ok {
				return nil, fmt.Errorf("disk monitor: unexpected cluster type %T", c)
			}
			return newDiskMonitor(lc, env), nil
		},
		NewLoad: func(ctx context.Context, env *Env, c Cluster) (Load, error) {
			l, err := newStressLoad(ctx, sc, env, c)
			if err != nil {
				return nil, err
			}
			lc, ok := c.(*liveCluster)
			if !ok || loaderSpec(sc).Count == 0 {
				return l, nil
			}
			fl, err := newFleetLoad(ctx, sc, env, lc, l, o.Binary)
			if err != nil {
				l.Close()
				return nil, err
			}
			return fl, nil
		},
	}
	return Execute(ctx, p, Options{Out: o.Out, Force: o.Force, Stdout: o.Stdout, Stderr: o.Stderr, Deps: deps, TeardownTimeout: sc.Timeouts.Teardown.D()})
}

// NewRunID returns a short unique id: date, time and random suffix.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// PlanFor resolves a scenario into the runner's plan.
func PlanFor(sc *scenarios.Scenario) (*Plan, error) {
	y, err := sc.YAML()
	if err != nil {
		return nil, fmt.Errorf("rendering the resolved scenario: %w", err)
	}
	runID := NewRunID(time.Now())
	local := sc.Backend == scenarios.BackendLocal
	p := &Plan{
		Name:        sc.Name,
		Description: sc.Description,
		Backend:     sc.Backend,
		RunID:       runID,
		Spec: provision.ClusterSpec{
			RunID:        runID,
			Scenario:     sc.Name,
			ClusterName:  sc.Cluster.Name,
			Flavour:      sc.Cluster.Flavour,
			Version:      sc.Cluster.Version,
			Image:        sc.Cluster.Image,
			DC:           sc.Cluster.DC,
			Racks:        append([]string(nil), sc.Cluster.Racks...),
			NodesPerRack: sc.Cluster.NodesPerRack,
			InstanceType: sc.Cluster.InstanceType,
			ExtraArgs:    sc.Cluster.ExtraArgs,
			TTL:          sc.AWS.TTL.D(),
			Labels:       backendLabels(sc),
		},
		RF:             sc.Dataset.RF,
		Tablets:        sc.Cluster.TabletsInitial,
		WriteRatio:     sc.Workload.Mix.Write,
		ReadRatio:      sc.Workload.Mix.Read,
		Rate:           float64(sc.Workload.Rate),
		LoadPercent:    float64(sc.Workload.LoadPercent),
		ValueSizeBytes: int(sc.Dataset.ValueSize.Mean()),
		SteadyState:    sc.Scaled(sc.SteadyState.D()),
		FinalHold:      sc.Scaled(sc.FinalHold.D()),
		Thresholds:     sc.ResultThresholds(),
		TimeScale:      1,
		Emulated:       local,
		FillTimeout:    sc.Timeouts.Fill.D(),
		YAML:           y,
	}
	if local {
		p.TimeScale = sc.Local.TimeScale
		p.Limitations = append(p.Limitations,
			fmt.Sprintf("Emulated nodes (local backend): figures are shapes, not ScyllaDB's. Disks are %.2g MiB per catalog GB, %.0f ops/s per vCPU, %.0f MiB/s streaming per vCPU; scenario durations × %g.",
				sc.Local.StorageScaleMiBPerGB, sc.Local.OpsPerVCPU, sc.Local.StreamMiBPerVCPU, sc.Local.TimeScale),
			"All nodes and the load generator share one machine's CPUs: latency includes local scheduling noise.")
	}
	if dockerEmulator(sc) {
		// The emulator image on docker: the same shapes as the local backend, at real durations.
		p.Emulated = true
		p.Limitations = append(p.Limitations,
			fmt.Sprintf("Emulated nodes (docker backend, image %s): figures are shapes, not ScyllaDB's. Disks are %.2g MiB per catalog GB, %.0f ops/s per vCPU, %.0f MiB/s streaming per vCPU.",
				dockerImage(sc), sc.Local.StorageScaleMiBPerGB, sc.Local.OpsPerVCPU, sc.Local.StreamMiBPerVCPU))
	}
	for _, f := range sc.Dataset.Fill {
		p.Fills = append(p.Fills, Fill{Name: f.Name, TargetPercent: float64(f.TargetPercent), Hold: sc.Scaled(f.Hold.D())})
	}
	p.Timeouts = policyFor(sc)
	for _, st := range sc.Nemesis {
		ns, err := nemesisStep(sc, st)
		if err != nil {
			return nil, err
		}
		p.Nemesis = append(p.Nemesis, ns)
	}
	return p, nil
}

// realStreamMiBPerVCPU is the streaming bandwidth assumed on real backends.
const realStreamMiBPerVCPU = 25

// policyFor derives timeouts from streaming bandwidth and data volume,
// capped by the scenario's timeouts (which are the backend's defaults unless set).
func policyFor(sc *scenarios.Scenario) nemesis.Policy {
	it, _ := provision.LookupInstanceType(sc.Cluster.InstanceType)
	vcpus := float64(max(it.VCPUs, 1))
	pol := nemesis.Policy{Base: 5 * time.Minute, StreamBytesPerSec: realStreamMiBPerVCPU * (1 << 20) * vcpus}
	if sc.Backend == scenarios.BackendLocal {
		// Emulated nodes share this machine's CPUs with the load generator
		// (and whatever else runs): count on a quarter of the modelled bandwidth.
		pol.Base = 30 * time.Second
		pol.StreamBytesPerSec = sc.Local.StreamMiBPerVCPU * (1 << 20) * vcpus / 4
	}
	t := sc.Timeouts
	pol.Ceilings = map[string]time.Duration{
		nemesis.WaitStart:    t.NodeReady.D(),
		nemesis.WaitJoin:     t.NodeReady.D(),
		nemesis.WaitBalance:  t.DataBalanced.D(),
		nemesis.WaitRecovery: t.LatencyRecovered.D(),
		nemesis.WaitLeave:    t.Step.D(),
	}
	return pol
}

func nemesisStep(sc *scenarios.Scenario, st scenarios.Step) (nemesis.Step, error) {
	ns := nemesis.Step{Name: st.Name, Kind: st.ResultKind()}
	switch {
	case st.Grow != nil:
		ns.Mode, ns.InstanceType, ns.CountPerRack, ns.Racks = st.Grow.Mode, st.Grow.InstanceType, st.Grow.CountPerRack, st.Grow.Racks
	case st.Shrink != nil:
		ns.Mode, ns.CountPerRack, ns.Nodes, ns.Racks = st.Shrink.Mode, st.Shrink.CountPerRack, st.Shrink.Nodes, st.Shrink.Racks
	case st.Drain != nil:
		ns.CountPerRack, ns.Nodes, ns.Racks = st.Drain.CountPerRack, st.Drain.Nodes, st.Drain.Racks
		ns.Mode = nemesis.ModeSerial
		if st.Drain.Workers > 1 {
			ns.Mode = nemesis.ModeParallel
		}
	case st.Hold != nil:
		ns.Duration = sc.Scaled(st.Hold.Duration.D())
	case st.Hook != nil:
		ns.Command = append([]string{st.Hook.Command}, st.Hook.Args...)
		if len(st.Hook.Args) == 0 && strings.ContainsAny(st.Hook.Command, " \t|;&$") {
			ns.Command = []string{"sh", "-c", st.Hook.Command}
		}
		ns.HookEnv = st.Hook.Env
		ns.IgnoreFailure = st.Hook.IgnoreFailure
		ns.Duration = st.Hook.Timeout.D() // wall clock, never scaled
	default:
		return ns, fmt.Errorf("nemesis step %q has no kind", st.Name)
	}
	return ns, nil
}

// DefaultOut is the default results directory of a scenario.
func DefaultOut(name string, now time.Time) string {
	return filepath.Join("runs", fmt.Sprintf("%s-%s", name, now.Format("20060102-150405")))
}

// backendLabels are the scenario's extra tags/labels for the backend's resources.
func backendLabels(sc *scenarios.Scenario) map[string]string {
	if sc.Backend == scenarios.BackendAWS {
		return sc.AWS.Tags
	}
	return nil
}
