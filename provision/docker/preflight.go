package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/provision"
)

// HostNeeds is what a docker run asks of this host.
type HostNeeds struct {
	Image string
	// Emulated: the image double (no AIO, scaled disks).
	Emulated bool
	// SMPs are the --smp of every container, in start order.
	SMPs []int
	// Memory is what the run takes of this host's memory at most.
	Memory MemoryFit
	// Mounted: the nodes' data is on tmpfs (RAM), not on the host's disk.
	Mounted bool
}

// Needs sizes the run's containers (Resources, as the provider will) for
// the instance types of every node it starts, given as type → count.
func Needs(c *provision.Config, counts map[string]int) HostNeeds {
	info, _ := localImageInfo(c)
	p := New(optionsFor(c, info, provision.BuildOptions{}))
	h := HostNeeds{Image: imageRef(c), Emulated: info.Emulated, Mounted: p.Mounted()}
	for typ, n := range counts {
		it, err := provision.LookupInstanceType(typ)
		if err != nil {
			continue
		}
		smp, _ := p.Resources(it)
		for i := 0; i < n; i++ {
			h.SMPs = append(h.SMPs, smp)
		}
	}
	h.Memory = MemoryFitFor(c, info, counts)
	return h
}

// Memory a docker run takes besides the database's --memory.
const (
	// RealOverheadBytes: a ScyllaDB container beyond --memory (Seastar's
	// reserve for the kernel and threads, supervisord, the entrypoint).
	RealOverheadBytes = 512 << 20
	// EmulatedNodeBytes: an image double's node, whatever its --memory
	// (an emulated node process, as on the local backend).
	EmulatedNodeBytes = 200 << 20
	// RunnerBytes: the runner and its load generator.
	RunnerBytes = 512 << 20
	// dataMargin: the tmpfs data at most is every initial node's disk full
	// plus a quarter (tablets in flight during the grow, before their
	// source is cleaned up, and what the workload writes afterwards); the
	// grow moves data, it does not add it.
	dataMargin = 1.25
)

// MemoryFit is what a docker run takes of this host's memory at most:
// every container's database memory and overhead, the data its tmpfs
// holds (RAM), and the runner.
type MemoryFit struct {
	Containers    int
	DatabaseBytes int64 // Σ --memory (0 for the image double)
	OverheadBytes int64 // Σ beyond --memory
	DataBytes     int64 // tmpfs pages at most
	RunnerBytes   int64
	HostBytes     int64 // this host's memory
	// Settings name what to change when it does not fit.
	Settings string
}

// MemoryFitFor computes the fit for every node the run starts (type → count).
func MemoryFitFor(c *provision.Config, info ImageInfo, counts map[string]int) MemoryFit {
	p := New(optionsFor(c, info, provision.BuildOptions{}))
	f := MemoryFit{RunnerBytes: RunnerBytes, HostBytes: int64(p.opts.HostMemoryGB * (1 << 30))}
	for typ, n := range counts {
		it, err := provision.LookupInstanceType(typ)
		if err != nil {
			continue
		}
		_, memGB := p.Resources(it)
		f.Containers += n
		if info.Emulated {
			f.OverheadBytes += int64(n) * EmulatedNodeBytes
		} else {
			f.DatabaseBytes += int64(n) * int64(memGB*(1<<30))
			f.OverheadBytes += int64(n) * RealOverheadBytes
		}
	}
	if it, err := provision.LookupInstanceType(c.Cluster.InstanceType); err == nil {
		initial := c.Cluster.NodesPerRack * len(c.Cluster.Racks)
		f.DataBytes = int64(float64(initial) * float64(p.MountBytes(it)) * dataMargin)
	}
	f.Settings = "docker.memory"
	if p.Mounted() {
		f.Settings = "docker.storage_scale_mib_per_gb or docker.memory"
	}
	if info.Emulated {
		f.Settings = "docker.storage_scale_mib_per_gb"
	}
	return f
}

// NeedBytes is the sum.
func (f MemoryFit) NeedBytes() int64 {
	return f.DatabaseBytes + f.OverheadBytes + f.DataBytes + f.RunnerBytes
}

func (f MemoryFit) String() string {
	gib := func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
	return fmt.Sprintf("at most %s of this host's %s: %d containers' --memory %s + %s beyond it, data on tmpfs %s (the initial disks full, +25%%), runner %s",
		gib(f.NeedBytes()), gib(f.HostBytes), f.Containers, gib(f.DatabaseBytes), gib(f.OverheadBytes), gib(f.DataBytes), gib(f.RunnerBytes))
}

