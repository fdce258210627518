package aws

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/elasticity-dev/elasticity/awssim"
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
	f := newSim(t, func(o *awssim.Options) { o.Versions = []string{"2025.1.0", "2025.1.3"} })
	newest := publishedID(1, "2025.1.3", "x86_64") // the newest 2025.1 release's image
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
		if in.Type != "i4i.large" || in.Zone != wantAZ[i] || in.Image != newest {
			t.Errorf("instance %d: type %s az %s ami %s, want ami %s", i, in.Type, in.Zone, in.Image, newest)
		}
		for k, v := range map[string]string{TagRunID: "run-42", TagScenario: "90pct-scaleout", TagCreatedBy: "elasticity", TagNodeType: "db",
			TagKeepUntil: "2026-11-30T18:00:00Z", TagName: "run-42-node-" + string(rune('1'+i))} {
			if in.Tags[k] != v {
				t.Errorf("instance %d tag %s = %q, want %q", i, k, in.Tags[k], v)
			}
		}
		ud := decodeUserData(t, in.UserData)
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
		if i > 0 && seedsOf(ud) != live[0].Private {
			t.Errorf("instance %d seeds %q, want the first node %s", i, seedsOf(ud), live[0].Private)
		}
		if sg := securityGroupOf(in); sg == "" || sg != p.securityGroup() {
			t.Errorf("instance %d not in the run's security group", i)
		}
	}
	for i, n := range nodes {
		if n.Address != live[i].Public {
			t.Errorf("node %d address %q: want the public IP %s", i, n.Address, live[i].Public)
		}
		// Gossip knows a node by its private address; the DC is Ec2Snitch's.
		if n.PrivateAddress != live[i].Private || n.GossipAddress() != live[i].Private || n.DC != "us-east" || n.Rack != testSpec().Racks[i] {
			t.Errorf("node %d: private %q gossip %q dc %q rack %q", i, n.PrivateAddress, n.GossipAddress(), n.DC, n.Rack)
		}
	}
	// The created security group is open to the runner only, on the framework's ports.
	auth := f.requestsOf("AuthorizeSecurityGroupIngress")
	if len(auth) != 1 || auth[0].Params.Get("GroupId") != p.securityGroup() || auth[0].Params.Get("IpPermissions.1.IpRanges.1.CidrIp") != "198.51.100.7/32" {
		t.Fatalf("security group rules: %+v", auth)
	}
	ports := map[string]bool{}
	for i := 1; i <= 6; i++ {
		ports[auth[0].Params.Get("IpPermissions."+string(rune('0'+i))+".FromPort")] = true
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
		if in.Type != "i4i.4xlarge" || in.Zone != wantAZ[i] || seedsOf(decodeUserData(t, in.UserData)) != live[0].Private {
			t.Errorf("grown instance %d: %s in %s", i, in.Type, in.Zone)
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
	if len(f.SecurityGroups()) != 0 {
		t.Fatalf("security group left after Destroy")
	}
}

func TestFailureHalfWayTearsDown(t *testing.T) {
	f := newSim(t, nil)
	f.FailCall("RunInstances", 3, "InsufficientInstanceCapacity") // the third node cannot be launched
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-explicit" })
	_, err := p.Create(context.Background(), testSpec())
	if err == nil || !strings.Contains(err.Error(), "InsufficientInstanceCapacity") {
		t.Fatalf("want the capacity error, got %v", err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances left running after a failed Create", len(l))
	}
	if len(f.SecurityGroups()) != 0 {
		t.Fatalf("the run's security group was left behind")
	}
	if n := len(f.requestsOf("DescribeImages")); n != 0 {
		t.Errorf("an explicit AMI must not be looked up (%d DescribeImages)", n)
	}
}

// An instance that fails its status check fails the create at once, with
// its reason, instead of being waited for until the ready timeout (the
// simulated region reports an instance whose scylla-server could not take
// its address so).
func TestImpairedInstanceFailsTheCreate(t *testing.T) {
	f := newSim(t, nil)
	f.ImpairInstance(2, "scylla-server failed to start: it exited: bind: address already in use")
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-explicit"; o.ReadyTimeout = time.Hour })
	_, err := p.Create(context.Background(), testSpec())
	if err == nil || !strings.Contains(err.Error(), "impaired") || !strings.Contains(err.Error(), f.Instances()[1].ID) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("want the impaired instance named with its reason, got %v", err)
	}
	if l := f.live(); len(l) != 0 {
		t.Fatalf("%d instances left running after a failed Create", len(l))
	}
}

func TestSpotFallsBackToOnDemand(t *testing.T) {
	f := newSim(t, nil)
	f.FailCall("RunInstances", 1, "InsufficientInstanceCapacity") // spot refused
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-x"; o.Spot = true })
	spec := testSpec()
	spec.Racks = spec.Racks[:1]
	nodes, err := p.Create(context.Background(), spec)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("Create with spot fallback: %v", err)
	}
	var markets []string
	for _, q := range f.requestsOf("RunInstances") {
		markets = append(markets, q.Params.Get("InstanceMarketOptions.MarketType"))
	}
	if len(markets) != 2 || markets[0] != "spot" || markets[1] != "" {
		t.Fatalf("want a spot try then on-demand, got %q", markets)
	}
}

