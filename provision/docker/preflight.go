package docker

import (
	"context"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/provision"
)

// HostNeeds is what a docker run asks of this host.
type HostNeeds struct {
	Image string
	// Emulated: the image double (no AIO, scaled disks).
	Emulated bool
	// SMPs are the --smp of every container, in start order.
	SMPs []int
	// MemoryBytes is the sum of the containers' memory limits.
	MemoryBytes int64
}

// Needs sizes the run's containers (Resources, as the provider will) for
// the instance types of every node it starts, given as type → count.
func Needs(c *provision.Config, counts map[string]int) HostNeeds {
	info, _ := localImageInfo(c)
	p := New(optionsFor(c, info, provision.BuildOptions{}))
	h := HostNeeds{Image: imageRef(c), Emulated: info.Emulated}
	for typ, n := range counts {
		it, err := provision.LookupInstanceType(typ)
		if err != nil {
			continue
		}
		smp, memGB := p.Resources(it)
		for i := 0; i < n; i++ {
			h.SMPs = append(h.SMPs, smp)
			h.MemoryBytes += int64((memGB + 1) * (1 << 30))
		}
	}
	return h
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
