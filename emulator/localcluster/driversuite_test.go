package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// driverSuiteSkips are the tests of the ScyllaDB Go driver's integration
// suite that the emulator does not pass yet, each with the reason: what
// ScyllaDB has that the emulator lacks (issue 42). Everything else in the
// suite must pass.
var driverSuiteSkips = map[string]string{
	"TestUDT_UpdateField":          "updating one field of a user-defined type (SET col.field = ?) is not emulated",
	"TestTracing":                  "query tracing (system_traces) is not emulated",
	"TestNewConnectWithLowTimeout": "asserts what happens with 100 ns timeouts, which depends on the machine's speed: flaky under load",
	"TestVector_Types":             "vectors of some element types are not emulated yet (the suite runs it since it knows the server's version, -gocql.cversion)",
	"TestVector_MarshalerUDT":      "vectors of user-defined types are not emulated yet (run since the suite knows the server's version)",
}

// TestDriverIntegrationSuite runs the integration suite of the Go driver
// this module pins (github.com/gocql/gocql replaced by
// github.com/scylladb/gocql, from the module cache; nothing is copied into
// the repository) against three emulated nodes, with the flags its
// Makefile's test-integration-scylla target uses (-distribution scylla
// -proto 4 -rf 3 -clusterSize 3), as ScyllaDB's engineers run it against
// ScyllaDB. The nodes report 2025.4: the suite runs lightweight
// transactions in keyspaces with tablets, which 2025.1 refuses. The
// cluster's DC is named datacenter1, as ccm names it for the driver's CI.
func TestDriverIntegrationSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the driver's integration suite takes a minute or two")
	}
	work := copyDriverModule(t)
	opts := testOptions(t, "127.0.143.1", 3)
	opts.DC = "datacenter1"
	const version = "2025.4.0"
	opts.ExtraNodeArgs = append(opts.ExtraNodeArgs, "--version", version+"-emulated")
	c := startCluster(t, opts)

	var skip []string
	for name := range driverSuiteSkips {
		skip = append(skip, regexp.QuoteMeta(name))
	}
	sort.Strings(skip)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-tags", "integration", "-count", "1", "-timeout", "10m", "-v",
		"-skip", "^("+strings.Join(skip, "|")+")$", ".",
		"-cluster", strings.Join(c.Hosts(), ","), "-proto=4", "-rf=3", "-clusterSize=3", "-distribution=scylla",
		"-autowait=2000ms", "-gocql.timeout=60s",
		// The driver's Makefile passes the server's version
		// (SCYLLA_VERSION_RESOLVED); without it the suite takes the cluster
		// for a ScyllaDB older than 2024 and expects views and indexes on
		// tablets keyspaces to be refused.
		"-gocql.cversion="+version)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	pass, fail, skipped := suiteCounts(out)
	if len(pass) == 0 && modulesUnavailable(out) {
		// The driver's own test dependencies come from the module proxy
		// the first time; without network they cannot.
		t.Skipf("the driver's test dependencies cannot be downloaded:\n%s", tail(out, 10))
	}
	t.Logf("driver integration suite: %d passed, %d failed, %d skipped by the suite, %d on the skip list", len(pass), len(fail), len(skipped), len(driverSuiteSkips))
	if err != nil || len(fail) > 0 || len(pass) == 0 {
		t.Errorf("driver integration suite failed (%v): failing tests %v\n%s", err, fail, tail(out, 80))
	}
}

// copyDriverModule copies the pinned driver module out of the read-only
// module cache into a temporary directory.
func copyDriverModule(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gocql/gocql").Output()
	if err != nil {
		t.Fatalf("locating the driver module (go list -m github.com/gocql/gocql): %v", err)
	}
	src := strings.TrimSpace(string(out))
	if src == "" {
		t.Fatal("locating the driver module: go list -m gave no directory (run go mod download)")
	}
	dst := filepath.Join(t.TempDir(), "gocql")
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying the driver module from %s: %v", src, err)
	}
	return dst
}

// suiteCounts reads the top-level results of `go test -v` output.
func suiteCounts(out []byte) (pass, fail, skip []string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !strings.HasPrefix(sc.Text(), "--- ") {
			continue
		}
		switch f[1] {
		case "PASS:":
			pass = append(pass, f[2])
		case "FAIL:":
			fail = append(fail, f[2])
		case "SKIP:":
			skip = append(skip, f[2])
		}
	}
	return pass, fail, skip
}

// modulesUnavailable reports whether go test failed on fetching modules.
func modulesUnavailable(out []byte) bool {
	for _, m := range []string{"dial tcp", "missing go.sum entry", "no required module provides", "proxy.golang.org", "GOPROXY=off"} {
		if bytes.Contains(out, []byte(m)) {
			return true
		}
	}
	return false
}

func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
