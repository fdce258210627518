package local

import (
	"context"
	"fmt"

	"github.com/elasticity-dev/elasticity/provision"
)

var _ provision.LoaderLauncher = (*Provider)(nil)

// LaunchLoaders implements provision.LoaderLauncher: local loaders are
// `elasticity stress` processes on this machine, started by the fleet
// itself, so there is nothing to create or tear down here.
func (p *Provider) LaunchLoaders(ctx context.Context, spec provision.LoaderSpec) ([]provision.Loader, error) {
	if spec.Count <= 0 {
		return nil, fmt.Errorf("local: %d loaders asked for", spec.Count)
	}
	out := make([]provision.Loader, spec.Count)
	for i := range out {
		out[i] = provision.Loader{Name: fmt.Sprintf("loader-%d", i+1), ID: "local", InstanceType: "local", Local: true}
	}
	return out, nil
}
