package provision

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// Config is the backend's part of a resolved plan: everything a backend is
// built from. plan.Resolve fills it in, the only place that maps a
// scenario's sections to backend settings; backends never see the scenario.
type Config struct {
	Backend string
	// Env is the environment the plan was resolved in: what a backend reads
	// of it (the SDK's endpoint, a runner address) it reads here, never from
	// the process, so that resolving a plan is a function of the scenario
	// and this environment (as k6's GlobalState injects env).
	Env Env
	// Cluster is the initial cluster (Dir is set by the runner per run).
	Cluster ClusterSpec
	// Loaders are the load-generator machines or processes asked for (Count 0: none).
	Loaders LoaderSpec
	// Emulator is the emulated node's scale model (the scenario's local
	// section), for local and for docker with the emulator image.
	Emulator EmulatorScale
	Local    LocalConfig
	Docker   DockerConfig
	AWS      AWSConfig
	Static   StaticConfig
}

// Env looks an environment variable up ("" when unset).
type Env func(key string) string

// Get is the variable's value; a nil Env is an empty environment.
func (e Env) Get(key string) string {
	if e == nil {
		return ""
	}
	return e(key)
}

// EmulatorScale is how an emulated node scales the catalog down.
type EmulatorScale struct {
	StorageScaleMiBPerGB   float64
	OpsPerVCPU             float64
	StreamMiBPerVCPU       float64
	TimeScale              float64
	BlockedReactorNotifyMS int
}

// NodeArgs are the `elasticity node` flags of the scale model.
func (e EmulatorScale) NodeArgs() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []string{"--storage-scale-mib-per-gb", f(e.StorageScaleMiBPerGB), "--ops-per-vcpu", f(e.OpsPerVCPU),
		"--stream-mib-per-vcpu", f(e.StreamMiBPerVCPU), "--blocked-reactor-notify-ms", strconv.Itoa(e.BlockedReactorNotifyMS),
		"--time-scale", f(timeScale(e.TimeScale))}
}

// timeScale is 1 for an unset scale.
func timeScale(s float64) float64 {
	if s <= 0 {
		return 1
	}
	return s
}

// LocalConfig configures emulated node processes on loopback addresses.
type LocalConfig struct {
	BaseAddress string
	// DataDir is where the nodes' data goes (local.data_dir):
	// LocalDataMemory, LocalDataRun or a directory.
	DataDir string
}

// local.data_dir's named places.
const (
	// LocalDataMemory: a RAM-backed file system while it has room for a
	// node's emulated disk, else the run directory.
	LocalDataMemory = "memory"
	// LocalDataRun: the run directory (<out>/nodes/<node>/data).
	LocalDataRun = "run"
)

// CheckLocalDataDir reports what is wrong with a local.data_dir value: it
// is LocalDataMemory, LocalDataRun or a directory (one that does not exist
// yet is created).
func CheckLocalDataDir(v string) error {
	switch v {
	case LocalDataMemory, LocalDataRun:
		return nil
	case "":
		return fmt.Errorf("must be %q, %q or a directory", LocalDataMemory, LocalDataRun)
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

// DockerConfig configures containers.
type DockerConfig struct {
	// Image of the nodes (docker.image, else cluster.image).
	Image       string
	SMP         int
	MemoryBytes int64
	Network     string
	// DataMount is what is mounted at /var/lib/scylla (DockerDataTmpfs or DockerDataNone).
	DataMount string
	// StorageScaleMiBPerGB and TimeScale scale the catalog disk and the
	// scenario's durations; 0 = by image (the backend's Model resolves them).
	StorageScaleMiBPerGB float64
	TimeScale            float64
}

// docker.data_mount's values.
const (
	// DockerDataTmpfs: a tmpfs of the node's scaled disk at /var/lib/scylla.
	DockerDataTmpfs = "tmpfs"
	// DockerDataNone: the image's own volume, on the host's file system.
	DockerDataNone = "none"
)

// The docker backend's scale for real ScyllaDB images (the image double
// takes the emulator's, local.*): see scenarios.DefaultDockerStorageScaleMiBPerGB.
const (
	DefaultDockerStorageScaleMiBPerGB = 4
	DefaultDockerTimeScale            = 0.1
)

// CheckDockerDataMount reports what is wrong with a docker.data_mount value.
func CheckDockerDataMount(v string) error {
	if v != DockerDataTmpfs && v != DockerDataNone {
		return fmt.Errorf("must be %q or %q, got %q", DockerDataTmpfs, DockerDataNone, v)
	}
	return nil
}

// AWSConfig configures EC2.
type AWSConfig struct {
	Region            string
	AvailabilityZones []string
	SubnetIDs         []string
	SecurityGroupIDs  []string
	AMI, LoaderAMI    string
	// LoaderBinary is the elasticity executable copied to loader machines ("" = this one).
	LoaderBinary string
	KeyPair      string
	RunnerCIDR   string
	Spot         bool
	PrivateIPs   bool
	SSHUser      string
	SSHKey       string
}

// StaticConfig points at an existing cluster.
type StaticConfig struct {
	Hosts                                              []string
	AddNode, RemoveNode, StopNode, KillNode, StartNode *Command
}

// Command is an external command of a backend.
type Command struct {
	Argv    []string
	Env     map[string]string
	Timeout time.Duration
}
