package docker

import (
	"fmt"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/units"
)

// Settings is the scenario's docker section: containers of the database
// image (or of the image double) on this host.
type Settings struct {
	// Image of the database nodes; "" = derived from cluster.image, cluster.version.
	Image string `yaml:"image,omitempty"`
	// SMP is the number of shards (scylla --smp).
	SMP int `yaml:"smp"`
	// Memory per container.
	Memory units.Size `yaml:"memory"`
	// Network is an existing docker network; "" = one created per run.
	Network string `yaml:"network,omitempty"`
	// DataMount is each node's /var/lib/scylla: "tmpfs" (the default), a
	// file system of its own sized by StorageScaleMiBPerGB, so that every
	// node reports its own disk; "none" leaves the image's volume on the
	// host's file system, whose figures (the host's, the same for every
	// node) the disk samples then show.
	DataMount string `yaml:"data_mount"`
	// StorageScaleMiBPerGB sizes the tmpfs: catalog disk GB × this many
	// MiB. 0 = by image: DefaultStorageScaleMiBPerGB for ScyllaDB,
	// local.storage_scale_mib_per_gb for the image double.
	StorageScaleMiBPerGB float64 `yaml:"storage_scale_mib_per_gb"`
	// TimeScale multiplies every scenario duration (holds, steady state,
	// calibration). 0 = by image: DefaultTimeScale for ScyllaDB,
	// local.time_scale for the image double.
	TimeScale float64 `yaml:"time_scale"`
}

// DefaultSettings are the docker section's defaults.
var DefaultSettings = Settings{SMP: 1, Memory: 1 << 30, DataMount: DataTmpfs}

// docker.data_mount's values.
const (
	// DataTmpfs: a tmpfs of the node's scaled disk at /var/lib/scylla.
	DataTmpfs = "tmpfs"
	// DataNone: the image's own volume, on the host's file system.
	DataNone = "none"
)

// The docker backend's scale for real ScyllaDB images (the image double
// takes the emulator's, local.*), sized so that configs/90pct-scaleout.yaml
// runs on a 2-core, 24 GiB machine in about half an hour (README, "Docker
// backend"): an i4i.large's 468 GB become a 1.83 GiB tmpfs, and 30-minute
// holds 3 minutes. With docker.memory 1 GiB per shard the run takes at
// most ≈ 19 GiB of RAM (plan: "memory").
const (
	DefaultStorageScaleMiBPerGB = 4
	DefaultTimeScale            = 0.1
)

// Default fills what the scenario left unset.
func (o *Settings) Default(s *provision.Section) {
	if !s.IsSet("smp") {
		o.SMP = DefaultSettings.SMP
	}
	if !s.IsSet("memory") {
		o.Memory = DefaultSettings.Memory
	}
	if o.DataMount == "" {
		o.DataMount = DefaultSettings.DataMount
	}
}

// Validate checks the section whichever backend runs.
func (o *Settings) Validate(s *provision.Section) {
	if o.SMP < 1 {
		s.Problem("smp", "must be >= 1")
	}
	if o.Memory < 256<<20 {
		s.Problem("memory", "%s is less than 256MiB", o.Memory)
	}
	if o.StorageScaleMiBPerGB < 0 {
		s.Problem("storage_scale_mib_per_gb", "must be >= 0 (0: the image's default), got %v", o.StorageScaleMiBPerGB)
	}
	if o.TimeScale < 0 || o.TimeScale > 1 {
		s.Problem("time_scale", "must be in [0, 1] (0: the image's default), got %v", o.TimeScale)
	}
	if err := CheckDataMount(o.DataMount); err != nil {
		s.Problem("data_mount", "%v", err)
	}
}

// Configure: the docker section serves only docker runs.
func (o *Settings) Configure(*provision.Config, bool) {}

// CheckDataMount reports what is wrong with a docker.data_mount value.
func CheckDataMount(v string) error {
	if v != DataTmpfs && v != DataNone {
		return fmt.Errorf("must be %q or %q, got %q", DataTmpfs, DataNone, v)
	}
	return nil
}

// settings is the docker section of a configuration (the defaults when the
// configuration has none, as some tests build it).
func settings(c *provision.Config) *Settings {
	return provision.SettingsOf(c, func() *Settings {
		d := DefaultSettings
		return &d
	})
}
