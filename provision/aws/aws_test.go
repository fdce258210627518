package aws

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

func testSpec() provision.ClusterSpec {
	return provision.ClusterSpec{
		RunID: "run-42", Scenario: "90pct-scaleout", ClusterName: "elasticity-run-42", Flavour: "scylla",
		Version: "2025.1", DC: "us-east", Racks: []string{"rack1", "rack2", "rack3"}, NodesPerRack: 1,
		InstanceType: "i4i.large", TTL: 6 * time.Hour, ExtraArgs: []string{"--blocked-reactor-notify-ms=25"},
	}
}

func decodeUserData(t *testing.T, s string) scyllaUserData {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("user-data is not base64: %v", err)
	}
	var ud scyllaUserData
	if err := json.Unmarshal(b, &ud); err != nil {
		t.Fatalf("user-data is not JSON: %v", err)
	}
	return ud
}

func seedsOf(ud scyllaUserData) string {
	sp, _ := ud.ScyllaYAML["seed_provider"].([]any)
	if len(sp) == 0 {
		return ""
	}
	params := sp[0].(map[string]any)["parameters"].([]any)
	return params[0].(map[string]any)["seeds"].(string)
}

func TestCreateGrowDestroyRequests(t *testing.T) {
	f := newFakeEC2(t)
	f.images = []fakeImage{
		{"ami-old", "ScyllaDB 2025.1.0", "2025-01-01T00:00:00.000Z"},
		{"ami-new", "ScyllaDB 2025.1.3", "2025-06-01T00:00:00.000Z"},
	}
	var logs strings.Builder
	p := testProvider(t, f, &logs, nil)
	ctx := context.Background()
	nodes, err := p.Create(ctx, testSpec())
	if err != nil {
		t.Fatalf("Create: %v\nlogs:\n%s", err, logs.String())
	}
	if len(nodes) != 3 {
		t.Fatalf("want 3 nodes, got %d", len(nodes))
	}
	live := f.live()
	wantAZ := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	for i, in := range live {
		if in.typ != "i4i.large" || in.az != wantAZ[i] || in.ami != "ami-new" {
			t.Errorf("instance %d: type %s az %s ami %s", i, in.typ, in.az, in.ami)
		}
		for k, v := range map[string]string{TagRunID: "run-42", TagScenario: "90pct-scaleout", TagCreatedBy: "elasticity", TagNodeType: "db",
			TagKeepUntil: "2026-11-30T18:00:00Z", TagName: "run-42-node-" + string(rune('1'+i))} {
			if in.tags[k] != v {
				t.Errorf("instance %d tag %s = %q, want %q", i, k, in.tags[k], v)
			}
		}
		ud := decodeUserData(t, in.userData)
		if ud.ScyllaYAML["cluster_name"] != "elasticity-run-42" || ud.ScyllaYAML["endpoint_snitch"] != "org.apache.cassandra.locator.Ec2Snitch" || !ud.StartScyllaOnFirstBoot {
			t.Errorf("instance %d user-data: %+v", i, ud)
		}
		if ud.ScyllaYAML["blocked_reactor_notify_ms"] != "25" {
			t.Errorf("extra args not in scylla_yaml: %+v", ud.ScyllaYAML)
		}
		if i > 0 && seedsOf(ud) != live[0].privateIP {
			t.Errorf("instance %d seeds %q, want the first node %s", i, seedsOf(ud), live[0].privateIP)
		}
		if in.tags["sg"] == "" || in.tags["sg"] != p.securityGroup() {
			t.Errorf("instance %d not in the run's security group", i)
		}
	}
	if nodes[0].Address != "203.0.113.1" && !strings.HasPrefix(nodes[0].Address, "203.0.113.") {
		t.Errorf("node address %q: want the public IP", nodes[0].Address)
	}
	// The created security group is open to the runner only, on the framework's ports.
	var sg *fakeSG
	for _, g := range f.sgs {
		sg = g
	}
	if sg == nil || sg.perms.Get("IpPermissions.1.IpRanges.1.CidrIp") != "198.51.100.7/32" {
		t.Fatalf("security group rules: %+v", sg)
	}
	ports := map[string]bool{}
	for i := 1; i <= 5; i++ {
		ports[sg.perms.Get("IpPermissions."+string(rune('0'+i))+".FromPort")] = true
	}
	for _, port := range []string{"22", "9042", "9100", "9180", "10000"} {
		if !ports[port] {
			t.Errorf("port %s not opened: %v", port, ports)
		}
	}

	// Grow by one i4i.4xlarge per rack in the same AZs.
	added, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.4xlarge"}, {Rack: "rack2", InstanceType: "i4i.4xlarge"}, {Rack: "rack3", InstanceType: "i4i.4xlarge"}})
	if err != nil || len(added) != 3 {
		t.Fatalf("AddNodes: %v (%d)", err, len(added))
	}
	live = f.live()
	for i, in := range live[3:] {
		if in.typ != "i4i.4xlarge" || in.az != wantAZ[i] || seedsOf(decodeUserData(t, in.userData)) != live[0].privateIP {
			t.Errorf("grown instance %d: %s in %s", i, in.typ, in.az)
		}
	}
	if _, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "rack1", InstanceType: "m5.huge"}}); err == nil || !strings.Contains(err.Error(), "i4i.large") {
		t.Errorf("unknown type: want an error listing known types, got %v", err)
	}

	if err := p.RemoveNode(ctx, added[0]); err != nil {
		t.Fatal(err)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances left after Destroy", len(l))
	}
	if len(f.sgs) != 0 {
		t.Fatalf("security group left after Destroy")
	}
}

