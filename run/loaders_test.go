package run

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/elasticity-dev/elasticity/plan"
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
	check := func(name string, p *plan.Plan, remote bool, want string) {
		t.Helper()
		got, err := loaderBinary(p, runnerExe, remote)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
	pl := &plan.Plan{}
	check("no slim loader", pl, true, runnerExe)

	slim := filepath.Join(dir, slimLoader)
	write(slim, 0o644)
	check("slim loader not executable", pl, true, runnerExe)
	if err := os.Chmod(slim, 0o755); err != nil {
		t.Fatal(err)
	}
	check("slim loader", pl, true, slim)
	check("local loaders", pl, false, runnerExe)
	own := &plan.Plan{}
	own.Load.LoaderBinary = "/opt/elasticity-arm64"
	check("aws.loader_binary", own, true, "/opt/elasticity-arm64")
}

// Loaders that stop at their part of a fill's key budget write together
// the keys below it, whatever the remainder (each at least one).
func TestFillShareKeys(t *testing.T) {
	for _, k := range []int64{1, 2, 7, 9, 1000} {
		for n := 1; n <= 4; n++ {
			var sum int64
			for i := range n {
				s := fillShareKeys(k, i, n)
				if last := int64(i) + (s-1)*int64(n); last >= k && s > 1 {
					t.Fatalf("k=%d n=%d: loader %d writes key %d", k, n, i, last)
				}
				sum += s
			}
			if sum < k || sum > k+int64(n) {
				t.Fatalf("k=%d n=%d: shares add up to %d", k, n, sum)
			}
		}
	}
}
