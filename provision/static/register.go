package static

import (
	"context"

	"github.com/elasticity-dev/elasticity/provision"
)

// The static backend: an existing cluster, changed through the user's commands.
func init() {
	provision.Register(provision.Backend{
		Name:       "static",
		Model:      func(*provision.Config) provision.Model { return provision.RealModel(0) },
		NewOptions: func() provision.Options { return &Settings{} },
		New: func(ctx context.Context, c *provision.Config, o provision.BuildOptions) (provision.Provider, error) {
			st := settings(c)
			var hosts []Host
			for _, h := range st.Hosts {
				hosts = append(hosts, Host{Address: h})
			}
			return New(Options{Hosts: hosts, Logf: o.Logf,
				AddHook: hook(st.AddNode), RemoveHook: hook(st.RemoveNode),
				StopHook: hook(st.StopNode), KillHook: hook(st.KillNode), StartHook: hook(st.StartNode)}), nil
		},
	})
}
