package provision

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/preflight"
)

// Backend is one backend's registration, as roachprod's providers register
// themselves: every fact about a backend that the rest of the framework
// needs comes from here, and each backend package registers its own entry
// from an init function. Package provision/all imports every backend.
type Backend struct {
	// Name is the scenario's backend value (local, docker, aws, static)
	// and the key of its own section.
	Name string
	// NewOptions returns the backend's section with nothing set: a pointer
	// to its own struct, which the scenario loader decodes (optional: no
	// section).
	NewOptions func() Options
	// Model gives the backend's facts for one configuration: emulated or
	// not, capacity and streaming figures, estimate constants (docker is
	// emulated only with the emulator image).
	Model func(c *Config) Model
	// New builds the provider of one run.
	New func(ctx context.Context, c *Config, o BuildOptions) (Provider, error)
	// PlanLines are extra lines of `elasticity plan` (optional).
	PlanLines func(c *Config, f PlanFacts) []PlanLine
	// Sweeper builds what `elasticity gc` uses (optional: nothing to collect).
	Sweeper func(ctx context.Context, o SweepOptions) (Sweeper, error)
	// Preflight adds the backend's part of the pre-flight checks (optional):
	// what a run of c takes of this machine (disk, memory) and the checks of
	// the backend's tools, images and credentials. binary is the elasticity
	// executable of the run.
	Preflight func(c *Config, f PlanFacts, binary string, in *preflight.Input)
}

// BuildOptions is what a backend gets besides its configuration.
type BuildOptions struct {
	Dir        string // the run directory
	Binary     string // the elasticity executable (emulated nodes)
	BinaryArgs []string
	// FaultArgs adds arguments to one emulated node's command line (fault injection in tests).
	FaultArgs func(n Node) []string
	Logf      func(format string, args ...any)
}

// SweepOptions configure a gc sweeper.
type SweepOptions struct {
	Region string // aws: the region (default: the standard AWS configuration)
}

// RunSweeper is an optional capability of a Sweeper: remove every resource
// of one run, whatever its keep-until.
type RunSweeper interface {
	SweepRun(ctx context.Context, runID string, dryRun bool) ([]Resource, error)
}

// PlanFacts are the plan's figures a backend's plan lines may use.
type PlanFacts struct {
	// InstanceCounts is every database node the run starts (grown ones
	// included) per instance type.
	InstanceCounts   map[string]int
	EstimatedSeconds float64
	// Grown are the nodes the nemesis adds, in order.
	Grown []NodeGroup
	// DiskBytes is the disks of every database node the run starts (the
	// model's size: scaled where it scales them).
	DiskBytes int64
	// MaxFillPercent is the highest fill target (the fullest node's, or
	// the cluster's average), 0 without a fill.
	MaxFillPercent float64
}

// NodeGroup is Count nodes of one instance type in one rack.
type NodeGroup struct {
	Rack, InstanceType string
	Count              int
}

// PlanLine is one extra line of a plan.
type PlanLine struct {
	Section string `json:"section"`
	Label   string `json:"label"`
	Value   string `json:"value"`
}

// DefaultBackend runs a scenario that names none: emulated nodes as
// processes on this machine.
const DefaultBackend = "local"

var (
	registryMu sync.Mutex
	registry   = map[string]Backend{}
)

// Register adds a backend; it panics on a duplicate or incomplete entry
// (a programming error, caught by any test that imports the backend).
func Register(b Backend) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if b.Name == "" || b.Model == nil || b.New == nil {
		panic(fmt.Sprintf("provision.Register: backend %q needs a name, a model and a constructor", b.Name))
	}
	if _, dup := registry[b.Name]; dup {
		panic("provision.Register: backend " + b.Name + " registered twice")
	}
	registry[b.Name] = b
}

