package aws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/elasticity-dev/elasticity/provision"
)

// runInstance launches one instance, trying spot first when asked and falling
// back to on-demand when spot capacity or price is refused.
func (p *Provider) runInstance(ctx context.Context, in *ec2.RunInstancesInput) (*types.Instance, error) {
	if p.opts.Spot {
		spot := *in
		spot.InstanceMarketOptions = &types.InstanceMarketOptionsRequest{
			MarketType: types.MarketTypeSpot,
			SpotOptions: &types.SpotMarketOptions{
				SpotInstanceType:             types.SpotInstanceTypeOneTime,
				InstanceInterruptionBehavior: types.InstanceInterruptionBehaviorTerminate,
			},
		}
		out, err := p.client.RunInstances(ctx, &spot)
		if err == nil && len(out.Instances) > 0 {
			return &out.Instances[0], nil
		}
		if !spotRefused(err) {
			return nil, err
		}
		p.logf("spot refused (%s); falling back to on-demand", errorCode(err))
	}
	out, err := p.client.RunInstances(ctx, in)
	if err != nil {
		return nil, err
	}
	if len(out.Instances) == 0 {
		return nil, errors.New("RunInstances returned no instance")
	}
	return &out.Instances[0], nil
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func spotRefused(err error) bool {
	switch errorCode(err) {
	case "InsufficientInstanceCapacity", "SpotMaxPriceTooLow", "MaxSpotInstanceCountExceeded", "InsufficientCapacity", "UnfulfillableCapacity":
		return true
	}
	return false
}

// waitReady polls until every instance is running with both status checks OK.
// ScyllaDB readiness (REST says NORMAL) is checked by the cluster package.
func (p *Provider) waitReady(ctx context.Context, ls []launched) error {
	if len(ls) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.ReadyTimeout)
	defer cancel()
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.node.ID
	}
	start := time.Now()
	for {
		running, addrs, err := p.describeRunning(ctx, ids)
		if err == nil && running == len(ids) {
			ok, impaired, serr := p.statusOK(ctx, ids)
			if serr == nil && len(impaired) > 0 {
				return fmt.Errorf("aws: instance %s failed its status checks (impaired): %s", impaired[0], p.reasonOf(ctx, impaired[0]))
			}
			if serr == nil && ok == len(ids) {
				for i := range ls {
					a := addrs[ls[i].node.ID]
					ls[i].privateIP = a[0]
					ls[i].node.PrivateAddress = a[0]
					ls[i].node.Address = a[1]
					if p.opts.UsePrivateIPs || ls[i].node.Address == "" {
						ls[i].node.Address = a[0]
					}
				}
				p.logf("%d instance(s) running with status checks OK after %s", len(ids), time.Since(start).Round(time.Second))
				return nil
			}
			err = serr
			p.logf("waiting for status checks: %d/%d OK (%s elapsed)", ok, len(ids), time.Since(start).Round(time.Second))
		} else {
			p.logf("waiting for instances to run: %d/%d running (%s elapsed)", running, len(ids), time.Since(start).Round(time.Second))
		}
		if err != nil {
			p.logf("polling EC2: %s", redact(err))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("aws: waiting for %s to be running with status OK: %w", strings.Join(ids, ","), ctx.Err())
		case <-time.After(p.opts.PollInterval):
		}
	}
}

// describeRunning counts running instances and returns their [private, public] addresses.
func (p *Provider) describeRunning(ctx context.Context, ids []string) (int, map[string][2]string, error) {
	out, err := p.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		return 0, nil, err
	}
	addrs := map[string][2]string{}
	running := 0
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if in.State == nil {
				continue
			}
			switch in.State.Name {
			case types.InstanceStateNameRunning:
				running++
				addrs[awssdk.ToString(in.InstanceId)] = [2]string{awssdk.ToString(in.PrivateIpAddress), awssdk.ToString(in.PublicIpAddress)}
			case types.InstanceStateNameTerminated, types.InstanceStateNameShuttingDown:
				return running, addrs, fmt.Errorf("instance %s is %s: %s", awssdk.ToString(in.InstanceId), in.State.Name, stateReason(in))
			}
		}
	}
	return running, addrs, nil
}

func stateReason(in types.Instance) string {
	if in.StateReason != nil {
		return awssdk.ToString(in.StateReason.Message)
	}
	return "no reason given"
}

// statusOK counts the instances whose two status checks pass and lists
// those with a failed one (impaired: a machine that needs someone's hand,
// which waiting does not mend).
func (p *Provider) statusOK(ctx context.Context, ids []string) (int, []string, error) {
	out, err := p.client.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: ids})
	if err != nil {
		return 0, nil, err
	}
	ok := 0
	var impaired []string
	for _, s := range out.InstanceStatuses {
		if s.InstanceStatus == nil || s.SystemStatus == nil {
			continue
		}
		switch {
		case s.InstanceStatus.Status == types.SummaryStatusOk && s.SystemStatus.Status == types.SummaryStatusOk:
			ok++
		case s.InstanceStatus.Status == types.SummaryStatusImpaired || s.SystemStatus.Status == types.SummaryStatusImpaired:
			impaired = append(impaired, awssdk.ToString(s.InstanceId))
		}
	}
	return ok, impaired, nil
}