// launchTagged launches one instance carrying tags, as another run or
// another tool left it, and returns its id.
func (s *sim) launchTagged(t *testing.T, tags map[string]string) string {
	t.Helper()
	out, err := s.client.RunInstances(context.Background(), &ec2.RunInstancesInput{
		ImageId: awssdk.String("ami-x"), InstanceType: types.InstanceTypeI4iLarge, MinCount: awssdk.Int32(1), MaxCount: awssdk.Int32(1),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeInstance, Tags: ec2Tags(tags)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return awssdk.ToString(out.Instances[0].InstanceId)
}

func ec2Tags(tags map[string]string) []types.Tag {
	var out []types.Tag
	for k, v := range tags {
		out = append(out, types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)})
	}
	return out
}

func TestSweepTerminatesOnlyExpiredTagged(t *testing.T) {
	f := newSim(t, nil)
	expiredID := f.launchTagged(t, map[string]string{TagCreatedBy: "elasticity", TagRunID: "old", TagKeepUntil: "2026-11-30T10:00:00Z"})
	fresh := f.launchTagged(t, map[string]string{TagCreatedBy: "elasticity", TagRunID: "new", TagKeepUntil: "2026-11-30T20:00:00Z"})
	foreign := f.launchTagged(t, map[string]string{TagKeepUntil: "2020-01-01T00:00:00Z"})
	notag := f.launchTagged(t, map[string]string{TagCreatedBy: "elasticity"})
	sg, err := f.client.CreateSecurityGroup(context.Background(), &ec2.CreateSecurityGroupInput{
		GroupName: awssdk.String("elasticity-old"), Description: awssdk.String("an expired run's group"),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeSecurityGroup,
			Tags: ec2Tags(map[string]string{TagCreatedBy: "elasticity", TagKeepUntil: "2026-11-30T10:00:00Z"})}},
	})
	if err != nil {
		t.Fatal(err)
	}
	oldSG := awssdk.ToString(sg.GroupId)
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
	if len(expired) != 2 || !expired[expiredID] || !expired[oldSG] {
		t.Fatalf("dry run: expired = %v, want %s and %s", expired, expiredID, oldSG)
	}
	if len(f.live()) != 4 {
		t.Fatalf("a dry run terminated something")
	}
	if _, err := p.Sweep(context.Background(), now, false); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, in := range f.live() {
		left = append(left, in.ID)
	}
	if strings.Join(left, ",") != strings.Join([]string{fresh, foreign, notag}, ",") {
		t.Fatalf("left after gc: %v, want %s %s %s", left, fresh, foreign, notag)
	}
	if sgs := f.SecurityGroups(); len(sgs) != 0 {
		t.Fatalf("expired security group not deleted: %v", sgs)
	}
}

func TestNoCredentialInLogsOrErrors(t *testing.T) {
	f := newSim(t, nil)
	f.FailCall("RunInstances", 2, "InsufficientInstanceCapacity")
	var logs strings.Builder
	p := testProvider(t, f, &logs, func(o *Options) { o.AMI = "ami-x" })
	_, err := p.Create(context.Background(), testSpec())
	if err == nil {
		t.Fatal("want a failure")
	}
	// The region saw signed requests: the key id and the session token really were sent ...
	h := f.Requests()[0].Header
	if !strings.Contains(h.Get("Authorization"), "Credential="+awssim.AccessKeyID+"/") || h.Get("X-Amz-Security-Token") != sessionToken {
		t.Fatalf("test is broken: the region did not receive the credentials: %v", h)
	}
	// ... but neither they nor the secret reach logs or errors, even when an
	// error message echoes them (a real-looking key in the echo).
	echo := RedactString("SignatureDoesNotMatch: Credential=" + testAccessKey + "/20261130/us-east-1/ec2/aws4_request, aws_secret_access_key=" + testSecretKey + " X-Amz-Security-Token: " + sessionToken)
	secrets := []string{awssim.AccessKeyID, awssim.SecretAccessKey, sessionToken, testAccessKey, testSecretKey}
	for _, text := range []string{logs.String(), err.Error(), echo} {
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("credential %q leaked into %q", secret, text)
			}
		}
	}
}

// A key and secret shaped like real ones, for the redaction of an echo.
const (
	testAccessKey = "AKIAFAKEFAKEFAKE1234"
	testSecretKey = "s3cr3t/Fake+Secret/Key/ForTestsOnly0123456"
)

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
	f := newSim(t, func(o *awssim.Options) { o.Versions = []string{"2025.1.3"} })
	x86, arm := publishedID(0, "2025.1.3", "x86_64"), publishedID(0, "2025.1.3", "arm64")
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
		want := arm
		if in.Type == "i4i.xlarge" {
			want = x86
		}
		if in.Image != want {
			t.Errorf("instance %d (%s): image %s, want %s", i, in.Type, in.Image, want)
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
