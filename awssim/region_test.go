package awssim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/gocql/gocql"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

var elasticityBin string // elasticity, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "awssim-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	elasticityBin = filepath.Join(dir, "elasticity")
	build := exec.Command("go", "build", "-o", elasticityBin, "../cmd/elasticity")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building elasticity:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start runs a region on its own addresses (127.0.4x.N) until the test ends.
func start(t *testing.T, o Options) (*Region, *ec2.Client) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("instances serve ssh on port 22: needs root (or CAP_NET_BIND_SERVICE)")
	}
	o.Binary, o.Dir = elasticityBin, t.TempDir()
	if o.PrivateNet == "" {
		o.PrivateNet, o.PublicNet, o.LoopbackNet = "127.0.41.", "127.0.42.", "127.0.43."
	}
	o.NodeArgs = []string{"--storage-scale-mib-per-gb", "0.5"}
	o.Logf = t.Logf
	r, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c := ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: awssdk.String(r.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""), RetryMaxAttempts: 1})
	return r, c
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func userData(t *testing.T, v any) *string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return awssdk.String(base64.StdEncoding.EncodeToString(b))
}

func group(t *testing.T, c *ec2.Client, ports ...int32) string {
	t.Helper()
	ctx := context.Background()
	g, err := c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: awssdk.String(fmt.Sprintf("g-%d", time.Now().UnixNano())), Description: awssdk.String("test")})
	if err != nil {
		t.Fatal(err)
	}
	var perms []types.IpPermission
	for _, p := range ports {
		perms = append(perms, types.IpPermission{IpProtocol: awssdk.String("tcp"), FromPort: awssdk.Int32(p), ToPort: awssdk.Int32(p),
			IpRanges: []types.IpRange{{CidrIp: awssdk.String(RunnerAddress + "/32")}}})
	}
	if _, err := c.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: g.GroupId, IpPermissions: perms}); err != nil {
		t.Fatal(err)
	}
	return *g.GroupId
}

func run(t *testing.T, c *ec2.Client, typ, ami, az, sg string, ud *string) types.Instance {
	t.Helper()
	out, err := c.RunInstances(context.Background(), &ec2.RunInstancesInput{ImageId: awssdk.String(ami), InstanceType: types.InstanceType(typ),
		MinCount: awssdk.Int32(1), MaxCount: awssdk.Int32(1), UserData: ud, SecurityGroupIds: []string{sg},
		Placement: &types.Placement{AvailabilityZone: awssdk.String(az)}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Instances[0]
}

func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func refused(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%s accepted a connection", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: %v, want connection refused", addr, err)
	}
	return nil
}

func get(url string) (string, error) {
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func sshRun(t *testing.T, r *Region, addr, cmd string) string {
	t.Helper()
	ac, err := net.Dial("unix", r.agent.path)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	cl, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "scyllaadm", Auth: []ssh.AuthMethod{ssh.PublicKeysCallback(agent.NewClient(ac).Signers)},
		HostKeyCallback: ssh.FixedHostKey(r.host.host.PublicKey()), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("ssh %s: %v", addr, err)
	}
	defer cl.Close()
	s, err := cl.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("ssh %s %q: %v\n%s", addr, cmd, err, out)
	}
	return string(out)
}

