package aws

import (
	"context"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/provision"
)

func TestLaunchLoaders(t *testing.T) {
	f := newFakeEC2(t)
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
		if !strings.HasPrefix(n.PrivateAddress, "10.0.0.") || n.PrivateAddress == n.Address {
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
			if in.tags[k] != v {
				t.Errorf("loader %d tag %s = %q, want %q", i+1, k, in.tags[k], v)
			}
		}
		if in.typ != "c6i.2xlarge" || in.ami != "ami-db" || in.tags["sg"] != p.securityGroup() || in.tags["sg"] == "" {
			t.Errorf("loader %d: type %s ami %s sg %q", i+1, in.typ, in.ami, in.tags["sg"])
		}
		if wantAZ := []string{"us-east-1a", "us-east-1b"}[i]; in.az != wantAZ {
			t.Errorf("loader %d in %s, want %s (round-robin over the racks' zones)", i+1, in.az, wantAZ)
		}
		ud := decodeUserData(t, in.userData)
		if ud.StartScyllaOnFirstBoot {
			t.Errorf("loader %d user-data starts ScyllaDB", i+1)
		}
		if l.Name != "loader-"+string(rune('1'+i)) || l.ID != in.id || l.Address != in.publicIP || l.Local {
			t.Errorf("loader %d: %+v (instance %s, public %s)", i+1, l, in.id, in.publicIP)
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
	f := newFakeEC2(t)
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-db"; o.LoaderAMI = "ami-loader" })
	ctx := context.Background()
	if _, err := p.Create(ctx, testSpec()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.failRunAt = f.runCalls + 2 // the second loader cannot be launched
	f.mu.Unlock()
	_, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 2, InstanceType: "c6i.2xlarge"})
	if err == nil || !strings.Contains(err.Error(), "loader-2") || !strings.Contains(err.Error(), "InsufficientInstanceCapacity") {
		t.Fatalf("want loader-2's capacity error, got %v", err)
	}
	live := f.live()
	if len(live) != 3 {
		t.Fatalf("%d instances live, want the 3 nodes only", len(live))
	}
	for _, in := range live {
		if in.tags[TagNodeType] != "db" {
			t.Errorf("a %s instance survived the failed loader launch", in.tags[TagNodeType])
		}
	}
	f.mu.Lock()
	var amis []string
	for _, q := range f.requests {
		if q.Get("Action") == "RunInstances" && strings.Contains(q.Get("TagSpecification.1.Tag.1.Value"), "loader") {
			amis = append(amis, q.Get("ImageId"))
		}
	}
	f.mu.Unlock()
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
	f := newFakeEC2(t)
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
	f.mu.Lock()
	f.failRunAt = f.runCalls + 1 // the loader's spot request is refused
	f.mu.Unlock()
	loaders, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c7i.2xlarge"})
	if err != nil || len(loaders) != 1 {
		t.Fatalf("LaunchLoaders: %v\n%s", err, logs.String())
	}
	live := f.live()
	if in := live[len(live)-1]; loaders[0].Address != in.privateIP || in.typ != "c7i.2xlarge" {
		t.Errorf("loader %+v: want the private address %s and type c7i.2xlarge (got %s)", loaders[0], in.privateIP, in.typ)
	}
	f.mu.Lock()
	var markets []string
	for _, q := range f.requests {
		if q.Get("Action") == "RunInstances" && q.Get("InstanceType") == "c7i.2xlarge" {
			markets = append(markets, q.Get("InstanceMarketOptions.MarketType"))
		}
	}
	f.mu.Unlock()
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
	f := newFakeEC2(t)
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-db" })
	ctx := context.Background()
	if _, err := p.Create(ctx, testSpec()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.failRunAt = f.runCalls + 1
	f.mu.Unlock()
	_, err := p.LaunchLoaders(ctx, provision.LoaderSpec{Count: 1, InstanceType: "c6i.xlarge"})
	if err == nil || !strings.Contains(err.Error(), "loader-1") {
		t.Fatalf("want loader-1's error, got %v", err)
	}
	for _, text := range []string{err.Error(), logs.String()} {
		for _, secret := range []string{testAccessKey, testSecretKey, "sessiontoken123"} {
			if strings.Contains(text, secret) {
				t.Errorf("credential %q leaked into %q", secret, text)
			}
		}
	}
	if n := len(f.live()); n != 3 {
		t.Errorf("%d instances live, want the 3 nodes", n)
	}
}
