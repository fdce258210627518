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
		{"ami-old", "ScyllaDB 2025.1.0", "2025-01-01T00:00:00.000Z", ""},
		{"ami-new", "ScyllaDB 2025.1.3", "2025-06-01T00:00:00.000Z", ""},
		{"ami-arm", "ScyllaDB 2025.1.3", "2025-06-01T00:00:00.000Z", "arm64"},
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
		// The image keeps api_address: 127.0.0.1 unless told: REST must be reachable.
		if ud.ScyllaYAML["api_address"] != "0.0.0.0" {
			t.Errorf("instance %d api_address %v, want 0.0.0.0", i, ud.ScyllaYAML["api_address"])
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
	for i, n := range nodes {
		// Gossip knows a node by its private address; the DC is Ec2Snitch's.
		if n.PrivateAddress != live[i].privateIP || n.GossipAddress() != live[i].privateIP || n.DC != "us-east" || n.Rack != testSpec().Racks[i] {
			t.Errorf("node %d: private %q gossip %q dc %q rack %q", i, n.PrivateAddress, n.GossipAddress(), n.DC, n.Rack)
		}
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
	for i := 1; i <= 6; i++ {
		ports[sg.perms.Get("IpPermissions."+string(rune('0'+i))+".FromPort")] = true
	}
	for _, port := range []string{"22", "9042", "9100", "9180", "10000", "19042"} {
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

// An instance that fails its status check fails the create at once, with
// its reason, instead of being waited for until the ready timeout (the
// simulated region reports an instance whose scylla-server could not take
// its address so).
func TestImpairedInstanceFailsTheCreate(t *testing.T) {
	f := newFakeEC2(t)
	f.impairedAt, f.reason = 2, "scylla-server failed to start: it exited: bind: address already in use"
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-explicit"; o.ReadyTimeout = time.Hour })
	_, err := p.Create(context.Background(), testSpec())
	if err == nil || !strings.Contains(err.Error(), "impaired") || !strings.Contains(err.Error(), f.order[1]) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("want the impaired instance named with its reason, got %v", err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances left running after a failed Create", len(l))
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

func TestGravitonTypesGetTheArm64Image(t *testing.T) {
	f := newFakeEC2(t)
	f.images = []fakeImage{{"ami-x86", "ScyllaDB 2025.1.3", "2025-06-01T00:00:00.000Z", "x86_64"}, {"ami-arm", "ScyllaDB 2025.1.3", "2025-06-01T00:00:00.000Z", "arm64"}}
	var logs strings.Builder
	p := testProvider(t, f, &logs, nil)
	spec := testSpec()
	spec.InstanceType = "i8g.large"
	ctx := context.Background()
	if _, err := p.Create(ctx, spec); err != nil {
		t.Fatalf("Create: %v\n%s", err, logs.String())
	}
	if _, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "rack1", InstanceType: "i4i.xlarge"}}); err != nil {
		t.Fatal(err)
	}
	live := f.live()
	for i, in := range live {
		want := "ami-arm"
		if in.typ == "i4i.xlarge" {
			want = "ami-x86"
		}
		if in.ami != want {
			t.Errorf("instance %d (%s): image %s, want %s", i, in.typ, in.ami, want)
		}
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestEc2SnitchDC(t *testing.T) {
	for zone, want := range map[string][2]string{"us-east-1a": {"us-east", "1a"}, "us-west-2b": {"us-west-2", "2b"}, "ap-southeast-1c": {"ap-southeast", "1c"}, "eu-west-3a": {"eu-west-3", "3a"}} {
		if dc, rack := Ec2SnitchDC(zone); dc != want[0] || rack != want[1] {
			t.Errorf("%s: %s/%s, want %v", zone, dc, rack, want)
		}
	}
}

// journald JSON back to ScyllaDB's format, with the level from PRIORITY.
func TestJournalToScyllaLog(t *testing.T) {
	in := `{"__REALTIME_TIMESTAMP":"1764590400123000","PRIORITY":"3","MESSAGE":" [shard 0:main] storage_service - Shutting down: I/O error","_SYSTEMD_UNIT":"scylla-server.service"}
{"__REALTIME_TIMESTAMP":"1764590401000000","PRIORITY":"4","MESSAGE":" [shard 1:strm] stream_session - slow"}
{"__REALTIME_TIMESTAMP":"1764590402000000","PRIORITY":"6","MESSAGE":[32,91,115,104,97,114,100,32,48,93,32,120]}
-- Journal begins at Mon 2026-11-30 --
`
	var out strings.Builder
	if err := JournalToScyllaLog(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	ts := time.UnixMicro(1764590400123000).Format("2006-01-02 15:04:05,000")
	want0 := "ERROR " + ts + " [shard 0:main] storage_service - Shutting down: I/O error"
	if len(lines) != 4 || lines[0] != want0 || !strings.HasPrefix(lines[1], "WARN  ") || !strings.HasSuffix(lines[2], " [shard 0] x") || !strings.HasPrefix(lines[2], "INFO  ") || lines[3] != "-- Journal begins at Mon 2026-11-30 --" {
		t.Fatalf("got:\n%s\nwant first line %q", out.String(), want0)
	}
	if strings.Join(journalArgs, " ") != "journalctl -u scylla-server -f -n all --no-pager -o json" {
		t.Errorf("journalctl arguments %v: want the whole journal (-n all), followed, as JSON (with PRIORITY)", journalArgs)
	}
}
