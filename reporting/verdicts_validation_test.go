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

// Capacity per vCPU before (calibrated on the initial nodes) and after
// (probed after the last step on the nodes left), and the offered rate's
// share of each.
func TestCapacityPerVCPUBeforeAndAfter(t *testing.T) {
	res := &results.Result{Status: results.StatusPassed, CapacityAfterOps: 12000,
		Setup: results.Setup{CapacityOps: 3000, RateOpsPerSec: 1500, InitialNodes: []results.NodeInfo{{Name: "node-1", VCPUs: 2}, {Name: "node-2", VCPUs: 2}}},
		Nodes: []results.NodeInfo{{Name: "node-1", VCPUs: 2}, {Name: "node-2", VCPUs: 2}, {Name: "node-3", VCPUs: 16}}}
	Evaluate(res)
	d := res.Derived
	if d.CapacityPerVCPUBefore != 750 || d.CapacityPerVCPUAfter != 600 || d.OfferedPctBefore != 50 || d.OfferedPctAfter != 12.5 {
		t.Fatalf("derived %+v", d)
	}
	var line string
	for _, a := range Answers(res) {
		if strings.HasPrefix(a, "Capacity per vCPU") {
			line = a
		}
	}
	if !strings.Contains(line, "750 op/s per vCPU before") || !strings.Contains(line, "600 after") || !strings.Contains(line, "12,000 op/s on 20 vCPUs") ||
		strings.Contains(line, "at least") || strings.Contains(line, "not a drop") {
		t.Fatalf("answer %q", line)
	}
	// The same probe on a host with no CPU left is a floor, not a drop.
	res.CapacityProbes = []results.CapacityProbe{{Name: results.ProbeAfter, CapacityOps: 12000, MachineBusyPct: 99, HostLagMSPerS: 12, HostBound: true, LowerBound: true}}
	Evaluate(res)
	if !res.Derived.CapacityAfterLowerBound || res.Derived.CapacityBeforeLowerBound {
		t.Fatalf("derived %+v", res.Derived)
	}
	line = capacityAnswer(res)
	for _, want := range []string{"Capacity per vCPU: 750 op/s per vCPU before (calibrated 3,000 op/s on 4 vCPUs; the offered 1,500 op/s is 50% of it)",
		", at least 600 after (probed after the last step: 12,000 op/s on 20 vCPUs, a lower bound as the host bounded the probe: the load generator's machine 99% busy, node lag 12 ms/s; the offered rate is at most 12% of it).",
		"The smaller figure after is the probe's limit, not a drop in the cluster's capacity per vCPU."} {
		if !strings.Contains(line, want) {
			t.Errorf("answer %q lacks %q", line, want)
		}
	}
	// On a quiet host the probe's only sign is the nodes' idle reactors:
	// a floor too, saying what was seen.
	busiest := 26.4
	res.CapacityProbes = []results.CapacityProbe{{Name: results.ProbeAfter, CapacityOps: 12000, MachineBusyPct: 84, ReactorUtilizationPct: &busiest, ReactorsUnsaturated: true, LowerBound: true}}
	Evaluate(res)
	if !res.Derived.CapacityAfterLowerBound {
		t.Fatalf("derived %+v", res.Derived)
	}
	line = capacityAnswer(res)
	for _, want := range []string{", at least 600 after (probed after the last step: 12,000 op/s on 20 vCPUs, a lower bound as the nodes' reactors were at most 26% busy (busiest shard; a saturated one reads about 100%), so their CPU did not end the probe: the load generator's host, or the nodes' disks or network, did; the offered rate is at most 12% of it).",
		"The smaller figure after is the probe's limit, not a drop"} {
		if !strings.Contains(line, want) {
			t.Errorf("answer %q lacks %q", line, want)
		}
	}
	// The same figure from nodes whose busiest shard saturated is the
	// cluster's capacity.
	busiest = 100
	res.CapacityProbes = []results.CapacityProbe{{Name: results.ProbeAfter, CapacityOps: 12000, MachineBusyPct: 84, ReactorUtilizationPct: &busiest}}
	Evaluate(res)
	if line = capacityAnswer(res); res.Derived.CapacityAfterLowerBound || strings.Contains(line, "at least") {
		t.Errorf("a probe with a saturated shard is a lower bound: %q", line)
	}
}
