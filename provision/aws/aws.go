// Package aws provisions ScyllaDB clusters on EC2 (i4i and friends).
//
// Racks are availability zones. Every resource is tagged CreatedBy=elasticity,
// RunId and KeepUntil so that `elasticity gc --backend aws` can find what a
// crashed run left behind. Credentials come from the standard chain and never
// appear in logs, results or error messages (see redact).
package aws

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/elasticity-dev/elasticity/provision"
)

// Tag keys put on every resource.
const (
	TagName      = "Name"
	TagRunID     = "RunId"
	TagScenario  = "Scenario"
	TagCreatedBy = "CreatedBy"
	TagNodeType  = "NodeType"
	TagKeepUntil = "KeepUntil"
	CreatedByVal = "elasticity"
)

// Ports opened in a security group created for a run.
// 19042 is the shard-aware CQL port (native_shard_aware_transport_port in
// scylladb conf/scylla.yaml) that shard-aware drivers connect to.
var openPorts = []int32{22, 9042, 9100, 9180, 10000, 19042}

// Options configure the EC2 provider.
type Options struct {
	Region            string
	AvailabilityZones []string          // one per rack, in rack order; defaults to the racks' names
	SubnetIDs         map[string]string // AZ -> subnet; empty: the default VPC
	AMI               string            // explicit image id; else looked up from Version and each instance type's architecture
	LoaderAMI         string            // image for loader machines; default: the nodes' image (an Ubuntu host with the ssh user)
	KeyPair           string
	SecurityGroupID   string // existing group; empty: one is created per run
	RunnerCIDR        string // source of the created group's rules, e.g. 203.0.113.7/32
	VPCID             string // for a created group when subnets are given
	Spot              bool   // try spot first, fall back to on-demand
	UsePrivateIPs     bool   // the runner is inside the VPC
	SSHUser           string // for logs through journalctl; default "scyllaadm"
	SSHKeyPath        string
	PollInterval      time.Duration // default 5s
	ReadyTimeout      time.Duration // running + status checks; default 15m
	Logf              func(format string, args ...any)
	Now               func() time.Time

	// Client is used instead of one built from the standard chain (tests, custom endpoints).
	Client *ec2.Client
}

// Provider is the EC2 backend.
type Provider struct {
	opts   Options
	client *ec2.Client

	mu          sync.Mutex
	spec        provision.ClusterSpec
	nodes       []provision.Node
	createdSG   string
	seeds       []string
	next        int
	nextLoader  int
	created     bool              // Create succeeded and Destroy has not run since: loaders may be launched
	launchedIDs []string          // every instance this provider started (nodes and loaders), ready or not
	amis        map[string]string // architecture -> looked-up image
}

var _ provision.Provider = (*Provider)(nil)
var _ provision.Sweeper = (*Provider)(nil)
var _ provision.LoaderLauncher = (*Provider)(nil)

// New builds the provider. Credentials and region come from the standard AWS
// chain unless opts.Client is set.
func New(ctx context.Context, opts Options) (*Provider, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 5 * time.Second
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 15 * time.Minute
	}
	if opts.SSHUser == "" {
		opts.SSHUser = "scyllaadm"
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := opts.Client
	if c == nil {
		var lo []func(*config.LoadOptions) error
		if opts.Region != "" {
			lo = append(lo, config.WithRegion(opts.Region))
		}
		cfg, err := config.LoadDefaultConfig(ctx, lo...)
		if err != nil {
			return nil, fmt.Errorf("loading AWS configuration: %s", redact(err))
		}
		if cfg.Region == "" {
			return nil, errors.New("aws: no region: set aws.region in the scenario or AWS_REGION")
		}
		c = ec2.NewFromConfig(cfg)
	}
	return &Provider{opts: opts, client: c}, nil
}

// Name implements provision.Provider.
func (p *Provider) Name() string { return "aws" }

func (p *Provider) logf(format string, args ...any) { p.opts.Logf("aws: "+format, args...) }

func (p *Provider) azFor(rack string) string {
	for i, r := range p.spec.Racks {
		if r == rack && i < len(p.opts.AvailabilityZones) {
			return p.opts.AvailabilityZones[i]
		}
	}
	return rack
}

// Create implements provision.Provider: security group, image, then the seed
// node first (its private address goes into everyone's user-data), then the rest.
// A failure half-way tears down what was created.
func (p *Provider) Create(ctx context.Context, spec provision.ClusterSpec) (nodes []provision.Node, err error) {
	if len(spec.Racks) == 0 || spec.NodesPerRack <= 0 {
		return nil, errors.New("aws: cluster spec needs racks and nodes_per_rack > 0")
	}
	if _, err := provision.LookupInstanceType(spec.InstanceType); err != nil {
		return nil, fmt.Errorf("aws: %w", err)
	}
	p.mu.Lock()
	p.spec = spec
	p.mu.Unlock()
	defer func() {
		if err != nil {
			p.logf("provisioning failed (%v); tearing down what was created", err)
			if derr := p.Destroy(context.WithoutCancel(ctx)); derr != nil {
				err = errors.Join(err, fmt.Errorf("tearing down after the failure: %w", derr))
			}
		}
	}()
	if err := p.ensureSecurityGroup(ctx); err != nil {
		return nil, err
	}
	if _, err := p.imageFor(ctx, spec.InstanceType); err != nil {
		return nil, err
	}
	var specs []provision.NodeSpec
	for i := 0; i < spec.NodesPerRack; i++ {
		for _, r := range spec.Racks {
			specs = append(specs, provision.NodeSpec{Rack: r, InstanceType: spec.InstanceType})
		}
	}
	// The seed goes first so its address can be written into the others' user-data.
	first, err := p.launch(ctx, specs[:1])
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.seeds = []string{first[0].privateIP}
	p.mu.Unlock()
	rest, err := p.launch(ctx, specs[1:])
	if err != nil {
		return nil, err
	}
	all := append(first, rest...)
	if err := p.waitReady(ctx, all); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.created = true
	p.mu.Unlock()
	return p.record(all), nil
}

