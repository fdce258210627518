//go:build !linux

package node

// lowerThreadPriority is Linux only (per-thread nice values); elsewhere
// background work runs at the request path's priority.
func lowerThreadPriority(int) {}
