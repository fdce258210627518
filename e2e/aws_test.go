package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/elasticity-dev/elasticity/awssim"
	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

// simRegion starts a simulated EC2 region on its own loopback addresses
// (net: "127.0.N." for private, N+1 public, N+2 loopback stand-ins).
func simRegion(t *testing.T, net int) *awssim.Region {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("simulated instances serve ssh on port 22: needs root (or CAP_NET_BIND_SERVICE)")
	}
	r, err := awssim.Start(context.Background(), awssim.Options{Binary: binary, Dir: t.TempDir(),
		PrivateNet: fmt.Sprintf("127.0.%d.", net), PublicNet: fmt.Sprintf("127.0.%d.", net+1), LoopbackNet: fmt.Sprintf("127.0.%d.", net+2),
		// The nodes' flags come from the scale model as `elasticity aws-sim`
		// gives them (cmd_awssim.go), at the local backend's time scale: at
		// 1 a grown node waited a whole 60 s load-stats refresh for its
		// first tablet.
		NodeArgs: provision.EmulatorScale{StorageScaleMiBPerGB: 0.5, OpsPerVCPU: 2000, StreamMiBPerVCPU: 4,
			BlockedReactorNotifyMS: emulator.DefaultConfig().BlockedReactorNotifyMS, TimeScale: localcluster.DefaultTimeScale}.NodeArgs(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// awsCmd runs the CLI with the region's environment only (plus PATH and
// HOME): the run reaches the region through the SDK's ordinary chain.
func awsCmd(ctx context.Context, r *awssim.Region, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}, r.Env()...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 60 * time.Second
	return cmd, &buf
}

// liveOf lists the run's instances and security groups that still exist,
// as the region's DescribeInstances and DescribeSecurityGroups show them.
func liveOf(t *testing.T, r *awssim.Region) (instances, groups []string) {
	t.Helper()
	ctx := context.Background()
	env := map[string]string{}
	for _, kv := range r.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(env["AWS_REGION"]),
		config.WithCredentialsProvider(awssdk.CredentialsProviderFunc(func(context.Context) (awssdk.Credentials, error) {
			return awssdk.Credentials{AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"]}, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	c := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = awssdk.String(env["AWS_ENDPOINT_URL_EC2"]) })
	out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []types.Filter{
		{Name: awssdk.String("tag:CreatedBy"), Values: []string{"elasticity"}},
		{Name: awssdk.String("instance-state-name"), Values: []string{"pending", "running", "shutting-down", "stopping", "stopped"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range out.Reservations {
		for _, in := range res.Instances {
			instances = append(instances, *in.InstanceId+" "+string(in.State.Name))
		}
	}
	sgs, err := c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range sgs.SecurityGroups {
		groups = append(groups, *g.GroupId)
	}
	return instances, groups
}

func checkNothingLeft(t *testing.T, r *awssim.Region, log *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ins, sgs := liveOf(t, r)
		if len(ins) == 0 && len(sgs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left in the region: instances %v, security groups %v\n%s", ins, sgs, log)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func checkNoCredential(t *testing.T, log string) {
	t.Helper()
	if strings.Contains(log, awssim.SecretAccessKey) || strings.Contains(log, "AKIA") {
		t.Fatalf("a credential reached the output:\n%s", log)
	}
}

// configs/smoke.yaml --backend aws against the simulated region, unedited:
// one instance per rack in the zones the backend names, the schema in
// Ec2Snitch's DC, fill, steady state, one grow, teardown.
func TestSmokeRunAWS(t *testing.T) {
	r := simRegion(t, 61)
	out := filepath.Join(t.TempDir(), "smoke-aws")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, log := awsCmd(ctx, r, "run", "../configs/smoke.yaml", "--backend", "aws", "--out", out)
	err := cmd.Run()
	code := exitCode(err)
	res := readResult(t, out)
	// A loaded 2-core machine can miss smoke's latency thresholds: that is
	// the only failure accepted.
	if code != 0 && !(code == 1 && res.Status == results.StatusFailed && strings.Contains(res.Reason, "threshold")) {
		t.Fatalf("exit %d, status %s (%s)\n%s", code, res.Status, res.Reason, log)
	}
	if res.Setup.Backend != "aws" || !res.Setup.Emulated {
		t.Errorf("setup: backend %q emulated %v", res.Setup.Backend, res.Setup.Emulated)
	}
	if len(res.Steps) != 1 || res.Steps[0].NormalAt == nil || res.Steps[0].EndedAt == nil || len(res.Nodes) != 4 || len(res.Cycles) < 2 {
		t.Errorf("result: steps %+v, %d nodes, %d cycles", res.Steps, len(res.Nodes), len(res.Cycles))
	}
	var dbZones []string
	loaders := 0
	for _, in := range r.Instances() {
		switch in.Tags["NodeType"] {
		case "db":
			dbZones = append(dbZones, in.Zone)
			if in.DC != "us-east" || !in.ScyllaStarted || in.APIAddress != "0.0.0.0" {
				t.Errorf("%s: dc %q, scylla started %v, api_address %q", in.ID, in.DC, in.ScyllaStarted, in.APIAddress)
			}
		case "loader":
			loaders++
			if in.ScyllaStarted {
				t.Errorf("loader %s runs scylla-server", in.ID)
			}
		}
	}
	if strings.Join(dbZones, ",") != "us-east-1a,us-east-1b,us-east-1c,us-east-1a" || loaders != 1 {
		t.Errorf("db instances in %v (want one per rack, then the grown one in rack1's zone); %d loaders", dbZones, loaders)
	}
	if !strings.Contains(log.String(), `the keyspace and the load use "us-east"`) {
		t.Errorf("the schema was not created in Ec2Snitch's DC:\n%s", log)
	}
	checkNothingLeft(t, r, log)
	checkNoCredential(t, log.String())
}

// Ctrl-C during the grow: exit 130 and nothing of the run left in the region.
func TestInterruptDuringGrowAWS(t *testing.T) {
	r := simRegion(t, 64)
	out := filepath.Join(t.TempDir(), "int-aws")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, log := awsCmd(ctx, r, "run", "../configs/smoke.yaml", "--backend", "aws", "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, out, 3*time.Minute, log, func(e results.Event) bool { return e.Type == results.EventStepRequested })
	time.Sleep(300 * time.Millisecond) // the grown instance is being launched
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, log)
	}
	if len(r.Instances()) < 5 {
		t.Logf("interrupted before the grown instance was launched: %d instances", len(r.Instances()))
	}
	checkNothingLeft(t, r, log)
	checkNoCredential(t, log.String())
}

// A run killed outright leaves its instances; gc removes them by tag once
// their keep-until has passed.
func TestGCRemovesKilledRunAWS(t *testing.T) {
	r := simRegion(t, 67)
	out := filepath.Join(t.TempDir(), "killed-aws")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, log := awsCmd(ctx, r, "run", "../configs/smoke.yaml", "--backend", "aws", "--out", out, "--set", "aws.ttl=3s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, out, 3*time.Minute, log, func(e results.Event) bool { return e.Type == results.EventPhaseStart && e.Phase == "fill" })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	ins, sgs := liveOf(t, r)
	if len(ins) < 3 || len(sgs) != 1 {
		t.Fatalf("after kill -9: instances %v, groups %v", ins, sgs)
	}
	// Before keep-until nothing goes; after it, gc --yes removes everything.
	dry, dlog := awsCmd(ctx, r, "gc", "--backend", "aws")
	if err := dry.Run(); err != nil {
		t.Fatalf("gc dry run: %v\n%s", err, dlog)
	}
	time.Sleep(3 * time.Second)
	gc, glog := awsCmd(ctx, r, "gc", "--backend", "aws", "--yes")
	if err := gc.Run(); err != nil {
		t.Fatalf("gc: %v\n%s", err, glog)
	}
	checkNothingLeft(t, r, glog)
	checkNoCredential(t, log.String()+dlog.String()+glog.String())
}