// AddNodes implements provision.Provider: new instances in the racks' AZs join through the seeds.
func (p *Provider) AddNodes(ctx context.Context, specs []provision.NodeSpec) ([]provision.Node, error) {
	for _, s := range specs {
		if _, err := provision.LookupInstanceType(s.InstanceType); err != nil {
			return nil, fmt.Errorf("aws: %w", err)
		}
	}
	launched, err := p.launch(ctx, specs)
	if err != nil {
		return nil, err
	}
	if err := p.waitReady(ctx, launched); err != nil {
		return nil, err
	}
	return p.record(launched), nil
}

type launched struct {
	node      provision.Node
	privateIP string
}

func (p *Provider) record(ls []launched) []provision.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]provision.Node, 0, len(ls))
	for _, l := range ls {
		p.nodes = append(p.nodes, l.node)
		out = append(out, l.node)
	}
	return out
}

func (p *Provider) tags(name, nodeType string) []types.Tag {
	p.mu.Lock()
	spec := p.spec
	p.mu.Unlock()
	ttl := spec.TTL
	if ttl <= 0 {
		ttl = 12 * time.Hour
	}
	t := []types.Tag{
		{Key: awssdk.String(TagName), Value: awssdk.String(name)},
		{Key: awssdk.String(TagRunID), Value: awssdk.String(spec.RunID)},
		{Key: awssdk.String(TagScenario), Value: awssdk.String(spec.Scenario)},
		{Key: awssdk.String(TagCreatedBy), Value: awssdk.String(CreatedByVal)},
		{Key: awssdk.String(TagNodeType), Value: awssdk.String(nodeType)},
		{Key: awssdk.String(TagKeepUntil), Value: awssdk.String(p.opts.Now().Add(ttl).UTC().Format(time.RFC3339))},
	}
	keys := make([]string, 0, len(spec.Labels))
	for k := range spec.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t = append(t, types.Tag{Key: awssdk.String(k), Value: awssdk.String(spec.Labels[k])})
	}
	return t
}

func (p *Provider) launch(ctx context.Context, specs []provision.NodeSpec) ([]launched, error) {
	var out []launched
	for _, s := range specs {
		p.mu.Lock()
		p.next++
		name := fmt.Sprintf("%s-node-%d", p.spec.RunID, p.next)
		nodeName := fmt.Sprintf("node-%d", p.next)
		seeds := append([]string(nil), p.seeds...)
		spec := p.spec
		p.mu.Unlock()
		ud, err := UserData(spec, seeds)
		if err != nil {
			return out, err
		}
		az := p.azFor(s.Rack)
		ami, err := p.imageFor(ctx, s.InstanceType)
		if err != nil {
			return out, err
		}
		in := p.runInput(name, "db", ami, s.InstanceType, az, ud)
		p.logf("launching %s (%s) in %s", nodeName, s.InstanceType, az)
		inst, err := p.runInstance(ctx, in)
		if err != nil {
			return out, fmt.Errorf("aws: launching %s (%s in %s): %s", nodeName, s.InstanceType, az, redact(err))
		}
		// The nodes run Ec2Snitch (see UserData): their DC is named after the
		// zone's region, whatever the scenario calls it.
		dc, _ := Ec2SnitchDC(az)
		l := launched{privateIP: awssdk.ToString(inst.PrivateIpAddress), node: provision.Node{
			Name: nodeName, ID: awssdk.ToString(inst.InstanceId), DC: dc, Rack: s.Rack,
			InstanceType: s.InstanceType, PrivateAddress: awssdk.ToString(inst.PrivateIpAddress),
			CQLPort: 9042, RESTPort: 10000, MetricsPort: 9180,
		}}
		out = append(out, l)
		// Remember the id at once so that Destroy after a later failure finds it.
		p.mu.Lock()
		p.launchedIDs = append(p.launchedIDs, l.node.ID)
		p.mu.Unlock()
	}
	return out, nil
}

// runInput is the RunInstances request for one instance of the run: its
// image, type and AZ (or the AZ's subnet), the run's key pair and security
// group, and the run's tags on the instance and its volumes.
func (p *Provider) runInput(name, nodeType, ami, instanceType, az, userData string) *ec2.RunInstancesInput {
	in := &ec2.RunInstancesInput{
		ImageId:      awssdk.String(ami),
		InstanceType: types.InstanceType(instanceType),
		MinCount:     awssdk.Int32(1),
		MaxCount:     awssdk.Int32(1),
		UserData:     awssdk.String(userData),
		Placement:    &types.Placement{AvailabilityZone: awssdk.String(az)},
		TagSpecifications: []types.TagSpecification{
			{ResourceType: types.ResourceTypeInstance, Tags: p.tags(name, nodeType)},
			{ResourceType: types.ResourceTypeVolume, Tags: p.tags(name, nodeType)},
		},
		ClientToken: awssdk.String(name),
	}
	if p.opts.KeyPair != "" {
		in.KeyName = awssdk.String(p.opts.KeyPair)
	}
	if sg := p.securityGroup(); sg != "" {
		in.SecurityGroupIds = []string{sg}
	}
	if sub := p.opts.SubnetIDs[az]; sub != "" {
		in.SubnetId = awssdk.String(sub)
		in.Placement = nil // the subnet fixes the AZ
	}
	return in
}
