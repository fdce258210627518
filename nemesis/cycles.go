package nemesis

import (
	"fmt"
	"sync"

	"github.com/elasticity-dev/elasticity/results"
)

// Cycles numbers measured windows: "Cycle #0" is the steady state, then one
// per serial topology operation or parallel batch, in run order.
type Cycles struct {
	mu   sync.Mutex
	next int
	open string
}

// Name is the display name of cycle n.
func Name(n int) string { return fmt.Sprintf("Cycle #%d", n) }

// Start opens the next cycle and emits cycle_start; it returns the cycle's name.
func (c *Cycles) Start(env *Env, step string) string {
	c.mu.Lock()
	name := Name(c.next)
	c.next++
	c.open = name
	c.mu.Unlock()
	env.emit(results.Event{Type: results.EventCycleStart, Cycle: name, Step: step})
	return name
}

// End emits cycle_end for the named cycle.
func (c *Cycles) End(env *Env, name, step string) {
	c.mu.Lock()
	if c.open == name {
		c.open = ""
	}
	c.mu.Unlock()
	env.emit(results.Event{Type: results.EventCycleEnd, Cycle: name, Step: step})
}

// Open is the cycle currently measured ("" between cycles).
func (c *Cycles) Open() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// Count is how many cycles were started.
func (c *Cycles) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}
