package plan_test

import (
	"fmt"

	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/scenarios"
)

func ExampleResolve() {
	s, err := scenarios.Parse([]byte("name: demo\nnemesis:\n  - grow_cluster: {instance_type: i4i.4xlarge}\n"), "demo.yaml", nil)
	if err != nil {
		panic(err)
	}
	p, err := plan.Resolve(s, nil)
	if err != nil {
		panic(err)
	}
	for _, f := range p.Fill {
		fmt.Printf("%s: %.0f%% = %s on disk\n", f.Name, f.TargetPercent, scenarios.HumanBytes(f.TargetBytes))
	}
	for _, ph := range p.Phases {
		if ph.Phase == "steady_state" || ph.Phase == "nemesis" {
			fmt.Printf("%s %s: %d cycle(s)\n", ph.Phase, ph.Name, ph.Cycles)
		}
	}
	fmt.Println(p.SteadyState)
	// Output:
	// Soft Limit: 70% = 196.56 MiB on disk
	// Hard Limit: 90% = 252.72 MiB on disk
	// steady_state Cycle #0: 1 cycle(s)
	// nemesis grow_cluster #1: 3 cycle(s)
	// 4.5s
}
