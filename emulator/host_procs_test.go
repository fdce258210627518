package emulator

import (
	"runtime"
	"testing"
)

// A host gives the runtime one P per CPU per running node, as separate
// node processes would have, up to three nodes' worth, and counts only
// nodes that have not ended.
func TestHostSizesProcsByRunningNodes(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // sizeProcs leaves a user's setting alone
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	h := &host{nodes: map[string]*hosted{}}
	add := func(name string, ended bool) {
		n := &hosted{name: name, done: make(chan struct{})}
		if ended {
			close(n.done)
		}
		h.nodes[name] = n
	}
	cpus := runtime.NumCPU()
	add("node-1", false)
	add("node-2", false)
	add("node-3", true)
	h.sizeProcs()
	if got, want := runtime.GOMAXPROCS(0), 2*cpus; got != want {
		t.Fatalf("two running nodes of three on %d CPUs: GOMAXPROCS %d, want %d", cpus, got, want)
	}
	add("node-4", false)
	h.sizeProcs()
	if got, want := runtime.GOMAXPROCS(0), 3*cpus; got != want {
		t.Fatalf("three running nodes: GOMAXPROCS %d, want %d", got, want)
	}
	add("node-5", false)
	add("node-6", false)
	h.sizeProcs()
	if got, want := runtime.GOMAXPROCS(0), 3*cpus; got != want {
		t.Fatalf("five running nodes: GOMAXPROCS %d, want %d (three nodes' worth)", got, want)
	}
	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	h.sizeProcs()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS=1 set by the user: the host changed it to %d", got)
	}
}
