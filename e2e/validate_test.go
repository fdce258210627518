package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// A replica's data removed behind the cluster's back (the emulator's
// drop_local_data fault, called by a hook step after the grow, never by the
// framework) is found by the data validation reading at ONE: the run fails
// (exit 1), the reason says data was lost, and result.json counts the
// missing rows by token range and names node-2 among their replicas.
func TestLostReplicaDataFailsRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lost")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	const victim = "127.0.5.141" // node-2 of base 127.0.5.140
	drop := `{hook: {name: lose node-2 data, command: curl, args: [-sSf, -X, POST, "http://` + victim +
		`:10000/elasticity/fault/drop_local_data?keyspace=elasticity&table=standard1"]}}`
	args := append(shrink("127.0.5.140"), "--set", "nemesis.1="+drop, "--set", "validate.consistency=ONE",
		"--set", "validate.sample=all", "--set", "final_hold=0")
	runExpect(t, ctx, out, []int{1}, args...)
	r := readResult(t, out)
	if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "data lost after final") || !strings.Contains(r.Reason, "node-2") {
		t.Fatalf("status %s, reason %q", r.Status, r.Reason)
	}
	if len(r.Validations) != 1 {
		t.Fatalf("%d validations, want 1", len(r.Validations))
	}
	v := r.Validations[0]
	if v.Missing == 0 || v.Consistency != "ONE" || v.SampleKeys != v.Keys || v.Keys == 0 {
		t.Fatalf("validation %+v", v)
	}
	var inRanges int64
	for _, rc := range v.Ranges {
		inRanges += rc.Missing
	}
	if inRanges != v.Missing {
		t.Errorf("ranges count %d missing rows, the validation %d", inRanges, v.Missing)
	}
	var onVictim int64
	for _, n := range v.Nodes {
		if n.Node == "node-2" {
			onVictim = n.Missing
		}
	}
	if onVictim != int64(v.ReplicasLookedUp) || onVictim == 0 {
		t.Errorf("node-2 owns %d of the %d lost keys looked up: %+v", onVictim, v.ReplicasLookedUp, v.Nodes)
	}
	t.Logf("lost: %d missing of %d keys at ONE; by node %+v", v.Missing, v.Keys, v.Nodes)
}
