package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run checks the machine before it starts anything, as matrix does: without
// AWS credentials an aws run stops at once with exit 3 and an empty results
// directory, and says which check failed.
func TestRunPreflight(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, _, errs := cli(t, "", "run", "../../configs/smoke.yaml", "--backend", "aws", "--out", out)
	if code != ExitRunError || !strings.Contains(errs, "pre-flight FAIL aws-credentials") || !strings.Contains(errs, "--skip-preflight") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the results directory was created: %v", err)
	}
}
