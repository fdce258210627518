package local

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
	"github.com/elasticity-dev/elasticity/provision"
)

// Settings is the scenario's local section: the emulator's scale model
// (capacities come from the instance catalog scaled by these factors; the
// docker backend's image double and a simulated EC2 region use it too) and
// where this backend's node processes listen and keep their data.
type Settings struct {
	// StorageScaleMiBPerGB: an emulated node's disk is catalog storage GB × this many MiB.
	StorageScaleMiBPerGB float64 `yaml:"storage_scale_mib_per_gb"`
	// OpsPerVCPU: replica operations per second one emulated vCPU serves
	// before queueing (a write costs RF of them, a read one per replica contacted).
	OpsPerVCPU float64 `yaml:"ops_per_vcpu"`
	// StreamMiBPerVCPU: streaming bandwidth (MiB/s) per vCPU of the slower end of a migration.
	StreamMiBPerVCPU float64 `yaml:"stream_mib_per_vcpu"`
	// TimeScale multiplies every scenario duration (steady state, holds, calibration, duration thresholds).
	TimeScale float64 `yaml:"time_scale"`
	// BaseAddress is the first node's loopback address; later nodes count up (ccm style).
	BaseAddress string `yaml:"base_address"`
	// BlockedReactorNotifyMS: stalls at least this long are logged ("Reactor stalled for N ms").
	BlockedReactorNotifyMS int `yaml:"blocked_reactor_notify_ms"`
	// DataDir is where the emulated nodes keep their data, deleted with
	// them: "memory" (the default) is a RAM-backed file system (/dev/shm)
	// while it has room for a node's emulated disk, else the run directory;
	// "run" is the run directory (<out>/nodes/<node>/data); anything else
	// is a directory that holds one directory per run.
	DataDir string `yaml:"data_dir"`
	// Loaders > 0 runs the workload in that many `elasticity stress`
	// processes whose records are merged, as aws.loader_count does with
	// machines; 0 runs it inside the runner.
	Loaders int `yaml:"loaders,omitempty"`
	// Process is how the nodes run: "shared" (the default), every node of
	// the cluster in one process with its internode messages in memory
	// (each node keeping its listeners, data, log and lifecycle), which
	// costs about two thirds of the node CPU per operation of "per-node",
	// a process each (issue 45).
	Process string `yaml:"process,omitempty"`
}

// DefaultSettings is the emulator's scale model (the same numbers as the
// bare `elasticity node` defaults in package emulator). With these numbers
// configs/90pct-scaleout.yaml (3 × i4i.large written to 90%, one
// i4i.4xlarge added per rack) runs in about two and a half minutes on a
// 2-core machine: a 468 GB i4i.large becomes a 93.6 MiB disk (the fill and
// every join's streaming are data-bound) and 30 real minutes become 4.5 s
// (holds, the steady state, the final hold).
var DefaultSettings = Settings{
	StorageScaleMiBPerGB:   0.2,
	OpsPerVCPU:             2000,
	StreamMiBPerVCPU:       4,
	TimeScale:              0.0025,
	BaseAddress:            "127.0.0.2",
	BlockedReactorNotifyMS: 25,
	DataDir:                DataMemory,
	Process:                ProcessShared,
}

// local.process's values.
const (
	ProcessPerNode = "per-node"
	ProcessShared  = "shared"
)

// local.data_dir's named places.
const (
	// DataMemory: a RAM-backed file system while it has room for a
	// node's emulated disk, else the run directory.
	DataMemory = "memory"
	// DataRun: the run directory (<out>/nodes/<node>/data).
	DataRun = "run"
)

