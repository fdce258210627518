package plan

// Resolve looks backends up in the provision registry.
import _ "github.com/elasticity-dev/elasticity/provision/all"