// Two machine-image instances: the seed with the packaged api_address, the
// second with api_address 0.0.0.0. The security group opens 22, 9042 and
// 10000 to the runner, not 9180.
func TestMachineImageInstances(t *testing.T) {
	r, c := start(t, Options{})
	ctx := context.Background()
	imgs, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{ReleaseOwnerID}, Filters: []types.Filter{
		{Name: awssdk.String("name"), Values: []string{"ScyllaDB 2025*"}}, {Name: awssdk.String("architecture"), Values: []string{"x86_64"}}}})
	if err != nil || len(imgs.Images) != 1 {
		t.Fatalf("DescribeImages: %v %+v", err, imgs)
	}
	ami := *imgs.Images[0].ImageId
	sg := group(t, c, 22, 9042, 10000)
	seed := run(t, c, "i4i.large", ami, "us-east-1a", sg, userData(t, map[string]any{
		"scylla_yaml": map[string]any{"cluster_name": "sim", "endpoint_snitch": "org.apache.cassandra.locator.Ec2Snitch"}, "start_scylla_on_first_boot": true}))
	seedIP := *seed.PrivateIpAddress
	second := run(t, c, "i4i.large", ami, "us-east-1b", sg, userData(t, map[string]any{
		"scylla_yaml": map[string]any{"cluster_name": "sim", "endpoint_snitch": "org.apache.cassandra.locator.Ec2Snitch", "api_address": "0.0.0.0",
			"seed_provider": []any{map[string]any{"class_name": "org.apache.cassandra.locator.SimpleSeedProvider", "parameters": []any{map[string]any{"seeds": seedIP}}}}},
		"start_scylla_on_first_boot": true}))
	if !strings.HasPrefix(seedIP, "127.0.41.") || *second.PrivateIpAddress == seedIP {
		t.Fatalf("private addresses %s %s", seedIP, *second.PrivateIpAddress)
	}
	var pub [2]string
	eventually(t, 30*time.Second, "running with public addresses", func() error {
		out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{*seed.InstanceId, *second.InstanceId}})
		if err != nil {
			return err
		}
		for i, res := range out.Reservations {
			in := res.Instances[0]
			if in.State.Name != types.InstanceStateNameRunning || in.PublicIpAddress == nil {
				return fmt.Errorf("%s is %s", *in.InstanceId, in.State.Name)
			}
			pub[i] = *in.PublicIpAddress
		}
		return nil
	})
	// REST on the second (api_address 0.0.0.0) through its public address:
	// gossip holds the private addresses the nodes know themselves by.
	eventually(t, 60*time.Second, "both live in the second's gossip", func() error {
		body, err := get("http://" + pub[1] + ":10000/gossiper/endpoint/live/")
		if err != nil {
			return err
		}
		if !strings.Contains(body, seedIP) || !strings.Contains(body, *second.PrivateIpAddress) || strings.Contains(body, "127.0.42.") {
			return fmt.Errorf("live: %s", body)
		}
		return nil
	})
	// The seed keeps the packaged api_address 127.0.0.1: its REST is not
	// reachable at the public address although the security group opens 10000.
	if err := refused(pub[0] + ":10000"); err != nil {
		t.Error("REST of the seed (api_address 127.0.0.1):", err)
	}
	// 9180 is served on the private address but closed in the security group.
	if _, err := get("http://" + seedIP + ":9180/metrics"); err != nil {
		t.Fatalf("metrics on the private address: %v", err)
	}
	if err := refused(pub[0] + ":9180"); err != nil {
		t.Error("closed port:", err)
	}
	// Ec2Snitch names the DC and rack after the zone; CQL at the public address.
	cc := gocql.NewCluster(pub[0])
	cc.DisableInitialHostLookup = true
	cc.Timeout, cc.ConnectTimeout = 5*time.Second, 5*time.Second
	var s *gocql.Session
	eventually(t, 30*time.Second, "CQL at the public address", func() error { s, err = cc.CreateSession(); return err })
	defer s.Close()
	var dc, rack, listen string
	if err := s.Query("SELECT data_center, rack, listen_address FROM system.local").Scan(&dc, &rack, &listen); err != nil {
		t.Fatal(err)
	}
	if dc != "us-east" || rack != "1a" || listen != seedIP {
		t.Errorf("system.local: dc %q rack %q listen %q, want us-east 1a %s", dc, rack, listen, seedIP)
	}
	// journald: syslog messages carry no level; the priority does.
	cat := sshRun(t, r, pub[0]+":22", "journalctl -u scylla-server -n all --no-pager -o cat")
	if !strings.Contains(cat, "init - ") {
		t.Fatalf("journal has no init lines:\n%s", cat)
	}
	for _, l := range strings.Split(strings.TrimRight(cat, "\n"), "\n") {
		lvl, _, _ := strings.Cut(l, " ")
		if priorities[lvl] != 0 || (strings.Contains(l, " init - ") && !strings.HasPrefix(l, " [shard ")) {
			t.Fatalf("journal line %q: want seastar's syslog message (\" [shard N:group] logger - msg\") without level or time", l)
		}
	}
	js := sshRun(t, r, pub[0]+":22", "journalctl -u scylla-server -n 1 -o json")
	var e map[string]string
	if err := json.Unmarshal([]byte(strings.TrimSpace(js)), &e); err != nil || e["PRIORITY"] != "6" || e["_SYSTEMD_UNIT"] != "scylla-server.service" {
		t.Fatalf("json entry %q: %v", js, err)
	}
	// Terminate: the public ports go, the instances reach terminated.
	if _, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{*seed.InstanceId, *second.InstanceId}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "terminated", func() error {
		if n := r.Live(); n != 0 {
			return fmt.Errorf("%d live", n)
		}
		return nil
	})
	if err := refused(pub[0] + ":9042"); err != nil {
		t.Error("after termination:", err)
	}
	if _, err := c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: &sg}); err != nil {
		t.Fatal(err)
	}
}

