package aws

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/elasticity-dev/elasticity/preflight"
	"github.com/elasticity-dev/elasticity/provision"
)

// The aws backend: EC2 instances of ScyllaDB's machine image.
func init() {
	provision.Register(provision.Backend{
		Name:       "aws",
		NewOptions: func() provision.Options { return &Settings{} },
		Model:      model,
		New: func(ctx context.Context, c *provision.Config, o provision.BuildOptions) (provision.Provider, error) {
			a := settings(c)
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
			cidr := a.RunnerCIDR
			if cidr == "" {
				// The runner's address may come from the environment, like
				// the SDK's settings (a simulated region prints it).
				cidr = c.Env.Get(RunnerCIDREnv)
			}
			return New(ctx, Options{Region: a.Region, AvailabilityZones: a.AvailabilityZones, SubnetIDs: subnets,
				AMI: a.AMI, LoaderAMI: a.LoaderAMI, KeyPair: a.KeyPair, SecurityGroupID: sg, RunnerCIDR: cidr, Spot: a.Spot,
				UsePrivateIPs: a.PrivateIPs, SSHUser: a.SSHUser, SSHKeyPath: a.SSHKey, Logf: o.Logf})
		},
		PlanLines: planLines,
		Preflight: func(_ *provision.Config, _ provision.PlanFacts, _ string, in *preflight.Input) {
			in.Checks = append(in.Checks, preflight.AWSCredentials())
		},
		Sweeper: func(ctx context.Context, o provision.SweepOptions) (provision.Sweeper, error) {
			return New(ctx, Options{Region: o.Region})
		},
	})
}

// RunnerCIDREnv names the variable that gives aws.runner_cidr when the
// scenario does not.
const RunnerCIDREnv = "ELASTICITY_AWS_RUNNER_CIDR"

// model: real ScyllaDB nodes, unless the SDK's EC2 endpoint is on loopback
// (AWS_ENDPOINT_URL_EC2 or AWS_ENDPOINT_URL, the SDK's own settings, read
// from the environment the plan is resolved in, c.Env): no
// real region answers there, so it is a simulated one (elasticity aws-sim)
// whose instances run the emulator with the scenario's local: scale model.
func model(c *provision.Config) provision.Model {
	if !SimulatedEndpoint(c.Env.Get) {
		return provision.RealModel(600)
	}
	m := provision.EmulatedModel(c.Emulator)
	m.SetupSeconds = 15
	m.Limitations = []string{fmt.Sprintf("Simulated EC2 region (elasticity aws-sim at %s): instances are emulated nodes on this machine; figures are shapes, not ScyllaDB's. Disks are %.2g MiB per catalog GB, %.0f ops/s per vCPU, %.0f MiB/s streaming per vCPU; scenario durations × %g.",
		endpoint(c.Env.Get), c.Emulator.StorageScaleMiBPerGB, c.Emulator.OpsPerVCPU, c.Emulator.StreamMiBPerVCPU, c.Emulator.TimeScale),
		"All instances and the runner share one machine's CPUs: latency includes local scheduling noise."}
	return m
}

func endpoint(getenv func(string) string) string {
	if u := getenv("AWS_ENDPOINT_URL_EC2"); u != "" {
		return u
	}
	return getenv("AWS_ENDPOINT_URL")
}

// SimulatedEndpoint reports whether the SDK's EC2 endpoint is a loopback address.
func SimulatedEndpoint(getenv func(string) string) bool {
	u, err := url.Parse(endpoint(getenv))
	if err != nil || u.Hostname() == "" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// planLines list the instances, the image and an estimated cost from the
// catalog's on-demand prices.
func planLines(c *provision.Config, f provision.PlanFacts) []provision.PlanLine {
	var out []provision.PlanLine
	add := func(label, value string) {
		out = append(out, provision.PlanLine{Section: "AWS", Label: label, Value: value})
	}
	counts := map[string]int{}
	for t, n := range f.InstanceCounts {
		counts[t] += n
	}
	if c.Loaders.Count > 0 && c.Loaders.InstanceType != "" {
		counts[c.Loaders.InstanceType] += c.Loaders.Count
	}
	lines, total, err := EstimateCost(counts)
	if err != nil {
		add("cost", "cannot estimate: "+err.Error())
		return out
	}
	for _, l := range lines {
		add(fmt.Sprintf("%d × %s", l.Count, l.InstanceType), fmt.Sprintf("$%.3f/h", l.HourlyUSD))
	}
	add("all instances", fmt.Sprintf("$%.2f/h on demand (us-east-1 list prices, approximate)", total))
	if f.EstimatedSeconds > 0 {
		add("estimated run cost", fmt.Sprintf("≤ $%.2f for %.1f h (grown nodes counted for the whole run)", total*f.EstimatedSeconds/3600, f.EstimatedSeconds/3600))
	}
	switch {
	case settings(c).AMI != "":
		add("image", settings(c).AMI)
	case c.Cluster.Version == "":
		add("image", fmt.Sprintf("newest image with %s in %s, of each instance type's architecture, debug builds excluded (SCT's lookup); set cluster.version or aws.ami to choose",
			scyllaImageQuery(""), settings(c).Region))
	default:
		add("image", fmt.Sprintf("newest image with %s in %s, of each instance type's architecture, debug builds excluded (SCT's lookup for scylla_version %s); aws.ami overrides",
			scyllaImageQuery(c.Cluster.Version), settings(c).Region, c.Cluster.Version))
	}
	return out
}
