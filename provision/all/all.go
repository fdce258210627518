// Package all registers every backend: import it for its side effect
// wherever a backend is looked up by name (the CLI, tests that resolve
// plans). Adding a backend is its package plus one line here.
package all

import (
	_ "github.com/elasticity-dev/elasticity/provision/aws"
	_ "github.com/elasticity-dev/elasticity/provision/docker"
	_ "github.com/elasticity-dev/elasticity/provision/local"
	_ "github.com/elasticity-dev/elasticity/provision/static"
)