// reasonOf is the instance's state reason, as DescribeInstances gives it.
func (p *Provider) reasonOf(ctx context.Context, id string) string {
	out, err := p.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) == 0 || len(out.Reservations[0].Instances) == 0 {
		return "no reason given"
	}
	return stateReason(out.Reservations[0].Instances[0])
}

func (p *Provider) securityGroup() string {
	if p.opts.SecurityGroupID != "" {
		return p.opts.SecurityGroupID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.createdSG
}

// ensureSecurityGroup creates a group for the run when none was given, open
// only to the runner's address on the ports the framework uses.
func (p *Provider) ensureSecurityGroup(ctx context.Context) error {
	if p.opts.SecurityGroupID != "" {
		return nil
	}
	if p.opts.RunnerCIDR == "" {
		return errors.New("aws: no security group given and no runner CIDR to open one to (set aws.security_group or aws.runner_cidr)")
	}
	p.mu.Lock()
	runID := p.spec.RunID
	p.mu.Unlock()
	in := &ec2.CreateSecurityGroupInput{
		GroupName:   awssdk.String("elasticity-" + runID),
		Description: awssdk.String("elasticity run " + runID),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeSecurityGroup,
			Tags: p.tags("elasticity-"+runID, "security-group")}},
	}
	if p.opts.VPCID != "" {
		in.VpcId = awssdk.String(p.opts.VPCID)
	}
	out, err := p.client.CreateSecurityGroup(ctx, in)
	if err != nil {
		return fmt.Errorf("aws: creating security group: %s", redact(err))
	}
	id := awssdk.ToString(out.GroupId)
	p.mu.Lock()
	p.createdSG = id
	p.mu.Unlock()
	var perms []types.IpPermission
	for _, port := range openPorts {
		perms = append(perms, types.IpPermission{IpProtocol: awssdk.String("tcp"), FromPort: awssdk.Int32(port), ToPort: awssdk.Int32(port),
			IpRanges: []types.IpRange{{CidrIp: awssdk.String(p.opts.RunnerCIDR), Description: awssdk.String("elasticity runner")}}})
	}
	// Nodes talk to each other on every port (internode 7000, shard-aware 19042 ...).
	perms = append(perms, types.IpPermission{IpProtocol: awssdk.String("-1"), UserIdGroupPairs: []types.UserIdGroupPair{{GroupId: awssdk.String(id)}}})
	if _, err := p.client.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: awssdk.String(id), IpPermissions: perms}); err != nil {
		return fmt.Errorf("aws: opening ports of security group %s: %s", id, redact(err))
	}
	p.logf("created security group %s open to %s on ports %v", id, p.opts.RunnerCIDR, openPorts)
	return nil
}

// imageFor is the image of an instance type: aws.ami when given, else the
// ScyllaDB machine image of the version for the type's architecture (arm64
// for Graviton types such as i8g) by SCT's rule (ami.go), looked up once per
// architecture.
func (p *Provider) imageFor(ctx context.Context, instanceType string) (string, error) {
	if p.opts.AMI != "" {
		return p.opts.AMI, nil
	}
	arch := provision.Architecture(instanceType)
	p.mu.Lock()
	ami, ok := p.amis[arch]
	version := p.spec.Version
	p.mu.Unlock()
	if ok {
		return ami, nil
	}
	ami, err := p.lookupAMI(ctx, version, arch)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	if p.amis == nil {
		p.amis = map[string]string{}
	}
	p.amis[arch] = ami
	p.mu.Unlock()
	return ami, nil
}

func (p *Provider) find(n provision.Node) (provision.Node, error) {
	if n.ID == "" {
		return n, fmt.Errorf("aws: node %s has no instance id", n.Name)
	}
	return n, nil
}

// StopNode implements provision.Provider (a clean OS shutdown stops scylla-server).
func (p *Provider) StopNode(ctx context.Context, n provision.Node) error {
	if _, err := p.find(n); err != nil {
		return err
	}
	_, err := p.client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{n.ID}})
	if err != nil {
		return fmt.Errorf("aws: stopping %s (%s): %s", n.Name, n.ID, redact(err))
	}
	return nil
}

// KillNode implements provision.Provider: a forced stop, the closest EC2 has to SIGKILL.
func (p *Provider) KillNode(ctx context.Context, n provision.Node) error {
	_, err := p.client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{n.ID}, Force: awssdk.Bool(true)})
	if err != nil {
		return fmt.Errorf("aws: force-stopping %s (%s): %s", n.Name, n.ID, redact(err))
	}
	return nil
}

