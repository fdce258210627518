package provision

import "fmt"

// Options is a backend's own section of a scenario, as roachprod's
// providers own their ProviderOpts: the YAML key is the backend's name and
// the value a pointer to the backend's own struct (Backend.NewOptions),
// which the scenario loader decodes strictly by its yaml tags (an unknown
// key or a value of the wrong type is an error with its line). The
// sections of every registered backend are decoded, defaulted and
// validated, whichever backend runs: some settings serve others (the
// local section's emulator scale model, aws.ttl).
type Options interface {
	// Default fills what the scenario left unset.
	Default(s *Section)
	// Validate reports every problem with s.Problem.
	Validate(s *Section)
	// Configure puts the section's settings into the plan's backend part:
	// every section the ones it gives all backends, the selected one
	// (s.Selected) its own run's.
	Configure(c *Config, selected bool)
}

// Section is what a backend's options see of the scenario around them.
type Section struct {
	// Name is the section's key (the backend's name).
	Name string
	// Selected: this backend runs the scenario; checks of its own run
	// (required fields, one zone per rack) apply only then.
	Selected bool
	// Racks are cluster.racks, resolved.
	Racks []string
	// Grows are the field paths of the scenario's grow steps
	// ("nemesis.0.grow_cluster"), for backends that cannot add nodes alone.
	Grows []string
	// IsSet reports whether a field of the section ("smp", "add_node.timeout")
	// was given in the file or by --set.
	IsSet func(field string) bool
	// Report records a problem at a field path of the scenario.
	Report func(path, msg string)
}

// Problem records a problem of a field of the section ("smp").
func (s *Section) Problem(field, format string, args ...any) {
	s.Report(s.Name+"."+field, fmt.Sprintf(format, args...))
}

// RackNamer is an optional method of a backend's options: the racks the
// section names (aws: its availability zones), which the cluster takes
// when cluster.racks is not given and this backend runs.
type RackNamer interface {
	RackNames() []string
}

// ScaledTime is an optional method of a backend's options whose nodes run
// the scenario's time scaled by a factor the section sets (local:
// local.time_scale, field "time_scale"): the scenario's waits then take
// the scaled defaults, and a long estimate names the field.
type ScaledTime interface {
	ScenarioTimeScale() (scale float64, field string)
}

// SettingsOf is c's section as the backend's own type T, or def's when the
// configuration has none of that type (built without a scenario, as tests
// build it).
func SettingsOf[T Options](c *Config, def func() T) T {
	if o, ok := c.Options.(T); ok {
		return o
	}
	return def()
}
