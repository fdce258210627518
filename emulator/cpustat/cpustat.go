// Package cpustat is node_exporter's cpu collector for the emulator's
// node_exporter doubles: node_cpu_seconds_total{cpu, mode} from the host's
// /proc/stat, as node_exporter (collector/cpu_linux.go) reads it through
// procfs. Emulated nodes share the machine they run on, so its CPU times,
// steal above all (the time the hypervisor ran something else while a vCPU
// had work), are the real ones.
package cpustat

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

var desc = prometheus.NewDesc("node_cpu_seconds_total", "Seconds the CPUs spent in each mode.", []string{"cpu", "mode"}, nil)

type collector struct{ fs procfs.FS }

// Collector returns the collector, or nil with the error when /proc cannot
// be read (then a node_exporter double serves no node_cpu series, as
// node_exporter with its cpu collector failing).
func Collector() (prometheus.Collector, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(); err != nil {
		return nil, err
	}
	return collector{fs}, nil
}

func (collector) Describe(ch chan<- *prometheus.Desc) { ch <- desc }

// mode is one of the eight modes node_exporter exports per CPU (guest time
// is in user and nice already; node_exporter exports it separately).
type mode struct {
	name string
	v    float64
}

func modes(t procfs.CPUStat) [8]mode {
	return [8]mode{{"user", t.User}, {"nice", t.Nice}, {"system", t.System}, {"idle", t.Idle},
		{"iowait", t.Iowait}, {"irq", t.IRQ}, {"softirq", t.SoftIRQ}, {"steal", t.Steal}}
}

// Collect emits each CPU's modes.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.fs.Stat()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(desc, err)
		return
	}
	for cpu, t := range st.CPU {
		id := strconv.FormatInt(cpu, 10)
		for _, m := range modes(t) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, m.v, id, m.name)
		}
	}
}

// Machine is the machine's CPU seconds over all CPUs so far: in steal, and
// in all the modes node_exporter exports (what a report's CPU steal is a
// share of).
func Machine() (steal, all float64, err error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, err
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, err
	}
	for _, m := range modes(st.CPUTotal) {
		all += m.v
	}
	return st.CPUTotal.Steal, all, nil
}
