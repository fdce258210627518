package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/awssim"
	"github.com/elasticity-dev/elasticity/provision"
)

func TestLaunchLoaders(t *testing.T) {
	f := newSim(t, nil)
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-db" })
	ctx := context.Background()
	if _, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c6i.2xlarge"}); err == nil || !strings.Contains(err.Error(), "after the cluster is created") {
		t.Fatalf("loaders before Create: %v", err)
	}
	nodes, err := p.Create(ctx, testSpec())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if !strings.HasPrefix(n.PrivateAddress, simPrivateNet) || n.PrivateAddress == n.Address {
			t.Errorf("node %s: private address %q, address %q", n.Name, n.PrivateAddress, n.Address)
		}
	}
	if _, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c9z.mega"}); err == nil || !strings.Contains(err.Error(), "c9z.mega") {
		t.Fatalf("unknown loader type: %v", err)
	}
	loaders, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 2, InstanceType: "c6i.2xlarge"})
	if err != nil || len(loaders) != 2 {
		t.Fatalf("LaunchLoaders: %v (%d)\n%s", err, len(loaders), logs.String())
	}
	live := f.live()
	if len(live) != 5 {
		t.Fatalf("%d instances, want 3 nodes + 2 loaders", len(live))
	}
	for i, in := range live[3:] {
		l := loaders[i]
		want := map[string]string{TagNodeType: "loader", TagRunID: "run-42", TagCreatedBy: "elasticity", TagName: "run-42-loader-" + string(rune('1'+i)), TagKeepUntil: "2026-11-30T18:00:00Z"}
		for k, v := range want {
			if in.Tags[k] != v {
				t.Errorf("loader %d tag %s = %q, want %q", i+1, k, in.Tags[k], v)
			}
		}
		if sg := securityGroupOf(in); in.Type != "c6i.2xlarge" || in.Image != "ami-db" || sg != p.securityGroup() || sg == "" {
			t.Errorf("loader %d: type %s ami %s sg %q", i+1, in.Type, in.Image, sg)
		}
		if wantAZ := []string{"us-east-1a", "us-east-1b"}[i]; in.Zone != wantAZ {
			t.Errorf("loader %d in %s, want %s (round-robin over the racks' zones)", i+1, in.Zone, wantAZ)
		}
		ud := decodeUserData(t, in.UserData)
		if ud.StartScyllaOnFirstBoot {
			t.Errorf("loader %d user-data starts ScyllaDB", i+1)
		}
		if l.Name != "loader-"+string(rune('1'+i)) || l.ID != in.ID || l.Address != in.Public || l.Local {
			t.Errorf("loader %d: %+v (instance %s, public %s)", i+1, l, in.ID, in.Public)
		}
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances (nodes or loaders) left after Destroy", len(l))
	}
}

func TestLoaderFailureTerminatesOnlyItsLoaders(t *testing.T) {
	f := newSim(t, nil)
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-db"; o.LoaderAMI = "ami-loader" })
	ctx := context.Background()
	if _, err := p.Create(ctx, testSpec()); err != nil {
		t.Fatal(err)
	}
	f.FailCall("RunInstances", 2, "InsufficientInstanceCapacity") // the second loader cannot be launched
	_, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 2, InstanceType: "c6i.2xlarge"})
	if err == nil || !strings.Contains(err.Error(), "loader-2") || !strings.Contains(err.Error(), "InsufficientInstanceCapacity") {
		t.Fatalf("want loader-2's capacity error, got %v", err)
	}
	live := f.live()
	if len(live) != 3 {
		t.Fatalf("%d instances live, want the 3 nodes only", len(live))
	}
	for _, in := range live {
		if in.Tags[TagNodeType] != "db" {
			t.Errorf("a %s instance survived the failed loader launch", in.Tags[TagNodeType])
		}
	}
	var amis []string
	for _, q := range f.requestsOf("RunInstances") {
		if strings.Contains(q.Params.Get("TagSpecification.1.Tag.1.Value"), "loader") {
			amis = append(amis, q.Params.Get("ImageId"))
		}
	}
	if len(amis) == 0 || amis[0] != "ami-loader" {
		t.Errorf("loader AMIs %v, want ami-loader", amis)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLoaderUserDataDecodes(t *testing.T) {
	s, err := LoaderUserData()
	if err != nil {
		t.Fatal(err)
	}
	ud := decodeUserData(t, s)
	if ud.StartScyllaOnFirstBoot {
		t.Fatalf("loader user-data starts ScyllaDB: %+v", ud)
	}
	if ud.ScyllaYAML == nil || seedsOf(ud) != "" || ud.ScyllaYAML["cluster_name"] != nil {
		t.Fatalf("loader user-data must not configure a cluster member: %+v", ud)
	}
}

// Loaders follow the nodes' address rule (private with UsePrivateIPs), spot
// falls back to on-demand for them too, and the run's Destroy ends further launches.
func TestLoadersPrivateIPsSpotAndAfterDestroy(t *testing.T) {
	f := newSim(t, nil)
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-db"; o.UsePrivateIPs = true; o.Spot = true })
	ctx := context.Background()
	spec := testSpec()
	spec.Racks = spec.Racks[:1]
	if _, err := p.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 0, InstanceType: "c6i.2xlarge"}); err == nil {
		t.Error("zero loaders: want an error")
	}
	f.FailCall("RunInstances", 1, "InsufficientInstanceCapacity") // the loader's spot request is refused
	loaders, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c7i.2xlarge"})
	if err != nil || len(loaders) != 1 {
		t.Fatalf("LaunchLoaders: %v\n%s", err, logs.String())
	}
	live := f.live()
	if in := live[len(live)-1]; loaders[0].Address != in.Private || in.Type != "c7i.2xlarge" {
		t.Errorf("loader %+v: want the private address %s and type c7i.2xlarge (got %s)", loaders[0], in.Private, in.Type)
	}
	var markets []string
	for _, q := range f.requestsOf("RunInstances") {
		if q.Params.Get("InstanceType") == "c7i.2xlarge" {
			markets = append(markets, q.Params.Get("InstanceMarketOptions.MarketType"))
		}
	}
	if len(markets) != 2 || markets[0] != "spot" || markets[1] != "" {
		t.Errorf("loader launches: want spot then on-demand, got %q", markets)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances left after Destroy", len(l))
	}
	if _, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c6i.2xlarge"}); err == nil {
		t.Error("LaunchLoaders after Destroy: want an error (the run's security group is gone)")
	}
}

// A failed loader launch reports the EC2 error without any credential, in the
// error and in the logs.
func TestLoaderFailureHasNoCredential(t *testing.T) {
	f := newSim(t, nil)
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-db" })
	ctx := context.Background()
	if _, err := p.Create(ctx, testSpec()); err != nil {
		t.Fatal(err)
	}
	f.FailCall("RunInstances", 1, "InsufficientInstanceCapacity")
	_, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c6i.xlarge"})
	if err == nil || !strings.Contains(err.Error(), "loader-1") {
		t.Fatalf("want loader-1's error, got %v", err)
	}
	for _, text := range []string{err.Error(), logs.String()} {
		for _, secret := range []string{awssim.AccessKeyID, awssim.SecretAccessKey, sessionToken} {
			if strings.Contains(text, secret) {
				t.Errorf("credential %q leaked into %q", secret, text)
			}
		}
	}
	if n := len(f.live()); n != 3 {
		t.Errorf("%d instances live, want the 3 nodes", n)
	}
}
