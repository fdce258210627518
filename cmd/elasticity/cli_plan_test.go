package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/plan"
)

func TestPlanText(t *testing.T) {
	code, out, errs := cli(t, "", "plan", "../../configs/90pct-scaleout.yaml")
	if code != ExitPassed {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{
		"Plan: 90pct-scaleout",
		"Backend: local (emulated",
		"node data: memory)",
		"rack1  1      i4i.large",
		"i4i.4xlarge    16",
		"Soft Limit  70%",
		"Hard Limit  90%",
		"steady_state  Cycle #0",
		"Add 3 x i4i.4xlarge",
		"write_p99_ms  <= 10",
		"Estimated wall time: ≈",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanJSONWithSets(t *testing.T) {
	code, out, errs := cli(t, "", "plan", "--json", "--set", "nemesis.0.grow_cluster.mode=parallel", "--set", "local.time_scale=0.02", "--set", "local.data_dir=run", "../../configs/90pct-scaleout.yaml")
	if code != ExitPassed {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if p.Scenario != "90pct-scaleout" || p.TimeScale != 0.02 || len(p.Fill) != 2 || p.RF != 3 || p.LocalDataDir != "run" {
		t.Errorf("plan %+v", p)
	}
	var grow *plan.Phase
	for i := range p.Phases {
		if p.Phases[i].Phase == "nemesis" {
			grow = &p.Phases[i]
		}
	}
	if grow == nil || grow.Mode != "parallel" || grow.Cycles != 1 {
		t.Errorf("nemesis phase %+v", grow)
	}
	// 30m steady state × 0.02.
	for _, ph := range p.Phases {
		if ph.Phase == "steady_state" && ph.Seconds != 36 {
			t.Errorf("steady state %v s, want 36", ph.Seconds)
		}
	}
}

func TestPlanBackendFlag(t *testing.T) {
	code, out, errs := cli(t, "", "plan", "--backend", "aws", "../../configs/90pct-scaleout.yaml")
	if code != ExitPassed {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "Backend: aws") || strings.Contains(out, "emulated") {
		t.Errorf("aws plan:\n%s", out)
	}
	code, _, errs = cli(t, "", "plan", "--backend", "gce", "../../configs/90pct-scaleout.yaml")
	if code != ExitInvalid || !strings.Contains(errs, "--set backend=gce: backend:") {
		t.Errorf("exit %d\n%s", code, errs)
	}
}

func TestPlanInvalid(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "name: x\ncluster:\n  instance_type: m5.large\n")
	code, _, errs := cli(t, "", "plan", bad)
	if code != ExitInvalid || !strings.Contains(errs, bad+":3: cluster.instance_type: unknown instance type") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if code, _, _ := cli(t, "", "plan"); code != ExitInvalid {
		t.Errorf("plan without file: exit %d", code)
	}
}

func TestPlanYAMLShowsDefaults(t *testing.T) {
	f := writeFile(t, "min.yaml", "name: minimal\n")
	code, out, errs := cli(t, "", "plan", "--yaml", "--set", "workload.rate=100/s", f)
	if code != ExitPassed {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{"name: minimal", "backend: local", "instance_type: i4i.large", "rate: 100/s", "name: Hard Limit", "time_scale: 0.0025", "node_ready: 3m"} {
		if !strings.Contains(out, want) {
			t.Errorf("resolved scenario lacks %q:\n%s", want, out)
		}
	}
	// What plan --yaml prints validates as is.
	back := writeFile(t, "resolved.yaml", out)
	if code, _, errs := cli(t, "", "validate", back); code != ExitPassed {
		t.Errorf("resolved scenario invalid: %s", errs)
	}
	if code, _, _ := cli(t, "", "plan", "--yaml", "--json", f); code != ExitInvalid {
		t.Errorf("--yaml with --json: exit %d", code)
	}
}