// RemoveNode terminates the instance of a node that has left the cluster
// (the nemesis decommissions it through REST first).
func (p *Provider) RemoveNode(ctx context.Context, n provision.Node) error {
	if err := p.terminate(ctx, []string{n.ID}); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.nodes[:0]
	for _, m := range p.nodes {
		if m.ID != n.ID {
			kept = append(kept, m)
		}
	}
	p.nodes = kept
	return nil
}

func (p *Provider) terminate(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := p.client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	if err != nil && errorCode(err) != "InvalidInstanceID.NotFound" {
		return fmt.Errorf("aws: terminating %s: %s", strings.Join(ids, ","), redact(err))
	}
	p.logf("terminating %s", strings.Join(ids, ","))
	return nil
}

// Logs follows scylla-server's journal over SSH (the ScyllaDB images log to
// journald), from its first entry, converted to ScyllaDB's log format with
// each entry's level (see journalArgs).
func (p *Provider) Logs(ctx context.Context, n provision.Node) (io.ReadCloser, error) {
	if n.Address == "" {
		return nil, fmt.Errorf("aws: node %s has no address for ssh", n.Name)
	}
	args := []string{"-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes"}
	p.mu.Lock()
	dir := p.spec.Dir
	p.mu.Unlock()
	if dir != "" {
		// The run's own known_hosts: instances' addresses are reused by
		// later instances with other host keys.
		args = append(args, "-o", "UserKnownHostsFile="+filepath.Join(dir, "known_hosts"))
	}
	if p.opts.SSHKeyPath != "" {
		args = append(args, "-i", p.opts.SSHKeyPath)
	}
	args = append(args, p.opts.SSHUser+"@"+n.Address)
	args = append(args, journalArgs...)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("aws: piping ssh output of %s: %w", n.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("aws: starting ssh to %s for its log: %w", n.Name, err)
	}
	pr, pw := io.Pipe()
	go func() {
		err := JournalToScyllaLog(out, pw)
		_ = cmd.Wait()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// Destroy terminates every instance of the run (the ones this process started
// and any other carrying the run's tag) and deletes a created security group.
func (p *Provider) Destroy(ctx context.Context) error {
	p.mu.Lock()
	ids := append([]string(nil), p.launchedIDs...)
	runID := p.spec.RunID
	sg := p.createdSG
	p.mu.Unlock()
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	if runID != "" {
		out, err := p.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []types.Filter{
			{Name: awssdk.String("tag:" + TagRunID), Values: []string{runID}},
			{Name: awssdk.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}},
		}})
		if err == nil {
			for _, r := range out.Reservations {
				for _, in := range r.Instances {
					if id := awssdk.ToString(in.InstanceId); !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
		}
	}
	var errs []error
	if err := p.terminate(ctx, ids); err != nil {
		errs = append(errs, err)
	}
	if sg != "" {
		if err := p.deleteSecurityGroup(ctx, sg, ids); err != nil {
			errs = append(errs, err)
		} else {
			p.mu.Lock()
			p.createdSG = ""
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	p.created = false // the run's security group is gone or going: no more loaders
	p.mu.Unlock()
	if len(errs) == 0 {
		p.mu.Lock()
		p.launchedIDs, p.nodes = nil, nil
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

// deleteSecurityGroup waits for the instances to be terminated (a group in use
// cannot be deleted), then deletes it, retrying DependencyViolation.
func (p *Provider) deleteSecurityGroup(ctx context.Context, sg string, ids []string) error {
	deadline := time.Now().Add(p.opts.ReadyTimeout)
	for {
		_, err := p.client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: awssdk.String(sg)})
		if err == nil || errorCode(err) == "InvalidGroup.NotFound" {
			return nil
		}
		if errorCode(err) != "DependencyViolation" || time.Now().After(deadline) {
			return fmt.Errorf("aws: deleting security group %s: %s", sg, redact(err))
		}
		p.logf("security group %s still in use by terminating instances; retrying", sg)
		select {
		case <-ctx.Done():
			return fmt.Errorf("aws: deleting security group %s: %w", sg, ctx.Err())
		case <-time.After(p.opts.PollInterval):
		}
	}
}

// parseKeepUntil reads the KeepUntil tag (RFC 3339); a missing or bad tag means "keep".
func parseKeepUntil(tags []types.Tag) (time.Time, bool) {
	for _, t := range tags {
		if awssdk.ToString(t.Key) == TagKeepUntil {
			if ts, err := time.Parse(time.RFC3339, awssdk.ToString(t.Value)); err == nil {
				return ts, true
			}
			if unix, err := strconv.ParseInt(awssdk.ToString(t.Value), 10, 64); err == nil {
				return time.Unix(unix, 0), true
			}
		}
	}
	return time.Time{}, false
}

func tagValue(tags []types.Tag, key string) string {
	for _, t := range tags {
		if awssdk.ToString(t.Key) == key {
			return awssdk.ToString(t.Value)
		}
	}
	return ""
}
