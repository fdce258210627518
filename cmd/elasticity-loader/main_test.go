package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/cmd/internal/command"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

func runLoader(t *testing.T, args ...string) (command.ExitCode, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), &out, &errb, args)
	return code, out.String(), errb.String()
}

// The loader's stress is elasticity's: same flags and exit codes.
func TestLoaderStress(t *testing.T) {
	if code, _, stderr := runLoader(t, "stress", "--hosts", "127.0.3.41", "--rate", "fast"); code != command.ExitInvalid || !strings.Contains(stderr, "--rate") {
		t.Errorf("bad --rate: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runLoader(t, "run", "x.yaml"); code != command.ExitInvalid || !strings.Contains(stderr, "unknown command") {
		t.Errorf("a command the loader does not have: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runLoader(t, "stress", "--hosts", "127.0.3.41", "--port", "1", "--duration", "1s", "--timeout", "500ms"); code != command.ExitRunError || !strings.Contains(stderr, "connecting to CQL hosts") {
		t.Errorf("unreachable cluster: exit %d, stderr %q", code, stderr)
	}

	hp := enginetest.StartServer(t, "127.0.3.41:0", enginetest.NewMemory("loader"))
	host, port, _ := net.SplitHostPort(hp)
	summary := filepath.Join(t.TempDir(), "summary.json")
	code, stdout, stderr := runLoader(t, "stress", "--hosts", host, "--port", port, "--create-schema", "--rf", "1",
		"--prefill", "--keys", "200", "--rate", "300/s", "--duration", "1s", "--summary-json", summary)
	if code != command.ExitPassed || !strings.Contains(stdout, "Summary: ") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var sum struct {
		Intended, Succeeded int64
	}
	b, err := os.ReadFile(summary)
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil || sum.Intended < 250 || sum.Succeeded != sum.Intended {
		t.Fatalf("summary %+v, %v", sum, err)
	}
}

// The loader stays slim: none of the runner's backends, the emulator or
// their SDKs is linked in (they are what made `elasticity stress` a 60 MiB
// process; see the package doc).
func TestLoaderLinksOnlyTheLoadGenerator(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the dependencies with")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// The token function is a pure leaf (no emulator behaviour): data
		// validation places keys in token ranges with it.
		// So is the CQL parser (standard library only) user profiles are read with.
		if strings.HasSuffix(pkg, "/elasticity/emulator/murmur3") || strings.HasSuffix(pkg, "/elasticity/emulator/cql/cqlparse") {
			continue
		}
		for _, heavy := range []string{"/elasticity/provision", "/elasticity/emulator", "/elasticity/scenarios", "/elasticity/reporting",
			"aws-sdk-go", "docker", "testcontainers", "cockroachdb/pebble", "go.opentelemetry.io"} {
			if strings.Contains(pkg, heavy) {
				t.Errorf("elasticity-loader links %s", pkg)
			}
		}
	}
}
