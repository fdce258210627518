package awssim

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/internal/sshexec"
	"github.com/elasticity-dev/elasticity/provision"
)

type instance struct {
	region                       *Region
	id, az, clientToken, keyName string
	typ                          provision.InstanceType
	image                        *Image
	private, public, loopback    string
	userData                     string
	tags, volumeTags             map[string]string
	sgs                          []string
	spot                         bool
	launched                     time.Time
	injected                     error // a test's ImpairInstance: the boot fails so (hooks.go)

	// Guarded by region.mu.
	state              string
	booted, impaired   bool
	reason, reasonCode string
	conf               machineConf
	scyllaStarted      bool // scylla-server started, holding its own listeners

	nodePid atomic.Int64 // scylla-server's process group, 0 when none

	lifeMu   sync.Mutex // boot and shutdown
	node     *localcluster.Process
	sshd     *sshexec.Server
	fwdMu    sync.Mutex
	forwards map[int]*forward
	down     bool
}

func (in *instance) dir() string     { return filepath.Join(in.region.o.Dir, in.id) }
func (in *instance) logPath() string { return filepath.Join(in.dir(), "scylla.log") }

func (in *instance) set(f func()) {
	in.region.mu.Lock()
	defer in.region.mu.Unlock()
	f()
}

// boot is the instance's first boot: sshd, then scylla_configure.py's
// work on the user-data, then scylla-server if the user-data says so.
// The instance is running at once; its status checks pass once sshd
// answers and scylla-server, when started, holds its own listeners, and
// fail (impaired, with the reason) when either could not start.
func (in *instance) boot() {
	in.lifeMu.Lock()
	defer in.lifeMu.Unlock()
	r := in.region
	r.wg.Add(1)
	defer r.wg.Done()
	fail := func(err error) {
		r.logf("%s: boot failed: %v", in.id, err)
		in.set(func() { in.impaired, in.reason = true, err.Error() })
	}
	in.set(func() {
		if in.state == statePending {
			in.state = stateRunning
		}
	})
	if err := os.MkdirAll(in.dir(), 0o755); err != nil {
		fail(err)
		return
	}
	ud, err := base64.StdEncoding.DecodeString(in.userData)
	if err != nil {
		ud = nil // EC2 passes undecodable user-data as is; the image then finds no JSON in it
	}
	conf := configure(ud, in.private, in.az)
	in.set(func() { in.conf = conf })
	if in.injected != nil {
		fail(in.injected)
		in.set(func() { in.booted = true })
		return
	}
	in.sshd, err = startSSH(in, net.JoinHostPort(in.private, "22"))
	if err != nil {
		fail(err)
		return
	}
	if conf.start && !r.o.NoScyllaServer {
		if err := in.startNode(conf); err != nil {
			// The machine is up (sshd answers, journalctl shows the error)
			// but impaired: the runner must not wait for a node that is
			// not there, nor reach another one on its address.
			fail(err)
		}
	}
	in.set(func() { in.booted = true })
	go in.syncForwards()
}

// startNode runs scylla-server: an emulated node configured from scylla.yaml.
func (in *instance) startNode(c machineConf) error {
	r := in.region
	if c.listen != in.private {
		return fmt.Errorf("listen_address %s is not this instance's address %s", c.listen, in.private)
	}
	api := c.apiAddress
	switch {
	case api == "0.0.0.0" || api == in.private:
		api = in.private // every interface: the private one (the public address is NAT)
	case isLoopback(api):
		api = in.loopback // the instance's own 127.0.0.1
	default:
		return fmt.Errorf("api_address %s is not an address of this instance", c.apiAddress)
	}
	name := c.clusterName
	if name == "" {
		name = fmt.Sprintf("scylladb-cluster-%d", in.launched.Unix())
	}
	args := append([]string{"node"}, localcluster.NodeFlags{
		Listen: in.private, API: api,
		DataDir: filepath.Join(in.dir(), "data"), LogFile: in.logPath(),
		ClusterName: name, DC: c.dc, Rack: c.rack,
		InstanceType: in.typ.Name, VCPUs: in.typ.VCPUs, MemoryGB: in.typ.MemoryGB, DiskGB: in.typ.StorageGB,
		Seeds: c.seeds,
		Extra: r.o.NodeArgs,
	}.Args()...)
	proc, err := localcluster.StartNode(localcluster.Launch{
		Binary: r.o.Binary, Args: args, Dir: in.dir(), Out: filepath.Join(in.dir(), "scylla.out"), DieWithParent: true,
	})
	if err != nil {
		return fmt.Errorf("starting scylla-server (%s node): %w", r.o.Binary, err)
	}
	in.node = proc
	in.nodePid.Store(int64(proc.Pid))
	if err := in.awaitListening(api); err != nil {
		_ = proc.Signal(syscall.SIGKILL)
		<-proc.Done()
		in.node = nil
		in.nodePid.Store(0)
		return fmt.Errorf("scylla-server failed to start: %w", err)
	}
	in.set(func() { in.scyllaStarted = true })
	r.logf("%s: scylla-server started (pid %d): dc %s rack %s, api_address %s, seeds %s", in.id, proc.Pid, c.dc, c.rack, c.apiAddress, strings.Join(c.seeds, ","))
	return nil
}

