package runner

import (
	"context"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/aws"
	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/elasticity-dev/elasticity/provision/static"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// The other backends, configured from their scenario sections. Their own
// packages own the details; this is only the mapping.
func init() {
	RegisterProvider(scenarios.BackendDocker, func(ctx context.Context, sc *scenarios.Scenario, o ProviderOptions) (provision.Provider, error) {
		img := sc.Docker.Image
		if img == "" {
			img = sc.Cluster.Image
		}
		return docker.New(docker.Options{
			Image:    img,
			Emulator: strings.Contains(img, "elasticity"),
			SMP:      sc.Docker.SMP,
			MemoryGB: float64(sc.Docker.Memory) / (1 << 30),
			Logf:     o.Logf,
		}), nil
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
			AMI: a.AMI, KeyPair: a.KeyPair, SecurityGroupID: sg, Logf: o.Logf})
	})
}
