package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// A user profile's workload on two loader processes: the model's spec (the
// whole profile, base64) reaches each loader as its --model argument, the
// merged records name the profile's operations with their classes, every
// cycle has figures per operation, and data validation is recorded as not
// done (a profile's rows do not follow from their keys).
func TestUserProfileRunWithLoaders(t *testing.T) {
	out := filepath.Join(t.TempDir(), "profile")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	log := runScenarioExpect(t, ctx, "../configs/sensor-readings.yaml", out, []int{0, 1}, append(shrink("127.0.5.100"), "--set", "local.loaders=2")...)
	if left := processesOf(t, "stress"); len(left) > 0 {
		t.Fatalf("loader processes left after the run:\n%s", strings.Join(left, "\n"))
	}
	classes := map[string]string{}
	if err := results.ReadJSONL(filepath.Join(out, results.FileLatency), func(_ int, r *results.LatencyRecord) error {
		classes[r.Op] = r.OpClass()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fill": "fill", "insert": "write", "latest": "read", "slice": "read"}
	for op, class := range want {
		if classes[op] != class {
			t.Errorf("records: %v, want %v\n%s", classes, want, log)
			break
		}
	}
	res := readResult(t, out)
	for _, c := range res.Cycles {
		var names []string
		for _, o := range c.Ops {
			names = append(names, o.Name)
		}
		if c.WriteOpsPerS <= 0 || c.ReadOpsPerS <= 0 || !slices.Contains(names, "insert") || !slices.Contains(names, "latest") || !slices.Contains(names, "slice") {
			t.Errorf("%s: write %.1f/s, read %.1f/s, ops %v", c.Name, c.WriteOpsPerS, c.ReadOpsPerS, names)
		}
	}
	if m := res.Setup.Model; m == nil || m.Form != "workload.profile" || m.Regenerable {
		t.Errorf("setup's workload model %+v", m)
	}
	if len(res.Validations) == 0 || !strings.Contains(res.Validations[len(res.Validations)-1].NotDone, "cannot be regenerated") {
		t.Errorf("validations %+v, want one not done", res.Validations)
	}
	t.Logf("profile with loaders: status %s, cycles %d", res.Status, len(res.Cycles))
}
