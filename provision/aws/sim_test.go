package aws

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/elasticity-dev/elasticity/awssim"
)

// The provider's tests run against the simulated region (awssim), with its
// test options: requests recorded, instances without scylla-server (they
// boot at once), and failures injected where a test needs one. The
// package's own loopback range is 127.0.61-63.N.
const (
	simPrivateNet = "127.0.61."
	// sessionToken is sent with every request: it must reach no log or error.
	sessionToken = "sessiontoken123"
)

// Images the tests name with aws.ami (the region refuses an unknown one).
var explicitAMIs = []string{"ami-explicit", "ami-x", "ami-db", "ami-loader"}

// sim is a simulated region and a client of it signed as the SDK signs.
type sim struct {
	*awssim.Region
	client *ec2.Client
}

func newSim(t *testing.T, mut func(*awssim.Options)) *sim {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the simulated instances serve ssh on port 22: needs root (or CAP_NET_BIND_SERVICE)")
	}
	o := awssim.Options{
		Binary: os.Args[0], // never run: no instance starts scylla-server
		Dir:    t.TempDir(), PrivateNet: simPrivateNet, PublicNet: "127.0.62.", LoopbackNet: "127.0.63.",
		RecordRequests: true, NoScyllaServer: true,
	}
	for _, id := range explicitAMIs {
		o.Images = append(o.Images, awssim.Image{ID: id, Name: id, Owner: awssim.AccountID, Arch: "x86_64", Created: "2025-01-01T00:00:00.000Z"})
	}
	if mut != nil {
		mut(&o)
	}
	r, err := awssim.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c := ec2.New(ec2.Options{
		Region: "us-east-1", BaseEndpoint: awssdk.String(r.Endpoint()),
		Credentials:      credentials.NewStaticCredentialsProvider(awssim.AccessKeyID, awssim.SecretAccessKey, sessionToken),
		RetryMaxAttempts: 1,
	})
	return &sim{Region: r, client: c}
}

// live are the instances not terminated nor being terminated, in launch order.
func (s *sim) live() []awssim.InstanceInfo {
	var out []awssim.InstanceInfo
	for _, in := range s.Instances() {
		if in.State != "terminated" && in.State != "shutting-down" {
			out = append(out, in)
		}
	}
	return out
}

// requestsOf are the recorded requests of one action.
func (s *sim) requestsOf(action string) []awssim.Request {
	var out []awssim.Request
	for _, q := range s.Requests() {
		if q.Action == action {
			out = append(out, q)
		}
	}
	return out
}

// securityGroupOf is the one group an instance is in.
func securityGroupOf(in awssim.InstanceInfo) string {
	if len(in.SecurityGroups) != 1 {
		return ""
	}
	return in.SecurityGroups[0]
}

func testProvider(t *testing.T, s *sim, logs *strings.Builder, mut func(*Options)) *Provider {
	var mu sync.Mutex
	opts := Options{
		Region: "us-east-1", AvailabilityZones: []string{"us-east-1a", "us-east-1b", "us-east-1c"},
		KeyPair: "qa-key", RunnerCIDR: "198.51.100.7/32", PollInterval: time.Millisecond, ReadyTimeout: 10 * time.Second,
		Client: s.client,
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(logs, format+"\n", args...)
		},
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}
	if mut != nil {
		mut(&opts)
	}
	p, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