// Lookup finds a registered backend.
func Lookup(name string) (Backend, error) {
	registryMu.Lock()
	b, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return Backend{}, fmt.Errorf("backend %q is not available (have: %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// Names lists the registered backends, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Model is what a backend's nodes are like, for estimates, timeouts and
// the report's setup line. One place for these figures: `plan` estimates
// and `run` executes with the same ones.
type Model struct {
	// Emulated: the nodes are the embedded emulator; figures are shapes, not ScyllaDB's.
	Emulated bool
	// StorageScaleMiBPerGB scales an emulated node's disk (catalog GB × this
	// many MiB); 0 is the catalog's real size.
	StorageScaleMiBPerGB float64
	// OpsPerVCPU is replica operations per second one vCPU serves.
	OpsPerVCPU float64
	// CoordinatorOps is what coordinating one request costs, in replica
	// operations (0: not counted).
	CoordinatorOps float64
	// StreamMiBPerVCPU is the streaming bandwidth per vCPU of the slower end of a migration.
	StreamMiBPerVCPU float64
	// FillMiBPerVCPU is the on-disk bulk write bandwidth per vCPU; 0 means
	// fills are bounded by OpsPerVCPU like the workload.
	FillMiBPerVCPU float64
	// TimeScale multiplies scenario durations (1 = real time).
	TimeScale float64
	// SetupSeconds estimates starting one batch of nodes; RecoverySeconds
	// the wait for latency to recover after a topology batch.
	SetupSeconds    float64
	RecoverySeconds float64
	// TimeoutBase is the fixed part of every derived wait timeout;
	// TimeoutStreamShare is the part of StreamMiBPerVCPU the timeouts count on.
	TimeoutBase        time.Duration
	TimeoutStreamShare float64
	// Limitations are stated in every report of a run on this backend.
	Limitations []string
}

// NodeDiskBytes is one node's disk: catalog storage, scaled when emulated.
func (m Model) NodeDiskBytes(it InstanceType) float64 {
	if m.StorageScaleMiBPerGB > 0 {
		return it.StorageGB * m.StorageScaleMiBPerGB * (1 << 20)
	}
	return it.StorageGB * 1e9
}

// Figures of real ScyllaDB nodes, used for estimates and timeouts on every
// backend that runs the real database.
const (
	// RealOpsPerVCPU: replica ops per vCPU; ≈ 7,500 client ops/s for
	// 3 × i4i.large at RF=3, QUORUM 1:1 (reference run).
	RealOpsPerVCPU = 3000
	// RealStreamMiBPerVCPU: the reference scale-out
	// (shared/reference/scaleout-at-90pct-results.txt) moved ≈1 TiB off
	// 3 × i4i.large (6 vCPUs) in ≈35 min: ≈ 80 MiB/s per vCPU of the
	// sending side. Estimates use it as is; timeouts count on a third of it
	// (RealTimeoutStreamShare).
	RealStreamMiBPerVCPU = 75
	// RealTimeoutStreamShare: a decommission streams from one node and is
	// slower than a tablet scale-out; scylla-cluster-tests' adaptive
	// decommission timeout (sdcm/utils/adaptive_timeouts, "almost 9h for
	// 1TB", 0.03 s per MB) assumes ≈ 33 MB/s per node, about a third of the
	// reference's rate for an i4i.large. Waits derive their timeouts from
	// 25 MiB/s per vCPU, with their own margins (soft 2×, hard 4×) on top.
	RealTimeoutStreamShare = 1.0 / 3
	// RealFillMiBPerVCPU: ≈ 200 MB/s on disk for 3 × i4i.large: the
	// reference's 70% fill took 1h21m.
	RealFillMiBPerVCPU = 32
)

// RealModel is the model of real database nodes that take setupSeconds to start.
func RealModel(setupSeconds float64) Model {
	return Model{
		OpsPerVCPU: RealOpsPerVCPU, StreamMiBPerVCPU: RealStreamMiBPerVCPU, FillMiBPerVCPU: RealFillMiBPerVCPU,
		TimeScale: 1, SetupSeconds: setupSeconds, RecoverySeconds: 300,
		TimeoutBase: 5 * time.Minute, TimeoutStreamShare: RealTimeoutStreamShare,
	}
}

// EmulatedModel is the model of emulated nodes with the given scale.
func EmulatedModel(e EmulatorScale) Model {
	return Model{
		Emulated:             true,
		StorageScaleMiBPerGB: e.StorageScaleMiBPerGB,
		OpsPerVCPU:           e.OpsPerVCPU,
		CoordinatorOps:       e.CoordinatorOps,
		StreamMiBPerVCPU:     e.StreamMiBPerVCPU,
		TimeScale:            e.TimeScale,
		SetupSeconds:         5,
		RecoverySeconds:      15,
		TimeoutBase:          30 * time.Second,
		// Emulated nodes share this machine's CPUs with the load generator
		// (and whatever else runs): count on a quarter of the modelled bandwidth.
		TimeoutStreamShare: 0.25,
	}
}