// awaitListening waits until scylla-server's process group holds the
// listeners ScyllaDB opens before it joins: REST on the API address,
// metrics and internode on the private one (CQL opens after the join, and
// a node may wait for its seeds). A scylla-server that exits first could
// not start (a taken address among its reasons): its own log says why.
// Another process answering on one of its addresses is a failure too, never
// taken for this instance's node.
func (in *instance) awaitListening(api string) error {
	pid := in.node.Pid
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := localcluster.CheckServes(pid, api, localcluster.RESTPort)
		if err == nil {
			err = localcluster.CheckServes(pid, in.private, localcluster.MetricsPort, localcluster.InternodePort)
		}
		if err == nil {
			return nil
		}
		select {
		case <-in.node.Done():
			return fmt.Errorf("it exited: %s", startupError(in.logPath(), filepath.Join(in.dir(), "scylla.out")))
		case <-time.After(100 * time.Millisecond):
		}
		if errors.Is(err, localcluster.ErrNotOurs) || time.Now().After(deadline) {
			return err
		}
	}
}

// startupError is the last ERROR line of the node's log (Seastar logs
// "Startup failed: ..." there), else the last line of its output.
func startupError(logPath, outPath string) string {
	last := func(path string, keep func(string) bool) string {
		b, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" && keep(l) {
				return l
			}
		}
		return ""
	}
	if l := last(logPath, func(l string) bool { return strings.HasPrefix(l, "ERROR") }); l != "" {
		return l
	}
	if l := last(outPath, func(string) bool { return true }); l != "" {
		return l
	}
	return "no error logged"
}

// shutdown stops the machine: scylla-server gets SIGTERM (systemd's stop)
// and 90 s, or SIGKILL at once for a forced stop; then sshd and the
// forwards go, and the instance reaches its final state.
func (in *instance) shutdown(force bool, final string) {
	in.lifeMu.Lock()
	defer in.lifeMu.Unlock()
	in.fwdMu.Lock()
	in.down = true
	for p, f := range in.forwards {
		f.close()
		delete(in.forwards, p)
	}
	in.fwdMu.Unlock()
	if in.node != nil {
		sig := syscall.SIGTERM
		if force {
			sig = syscall.SIGKILL
		}
		_ = in.node.Signal(sig)
		select {
		case <-in.node.Done():
		case <-time.After(90 * time.Second):
			_ = in.node.Signal(syscall.SIGKILL)
			<-in.node.Done()
		}
		in.node = nil
		in.nodePid.Store(0)
	}
	if in.sshd != nil {
		in.sshd.Close()
		in.sshd = nil
	}
	in.set(func() {
		in.state = final
		in.booted = false
		if final == stateTerminated {
			in.reasonCode, in.reason = "Client.UserInitiatedShutdown", "Client.UserInitiatedShutdown: User initiated shutdown"
		}
	})
	in.region.logf("%s: %s", in.id, final)
}

// syncForwards makes the public address forward the ports the security
// groups open to the runner, each while something listens behind it.
func (in *instance) syncForwards() {
	ports := in.region.openPorts(in)
	in.fwdMu.Lock()
	defer in.fwdMu.Unlock()
	if in.down {
		return
	}
	if in.forwards == nil {
		in.forwards = map[int]*forward{}
	}
	for _, p := range ports {
		if in.forwards[p] == nil {
			f := &forward{pub: net.JoinHostPort(in.public, strconv.Itoa(p)), priv: net.JoinHostPort(in.private, strconv.Itoa(p)), stop: make(chan struct{}),
				ours: in.servesCheck(p)}
			in.forwards[p] = f
			go f.run(in.region.logf)
		}
	}
}

// servesCheck fails unless the instance's own process holds its listener
// on port of the private address: sshd is this process's, the rest
// scylla-server's (and node_exporter's, its process group's).
func (in *instance) servesCheck(port int) func() error {
	return func() error {
		pid := os.Getpid()
		if port != 22 {
			if pid = int(in.nodePid.Load()); pid == 0 {
				return fmt.Errorf("%s:%d: scylla-server is not running", in.private, port)
			}
		}
		return localcluster.CheckServes(pid, in.private, port)
	}
}

// forward is one port of the public address. It listens only while the
// private side accepts connections, so that a port nothing listens on is
// refused at the public address as it is on EC2 (the NAT passes the SYN,
// the instance's kernel answers RST), and only while the instance's own
// process holds that listener: never to another process that took the
// address.
type forward struct {
	pub, priv string
	stop      chan struct{}
	ours      func() error
	once      sync.Once
	mu        sync.Mutex
	ln        net.Listener
}

func (f *forward) close() {
	f.once.Do(func() { close(f.stop) })
	f.mu.Lock()
	if f.ln != nil {
		f.ln.Close()
	}
	f.mu.Unlock()
}

func (f *forward) stopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

func (f *forward) run(logf func(string, ...any)) {
	warned := false
	for !f.stopped() {
		c, err := net.DialTimeout("tcp", f.priv, time.Second)
		if err != nil {
			select {
			case <-f.stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		c.Close()
		if err := f.ours(); err != nil {
			if !warned {
				logf("not forwarding %s: %v", f.pub, err)
				warned = true
			}
			select {
			case <-f.stop:
				return
			case <-time.After(time.Second):
			}
			continue
		}
		ln, err := net.Listen("tcp", f.pub)
		if err != nil {
			logf("forwarding %s: %v", f.pub, err)
			select {
			case <-f.stop:
				return
			case <-time.After(time.Second):
			}
			continue
		}
		f.mu.Lock()
		f.ln = ln
		f.mu.Unlock()
		if f.stopped() {
			ln.Close()
			return
		}
		f.serve(ln)
	}
}

// serve accepts until the private side stops answering, then closes the
// listener (the port is refused again) and returns.
func (f *forward) serve(ln net.Listener) {
	defer ln.Close()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		b, err := net.DialTimeout("tcp", f.priv, 5*time.Second)
		if err != nil {
			c.Close()
			var oe *net.OpError
			if errors.As(err, &oe) && errors.Is(err, syscall.ECONNREFUSED) {
				return
			}
			continue
		}
		go pipe(c, b)
	}
}

func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}