// Default fills what the scenario left unset.
func (o *Settings) Default(s *provision.Section) {
	d := DefaultSettings
	for _, f := range []struct {
		field string
		p     *float64
		v     float64
	}{{"storage_scale_mib_per_gb", &o.StorageScaleMiBPerGB, d.StorageScaleMiBPerGB}, {"ops_per_vcpu", &o.OpsPerVCPU, d.OpsPerVCPU},
		{"stream_mib_per_vcpu", &o.StreamMiBPerVCPU, d.StreamMiBPerVCPU}, {"time_scale", &o.TimeScale, d.TimeScale}} {
		if !s.IsSet(f.field) {
			*f.p = f.v
		}
	}
	if o.BaseAddress == "" {
		o.BaseAddress = d.BaseAddress
	}
	if o.DataDir == "" {
		o.DataDir = d.DataDir
	}
	if o.Process == "" {
		o.Process = d.Process
	}
	if !s.IsSet("blocked_reactor_notify_ms") {
		o.BlockedReactorNotifyMS = d.BlockedReactorNotifyMS
	}
}

// Validate checks the scale model always (other backends' emulated nodes
// use it), the addresses and data directory when this backend runs.
func (o *Settings) Validate(s *provision.Section) {
	for _, f := range []struct {
		field string
		v     float64
	}{{"storage_scale_mib_per_gb", o.StorageScaleMiBPerGB}, {"ops_per_vcpu", o.OpsPerVCPU}, {"stream_mib_per_vcpu", o.StreamMiBPerVCPU}} {
		if f.v <= 0 {
			s.Problem(f.field, "must be > 0")
		}
	}
	if o.TimeScale <= 0 || o.TimeScale > 1 {
		s.Problem("time_scale", "must be in (0, 1], got %v", o.TimeScale)
	}
	if ip := net.ParseIP(o.BaseAddress); ip == nil || ip.To4() == nil {
		s.Problem("base_address", "%q is not an IPv4 address", o.BaseAddress)
	} else if s.Selected && !ip.IsLoopback() {
		s.Problem("base_address", "%q is not a loopback address (127.0.0.0/8)", o.BaseAddress)
	}
	if s.Selected {
		if err := CheckDataDir(o.DataDir); err != nil {
			s.Problem("data_dir", "%v", err)
		}
	}
	if o.Process != ProcessPerNode && o.Process != ProcessShared {
		s.Problem("process", "must be %q or %q, got %q", ProcessPerNode, ProcessShared, o.Process)
	}
	if o.Loaders < 0 || o.Loaders > 64 {
		s.Problem("loaders", "must be within 0..64")
	}
	if o.BlockedReactorNotifyMS < 1 {
		s.Problem("blocked_reactor_notify_ms", "must be >= 1")
	}
}

// Configure gives every backend the emulator's scale model; a local run
// its loader processes and the nodes' data directory.
func (o *Settings) Configure(c *provision.Config, selected bool) {
	c.Emulator = o.Scale()
	if selected {
		c.Loaders = provision.LoaderSpec{Count: o.Loaders}
		c.NodeData = o.DataDir
	}
}

// Scale is the emulator's scale model of the section.
func (o *Settings) Scale() provision.EmulatorScale {
	return provision.EmulatorScale{StorageScaleMiBPerGB: o.StorageScaleMiBPerGB, OpsPerVCPU: o.OpsPerVCPU,
		CoordinatorOps: capacity.CoordinatorUnits, StreamMiBPerVCPU: o.StreamMiBPerVCPU, TimeScale: o.TimeScale, BlockedReactorNotifyMS: o.BlockedReactorNotifyMS}
}

// ScenarioTimeScale: a local run's scenario time is scaled by local.time_scale.
func (o *Settings) ScenarioTimeScale() (float64, string) { return o.TimeScale, "time_scale" }

// CheckDataDir reports what is wrong with a local.data_dir value: it
// is DataMemory, DataRun or a directory (one that does not exist
// yet is created).
func CheckDataDir(v string) error {
	switch v {
	case DataMemory, DataRun:
		return nil
	case "":
		return fmt.Errorf("must be %q, %q or a directory", DataMemory, DataRun)
	}
	fi, err := os.Stat(v)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%q: %w", v, err)
	case !fi.IsDir():
		return fmt.Errorf("%q is not a directory", v)
	}
	return nil
}

// settings is the local section of a configuration (the defaults when the
// plan was built without one, as tests do).
func settings(c *provision.Config) *Settings {
	return provision.SettingsOf(c, func() *Settings {
		d := DefaultSettings
		return &d
	})
}
