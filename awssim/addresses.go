package awssim

import (
	"fmt"

	"github.com/elasticity-dev/elasticity/emulator/localcluster"
)

// The region's instances live on the host's loopback, which it shares with
// whatever else runs there: another region, a local cluster (`cluster up`,
// the local backend), a test. An instance given an address someone else
// holds would have its scylla-server fail to bind while the runner, through
// the public address, talks to the other process's node. So each
// RunInstances takes the next instance number whose three addresses have
// nothing listening on an instance's ports (the socket table, as
// localcluster reads it for local clusters), and boot checks that the
// instance's own scylla-server holds its listeners (instance.go).

// freeAddress returns the next instance number N after the last one given
// whose PrivateNet+N, PublicNet+N and LoopbackNet+N are free on every port
// an instance listens on. Called with r.mu held.
func (r *Region) freeAddress() (int, *apiError) {
	if err := localcluster.HeldEverywhere(instancePorts); err != nil {
		return 0, errf("InsufficientFreeAddressesInSubnet", "the simulated region has no free address: %v", err)
	}
	for n := r.nextAddr + 1; n <= 254; n++ {
		busy, err := r.busyAddress(n)
		if err != nil {
			return 0, errf("InternalError", "checking the addresses of instance number %d: %v", n, err)
		}
		if busy == "" {
			return n, nil
		}
		r.logf("not using %s%d: %s is held by another process", r.o.PrivateNet, n, busy)
	}
	return 0, errf("InsufficientFreeAddressesInSubnet", "no free address left in %s0/24, %s0/24 and %s0/24 (others listen on them, or the region used them all)",
		r.o.PrivateNet, r.o.PublicNet, r.o.LoopbackNet)
}

// busyAddress is the first "address:port" of instance number n that
// something listens on, or "".
func (r *Region) busyAddress(n int) (string, error) {
	for _, prefix := range []string{r.o.PrivateNet, r.o.PublicNet, r.o.LoopbackNet} {
		busy, err := localcluster.Busy(fmt.Sprintf("%s%d", prefix, n), 1, instancePorts)
		if err != nil || busy != "" {
			return busy, err
		}
	}
	return "", nil
}
