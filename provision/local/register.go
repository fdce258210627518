package local

import (
	"context"
	"fmt"

	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/provision"
)

// The local backend: emulated nodes as processes on loopback addresses.
func init() {
	provision.Register(provision.Backend{
		Name:       "local",
		NewOptions: func() provision.Options { return &Settings{} },
		Model: func(c *provision.Config) provision.Model {
			m := provision.EmulatedModel(c.Emulator)
			e := c.Emulator
			m.Limitations = []string{
				fmt.Sprintf("Emulated nodes (local backend): figures are shapes, not ScyllaDB's. Disks are %.2g MiB per catalog GB, %.0f ops/s per vCPU, %.0f MiB/s streaming per vCPU; scenario durations × %g.",
					e.StorageScaleMiBPerGB, e.OpsPerVCPU, e.StreamMiBPerVCPU, e.TimeScale),
				"All nodes and the load generator share one machine's CPUs: latency includes local scheduling noise.",
			}
			return m
		},
		New: func(ctx context.Context, c *provision.Config, o provision.BuildOptions) (provision.Provider, error) {
			e := c.Emulator
			lo := settings(c)
			root, fallback := DataOptions(lo.DataDir)
			switch {
			case lo.DataDir == DataMemory && root == "":
				o.Logf("node data: in the run directory (no RAM-backed file system at %s this process may write to)", memoryRoot)
			case root != "":
				o.Logf("node data: in %s (local.data_dir: %s), deleted with the nodes", root, lo.DataDir)
			}
			return New(Options{
				Binary:                 o.Binary,
				BinaryArgs:             o.BinaryArgs,
				BaseAddress:            lo.BaseAddress,
				StorageScaleMiBPerGB:   e.StorageScaleMiBPerGB,
				OpsPerVCPU:             e.OpsPerVCPU,
				StreamMiBPerVCPU:       e.StreamMiBPerVCPU,
				BlockedReactorNotifyMS: e.BlockedReactorNotifyMS,
				TimeScale:              e.TimeScale,
				FaultArgs:              o.FaultArgs,
				DataRoot:               root,
				DataFallback:           fallback,
				Logf:                   o.Logf,
				SharedProcess:          lo.Process == ProcessShared,
			}), nil
		},
		Sweeper: func(ctx context.Context, o provision.SweepOptions) (provision.Sweeper, error) {
			return New(Options{}), nil
		},
		Preflight: preflightChecks,
	})
}

// preflightChecks: the nodes' data goes to this machine's disk (or its
// RAM-backed file system), every node is a process of the elasticity
// binary, and each listens on its own loopback address.
func preflightChecks(c *provision.Config, f provision.PlanFacts, binary string, in *preflight.Input) {
	in.PlannedDiskBytes += f.DiskBytes
	nodes := 0
	for _, n := range f.InstanceCounts {
		nodes += n
	}
	// An emulated node process needs roughly 200 MiB (Pebble caches, buffers).
	in.PlannedMemoryBytes = int64(nodes)*200<<20 + 512<<20
	in.Checks = append(in.Checks, preflight.Binary(binary), preflight.Loopback(settings(c).BaseAddress))
}
