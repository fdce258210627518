package main

import (
	"context"
	"slices"
	"testing"

	"github.com/elasticity-dev/elasticity/preflight"
)

// Each backend's registration says what a run takes of this machine and
// which of its own checks apply: the command names no backend.
func TestPreflightChecksComeFromTheBackend(t *testing.T) {
	e := &env{Getenv: func(string) string { return "" }}
	for _, c := range []struct {
		sets   []string
		checks []string
		memory int64
	}{
		// 3 initial nodes and 3 grown: 200 MiB each and 512 MiB for the runner.
		{[]string{"backend=local"}, []string{"disk", "memory", "binary", "loopback"}, 6*200<<20 + 512<<20},
		{[]string{"backend=aws"}, []string{"disk", "aws-credentials"}, 0},
		{[]string{"backend=static", "static.hosts=[10.0.0.1]", "static.add_node.command=echo"}, []string{"disk"}, 0},
	} {
		p, err := loadPlan(e, "../../configs/90pct-scaleout.yaml", c.sets)
		if err != nil {
			t.Fatal(err)
		}
		in := preflightInput(p, t.TempDir(), "/nonexistent/elasticity", e.Getenv)
		checks, _ := preflight.Run(context.Background(), in)
		var names []string
		for _, ch := range checks {
			names = append(names, ch.Name)
		}
		if !slices.Equal(names, c.checks) || in.PlannedMemoryBytes != c.memory {
			t.Errorf("%v: checks %v, memory %d; want %v, %d", c.sets, names, in.PlannedMemoryBytes, c.checks, c.memory)
		}
	}
}
