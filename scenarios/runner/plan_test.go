package runner

import (
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/scenarios"
)

func TestPlanForScaleout(t *testing.T) {
	sc, err := scenarios.Load("../../configs/90pct-scaleout.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFor(sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fills) != 2 || p.Fills[1].Name != "Hard Limit" || p.Fills[1].TargetPercent != 90 {
		t.Fatalf("fills %+v", p.Fills)
	}
	if p.SteadyState != sc.Scaled(30*time.Minute) || p.SteadyState >= 30*time.Minute {
		t.Fatalf("steady state %s is not scaled", p.SteadyState)
	}
	if len(p.Nemesis) != 1 || p.Nemesis[0].Kind != nemesis.KindGrow || p.Nemesis[0].InstanceType != "i4i.4xlarge" || p.Nemesis[0].Mode != nemesis.ModeSerial {
		t.Fatalf("nemesis %+v", p.Nemesis)
	}
	if !p.Emulated || len(p.Limitations) == 0 || p.LoadPercent != 50 || p.RF != 3 || p.Tablets != 1024 {
		t.Fatalf("plan %+v", p)
	}
	setup := p.Setup(p.PlannedNodes())
	if len(setup.InitialNodes) != 3 || setup.InitialNodes[0].VCPUs != 2 || len(setup.Thresholds) == 0 {
		t.Fatalf("setup %+v", setup)
	}
	// Adaptive timeouts stay under the scenario's ceilings.
	tj := p.Timeouts.For(nemesis.WaitJoin, 1e9, nil)
	if tj.Hard > sc.Timeouts.NodeReady.D() || tj.Soft <= 0 || tj.Soft > tj.Hard {
		t.Fatalf("join timeouts %+v", tj)
	}
}

func TestPlanForHookAndBackendOverride(t *testing.T) {
	sc, err := scenarios.Load("../../configs/smoke.yaml", []string{"nemesis.0.grow_cluster.mode=parallel"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFor(sc)
	if err != nil {
		t.Fatal(err)
	}
	if p.Nemesis[0].Mode != nemesis.ModeParallel || len(p.Nemesis[0].Racks) != 1 {
		t.Fatalf("nemesis %+v", p.Nemesis[0])
	}
	if _, err := lookupProvider("nope", nil); err == nil {
		t.Fatal("unknown backend accepted")
	}
}
