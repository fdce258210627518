package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
)

// FieldError is one problem of a scenario field, as the sections' Validate
// methods return them (k6's options validation: every problem, not the
// first): Path is the dotted field path, lists indexed
// ("nemesis.0.grow_cluster.mode"). Loading places it at the field's line.
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Given reports whether a field path was given in the file or by --set
// (where a zero value is meaningful, validation asks rather than looks).
type Given func(path string) bool

// checks collects a section's problems.
type checks []error

func (c *checks) add(path, format string, args ...any) {
	*c = append(*c, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (c *checks) oneOf(path, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		c.add(path, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

func (c *checks) positive(path string, v float64) {
	if v <= 0 {
		c.add(path, "must be > 0")
	}
}

func (c *checks) nonNegative(path string, v float64) {
	if v < 0 {
		c.add(path, "must be >= 0")
	}
}

// instanceType checks a database node's instance type: in the catalog,
// with local storage.
func (c *checks) instanceType(path, name string) {
	it, err := provision.LookupInstanceType(name)
	if err != nil {
		c.add(path, "%v", err)
	} else if it.StorageGB <= 0 {
		c.add(path, "%s has no local storage and cannot be a database node", name)
	}
}
