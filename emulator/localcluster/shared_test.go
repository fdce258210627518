package localcluster

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/gocql/gocql"
)

// The launcher's separator is the emulator's.
func TestAndNodeIsTheEmulators(t *testing.T) {
	if andNode != emulator.AndNode {
		t.Fatalf("localcluster separates nodes' flags with %q, emulator.Main with %q", andNode, emulator.AndNode)
	}
}

// With SharedProcess the nodes run in one process, each with its own
// listeners and host id, replicate at QUORUM to each other with no
// internode TCP connection between them, refuse to be signalled one by
// one, and a node added later has a process of its own that they reach
// over TCP.
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
	among := func(addrs ...string) int {
		t.Helper()
		n := 0
		for _, l := range establishedTCP(t) {
			if slicesHave(addrs, l[0]) && slicesHave(addrs, l[1]) && (strings.HasSuffix(l[0], fmt.Sprintf(":%d", InternodePort)) || strings.HasSuffix(l[1], fmt.Sprintf(":%d", InternodePort))) {
				n++
			}
		}
		return n
	}
	if n := among(c.Hosts()...); n != 0 {
		t.Errorf("%d internode TCP connections between nodes of one process", n)
	}
	if err := c.Kill(1); err == nil || !strings.Contains(err.Error(), "shares its process") {
		t.Errorf("killing one node of a shared process: %v", err)
	}
	added, err := c.AddNode(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if added.Pid == nodes[0].Pid {
		t.Fatal("a node added later runs in the shared process")
	}
	writeRows(t, s, 500, 1000, value)
	readRows(t, s, 0, 1000, gocql.Quorum)
	if n := among(append(c.Hosts()[:3:3], added.Addr)...); n == 0 {
		t.Error("no internode TCP connection to the node of its own process")
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
