package aws

import (
	"context"
	"fmt"

	"github.com/elasticity-dev/elasticity/provision"
)

// The aws backend: EC2 instances of ScyllaDB's machine image.
func init() {
	provision.Register(provision.Backend{
		Name:  "aws",
		Model: func(*provision.Config) provision.Model { return provision.RealModel(600) },
		New: func(ctx context.Context, c *provision.Config, o provision.BuildOptions) (provision.Provider, error) {
			a := c.AWS
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
			return New(ctx, Options{Region: a.Region, AvailabilityZones: a.AvailabilityZones, SubnetIDs: subnets,
				AMI: a.AMI, LoaderAMI: a.LoaderAMI, KeyPair: a.KeyPair, SecurityGroupID: sg, RunnerCIDR: a.RunnerCIDR, Spot: a.Spot,
				UsePrivateIPs: a.PrivateIPs, SSHUser: a.SSHUser, SSHKeyPath: a.SSHKey, Logf: o.Logf})
		},
		PlanLines: planLines,
		Sweeper: func(ctx context.Context, o provision.SweepOptions) (provision.Sweeper, error) {
			return New(ctx, Options{Region: o.Region})
		},
	})
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
	case c.AWS.AMI != "":
		add("image", c.AWS.AMI)
	case c.Cluster.Version == "":
		add("image", "NONE: set aws.ami or cluster.version, or provisioning will stop at once")
	default:
		add("image", fmt.Sprintf("newest \"ScyllaDB %s*\" published by ScyllaDB (owner 797456418907) in %s", c.Cluster.Version, c.AWS.Region))
	}
	return out
}
