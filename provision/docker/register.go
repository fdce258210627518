package docker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// resolveImage finds an image and reads its version and emulator mark
// (ResolveImage); a variable so that tests can stand in for the engine.
var resolveImage = ResolveImage

// imageRef is the image of a docker run: docker.image (or cluster.image,
// folded into it by the scenario), else scylladb/scylla tagged with
// cluster.version.
func imageRef(c *provision.Config) string {
	return ImageFor(settings(c).Image, c.Cluster.Image, c.Cluster.Version)
}

var (
	localMu    sync.Mutex
	localCache = map[string]localImage{}
)

type localImage struct {
	info ImageInfo
	err  error
}

// localImageInfo is what the local engine says of a run's image without
// pulling it, for the model and the plan: known once per image and
// version. Without an engine, or with the image still to be pulled, the
// version is cluster.version's (or the default image's) and the image is
// taken as real ScyllaDB (only the double carries the emulator label, and
// it is always built locally).
func localImageInfo(c *provision.Config) (ImageInfo, error) {
	ref := imageRef(c)
	key := ref + "\x00" + c.Cluster.Version
	localMu.Lock()
	defer localMu.Unlock()
	if li, ok := localCache[key]; ok {
		return li.info, li.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := resolveImage(ctx, ref, c.Cluster.Version, false)
	if err != nil {
		var oerr error
		info, oerr = OfflineImageInfo(ref, c.Cluster.Version)
		if oerr == nil {
			err = nil
		} else {
			err = fmt.Errorf("%v; %w", err, oerr)
		}
	}
	localCache[key] = localImage{info, err}
	return info, err
}

// Scales are a docker run's disk and time scale for its image:
// docker.storage_scale_mib_per_gb and docker.time_scale, where 0 is the
// image's default (DefaultStorageScaleMiBPerGB, DefaultTimeScale for ScyllaDB; the emulator's
// scale model, local.*, for the image double).
type Scales struct {
	StorageMiBPerGB float64
	Time            float64
}

// ScalesFor resolves the scales of a configuration and its image.
func ScalesFor(c *provision.Config, info ImageInfo) Scales {
	ds := settings(c)
	sc := Scales{StorageMiBPerGB: ds.StorageScaleMiBPerGB, Time: ds.TimeScale}
	if sc.StorageMiBPerGB <= 0 {
		sc.StorageMiBPerGB = DefaultStorageScaleMiBPerGB
		if info.Emulated {
			sc.StorageMiBPerGB = c.Emulator.StorageScaleMiBPerGB
		}
	}
	if sc.Time <= 0 {
		sc.Time = DefaultTimeScale
		if info.Emulated {
			sc.Time = c.Emulator.TimeScale
		}
	}
	if sc.Time <= 0 {
		sc.Time = 1
	}
	return sc
}

// optionsFor are the provider's options for a configuration and its image.
func optionsFor(c *provision.Config, info ImageInfo, o provision.BuildOptions) Options {
	sc := ScalesFor(c, info)
	ds := settings(c)
	opts := Options{
		Image:    info.Ref,
		Version:  info.Version,
		Emulated: info.Emulated,
		// docker.smp and docker.memory size a node of cluster.instance_type;
		// larger grow instances get proportionally more, within the host.
		SMP:                  ds.SMP,
		MemoryGB:             float64(ds.Memory) / (1 << 30),
		BaseInstanceType:     c.Cluster.InstanceType,
		Network:              ds.Network,
		DataMount:            ds.DataMount,
		StorageScaleMiBPerGB: sc.StorageMiBPerGB,
		Logf:                 o.Logf,
	}
	if info.Emulated {
		// The same scale model as the local backend, so that an emulated
		// docker run fills and streams as fast as a local one, with the
		// docker run's disk and time scale. The stall threshold is not
		// among them: it is the image's (the entrypoint's flag from
		// 2025.4.4, set from the scale model; 999999999 before, scyllasetup.py).
		opts.StallThresholdMS = c.Emulator.BlockedReactorNotifyMS
		e := c.Emulator
		e.StorageScaleMiBPerGB, e.TimeScale = sc.StorageMiBPerGB, sc.Time
		var args []string
		all := e.NodeArgs()
		for i := 0; i+1 < len(all); i += 2 {
			if all[i] != "--blocked-reactor-notify-ms" {
				args = append(args, all[i], all[i+1])
			}
		}
		opts.NodeArgs = func(n provision.Node, _ provision.InstanceType) []string {
			if o.FaultArgs != nil {
				return append(append([]string(nil), args...), o.FaultArgs(n)...)
			}
			return args
		}
	}
	return opts
}

// realModel is real ScyllaDB in containers on this host: the real
// figures, with the disks and durations scaled, and the host's CPUs shared
// by every node and the load generator (CPUShare).
func realModel(c *provision.Config, info ImageInfo) provision.Model {
	sc := ScalesFor(c, info)
	m := provision.RealModel(60)
	m.TimeScale = sc.Time
	mounted := settings(c).DataMount != DataNone
	if mounted {
		m.StorageScaleMiBPerGB = sc.StorageMiBPerGB
	}
	share := CPUShare(c, hostCPUs())
	m.OpsPerVCPU *= share
	m.StreamMiBPerVCPU *= share
	m.FillMiBPerVCPU *= share
	// Scaled data: a migration's compactions end within a minute of its
	// streaming, where a real node's take minutes.
	m.RecoverySeconds = 60
	disk := fmt.Sprintf("each node's %s is a tmpfs of its catalog disk × %g MiB per GB, so figures are per node, from inside the container", DataDir, sc.StorageMiBPerGB)
	if !mounted {
		disk = fmt.Sprintf("docker.data_mount is none: each node's %s is the image's volume on the host's file system, so disk figures are the host's, the same for every node", DataDir)
	}
	m.Limitations = []string{fmt.Sprintf("Real ScyllaDB %s in containers on one machine (docker backend, image %s): %s; scenario durations × %g; the nodes and the load generator share this host's %d CPUs.",
		info.Version, info.Ref, disk, sc.Time, hostCPUs())}
	return m
}

// CPUShare is the part of a catalog vCPU a container gets for the
// estimates: half of the host's CPUs go to the initial nodes (the other
// half to the load generator and the runner), at most 1.
func CPUShare(c *provision.Config, hostCPUs int) float64 {
	it, err := provision.LookupInstanceType(c.Cluster.InstanceType)
	vcpus := c.Cluster.NodesPerRack * len(c.Cluster.Racks) * it.VCPUs
	if err != nil || vcpus <= 0 || hostCPUs <= 0 {
		return 1
	}
	return min(1, float64(hostCPUs)/float64(2*vcpus))
}

// The docker backend: containers of the database image, or of the image
// double (then emulated, with the local backend's scale model). Which one
// it is, and its ScyllaDB version, come from the image's labels, never
// from its name.
func init() {
	provision.Register(provision.Backend{
		Name:       "docker",
		NewOptions: func() provision.Options { return &Settings{} },
		Model: func(c *provision.Config) provision.Model {
			info, _ := localImageInfo(c)
			if !info.Emulated {
				return realModel(c, info)
			}
			sc := ScalesFor(c, info)
			e := c.Emulator
			e.StorageScaleMiBPerGB, e.TimeScale = sc.StorageMiBPerGB, sc.Time
			m := provision.EmulatedModel(e)
			m.SetupSeconds = 60
			m.TimeoutBase = 5 * time.Minute // containers start slower than processes
			disk := fmt.Sprintf("a tmpfs of %.2g MiB per catalog GB at %s", e.StorageScaleMiBPerGB, DataDir)
			if settings(c).DataMount == DataNone {
				disk = fmt.Sprintf("docker.data_mount none: %s on the host's file system, so disk figures are the host's", DataDir)
			}
			m.Limitations = []string{fmt.Sprintf("Emulated nodes (docker backend, image double %s posing as ScyllaDB %s): figures are shapes, not ScyllaDB's. Disks: %s; %.0f ops/s per vCPU, %.0f MiB/s streaming per vCPU; scenario durations × %g.",
				info.Ref, info.Version, disk, e.OpsPerVCPU, e.StreamMiBPerVCPU, e.TimeScale)}
			return m
		},
		New: func(ctx context.Context, c *provision.Config, o provision.BuildOptions) (provision.Provider, error) {
			model, _ := localImageInfo(c)
			info, err := resolveImage(ctx, imageRef(c), c.Cluster.Version, true)
			if err != nil {
				return nil, err
			}
			if info.Emulated != model.Emulated {
				return nil, fmt.Errorf("docker: image %s changed while the run was planned (image double: %v, then %v): run again", info.Ref, model.Emulated, info.Emulated)
			}
			if info.Warning != "" && o.Logf != nil {
				o.Logf("docker: %s", info.Warning)
			}
			return New(optionsFor(c, info, o)), nil
		},
		PlanLines: planLines,
		Sweeper: func(ctx context.Context, o provision.SweepOptions) (provision.Sweeper, error) {
			return New(Options{}), nil
		},
		Preflight: preflightChecks,
	})
}

// planLines show the image, its version and where that came from, each
// node's data mount, the exact container command of every node the run
// starts (addresses are given out at run time: shown as <node-N>), and the
// memory the run takes of this host.
func planLines(c *provision.Config, f provision.PlanFacts) []provision.PlanLine {
	var lines []provision.PlanLine
	add := func(label, value string) {
		lines = append(lines, provision.PlanLine{Section: "Docker", Label: label, Value: value})
	}
	info, err := localImageInfo(c)
	if err != nil {
		add("image", fmt.Sprintf("%s: %v", imageRef(c), err))
		return lines
	}
	kind := "ScyllaDB"
	if info.Emulated {
		kind = "image double (emulated ScyllaDB)"
	}
	add("image", fmt.Sprintf("%s (%s %s, from %s)", info.Ref, kind, info.Version, info.VersionFrom))
	if info.Warning != "" {
		add("warning", info.Warning)
	}
	p := New(optionsFor(c, info, provision.BuildOptions{}))
	p.spec = c.Cluster
	sc := ScalesFor(c, info)
	if p.Mounted() {
		add("data", fmt.Sprintf("each node's %s is a tmpfs of its catalog disk × %g MiB per GB (docker.storage_scale_mib_per_gb; RAM, charged to the container's memory limit); durations × %g (docker.time_scale)", DataDir, sc.StorageMiBPerGB, sc.Time))
	} else {
		add("data", fmt.Sprintf("docker.data_mount none: %s is the image's volume on the host's file system: every node's disk figures are the host's; durations × %g (docker.time_scale)", DataDir, sc.Time))
	}
	// As AddNodes gives them: the initial nodes start together with the
	// first as their seed; later ones get the three oldest.
	initial := c.Cluster.NodesPerRack * len(c.Cluster.Racks)
	var oldest []string
	for k := 1; k <= min(3, initial); k++ {
		oldest = append(oldest, fmt.Sprintf("<node-%d>", k))
	}
	for i, n := range planNodes(c, f) {
		n.Name = fmt.Sprintf("node-%d", i+1)
		n.Address = "<" + n.Name + ">"
		seeds := oldest
		if i < initial {
			seeds = oldest[:1]
		}
		it, err := provision.LookupInstanceType(n.InstanceType)
		if err != nil {
			add(n.Name, err.Error())
			continue
		}
		cmd, files := p.Command(n, it, seeds)
		smp, memGB := p.Resources(it)
		mount := ""
		if o := p.tmpfsOptions(it); o != "" {
			mount = " --tmpfs " + DataDir + ":" + o
		}
		line := fmt.Sprintf("(%s, %s) docker run --network <run network> --ip %s --cpus %d --memory %dm%s %s %s",
			n.Rack, n.InstanceType, n.Address, smp, p.memoryLimit(it, memGB)>>20, mount, info.Ref, strings.Join(cmd, " "))
		for _, fl := range files {
			line += "; copies in " + fl.ContainerFilePath
		}
		add(n.Name, line)
	}
	fit := MemoryFitFor(c, info, f.InstanceCounts)
	add("memory", fit.String())
	return lines
}

// planNodes lists the nodes in the order the provider creates and names
// them: the initial ones rack by rack, then the grown ones.
func planNodes(c *provision.Config, f provision.PlanFacts) []provision.Node {
	var out []provision.Node
	for i := 0; i < c.Cluster.NodesPerRack; i++ {
		for _, r := range c.Cluster.Racks {
			out = append(out, provision.Node{DC: c.Cluster.DC, Rack: r, InstanceType: c.Cluster.InstanceType})
		}
	}
	for _, g := range f.Grown {
		for i := 0; i < g.Count; i++ {
			out = append(out, provision.Node{DC: c.Cluster.DC, Rack: g.Rack, InstanceType: g.InstanceType})
		}
	}
	return out
}
