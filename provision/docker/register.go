package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// isEmulator: a docker run of this repository's emulator image
// (Dockerfile.emulator), recognised by its name.
func isEmulator(c *provision.Config) bool { return strings.Contains(c.Docker.Image, "elasticity") }

// The docker backend: containers of the database image, or of the emulator
// image (then emulated, with the local backend's scale model at real durations).
func init() {
	provision.Register(provision.Backend{
		Name: "docker",
		Model: func(c *provision.Config) provision.Model {
			if !isEmulator(c) {
				return provision.RealModel(60)
			}
			e := c.Emulator
			e.TimeScale = 1
			m := provision.EmulatedModel(e)
			m.SetupSeconds = 60
			m.TimeoutBase = 5 * time.Minute // containers start slower than processes
			m.Limitations = []string{fmt.Sprintf("Emulated nodes (docker backend, image %s): figures are shapes, not ScyllaDB's. Disks are %.2g MiB per catalog GB, %.0f ops/s per vCPU, %.0f MiB/s streaming per vCPU.",
				c.Docker.Image, e.StorageScaleMiBPerGB, e.OpsPerVCPU, e.StreamMiBPerVCPU)}
			return m
		},
		New: func(ctx context.Context, c *provision.Config, o provision.BuildOptions) (provision.Provider, error) {
			emulator := isEmulator(c)
			opts := Options{
				Image:    c.Docker.Image,
				Emulator: emulator,
				// docker.smp and docker.memory size a node of cluster.instance_type;
				// larger grow instances get proportionally more, within the host.
				SMP:              c.Docker.SMP,
				MemoryGB:         float64(c.Docker.MemoryBytes) / (1 << 30),
				BaseInstanceType: c.Cluster.InstanceType,
				Network:          c.Docker.Network,
				Logf:             o.Logf,
			}
			if emulator {
				// The same scale model as the local backend, so that an emulated
				// docker run fills and streams as fast as a local one.
				args := c.Emulator.NodeArgs()
				opts.NodeArgs = func(n provision.Node, _ provision.InstanceType) []string {
					if o.FaultArgs != nil {
						return append(append([]string(nil), args...), o.FaultArgs(n)...)
					}
					return args
				}
			}
			return New(opts), nil
		},
		Sweeper: func(ctx context.Context, o provision.SweepOptions) (provision.Sweeper, error) {
			return New(Options{}), nil
		},
	})
}
