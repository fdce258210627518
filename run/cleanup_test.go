package run

import (
	"testing"

	"github.com/elasticity-dev/elasticity/plan"
)

// A grow is followed by cleanup on a vnodes keyspace, by a recorded skip on
// a tablets keyspace, and by nothing when the flavour's default is kept.
func TestCleanupFollowsTheKeyspace(t *testing.T) {
	lc := &liveCluster{}
	for _, tc := range []struct {
		tablets     int
		clean, skip bool
	}{{-1, true, false}, {1024, false, true}, {0, false, false}} {
		r := &run{p: &plan.Plan{Data: plan.Data{Keyspace: "ks", Tablets: tc.tablets}}, cluster: lc}
		c := r.cleanup()
		if (c.Cleaner != nil) != tc.clean || (c.Skip != "") != tc.skip {
			t.Errorf("tablets %d: %+v", tc.tablets, c)
		}
		if k, ok := c.Cleaner.(keyspaceCleaner); tc.clean && (!ok || k.keyspace != "ks") {
			t.Errorf("tablets %d: cleaner %+v", tc.tablets, c.Cleaner)
		}
	}
}
