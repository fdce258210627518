package localcluster

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/gocql/gocql"
)

// The launcher's separator is the emulator's.
func TestAndNodeIsTheEmulators(t *testing.T) {
	if andNode != emulator.AndNode {
		t.Fatalf("localcluster separates nodes' flags with %q, emulator.Main with %q", andNode, emulator.AndNode)
	}
	if ControlSocketFlag != emulator.ControlSocketFlag {
		t.Fatalf("localcluster starts a host with %q, emulator.Main takes %q", ControlSocketFlag, emulator.ControlSocketFlag)
	}
}

// With SharedProcess the nodes run in one process, each with its own
// listeners and host id, and replicate at QUORUM to each other with no
// internode TCP connection between them; a node added later joins the
// same process.
func TestSharedProcess(t *testing.T) {
	opts := testOptions(t, "127.0.145.2", 3)
	opts.SharedProcess = true
	c := startCluster(t, opts)
	nodes := c.Nodes()
	ids := map[string]bool{}
	for _, n := range nodes {
		if n.Pid != nodes[0].Pid {
			t.Fatalf("node %d runs in process %d, node 1 in %d", n.Index+1, n.Pid, nodes[0].Pid)
		}
		ids[n.HostID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("host ids %v: want three different ones", ids)
	}
	s := session(t, c.Hosts()...)
	createSchema(t, s)
	value := make([]byte, 1024)
	writeRows(t, s, 0, 500, value)
	readRows(t, s, 0, 500, gocql.Quorum)
	added, err := c.AddNode(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if added.Pid != nodes[0].Pid {
		t.Fatalf("a node added later runs in process %d, not the cluster's %d", added.Pid, nodes[0].Pid)
	}
	writeRows(t, s, 500, 1000, value)
	readRows(t, s, 0, 1000, gocql.Quorum)
	if n := internodeTCP(t, c.Hosts()...); n != 0 {
		t.Errorf("%d internode TCP connections between nodes of one process", n)
	}
}

// internodeTCP counts the established internode TCP connections between addrs.
func internodeTCP(t *testing.T, addrs ...string) int {
	t.Helper()
	n := 0
	for _, l := range establishedTCP(t) {
		if slicesHave(addrs, l[0]) && slicesHave(addrs, l[1]) && (strings.HasSuffix(l[0], fmt.Sprintf(":%d", InternodePort)) || strings.HasSuffix(l[1], fmt.Sprintf(":%d", InternodePort))) {
			n++
		}
	}
	return n
}

// One node of a shared process is killed, paused and stopped as signals
// do a node process: killed, its listeners are gone at once, its log
// stops, its peers see it down and the others serve QUORUM; started
// again it is the same node (its host id from its data); paused, its
// connections are accepted and nothing answers, its peers see it down,
// and resumed it answers again; stopped, it shuts down as SIGTERM does.
func TestSharedProcessNodeLifecycle(t *testing.T) {
	opts := testOptions(t, "127.0.146.2", 3)
	opts.SharedProcess = true
	c := startCluster(t, opts)
	s := session(t, c.Hosts()...)
	createSchema(t, s)
	value := make([]byte, 1024)
	writeRows(t, s, 0, 300, value)
	n2 := c.Nodes()[1]
	id := n2.HostID

	if err := c.Kill(1); err != nil {
		t.Fatal(err)
	}
	if err := c.ExitErr(1); err == nil || err.Error() != "signal: killed" {
		t.Errorf("a killed node's exit: %v, want signal: killed", err)
	}
	for _, port := range []int{CQLPort, RESTPort, MetricsPort, InternodePort} {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort(n2.Addr, fmt.Sprint(port)), time.Second); err == nil {
			conn.Close()
			t.Errorf("a killed node still listens on port %d", port)
		}
	}
	logSize := func() int64 {
		st, err := os.Stat(n2.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	size := logSize()
	waitDown(t, c.Nodes()[0].Addr, n2.Addr, true)
	writeRows(t, s, 300, 600, value)
	readRows(t, s, 0, 600, gocql.Quorum)
	if got := logSize(); got != size {
		t.Errorf("a killed node's log grew from %d to %d bytes", size, got)
	}
	if err := c.Restart(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if n2 = c.Nodes()[1]; n2.HostID != id {
		t.Errorf("restarted on its data, node 2 has host id %s, was %s", n2.HostID, id)
	}
	waitDown(t, c.Nodes()[0].Addr, n2.Addr, false)
	readRows(t, s, 0, 600, gocql.All)

	if err := c.Signal(1, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(n2.Addr, fmt.Sprint(RESTPort)), time.Second)
	if err != nil {
		t.Fatalf("a paused node's REST port refuses connections: %v", err)
	}
	conn.Close()
	if _, err := (&http.Client{Timeout: time.Second}).Get("http://" + net.JoinHostPort(n2.Addr, fmt.Sprint(RESTPort)) + "/storage_service/operation_mode"); err == nil {
		t.Error("a paused node answered its REST API")
	}
	waitDown(t, c.Nodes()[0].Addr, n2.Addr, true)
	readRows(t, s, 0, 600, gocql.Quorum)
	if err := c.Signal(1, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitDown(t, c.Nodes()[0].Addr, n2.Addr, false)
	readRows(t, s, 0, 600, gocql.All)

	if err := c.Stop(1); err != nil {
		t.Fatal(err)
	}
	if err := c.ExitErr(1); err != nil {
		t.Errorf("a stopped node's exit: %v, want status 0", err)
	}
	if b, _ := os.ReadFile(n2.LogPath); !strings.Contains(string(b), "shutdown complete") {
		t.Error("a stopped node's log does not say it shut down")
	}
}

// A node of a host that fails ends alone, with its reason; the others go on.
func TestHostNodeDeathIsItsOwn(t *testing.T) {
	opts := testOptions(t, "127.0.147.2", 1)
	opts.SharedProcess = true
	c := startCluster(t, opts)
	args := c.nodeFlags(&Node{Index: 1, Addr: "127.0.147.3", Rack: "rack1", DataDir: t.TempDir(), LogPath: filepath.Join(t.TempDir(), "n.log")}).Args()
	gen, err := c.host.Start(t.Context(), "doomed", append(args, "--fail-startup", "disk on fire"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.host.Wait("doomed", gen)
	var ne *NodeExitError
	if !errors.As(err, &ne) || ne.Code != 1 || !strings.Contains(ne.Reason, "disk on fire") {
		t.Fatalf("a node that failed to start ended with %v, want exit status 1 with its reason", err)
	}
	if err := WaitNormal(t.Context(), c.Hosts()[0], RESTPort, nil); err != nil {
		t.Fatalf("the other node of the process: %v", err)
	}
}

// waitDown waits until the node at addr says (REST /gossiper/endpoint/down)
// that peer is down (or up).
func waitDown(t *testing.T, addr, peer string, down bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var list []string
		resp, err := http.Get("http://" + net.JoinHostPort(addr, fmt.Sprint(RESTPort)) + "/gossiper/endpoint/down")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			if slices.Contains(list, peer) == down {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not see %s down=%v (down list %v, %v)", addr, peer, down, list, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func slicesHave(addrs []string, hostPort string) bool {
	h, _, _ := net.SplitHostPort(hostPort)
	for _, a := range addrs {
		if a == h {
			return true
		}
	}
	return false
}

// establishedTCP lists the machine's established IPv4 TCP connections
// (/proc/net/tcp) as [local, remote] "address:port" pairs.
func establishedTCP(t *testing.T) [][2]string {
	t.Helper()
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	addr := func(f string) string {
		h, p, _ := strings.Cut(f, ":")
		b, _ := hex.DecodeString(h)
		var port int
		fmt.Sscanf(p, "%X", &port)
		if len(b) != 4 {
			return ""
		}
		return fmt.Sprintf("%d.%d.%d.%d:%d", b[3], b[2], b[1], b[0], port)
	}
	var out [][2]string
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && f[3] == "01" { // TCP_ESTABLISHED
			out = append(out, [2]string{addr(f[1]), addr(f[2])})
		}
	}
	return out
}

// The host process's own death (a Go panic, a SIGKILL from outside) ends
// every node in it, and each is reported with the process's end.
func TestHostDeathEndsEveryNode(t *testing.T) {
	opts := testOptions(t, "127.0.148.2", 2)
	opts.SharedProcess = true
	c := startCluster(t, opts)
	syscall.Kill(c.host.Proc.Pid, syscall.SIGKILL)
	deadline := time.Now().Add(15 * time.Second)
	for i, n := range c.Nodes() {
		for !c.exited(n) {
			if time.Now().After(deadline) {
				t.Fatalf("node %d not reported ended after its host's SIGKILL", i+1)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := c.ExitErr(i); err == nil || !strings.Contains(err.Error(), "host process") || !strings.Contains(err.Error(), "killed") {
			t.Errorf("node %d ended with %v, want its host process's SIGKILL", i+1, err)
		}
	}
}
