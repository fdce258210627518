package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/elasticity-dev/elasticity/internal/testutil"
)

// aws-sim prints export lines (and writes them to --env-file) that reach
// the region through the SDK, and stops cleanly when interrupted.
func TestAWSSimPrintsTheEnvironmentAndServes(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "aws-sim.env")
	var out, errb testutil.SyncBuffer
	e := &env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Executable: "/bin/true"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan ExitCode, 1)
	go func() {
		done <- runCLI(ctx, e, []string{"aws-sim", "--dir", filepath.Join(dir, "region"), "--env-file", envFile})
	}()
	vars := map[string]string{}
	deadline := time.Now().Add(20 * time.Second)
	for len(vars) == 0 || vars["SSH_AUTH_SOCK"] == "" {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no export lines: %q %q", out.String(), errb.String())
		}
		time.Sleep(50 * time.Millisecond)
		for _, l := range strings.Split(out.String(), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "="); ok && strings.HasPrefix(l, "export ") {
				vars[k] = v
			}
		}
	}
	for _, k := range []string{"AWS_ENDPOINT_URL_EC2", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "ELASTICITY_AWS_RUNNER_CIDR"} {
		if vars[k] == "" {
			t.Errorf("no %s in %v", k, vars)
		}
	}
	if b, err := os.ReadFile(envFile); err != nil || string(b) != out.String() {
		t.Errorf("--env-file: %q, %v; want the printed lines", b, err)
	}
	c := ec2.New(ec2.Options{Region: vars["AWS_REGION"], BaseEndpoint: awssdk.String(vars["AWS_ENDPOINT_URL_EC2"]),
		Credentials: credentials.NewStaticCredentialsProvider(vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"], ""), RetryMaxAttempts: 1})
	imgs, err := c.DescribeImages(context.Background(), &ec2.DescribeImagesInput{Owners: []string{"797456418907", "158855661827"}}) // SCT's SCYLLA_AMI_OWNER_ID_LIST
	if err != nil || len(imgs.Images) != 2 {
		t.Errorf("DescribeImages through the printed environment: %v %+v", err, imgs)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("aws-sim did not stop when interrupted")
	}
	if strings.Contains(out.String()+errb.String(), "AKIA") {
		t.Error("credential-looking text in the output")
	}
}
