package reporting

import (
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

func TestLostDataAndRackBalanceDecideRuns(t *testing.T) {
	base := func() *results.Result {
		return &results.Result{Status: results.StatusPassed, Setup: results.Setup{RackBalance: &results.RackBalanceSpec{EverySeconds: 600, MaxSpreadPct: 5}},
			RackBalance: []results.RackBalanceRow{{Row: "#1", Time: time.Unix(0, 0), Usage: map[string]float64{"node-1": 80, "node-4": 73},
				Racks: map[string]string{"node-1": "r1", "node-4": "r1"}, Spread: map[string]float64{"r1": 7}}},
			Validations: []results.Validation{{After: results.ValidationFinal, Consistency: "ALL", Keys: 100, SampleKeys: 100}}}
	}
	// A spread above the threshold only warns by default.
	res := base()
	Evaluate(res)
	if res.Status != results.StatusPassed {
		t.Fatalf("warn: status %s (%s)", res.Status, res.Reason)
	}
	tabs := rackBalanceTable(res)
	if len(tabs) != 1 || tabs[0].Name != RackBalanceTableName || strings.Join(tabs[0].Columns, ",") != "row,time,node-1,node-4,RACKr1" {
		t.Fatalf("table %+v", tabs)
	}
	if c := tabs[0].Rows[0][4]; c.Value != "7.0" || c.Status != CellWarning {
		t.Fatalf("RACKr1 cell %+v", c)
	}
	// With action fail it fails the run and says which rack.
	res = base()
	res.Setup.RackBalance.Fail = true
	Evaluate(res)
	if res.Status != results.StatusFailed || !strings.Contains(res.Reason, "rack balance") || !strings.Contains(res.Reason, "r1 7.0") {
		t.Fatalf("fail: status %s, reason %q", res.Status, res.Reason)
	}
	// A lost row fails the run, naming the replicas.
	res = base()
	res.Validations[0].Missing = 3
	res.Validations[0].Nodes = []results.NodeLoss{{Node: "node-1", Missing: 1}, {Node: "node-2", Missing: 3}}
	Evaluate(res)
	if res.Status != results.StatusFailed || !strings.Contains(res.Reason, "data lost after final: 3 missing and 0 mismatched rows at ALL (replicas: node-2 3, node-1 1)") {
		t.Fatalf("lost: status %s, reason %q", res.Status, res.Reason)
	}
	if tabs := validationTables(res); len(tabs) != 2 || tabs[0].Rows[0][6].Status != CellFailed {
		t.Fatalf("validation tables %+v", tabs)
	}
}
