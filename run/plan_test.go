package run

import (
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/plan"
	_ "github.com/elasticity-dev/elasticity/provision/all"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/scenarios"
)

func resolve(t *testing.T, file string, sets ...string) *plan.Plan {
	t.Helper()
	sc, err := scenarios.Load(file, sets)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanScaleout(t *testing.T) {
	p := resolve(t, "../configs/90pct-scaleout.yaml")
	if len(p.Fill) != 2 || p.Fill[1].Name != "Hard Limit" || p.Fill[1].TargetPercent != 90 {
		t.Fatalf("fills %+v", p.Fill)
	}
	if p.SteadyState != 4500*time.Millisecond {
		t.Fatalf("steady state %s is not scaled (30m × 0.0025)", p.SteadyState)
	}
	steps := nemesisSteps(p)
	if len(steps) != 1 || steps[0].Kind != results.KindGrow || steps[0].InstanceType != "i4i.4xlarge" || steps[0].Mode != results.ModeSerial {
		t.Fatalf("nemesis %+v", steps)
	}
	if !p.Emulated || len(p.Limitations) == 0 || p.Load.LoadPercent != 50 || p.RF != 3 || p.TabletsInitial != 1024 {
		t.Fatalf("plan %+v", p)
	}
	s := setup(p, "r1", plannedNodes(p), nil)
	if len(s.InitialNodes) != 3 || s.InitialNodes[0].VCPUs != 2 || len(s.Thresholds) == 0 || len(s.Nemesis) != 1 {
		t.Fatalf("setup %+v", s)
	}
	// Adaptive timeouts stay under the scenario's ceilings.
	tj := policy(p).For(nemesis.WaitJoin, 1e9, nil)
	if tj.Hard > p.Waits.NodeReady || tj.Soft <= 0 || tj.Soft > tj.Hard {
		t.Fatalf("join timeouts %+v", tj)
	}
}

func TestPlanParallelOverride(t *testing.T) {
	p := resolve(t, "../configs/smoke.yaml", "nemesis.0.grow_cluster.mode=parallel")
	if st := nemesisSteps(p)[0]; st.Mode != results.ModeParallel || len(st.Racks) != 1 {
		t.Fatalf("nemesis %+v", st)
	}
}

// Waits count on the backend model's share of its streaming figure: 25 MiB/s
// per vCPU of real nodes (a third of the estimate's 75), a quarter of the
// emulated bandwidth on local.
func TestPlanTimeoutBandwidth(t *testing.T) {
	for _, c := range []struct {
		backend string
		want    float64 // bytes/s for the initial i4i.large (2 vCPUs)
	}{{"aws", 25 << 20 * 2}, {"local", 4 << 20 * 2 / 4}} {
		p := resolve(t, "../configs/smoke.yaml", "backend="+c.backend)
		if got := p.Waits.StreamBytesPerSec; got < c.want*0.999 || got > c.want*1.001 {
			t.Errorf("%s: timeouts count on %.0f B/s, want %.0f", c.backend, got, c.want)
		}
	}
}

// A scylla-bench run counts its keys in partitions: the setup names the
// unit and the model's partition size (dataset.value_size gave way), the
// validation's log line says partitions.
func TestScyllaBenchRunCountsPartitions(t *testing.T) {
	p := resolve(t, "../configs/smoke.yaml", "workload.kind=write,partition-offset=1000", "workload.clustering_row_count=10", "workload.clustering_row_size=100")
	s := setup(p, "r1", plannedNodes(p), nil)
	if s.Model == nil || s.Model.KeyUnit != "partition" || s.Model.KeyBytes != 8+10*(8+100) || s.ValueSizeBytes != 0 {
		t.Fatalf("setup model %+v, value size %d", s.Model, s.ValueSizeBytes)
	}
	v := results.Validation{Keys: 20, SampleKeys: 20, ScannedRanges: 32, ScannedRows: 20, Consistency: "ALL", Unit: p.Workload.Model.Unit()}
	if got, want := validationSummary(&v), "0 missing, 0 mismatched of 20 partitions (20 read one by one, 32 of 32 token ranges scanned: 20 partitions) at ALL"; !strings.HasPrefix(got, want) {
		t.Errorf("validation summary %q, want it to start %q", got, want)
	}
	if why := validationNotDone(p); why != "" {
		t.Errorf("scylla-bench is validated, the run says not: %s", why)
	}
	pp := resolve(t, "../configs/sensor-readings.yaml")
	if why := validationNotDone(pp); why == "" || why != pp.Workload.Model.NotValidated {
		t.Errorf("a profile's validation: the run says %q, the plan %q", why, pp.Workload.Model.NotValidated)
	}
}
