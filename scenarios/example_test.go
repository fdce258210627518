package scenarios_test

import (
	"fmt"

	"github.com/elasticity-dev/elasticity/scenarios"
)

func ExampleParse() {
	src := []byte(`name: demo
workload:
  mix:
    write: -1
    read: 1
nemesis:
  - grow_cluster: {instance_type: i4i.4xlarge, mode: sideways}
`)
	_, err := scenarios.Parse(src, "demo.yaml", []string{"workload.load_percent=lots"})
	fmt.Println(err)
	// Output:
	// demo.yaml:4: workload.mix.write: must be >= 0
	// demo.yaml:7: nemesis.0.grow_cluster.mode: "sideways" is not one of serial, parallel
	// --set workload.load_percent=lots: workload.load_percent: invalid percentage "lots" (use e.g. 90% or 90)
}
