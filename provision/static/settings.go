package static

import (
	"fmt"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/units"
)

// Settings is the scenario's static section: an existing cluster; nothing
// is provisioned, and topology steps run through the user's commands
// (grow_cluster needs add_node).
type Settings struct {
	// Hosts are the nodes' addresses.
	Hosts []string `yaml:"hosts,omitempty"`
	// AddNode starts one node and prints its address as the last line of its
	// output (or a line NODE_ADDRESS=<addr>).
	AddNode *Command `yaml:"add_node,omitempty"`
	// RemoveNode releases a node that has left the cluster (optional).
	RemoveNode *Command `yaml:"remove_node,omitempty"`
	// StopNode, KillNode and StartNode stop, kill and start a node's database (optional).
	StopNode  *Command `yaml:"stop_node,omitempty"`
	KillNode  *Command `yaml:"kill_node,omitempty"`
	StartNode *Command `yaml:"start_node,omitempty"`
}

// Command is an external command of the backend.
type Command struct {
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args,omitempty"`
	Env     map[string]string `yaml:"env,omitempty"`
	// Timeout is a wall-clock limit (never scaled).
	Timeout units.Duration `yaml:"timeout"`
}

// DefaultCommandTimeout bounds a command without a timeout (as a hook's).
const DefaultCommandTimeout = units.Duration(10 * time.Minute)

// commands are the section's commands by key.
func (o *Settings) commands() []struct {
	key string
	cmd *Command
} {
	return []struct {
		key string
		cmd *Command
	}{{"add_node", o.AddNode}, {"remove_node", o.RemoveNode}, {"stop_node", o.StopNode}, {"kill_node", o.KillNode}, {"start_node", o.StartNode}}
}

// Default gives every command without a timeout the default one.
func (o *Settings) Default(s *provision.Section) {
	for _, c := range o.commands() {
		if c.cmd != nil && !s.IsSet(c.key+".timeout") {
			c.cmd.Timeout = DefaultCommandTimeout
		}
	}
}

// Validate checks the hosts and commands; a static run needs a host, and
// an add_node command when the scenario grows the cluster.
func (o *Settings) Validate(s *provision.Section) {
	if s.Selected && len(o.Hosts) == 0 {
		s.Problem("hosts", "the static backend needs at least one host")
	}
	for i, h := range o.Hosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " \t/") {
			s.Problem(fmt.Sprintf("hosts.%d", i), "%q is not a host address", h)
		}
	}
	for _, c := range o.commands() {
		if c.cmd == nil {
			continue
		}
		if strings.TrimSpace(c.cmd.Command) == "" {
			s.Problem(c.key+".command", "is required")
		}
		if c.cmd.Timeout <= 0 {
			s.Problem(c.key+".timeout", "must be > 0")
		}
	}
	if s.Selected && o.AddNode == nil {
		for _, p := range s.Grows {
			s.Report(p, "the static backend adds nodes only through static.add_node (a command that starts one)")
		}
	}
}

// Configure: the static section serves only static runs, through New.
func (o *Settings) Configure(*provision.Config, bool) {}

// settings is the static section of a configuration.
func settings(c *provision.Config) *Settings {
	return provision.SettingsOf(c, func() *Settings {
		return &Settings{}
	})
}

// hook is a command as the provider runs it.
func hook(c *Command) Hook {
	if c == nil {
		return Hook{}
	}
	return Hook{Command: append([]string{c.Command}, c.Args...), Env: c.Env, Timeout: c.Timeout.D()}
}
