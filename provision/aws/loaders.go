package aws

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	"github.com/elasticity-dev/elasticity/provision"
)

// LoaderUserData keeps ScyllaDB from starting on a loader machine launched
// from the ScyllaDB image: the host is used only to run `elasticity stress`.
func LoaderUserData() (string, error) {
	b, err := json.Marshal(scyllaUserData{ScyllaYAML: map[string]any{}, StartScyllaOnFirstBoot: false})
	if err != nil {
		return "", fmt.Errorf("aws: encoding loader user-data: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// LaunchLoaders implements provision.LoaderLauncher: spec.Count instances of
// spec.InstanceType tagged NodeType=loader, in the run's security group (its
// members reach each other on every port, so loaders reach CQL on the nodes'
// private addresses), spread round-robin over the racks' zones so that each
// zone's nodes get some traffic from their own zone. Destroy terminates them
// with the nodes. A failure terminates the loaders of this call only; the
// cluster stays up for the caller to tear down.
func (p *Provider) LaunchLoaders(ctx context.Context, spec provision.LoaderSpec) (loaders []provision.Loader, err error) {
	if spec.Count <= 0 {
		return nil, fmt.Errorf("aws: %d loaders asked for", spec.Count)
	}
	if _, err := provision.LookupInstanceType(spec.InstanceType); err != nil {
		return nil, fmt.Errorf("aws: loader instance type: %w", err)
	}
	p.mu.Lock()
	created, racks := p.created, append([]string(nil), p.spec.Racks...)
	runID := p.spec.RunID
	p.mu.Unlock()
	if !created {
		return nil, errors.New("aws: loaders are launched after the cluster is created (they join its security group)")
	}
	ami := p.opts.LoaderAMI
	if ami == "" {
		// The nodes' image, of the loader type's architecture.
		if ami, err = p.imageFor(ctx, spec.InstanceType); err != nil {
			return nil, err
		}
	}
	ud, err := LoaderUserData()
	if err != nil {
		return nil, err
	}
	var ls []launched
	defer func() {
		if err == nil {
			return
		}
		var ids []string
		for _, l := range ls {
			ids = append(ids, l.node.ID)
		}
		p.logf("launching loaders failed (%v); terminating the %d launched", err, len(ids))
		if terr := p.terminate(context.WithoutCancel(ctx), ids); terr != nil {
			err = errors.Join(err, terr)
		}
	}()
	for i := 0; i < spec.Count; i++ {
		p.mu.Lock()
		p.nextLoader++
		n := p.nextLoader
		p.mu.Unlock()
		name := fmt.Sprintf("loader-%d", n)
		az := p.azFor(racks[i%len(racks)])
		in := p.runInput(fmt.Sprintf("%s-%s", runID, name), "loader", ami, spec.InstanceType, az, ud)
		p.logf("launching %s (%s) in %s", name, spec.InstanceType, az)
		inst, rerr := p.runInstance(ctx, in)
		if rerr != nil {
			return nil, fmt.Errorf("aws: launching %s (%s in %s): %s", name, spec.InstanceType, az, redact(rerr))
		}
		l := launched{privateIP: awssdk.ToString(inst.PrivateIpAddress), node: provision.Node{
			Name: name, ID: awssdk.ToString(inst.InstanceId), InstanceType: spec.InstanceType}}
		ls = append(ls, l)
		p.mu.Lock()
		p.launchedIDs = append(p.launchedIDs, l.node.ID)
		p.mu.Unlock()
	}
	if err := p.waitReady(ctx, ls); err != nil {
		return nil, err
	}
	for _, l := range ls {
		loaders = append(loaders, provision.Loader{Name: l.node.Name, ID: l.node.ID, InstanceType: l.node.InstanceType, Address: l.node.Address})
	}
	return loaders, nil
}
