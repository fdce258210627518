package aws

import (
	"context"
	"fmt"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/elasticity-dev/elasticity/provision"
)

// Sweep implements provision.Sweeper: instances and security groups tagged
// CreatedBy=elasticity whose KeepUntil has passed. With dryRun nothing is
// changed; resources without a readable KeepUntil are never touched.
func (p *Provider) Sweep(ctx context.Context, now time.Time, dryRun bool) ([]provision.Resource, error) {
	out, err := p.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: awssdk.String("tag:" + TagCreatedBy), Values: []string{CreatedByVal}},
		{Name: awssdk.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}},
	}})
	if err != nil {
		return nil, fmt.Errorf("aws gc: listing instances: %s", redact(err))
	}
	var res []provision.Resource
	var expired []string
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if tagValue(in.Tags, TagCreatedBy) != CreatedByVal { // never trust the filter alone
				continue
			}
			ku, ok := parseKeepUntil(in.Tags)
			rs := provision.Resource{Kind: "instance", ID: awssdk.ToString(in.InstanceId), Name: tagValue(in.Tags, TagName),
				RunID: tagValue(in.Tags, TagRunID), KeepUntil: ku, Expired: ok && now.After(ku)}
			res = append(res, rs)
			if rs.Expired {
				expired = append(expired, rs.ID)
			}
		}
	}
	sgs, err := p.client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []types.Filter{
		{Name: awssdk.String("tag:" + TagCreatedBy), Values: []string{CreatedByVal}},
	}})
	if err != nil {
		return res, fmt.Errorf("aws gc: listing security groups: %s", redact(err))
	}
	var expiredSGs []string
	for _, g := range sgs.SecurityGroups {
		if tagValue(g.Tags, TagCreatedBy) != CreatedByVal {
			continue
		}
		ku, ok := parseKeepUntil(g.Tags)
		rs := provision.Resource{Kind: "security-group", ID: awssdk.ToString(g.GroupId), Name: awssdk.ToString(g.GroupName),
			RunID: tagValue(g.Tags, TagRunID), KeepUntil: ku, Expired: ok && now.After(ku)}
		res = append(res, rs)
		if rs.Expired {
			expiredSGs = append(expiredSGs, rs.ID)
		}
	}
	if dryRun {
		return res, nil
	}
	if err := p.terminate(ctx, expired); err != nil {
		return res, err
	}
	for _, id := range expiredSGs {
		if err := p.deleteSecurityGroup(ctx, id, expired); err != nil {
			return res, err
		}
	}
	return res, nil
}
