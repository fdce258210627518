package scenarios

// validateBackends checks the backends' own sections: each backend
// validates its own (provision.Options.Validate), in name order.
func (s *Scenario) validateBackends(given Given) []error {
	var errs checks
	for _, name := range s.SectionNames() {
		s.Backends[name].Validate(s.section(name, given, func(path, msg string) { errs.add(path, "%s", msg) }))
	}
	return errs
}
