package awssim

import (
	"context"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// The test hooks: requests recorded, an injected EC2 error on the n-th call
// of an action (as the SDK decodes it), an injected impaired instance with
// its reason, and instances without scylla-server that pass their status
// checks at once. Without them the region records nothing.
func TestHooks(t *testing.T) {
	r, c := start(t, Options{PrivateNet: "127.0.57.", PublicNet: "127.0.58.", LoopbackNet: "127.0.59.", RecordRequests: true, NoScyllaServer: true})
	ctx := context.Background()
	img := PublishedImages(0, "2025.1.0")[0].ID
	run := func() (string, error) {
		out, err := c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: awssdk.String(img), InstanceType: types.InstanceTypeI4iLarge,
			MinCount: awssdk.Int32(1), MaxCount: awssdk.Int32(1)})
		if err != nil {
			return "", err
		}
		return *out.Instances[0].InstanceId, nil
	}
	r.FailCall("RunInstances", 2, "InsufficientInstanceCapacity")
	r.ImpairInstance(2, "scylla-server failed to start: injected")
	ok, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(); apiCode(err) != "InsufficientInstanceCapacity" || !strings.Contains(err.Error(), "sufficient capacity") {
		t.Fatalf("the second RunInstances: want InsufficientInstanceCapacity, got %v", err)
	}
	impaired, err := run() // the third call launches the second instance
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]types.SummaryStatus{}
	settled := func() bool {
		return status[ok] == types.SummaryStatusOk && status[impaired] != "" && status[impaired] != types.SummaryStatusInitializing
	}
	for deadline := time.Now().Add(10 * time.Second); !settled(); {
		if time.Now().After(deadline) {
			t.Fatalf("status checks: %v", status)
		}
		out, err := c.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: []string{ok, impaired}})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range out.InstanceStatuses {
			status[*s.InstanceId] = s.InstanceStatus.Status
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status[impaired] != types.SummaryStatusImpaired {
		t.Errorf("injected impairment: status %v", status)
	}
	ins := r.Instances()
	if ins[0].ScyllaStarted || ins[1].Reason != "scylla-server failed to start: injected" || ins[0].Image != img || ins[0].UserData != "" {
		t.Errorf("instances: %+v", ins)
	}
	reqs := r.Requests()
	if len(reqs) < 4 || reqs[1].Action != "RunInstances" || reqs[1].Params.Get("InstanceType") != "i4i.large" ||
		!strings.Contains(reqs[1].Header.Get("Authorization"), "Credential="+AccessKeyID+"/") {
		t.Errorf("recorded requests: %+v", reqs)
	}
	if _, err := run(); err != nil {
		t.Errorf("a fault answers once: %v", err)
	}
}
