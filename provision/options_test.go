package provision_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/scenarios"
	"github.com/elasticity-dev/elasticity/units"
)

// kiln is a backend the framework has never heard of: its section is its
// own type, decoded strictly by the scenario loader, defaulted and
// validated by itself; nothing outside this file names it.
type kiln struct {
	Wait  units.Duration `yaml:"wait"`
	Ovens int            `yaml:"ovens"`
}

func (k *kiln) Default(s *provision.Section) {
	if !s.IsSet("wait") {
		k.Wait = units.Duration(time.Minute)
	}
}

func (k *kiln) Validate(s *provision.Section) {
	if s.Selected && k.Ovens < 1 {
		s.Problem("ovens", "a kiln run needs an oven")
	}
}

func (k *kiln) Configure(c *provision.Config, selected bool) {
	if selected {
		c.Loaders.Count = k.Ovens
	}
}

func init() {
	provision.Register(provision.Backend{Name: "kiln", NewOptions: func() provision.Options { return &kiln{} },
		Model: func(*provision.Config) provision.Model { return provision.RealModel(0) },
		New: func(context.Context, *provision.Config, provision.BuildOptions) (provision.Provider, error) {
			return nil, errors.New("not here")
		}})
}

func TestBackendOwnsItsSection(t *testing.T) {
	s, err := scenarios.Parse([]byte("name: x\nbackend: kiln\nkiln:\n  ovens: 2\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Backends["kiln"].(*kiln); k.Ovens != 2 || k.Wait.D() != time.Minute {
		t.Errorf("kiln section %+v: want ovens 2 and the default wait", k)
	}
	for _, c := range []struct{ src, want string }{
		// Its own validation, at the field's line.
		{"name: x\nbackend: kiln\nkiln:\n  wait: 2m\n", "x.yaml:3: kiln.ovens: a kiln run needs an oven"},
		// The loader's strict decoding of its type, with the line.
		{"name: x\nbackend: kiln\nkiln:\n  ovens: 1\n  wait: soon\n", `x.yaml:5: kiln.wait: invalid duration "soon"`},
		{"name: x\nkiln:\n  ovns: 1\n", `x.yaml:3: kiln.ovns: unknown field (did you mean "ovens"?)`},
	} {
		_, err := scenarios.Parse([]byte(c.src), "x.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.src, err, c.want)
		}
	}
	// Another backend's run (the default, not registered in this test)
	// leaves the kiln's own checks out.
	if _, err := scenarios.Parse([]byte("name: x\nkiln:\n  wait: 2m\n"), "x.yaml", nil); err == nil || strings.Contains(err.Error(), "kiln.ovens") {
		t.Errorf("another backend's run: %v; want only its backend refused, the kiln section unchecked", err)
	}
}
