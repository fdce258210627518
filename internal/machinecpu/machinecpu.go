// Package machinecpu reads how busy this machine's CPUs were between two
// readings of /proc/stat (the kernel's counters node_exporter's cpu
// collector exports). A load generator's figures say nothing about the
// cluster when its own machine had no CPU left: on the local and docker
// backends that machine also runs every node.
package machinecpu

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Times are the machine's CPU seconds so far, summed over its CPUs.
type Times struct {
	// Busy: every mode but idle and iowait (a CPU waiting for I/O is free
	// to run anything runnable).
	Busy float64
	All  float64
}

// Read reads the machine's CPU times.
func Read() (Times, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return Times{}, fmt.Errorf("reading the machine's CPU times: %w", err)
	}
	st, err := fs.Stat()
	if err != nil {
		return Times{}, fmt.Errorf("reading the machine's CPU times: %w", err)
	}
	t := st.CPUTotal
	idle := t.Idle + t.Iowait
	all := t.User + t.Nice + t.System + idle + t.IRQ + t.SoftIRQ + t.Steal
	return Times{Busy: all - idle, All: all}, nil
}

// BusyPct is the share of the CPU time from a to b that was busy, in
// percent; 0 when no time passed between them.
func BusyPct(a, b Times) float64 {
	if d := b.All - a.All; d > 0 {
		return min(100, max(0, 100*(b.Busy-a.Busy)/d))
	}
	return 0
}