func TestLaunchErrors(t *testing.T) {
	r, c := start(t, Options{PrivateNet: "127.0.44.", PublicNet: "127.0.45.", LoopbackNet: "127.0.46."})
	ctx := context.Background()
	imgs, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{ReleaseOwnerID}, Filters: []types.Filter{{Name: awssdk.String("architecture"), Values: []string{"x86_64"}}}})
	if err != nil {
		t.Fatal(err)
	}
	x86 := *imgs.Images[0].ImageId
	sg := group(t, c, 22)
	in := func(typ string, spot bool) *ec2.RunInstancesInput {
		i := &ec2.RunInstancesInput{ImageId: awssdk.String(x86), InstanceType: types.InstanceType(typ), MinCount: awssdk.Int32(1), MaxCount: awssdk.Int32(1),
			SecurityGroupIds: []string{sg}, UserData: userData(t, map[string]any{"start_scylla_on_first_boot": false})}
		if spot {
			i.InstanceMarketOptions = &types.InstanceMarketOptionsRequest{MarketType: types.MarketTypeSpot}
		}
		return i
	}
	// An x86_64 image on a Graviton type fails as EC2 does.
	if _, err := c.RunInstances(ctx, in("i8g.large", false)); apiCode(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "architecture") {
		t.Errorf("x86_64 image on i8g.large: %v", err)
	}
	r.SetRefuseSpot(true)
	if _, err := c.RunInstances(ctx, in("c6i.2xlarge", true)); apiCode(err) != "InsufficientInstanceCapacity" {
		t.Errorf("refused spot: %v", err)
	}
	r.SetRefuseSpot(false)
	out, err := c.RunInstances(ctx, in("c6i.2xlarge", true))
	if err != nil {
		t.Fatal(err)
	}
	// A loader instance (start_scylla_on_first_boot: false) runs no scylla-server.
	eventually(t, 10*time.Second, "booted", func() error {
		for _, i := range r.Instances() {
			if i.ID == *out.Instances[0].InstanceId && i.State == stateRunning && !i.ScyllaStarted && i.Spot {
				return nil
			}
		}
		return fmt.Errorf("%+v", r.Instances())
	})
	if _, err := c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: &sg}); apiCode(err) != "DependencyViolation" {
		t.Errorf("deleting a group in use: %v", err)
	}
	if _, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0000000000000dead"}}); apiCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("unknown instance: %v", err)
	}
	bad := ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: awssdk.String(r.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider("AKIAOTHERKEY", "x", ""), RetryMaxAttempts: 1})
	if _, err := bad.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); apiCode(err) != "AuthFailure" {
		t.Errorf("other credentials: %v", err)
	}
}

