package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/plan"
	_ "github.com/elasticity-dev/elasticity/provision/all" // plan.Resolve looks the backend up
	"github.com/elasticity-dev/elasticity/scenarios"
)

// FuzzLoad checks that no input makes the loader panic or hang, and that
// whatever loads can be written back, loaded again and resolved to a plan.
//
//	go test -run '^$' -fuzz FuzzLoad -fuzztime 60s ./scenarios/
func FuzzLoad(f *testing.F) {
	const minimal = "name: t\n"
	files, _ := filepath.Glob("../configs/*.yaml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, "")
		}
	}
	f.Add([]byte(minimal+"nemesis:\n  - grow_cluster: {mode: parallel}\n  - hold: 1m\n"), "nemesis.0.grow_cluster.count_per_rack=2")
	f.Add([]byte(minimal+"workload:\n  mix: \"1:2\"\n  rate: 10/s\n"), "workload.rate=")
	f.Add([]byte("a: &a [*a]\n"), "")
	f.Add([]byte(minimal+"dataset:\n  value_size: {min: 1KiB, max: 2KiB}\n"), "dataset.fill.3.name=x")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.Split(set, "\n")
		}
		var s *scenarios.Scenario
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			s, err = scenarios.Parse(data, "fuzz.yaml", sets)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Parse took more than 10s on %q (sets %q)", data, sets)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		y, err := s.YAML()
		if err != nil {
			t.Fatalf("loaded but cannot be written: %v", err)
		}
		if _, err := scenarios.Parse(y, "resolved.yaml", nil); err != nil {
			t.Fatalf("resolved scenario does not load back: %v\n%s", err, y)
		}
		if _, err := plan.Resolve(s, nil); err != nil {
			t.Fatalf("a valid scenario does not resolve: %v", err)
		}
	})
}
