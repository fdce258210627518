package scenarios

import (
	"fmt"
	"slices"

	"github.com/elasticity-dev/elasticity/provision"
)

// newSections makes every registered backend's section, empty: the
// scenario's keys of those names decode into them (decodeStruct), and
// each backend defaults and validates its own.
func newSections() map[string]provision.Options {
	m := map[string]provision.Options{}
	for _, name := range provision.Names() {
		if be, err := provision.Lookup(name); err == nil && be.NewOptions != nil {
			m[name] = be.NewOptions()
		}
	}
	return m
}

// SectionNames are the scenario's backend sections in name order.
func (s *Scenario) SectionNames() []string {
	var names []string
	for n := range s.Backends {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// section is what the backend called name sees of the scenario around its
// section: whether it runs it, the racks, the grow steps, what was given
// (given: by the field's path) and where its problems go.
func (s *Scenario) section(name string, given Given, report func(path, msg string)) *provision.Section {
	sec := &provision.Section{Name: name, Selected: name == s.Backend, Racks: s.Cluster.Racks,
		IsSet:  func(field string) bool { return given(name + "." + field) },
		Report: report}
	for i, st := range s.Nemesis {
		if st.Grow != nil {
			sec.Grows = append(sec.Grows, fmt.Sprintf("nemesis.%d.%s", i, st.kind))
		}
	}
	return sec
}

// TimeScaled reports whether the running backend's nodes run the
// scenario's time scaled by a factor its own section sets
// (provision.ScaledTime), with the factor and the field's path
// ("local.time_scale").
func (s *Scenario) TimeScaled() (scale float64, path string, ok bool) {
	st, ok := s.Backends[s.Backend].(provision.ScaledTime)
	if !ok {
		return 0, "", false
	}
	scale, field := st.ScenarioTimeScale()
	return scale, s.Backend + "." + field, true
}
