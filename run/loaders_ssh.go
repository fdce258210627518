package run

import (
	"github.com/elasticity-dev/elasticity/stress/fleet"
	"github.com/elasticity-dev/elasticity/stress/fleet/sshshell"
)

// sshShell reaches loader machines as the scenario's ssh user, with its key
// or the ssh-agent.
func sshShell(env *Env) (fleet.Shell, error) {
	l := env.Plan.Load
	return sshshell.New(sshshell.Options{User: orDefault(l.SSHUser, "scyllaadm"), KeyPath: l.SSHKey, Logf: env.Logf})
}
