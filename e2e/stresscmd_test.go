package e2e

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// issue44StressCmd is issue 44's acceptance line.
const issue44StressCmd = "cassandra-stress mixed ratio(write=1,read=2) duration=10m cl=QUORUM -rate threads=50 fixed=150/s -col size=FIXED(512) n=FIXED(1) -pop dist=UNIFORM(1..20000)"

// The smoke scenario driven by a cassandra-stress command line: every cycle
// has write and read figures at the line's fixed=150/s, the rows are read
// back (the cs form's rows regenerate from their keys), and an unsupported
// option is refused before anything starts, exit 2, naming the option.
func TestStressCmdRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cs")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	log := runExpect(t, ctx, out, []int{0, 1}, append(shrink("127.0.5.180"), "--set", "workload.stress_cmd="+issue44StressCmd)...)
	res := readResult(t, out)
	for _, c := range res.Cycles {
		var names []string
		for _, o := range c.Ops {
			names = append(names, o.Name)
		}
		// The schedule's rate: what succeeded, failed or was dropped (a
		// loaded host may drop, never the schedule's count).
		intended := c.WriteOpsPerS + c.ReadOpsPerS + float64(c.Errors+c.Dropped)/c.DurationS
		if c.WriteOpsPerS <= 0 || c.ReadOpsPerS <= 0 || !slices.Equal(names, []string{"write", "read"}) || math.Abs(intended-150) > 1.5 {
			t.Errorf("%s: write %.2f/s, read %.2f/s (intended %.2f/s, want 150), ops %v\n%s", c.Name, c.WriteOpsPerS, c.ReadOpsPerS, intended, names, log)
		}
		t.Logf("%s: achieved %.2f ops/s (write %.2f, read %.2f), errors %d, dropped %d", c.Name, c.WriteOpsPerS+c.ReadOpsPerS, c.WriteOpsPerS, c.ReadOpsPerS, c.Errors, c.Dropped)
	}
	if m := res.Setup.Model; m == nil || m.Form != "workload.stress_cmd" || !m.Regenerable {
		t.Errorf("setup's workload model %+v", m)
	}
	if n := len(res.Validations); n == 0 || res.Validations[n-1].NotDone != "" || res.Validations[n-1].Keys == 0 ||
		res.Validations[n-1].Missing != 0 || res.Validations[n-1].Mismatched != 0 {
		t.Errorf("validations %+v", res.Validations)
	}

	bad := runExpect(t, ctx, filepath.Join(t.TempDir(), "bad"), []int{2}, append(shrink("127.0.5.180"), "--set", "workload.stress_cmd="+issue44StressCmd+" -sendto 10.0.0.1")...)
	if !strings.Contains(bad.String(), "option -sendto is not supported") {
		t.Errorf("unsupported option: %s", bad)
	}
}
