package main

import (
	"fmt"

	"github.com/elasticity-dev/elasticity/provision/aws"
	"github.com/elasticity-dev/elasticity/scenarios"
)

// The aws backend's plan lists the instances, the image and an estimated
// cost from the catalog's on-demand prices.
func init() {
	scenarios.PlanHooks = append(scenarios.PlanHooks, awsPlanLines)
}

func awsPlanLines(s *scenarios.Scenario, p *scenarios.Plan) {
	if p.Backend != "aws" {
		return
	}
	add := func(label, value string) {
		p.Extra = append(p.Extra, scenarios.PlanLine{Section: "AWS", Label: label, Value: value})
	}
	counts := map[string]int{}
	for _, n := range p.Nodes {
		counts[n.InstanceType] += n.Count
	}
	if s.AWS.LoaderCount > 0 && s.AWS.LoaderInstanceType != "" {
		counts[s.AWS.LoaderInstanceType] += s.AWS.LoaderCount
	}
	lines, total, err := aws.EstimateCost(counts)
	if err != nil {
		add("cost", "cannot estimate: "+err.Error())
		return
	}
	for _, l := range lines {
		add(fmt.Sprintf("%d × %s", l.Count, l.InstanceType), fmt.Sprintf("$%.3f/h", l.HourlyUSD))
	}
	add("all instances", fmt.Sprintf("$%.2f/h on demand (us-east-1 list prices, approximate)", total))
	if p.EstimatedSeconds > 0 {
		add("estimated run cost", fmt.Sprintf("≤ $%.2f for %.1f h (grown nodes counted for the whole run)", total*p.EstimatedSeconds/3600, p.EstimatedSeconds/3600))
	}
	switch {
	case s.AWS.AMI != "":
		add("image", s.AWS.AMI)
	case p.Version == "":
		add("image", "NONE: set aws.ami or cluster.version, or provisioning will stop at once")
	default:
		add("image", fmt.Sprintf("newest \"ScyllaDB %s*\" published by ScyllaDB (owner 797456418907) in %s", p.Version, s.AWS.Region))
	}
}