func TestFailureHalfWayTearsDown(t *testing.T) {
	f := newFakeEC2(t)
	f.failRunAt = 3 // the third node cannot be launched
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-explicit" })
	_, err := p.Create(context.Background(), testSpec())
	if err == nil || !strings.Contains(err.Error(), "InsufficientInstanceCapacity") {
		t.Fatalf("want the capacity error, got %v", err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances left running after a failed Create", len(l))
	}
	if len(f.sgs) != 0 {
		t.Fatalf("the run's security group was left behind")
	}
	for _, a := range f.actions() {
		if a == "DescribeImages" {
			t.Errorf("an explicit AMI must not be looked up")
		}
	}
}

func TestSpotFallsBackToOnDemand(t *testing.T) {
	f := newFakeEC2(t)
	f.failRunAt = 1 // spot refused
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-x"; o.Spot = true })
	spec := testSpec()
	spec.Racks = spec.Racks[:1]
	nodes, err := p.Create(context.Background(), spec)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("Create with spot fallback: %v", err)
	}
	f.mu.Lock()
	var markets []string
	for _, q := range f.requests {
		if q.Get("Action") == "RunInstances" {
			markets = append(markets, q.Get("InstanceMarketOptions.MarketType"))
		}
	}
	f.mu.Unlock()
	if len(markets) != 2 || markets[0] != "spot" || markets[1] != "" {
		t.Fatalf("want a spot try then on-demand, got %q", markets)
	}
}

func TestSweepTerminatesOnlyExpiredTagged(t *testing.T) {
	f := newFakeEC2(t)
	add := func(id string, tags map[string]string) {
		f.instances[id] = &fakeInstance{id: id, state: "running", typ: "i4i.large", tags: tags}
		f.order = append(f.order, id)
	}
	add("i-expired", map[string]string{TagCreatedBy: "elasticity", TagRunID: "old", TagKeepUntil: "2026-11-30T10:00:00Z"})
	add("i-fresh", map[string]string{TagCreatedBy: "elasticity", TagRunID: "new", TagKeepUntil: "2026-11-30T20:00:00Z"})
	add("i-foreign", map[string]string{TagKeepUntil: "2020-01-01T00:00:00Z"})
	add("i-notag", map[string]string{TagCreatedBy: "elasticity"})
	f.sgs["sg-old"] = &fakeSG{id: "sg-old", name: "elasticity-old", tags: map[string]string{TagCreatedBy: "elasticity", TagKeepUntil: "2026-11-30T10:00:00Z"}}
	var logs strings.Builder
	p := testProvider(t, f, &logs, nil)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

	res, err := p.Sweep(context.Background(), now, true)
	if err != nil {
		t.Fatal(err)
	}
	expired := map[string]bool{}
	for _, r := range res {
		if r.Expired {
			expired[r.ID] = true
		}
	}
	if len(expired) != 2 || !expired["i-expired"] || !expired["sg-old"] {
		t.Fatalf("dry run: expired = %v", expired)
	}
	if len(f.live()) != 4 {
		t.Fatalf("a dry run terminated something")
	}
	if _, err := p.Sweep(context.Background(), now, false); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, in := range f.live() {
		left = append(left, in.id)
	}
	if strings.Join(left, ",") != "i-fresh,i-foreign,i-notag" {
		t.Fatalf("left after gc: %v", left)
	}
	if f.sgs["sg-old"] != nil {
		t.Fatalf("expired security group not deleted")
	}
}

func TestNoCredentialInLogsOrErrors(t *testing.T) {
	f := newFakeEC2(t)
	f.failRunAt = 2
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-x" })
	_, err := p.Create(context.Background(), testSpec())
	if err == nil {
		t.Fatal("want a failure")
	}
	// The fake saw signed requests: the key id really was sent ...
	f.mu.Lock()
	sent := strings.Contains(f.headers[0].Get("Authorization"), testAccessKey)
	f.mu.Unlock()
	if !sent {
		t.Fatal("test is broken: the fake did not receive the access key id")
	}
	// ... but neither it, the secret nor the session token reach logs or errors,
	// even when an error message echoes them.
	echo := RedactString("SignatureDoesNotMatch: Credential=" + testAccessKey + "/20261130/us-east-1/ec2/aws4_request, aws_secret_access_key=" + testSecretKey + " X-Amz-Security-Token: sessiontoken123")
	for _, text := range []string{logs.String(), err.Error(), echo} {
		for _, secret := range []string{testAccessKey, testSecretKey, "sessiontoken123"} {
			if strings.Contains(text, secret) {
				t.Errorf("credential %q leaked into %q", secret, text)
			}
		}
	}
}

func TestEstimateCost(t *testing.T) {
	lines, total, err := EstimateCost(map[string]int{"i4i.large": 3, "i4i.4xlarge": 3})
	if err != nil || len(lines) != 2 {
		t.Fatal(err)
	}
	if total < 4.6 || total > 4.7 {
		t.Fatalf("3 × i4i.large + 3 × i4i.4xlarge ≈ $4.64/h, got %.3f", total)
	}
	if _, _, err := EstimateCost(map[string]int{"x1.nope": 1}); err == nil {
		t.Fatal("unknown type must be an error")
	}
}
