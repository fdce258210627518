package runner

import (
	"github.com/elasticity-dev/elasticity/scenarios"
	"github.com/elasticity-dev/elasticity/stress/fleet"
	"github.com/elasticity-dev/elasticity/stress/fleet/sshshell"
)

// sshShell reaches loader machines as the scenario's ssh user, with its key
// or the ssh-agent.
func sshShell(sc *scenarios.Scenario, env *Env) (fleet.Shell, error) {
	return sshshell.New(sshshell.Options{User: orDefault(sc.AWS.SSHUser, "scyllaadm"), KeyPath: sc.AWS.SSHKey, Logf: env.Logf})
}