func TestSnitchNaming(t *testing.T) {
	for _, c := range []struct{ snitch, zone, dc, rack string }{
		{"org.apache.cassandra.locator.Ec2Snitch", "us-east-1a", "us-east", "1a"},
		{"Ec2Snitch", "us-west-2b", "us-west-2", "2b"},
		{"Ec2Snitch", "eu-central-1c", "eu-central", "1c"},
		{"GossipingPropertyFileSnitch", "us-east-1a", "us-east-1", "us-east-1a"},
		{"SimpleSnitch", "us-east-1a", "datacenter1", "rack1"},
	} {
		if dc, rack := snitchDCRack(c.snitch, c.zone); dc != c.dc || rack != c.rack {
			t.Errorf("%s %s: %s/%s, want %s/%s", c.snitch, c.zone, dc, rack, c.dc, c.rack)
		}
	}
}

func TestConfigureDefaults(t *testing.T) {
	c := configure(nil, "10.0.0.5", "us-east-1a")
	if c.listen != "10.0.0.5" || c.broadcast != "10.0.0.5" || c.apiAddress != "127.0.0.1" || !c.start || len(c.seeds) != 1 || c.seeds[0] != "10.0.0.5" || c.dc != "us-east" {
		t.Errorf("defaults: %+v", c)
	}
	c = configure([]byte("{not yaml: ["), "10.0.0.5", "us-east-1a")
	if len(c.warnings) == 0 || c.apiAddress != "127.0.0.1" || !c.start {
		t.Errorf("bad user-data keeps the defaults with a warning: %+v", c)
	}
	c = configure([]byte(`{"scylla_yaml": {"api_address": "0.0.0.0", "seed_provider": [{"parameters": [{"seeds": "10.0.0.1, 10.0.0.2"}]}]}, "start_scylla_on_first_boot": false}`), "10.0.0.5", "us-east-1b")
	if c.apiAddress != "0.0.0.0" || c.start || len(c.seeds) != 2 || c.seeds[1] != "10.0.0.2" || c.rack != "1b" {
		t.Errorf("user-data: %+v", c)
	}
}

func TestJournalctlOptions(t *testing.T) {
	o, err := parseJournalOpts([]string{"-u", "scylla-server", "-f", "--no-pager", "-o", "cat"})
	if err != nil || o.lines != 10 || !o.follow || o.output != "cat" {
		t.Errorf("-f without -n starts at the last 10 lines: %+v %v", o, err)
	}
	o, err = parseJournalOpts([]string{"-u", "scylla-server.service", "-f", "-n", "all", "-o", "json"})
	if err != nil || o.lines != -1 || o.unit != "scylla-server" {
		t.Errorf("-n all: %+v %v", o, err)
	}
	if _, err := parseJournalOpts([]string{"-o", "verbose"}); err == nil {
		t.Error("an output mode that is not simulated must fail")
	}
	e := parseNodeLine("WARN  2026-11-30 12:00:00,123 [shard 1:strm] stream_session - slow", journalEntry{})
	if e.priority != 4 || e.message != " [shard 1:strm] stream_session - slow" || e.t.Second() != 0 || e.t.Nanosecond() != 123e6 {
		t.Errorf("%+v", e)
	}
}

// nextFree is the instance number the region's next RunInstances takes.
func nextFree(t *testing.T, r *Region) int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	n, err := r.freeAddress()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// hold listens on addr, as another process's node would.
func hold(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("holding %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
}

// bindOnly binds addr without listening: a process between bind and
// listen, which the socket table does not show as listening, so the region
// gives the address out and the node's own bind fails.
func bindOnly(t *testing.T, ip string, port int) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	sa := &syscall.SockaddrInet4{Port: port}
	copy(sa.Addr[:], net.ParseIP(ip).To4())
	if err := syscall.Bind(fd, sa); err != nil {
		t.Fatalf("binding %s:%d: %v", ip, port, err)
	}
}