// CheckImage finds the run's image in the engine or pulls it; the error
// names the image when neither works.
func CheckImage(ctx context.Context, c *provision.Config) error {
	_, err := resolveImage(ctx, imageRef(c), c.Cluster.Version, true)
	return err
}

// Ping reports whether the engine answers.
func Ping(ctx context.Context) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

// DataRoot is the engine's root directory (where container layers and
// volumes live), "" when unknown.
func DataRoot(ctx context.Context) string {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return ""
	}
	defer cli.Close()
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return ""
	}
	return res.Info.DockerRootDir
}

// preflightChecks are the docker backend's pre-flight checks: the image
// (present or pullable), the host's AIO slots for every ScyllaDB shard,
// memory for the containers, their tmpfs data and the runner (MemoryFit,
// which names the settings to change), and disk in the engine's root when
// the data is left on the host's disk.
func preflightChecks(c *provision.Config, f provision.PlanFacts, _ string, in *preflight.Input) {
	needs := Needs(c, f.InstanceCounts)
	if !needs.Mounted {
		in.PlannedDiskBytes += f.DiskBytes
	}
	in.PlannedMemoryBytes = needs.Memory.NeedBytes()
	in.MemoryDetail = needs.Memory.String()
	in.MemorySettings = needs.Memory.Settings
	var smps []int
	if !needs.Emulated {
		smps = needs.SMPs
	}
	cfg := *c
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	root := DataRoot(ctx)
	cancel()
	in.Checks = append(in.Checks, preflight.Docker(Ping),
		preflight.DockerImage(func(ctx context.Context) error { return CheckImage(ctx, &cfg) }),
		preflight.AIO(smps, nil, nil), preflight.DiskAt("docker-disk", root))
	if !needs.Emulated && needs.Mounted {
		check := headroomCheck(c, f)
		in.Checks = append(in.Checks, func(context.Context, preflight.Input) []preflight.Check { return []preflight.Check{check} })
	}
}

// headroomCheck: on a node's tmpfs, ScyllaDB's commitlog (up to
// commitlog_total_space_in_mb, smallDiskArgs) and the data at the highest
// fill target must stay under critical_disk_utilization_level (98%, from
// 2025.4.0, db/config.cc): above it the node rejects user writes
// (replica/database.cc), and a fill that cannot get there never ends. The
// image double says the same of itself at startup (its store's reserve).
func headroomCheck(c *provision.Config, f provision.PlanFacts) preflight.Check {
	const name, critical = "docker-disk-headroom", 0.98
	it, err := provision.LookupInstanceType(c.Cluster.InstanceType)
	if err != nil || f.MaxFillPercent <= 0 {
		return preflight.Check{Name: name, OK: true, Detail: "no fill"}
	}
	info, _ := localImageInfo(c)
	p := New(optionsFor(c, info, provision.BuildOptions{}))
	disk := p.MountBytes(it)
	smp, _ := p.Resources(it)
	commitlog := int64(p.commitlogTotalMiB(it, smp)) << 20
	need := int64(f.MaxFillPercent/100*float64(disk)) + commitlog
	detail := fmt.Sprintf("an %s node's %d MiB tmpfs holds its %d MiB commitlog (commitlog_total_space_in_mb) and data at %.0f%%: %.1f%% of it (critical_disk_utilization_level %.0f%%)",
		it.Name, disk>>20, commitlog>>20, f.MaxFillPercent, 100*float64(need)/float64(disk), critical*100)
	if float64(need) <= critical*float64(disk) {
		return preflight.Check{Name: name, OK: true, Detail: detail}
	}
	// The disk and the commitlog's memory share grow with the storage
	// scale; its floor of 4 segments per shard does not.
	room := critical - f.MaxFillPercent/100
	if share := it.MemoryGB / it.StorageGB; share >= room {
		return preflight.Check{Name: name, Detail: detail + fmt.Sprintf("; above it ScyllaDB rejects writes: lower the fill target below %.0f%% (the commitlog takes the memory's share of the disk, %.1f%%, at any docker.storage_scale_mib_per_gb)", 100*(critical-share), 100*share)}
	}
	floor := float64(4 * commitlogSegmentMiB * smp)
	least := floor / (it.StorageGB * room)
	return preflight.Check{Name: name, Detail: detail + fmt.Sprintf("; above it ScyllaDB rejects writes: raise docker.storage_scale_mib_per_gb to %.2g or more (the commitlog's %d MiB floor, 4 segments per shard), or lower the fill target", least, int(floor))}
}
