package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// The one launcher of emulated node processes: Cluster here (the
// emulator's tests, `elasticity cluster`), the local backend
// (provision/local) and the simulated EC2 instances' scylla-server (awssim)
// all build a node's command line with NodeFlags and start it with
// StartNode.

// NodeFlags are the flags of one emulated node (`elasticity node`,
// emulator/flags.go). The identity, sizes, seeds and log are always passed;
// a zero port, version or factor leaves the node's own default.
type NodeFlags struct {
	Listen string
	// API is --api-address (REST); "" = the listen address.
	API                   string
	DataDir, LogFile      string
	ClusterName, DC, Rack string
	InstanceType          string
	VCPUs                 int
	MemoryGB, DiskGB      float64
	Seeds                 []string

	CQLPort, RESTPort, MetricsPort, NodeExporterPort, InternodePort int

	// Version is the ScyllaDB version the node poses as.
	Version                string
	BlockedReactorNotifyMS int
	StorageScaleMiBPerGB   float64
	TimeScale              float64
	OpsPerVCPU             float64
	StreamMiBPerVCPU       float64
	// Extra come last, so that they win over the flags above.
	Extra []string
}

// Args are f's command-line arguments.
func (f NodeFlags) Args() []string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	args := []string{"--listen-address", f.Listen}
	if f.API != "" {
		args = append(args, "--api-address", f.API)
	}
	args = append(args,
		"--data-dir", f.DataDir, "--cluster-name", f.ClusterName, "--dc", f.DC, "--rack", f.Rack,
		"--instance-type", f.InstanceType, "--vcpus", strconv.Itoa(f.VCPUs),
		"--memory-gb", num(f.MemoryGB), "--disk-gb", num(f.DiskGB),
		"--seeds", strings.Join(f.Seeds, ","), "--log-file", f.LogFile)
	for _, p := range []struct {
		flag string
		v    int
	}{{"--cql-port", f.CQLPort}, {"--rest-port", f.RESTPort}, {"--metrics-port", f.MetricsPort},
		{"--node-exporter-port", f.NodeExporterPort}, {"--internode-port", f.InternodePort},
		{"--blocked-reactor-notify-ms", f.BlockedReactorNotifyMS}} {
		if p.v != 0 {
			args = append(args, p.flag, strconv.Itoa(p.v))
		}
	}
	if f.Version != "" {
		// The version the node poses as (its release_version and the
		// behaviour that depends on it, e.g. scale-in from 2026.1).
		args = append(args, "--version", f.Version)
	}
	for _, x := range []struct {
		flag string
		v    float64
	}{{"--storage-scale-mib-per-gb", f.StorageScaleMiBPerGB}, {"--time-scale", f.TimeScale},
		{"--ops-per-vcpu", f.OpsPerVCPU}, {"--stream-mib-per-vcpu", f.StreamMiBPerVCPU}} {
		if x.v > 0 {
			args = append(args, x.flag, num(x.v))
		}
	}
	return append(args, f.Extra...)
}

// Launch says how to start one node process.
type Launch struct {
	Binary string
	Args   []string
	// Env is added to this process's environment; NodeEnv's runtime
	// settings are added to it.
	Env []string
	Dir string // working directory; "" = this process's
	// Out receives the process's stdout and stderr (appended): panics and
	// anything not in the ScyllaDB-format log.
	Out string
	// DieWithParent: the kernel kills the node when this process dies
	// (kill -9, a second Ctrl-C that skips teardown), so that no node
	// outlives the run that started it.
	DieWithParent bool
	// Detached: the process outlives this one (`cluster up`); nobody here
	// waits for it.
	Detached bool
}

// Process is a started node process, the leader of its own process group
// (stopping the node takes its children too).
type Process struct {
	Pid      int
	detached bool
	done     chan struct{}
	err      error
}

// StartNode starts a node process in its own process group and, unless
// detached, reaps it in the background: once the process has exited, what
// it left in its group is killed and Done is closed.
func StartNode(l Launch) (*Process, error) {
	if l.DieWithParent && l.Detached {
		return nil, errors.New("localcluster: a detached node cannot die with its parent")
	}
	out, err := os.OpenFile(l.Out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the node's output file: %w", err)
	}
	cmd := exec.Command(l.Binary, l.Args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if l.DieWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = l.Dir
	cmd.Env = NodeEnv(append(os.Environ(), l.Env...))
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	p := &Process{Pid: cmd.Process.Pid, detached: l.Detached, done: make(chan struct{})}
	if l.Detached {
		out.Close()
		cmd.Process.Release()
		close(p.done)
		return p, nil
	}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		// Children left behind by the node go with its group.
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		close(p.done)
	}()
	return p, nil
}

// Done is closed once the process has exited and been reaped (at once for
// a detached one, which is nobody's here to reap).
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process ended (exec.Cmd.Wait's error), valid after Done.
func (p *Process) Err() error { return p.err }

// Exited reports whether the process has ended. A detached process is
// polled: until its parent exits, a dead one lingers as a zombie, which
// kill(pid, 0) still finds.
func (p *Process) Exited() bool {
	if p.detached {
		return syscall.Kill(p.Pid, 0) != nil || isZombie(p.Pid)
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process's group.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sending %v to process group %d: %w", sig, p.Pid, err)
	}
	return nil
}