// Another process holds the addresses the region would give next (CQL on a
// private address, sshd's port on a public one): the instance gets
// addresses of its own and its node is its own. An address taken where the
// region cannot see it (bound, not listening) makes that instance's
// scylla-server fail: the instance is impaired with the node's error, which
// its journal shows too, never reported as started, and its public address
// forwards none of the node's ports.
func TestInstancesAvoidTakenAddresses(t *testing.T) {
	r, c := start(t, Options{PrivateNet: "127.0.54.", PublicNet: "127.0.55.", LoopbackNet: "127.0.56."})
	ctx := context.Background()
	n := nextFree(t, r)
	hold(t, fmt.Sprintf("127.0.54.%d:9042", n))
	hold(t, fmt.Sprintf("127.0.55.%d:22", n+1))
	if got := nextFree(t, r); got < n+2 {
		t.Fatalf("next instance number %d: want past the held %d and %d", got, n, n+1)
	}
	imgs, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{ReleaseOwnerID}, Filters: filters("architecture", "x86_64")})
	if err != nil || len(imgs.Images) == 0 {
		t.Fatalf("DescribeImages: %v", err)
	}
	ami := *imgs.Images[0].ImageId
	sg := group(t, c, 22, 9042, 10000)
	ud := userData(t, map[string]any{"scylla_yaml": map[string]any{"cluster_name": "own", "api_address": "0.0.0.0"}})
	own := run(t, c, "i4i.large", ami, "us-east-1a", sg, ud)
	priv := *own.PrivateIpAddress
	if priv == fmt.Sprintf("127.0.54.%d", n) || priv == fmt.Sprintf("127.0.54.%d", n+1) {
		t.Fatalf("instance got %s, an address another process holds", priv)
	}
	eventually(t, 60*time.Second, "its own node, alone in its gossip", func() error {
		body, err := get("http://" + priv + ":10000/gossiper/endpoint/live/")
		if err != nil {
			return err
		}
		if body != `["`+priv+`"]` {
			return fmt.Errorf("live: %s", body)
		}
		return nil
	})
	// The next address is bound by another process that does not listen yet.
	bad := nextFree(t, r)
	badIP := fmt.Sprintf("127.0.54.%d", bad)
	bindOnly(t, badIP, 7000)
	failed := run(t, c, "i4i.large", ami, "us-east-1b", sg, ud)
	if *failed.PrivateIpAddress != badIP {
		t.Fatalf("second instance got %s, want %s", *failed.PrivateIpAddress, badIP)
	}
	var info InstanceInfo
	eventually(t, 60*time.Second, "the instance whose node cannot bind is impaired", func() error {
		for _, i := range r.Instances() {
			if i.ID == *failed.InstanceId {
				info = i
			}
		}
		if !info.Impaired {
			return fmt.Errorf("%+v", info)
		}
		return nil
	})
	if info.ScyllaStarted || !strings.Contains(info.Reason, "address already in use") || !strings.Contains(info.Reason, badIP+":7000") {
		t.Fatalf("impaired instance: started %v, reason %q", info.ScyllaStarted, info.Reason)
	}
	st, err := c.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: []string{*failed.InstanceId}})
	if err != nil || len(st.InstanceStatuses) != 1 || st.InstanceStatuses[0].InstanceStatus.Status != types.SummaryStatusImpaired {
		t.Fatalf("DescribeInstanceStatus: %v %+v", err, st)
	}
	var pub string
	eventually(t, 30*time.Second, "public address", func() error {
		out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{*failed.InstanceId}})
		if err != nil || out.Reservations[0].Instances[0].PublicIpAddress == nil {
			return fmt.Errorf("no public address: %v", err)
		}
		pub = *out.Reservations[0].Instances[0].PublicIpAddress
		return nil
	})
	// sshd is up: the journal says why scylla-server did not start.
	var journal string
	eventually(t, 30*time.Second, "ssh at the public address", func() error {
		cn, err := net.DialTimeout("tcp", pub+":22", time.Second)
		if err == nil {
			cn.Close()
		}
		return err
	})
	journal = sshRun(t, r, pub+":22", "journalctl -u scylla-server -n all --no-pager -o cat")
	if !strings.Contains(journal, "Startup failed") || !strings.Contains(journal, "address already in use") {
		t.Fatalf("journal does not say why scylla-server failed:\n%s", journal)
	}
	for _, p := range []string{"9042", "10000"} {
		if err := refused(pub + ":" + p); err != nil {
			t.Errorf("port %s of the impaired instance: %v", p, err)
		}
	}
}
