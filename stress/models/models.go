// Package models imports every workload model form (stress.RegisterModel
// from each form's init), as provision/all imports every backend: a binary
// or package that parses model specs (the runner, `elasticity stress`,
// `elasticity-loader`, scenario validation) imports this package for its
// side effect. A new form adds its one import line here.
//
// The built-in key/value model ("kv") lives in package stress itself.
package models

import (
	// The built-in key/value model, form "kv".
	_ "github.com/elasticity-dev/elasticity/stress"
	// cassandra-stress command lines (workload.stress_cmd), form "cs".
	_ "github.com/elasticity-dev/elasticity/stress/csstress"
	// A cassandra-stress user profile with its ops(...), form "profile".
	_ "github.com/elasticity-dev/elasticity/stress/profile"
	// scylla-bench's modes (workload.kind), form "sb".
	_ "github.com/elasticity-dev/elasticity/stress/sbench"
)
