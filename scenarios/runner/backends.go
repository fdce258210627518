package runner

import (
	"context"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/aws"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/provision/static"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// dockerImage is the image of a docker run's nodes.
func dockerImage(sc *scenarios.Scenario) string {
	if sc.Docker.Image != "" {
		return sc.Docker.Image
	}
	return sc.Cluster.Image
}

// dockerEmulator: a docker run of this repository's emulator image
// (Dockerfile.emulator), recognised by its name.
func dockerEmulator(sc *scenarios.Scenario) bool {
	return sc.Backend == scenarios.BackendDocker && strings.Contains(dockerImage(sc), "elasticity")
}

// The other backends, configured from their scenario sections. Their own
// packages own the details; this is only the mapping.
func init() {
	RegisterProvider(scenarios.BackendDocker, func(ctx context.Context, sc *scenarios.Scenario, o ProviderOptions) (provision.Provider, error) {
		img := dockerImage(sc)
		emulator := dockerEmulator(sc)
		opts := docker.Options{
			Image:    img,
			Emulator: emulator,
			// docker.smp and docker.memory size a node of cluster.instance_type;
			// larger grow instances get proportionally more, within the host.
			SMP:              sc.Docker.SMP,
			MemoryGB:         float64(sc.Docker.Memory) / (1 << 30),
			BaseInstanceType: sc.Cluster.InstanceType,
			Network:          sc.Docker.Network,
			Logf:             o.Logf,
		}
		if emulator {
			// The same scale model as the local backend, so that an emulated
			// docker run fills and streams as fast as a local one.
			l := sc.Local
			f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
			args := []string{"--storage-scale-mib-per-gb", f(l.StorageScaleMiBPerGB), "--ops-per-vcpu", f(l.OpsPerVCPU),
				"--stream-mib-per-vcpu", f(l.StreamMiBPerVCPU), "--blocked-reactor-notify-ms", strconv.Itoa(l.BlockedReactorNotifyMS)}
			opts.NodeArgs = func(n provision.Node, _ provision.InstanceType) []string {
				if o.FaultArgs != nil {
					return append(append([]string(nil), args...), o.FaultArgs(n)...)
				}
				return args
			}
		}
		return docker.New(opts), nil
	})
	RegisterProvider(scenarios.BackendStatic, func(ctx context.Context, sc *scenarios.Scenario, o ProviderOptions) (provision.Provider, error) {
		var hosts []static.Host
		for _, h := range sc.Static.Hosts {
			hosts = append(hosts, static.Host{Address: h})
		}
		hook := func(c *scenarios.Command) static.Hook {
			if c == nil {
				return static.Hook{}
			}
			return static.Hook{Command: append([]string{c.Command}, c.Args...), Env: c.Env, Timeout: c.Timeout.D()}
		}
		st := sc.Static
		return static.New(static.Options{Hosts: hosts, Logf: o.Logf,
			AddHook: hook(st.AddNode), RemoveHook: hook(st.RemoveNode),
			StopHook: hook(st.StopNode), KillHook: hook(st.KillNode), StartHook: hook(st.StartNode)}), nil
	})
	RegisterProvider(scenarios.BackendAWS, func(ctx context.Context, sc *scenarios.Scenario, o ProviderOptions) (provision.Provider, error) {
		a := sc.AWS
		subnets := map[string]string{}
		for i, s := range a.SubnetIDs {
			if i < len(a.AvailabilityZones) {
				subnets[a.AvailabilityZones[i]] = s
			}
		}
		sg := ""
		if len(a.SecurityGroupIDs) > 0 {
			sg = a.SecurityGroupIDs[0]
		}
		return aws.New(ctx, aws.Options{Region: a.Region, AvailabilityZones: a.AvailabilityZones, SubnetIDs: subnets,
			AMI: a.AMI, LoaderAMI: a.LoaderAMI, KeyPair: a.KeyPair, SecurityGroupID: sg, RunnerCIDR: a.RunnerCIDR, Spot: a.Spot,
			UsePrivateIPs: a.PrivateIPs, SSHUser: a.SSHUser, SSHKeyPath: a.SSHKey, Logf: o.Logf})
	})
}
