package cpustat

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

// The series are node_exporter's: one counter per CPU and mode, eight
// modes, equal to /proc/stat's seconds when they were read.
func TestNodeCPUSecondsAsNodeExporter(t *testing.T) {
	c, err := Collector()
	if err != nil {
		t.Skipf("no /proc/stat here: %v", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fs, _ := procfs.NewDefaultFS()
	before, _ := fs.Stat()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := fs.Stat()
	if len(fams) != 1 || fams[0].GetName() != "node_cpu_seconds_total" || fams[0].GetType().String() != "COUNTER" || fams[0].GetHelp() != "Seconds the CPUs spent in each mode." {
		t.Fatalf("families: %v", fams)
	}
	if got, want := len(fams[0].Metric), 8*len(before.CPU); got != want {
		t.Fatalf("%d series, want 8 modes x %d CPUs", got, len(before.CPU))
	}
	for _, m := range fams[0].Metric {
		var cpu, mode string
		for _, l := range m.Label {
			switch l.GetName() {
			case "cpu":
				cpu = l.GetValue()
			case "mode":
				mode = l.GetValue()
			}
		}
		pick := func(s procfs.Stat) float64 {
			for id, t := range s.CPU {
				if cpu == strconv.FormatInt(id, 10) {
					return map[string]float64{"user": t.User, "nice": t.Nice, "system": t.System, "idle": t.Idle,
						"iowait": t.Iowait, "irq": t.IRQ, "softirq": t.SoftIRQ, "steal": t.Steal}[mode]
				}
			}
			return -1
		}
		v := m.GetCounter().GetValue()
		if lo, hi := pick(before), pick(after); lo < 0 || v < lo || v > hi {
			t.Errorf("cpu %s mode %s: %v, /proc/stat said %v then %v", cpu, mode, v, lo, hi)
		}
	}
}
