package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

type fakeSweeper struct {
	dryRuns []bool
}

func (f *fakeSweeper) Sweep(_ context.Context, now time.Time, dryRun bool) ([]provision.Resource, error) {
	f.dryRuns = append(f.dryRuns, dryRun)
	return []provision.Resource{
		{Kind: "instance", ID: "i-1", RunID: "old", KeepUntil: now.Add(-time.Hour), Expired: true},
		{Kind: "instance", ID: "i-2", RunID: "new", KeepUntil: now.Add(time.Hour)},
	}, nil
}

func TestGCDryRunByDefaultAndYesActs(t *testing.T) {
	fs := &fakeSweeper{}
	old := sweeperFor
	sweeperFor = func(context.Context, string, string) (provision.Sweeper, error) { return fs, nil }
	defer func() { sweeperFor = old }()

	var out, errb bytes.Buffer
	e := &env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := runCLI(context.Background(), e, []string{"gc", "--backend", "aws"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "would remove") || !strings.Contains(out.String(), "2 resource(s) found, 1 expired would be removed") {
		t.Fatalf("dry run output:\n%s", out.String())
	}
	out.Reset()
	if code := runCLI(context.Background(), e, []string{"gc", "--backend", "aws", "--yes"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if len(fs.dryRuns) != 2 || !fs.dryRuns[0] || fs.dryRuns[1] {
		t.Fatalf("dry-run flags passed: %v", fs.dryRuns)
	}
	if !strings.Contains(out.String(), "removed") {
		t.Fatalf("--yes output:\n%s", out.String())
	}
	if code := runCLI(context.Background(), e, []string{"gc"}); code != ExitInvalid {
		t.Fatalf("missing --backend: exit %d, want %d", code, ExitInvalid)
	}
}
