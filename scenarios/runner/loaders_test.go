package runner

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/elasticity-dev/elasticity/scenarios"
)

// Remote loaders get aws.loader_binary, else the slim elasticity-loader next
// to the runner, else the runner itself; local loaders run the runner.
func TestLoaderBinaryPrefersTheSlimLoader(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the runner copies itself only from linux/amd64")
	}
	dir := t.TempDir()
	runnerExe := filepath.Join(dir, "elasticity")
	write := func(path string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte("#!/bin/true\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(runnerExe, 0o755)
	check := func(name string, p *scenarios.Plan, remote bool, want string) {
		t.Helper()
		got, err := loaderBinary(p, runnerExe, remote)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
	plan := &scenarios.Plan{}
	check("no slim loader", plan, true, runnerExe)

	slim := filepath.Join(dir, slimLoader)
	write(slim, 0o644)
	check("slim loader not executable", plan, true, runnerExe)
	if err := os.Chmod(slim, 0o755); err != nil {
		t.Fatal(err)
	}
	check("slim loader", plan, true, slim)
	check("local loaders", plan, false, runnerExe)
	own := &scenarios.Plan{}
	own.Load.LoaderBinary = "/opt/elasticity-arm64"
	check("aws.loader_binary", own, true, "/opt/elasticity-arm64")
}
