package localcluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// freeTestBase returns the base of n free addresses for one test cluster:
// a block no listener uses, searched from a random block of 127.0.0.0/8 so
// that tests of several packages (and helpers) rarely meet.
func freeTestBase(t *testing.T, n int) string {
	t.Helper()
	from := fmt.Sprintf("127.%d.%d.2", 100+rand.IntN(100), rand.IntN(256))
	base, err := FreeBase(from, n, nodePorts)
	if err != nil {
		t.Fatalf("finding a free loopback range: %v", err)
	}
	return base
}

func TestParseProcAddr(t *testing.T) {
	// /proc/net/tcp prints the address's 32-bit words in host byte order.
	word := func(b [4]byte) string {
		var buf [4]byte
		binary.NativeEndian.PutUint32(buf[:], binary.BigEndian.Uint32(b[:]))
		return fmt.Sprintf("%X", buf[:])
	}
	a, port, err := parseProcAddr(word([4]byte{127, 0, 4, 2}) + ":2710")
	if err != nil || a != netip.MustParseAddr("127.0.4.2") || port != 10000 {
		t.Fatalf("parsed %v %d %v", a, port, err)
	}
	a, port, err = parseProcAddr(strings.Repeat("0", 32) + ":2352")
	if err != nil || !a.IsUnspecified() || port != 9042 {
		t.Fatalf("parsed %v %d %v", a, port, err)
	}
	if _, _, err := parseProcAddr("zz:1"); err == nil {
		t.Fatal("garbage accepted")
	}
}

// TestCheckServes: the listener of this process is ours; another process's
// on the same address is not; an address nobody serves is nobody's.
func TestCheckServes(t *testing.T) {
	base := freeTestBase(t, 2)
	ln, err := net.Listen("tcp", net.JoinHostPort(base, strconv.Itoa(RESTPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := CheckServes(os.Getpid(), base, RESTPort); err != nil {
		t.Fatalf("own listener: %v", err)
	}
	if err := CheckServes(os.Getppid(), base, RESTPort); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("parent process: %v, want ErrNotOurs", err)
	}
	other, _ := Address(base, 1)
	if err := CheckServes(os.Getpid(), other, RESTPort); err == nil || !strings.Contains(err.Error(), "nothing listens") {
		t.Fatalf("free address: %v", err)
	}
	if busy, err := Busy(base, 2, nodePorts); err != nil || busy != net.JoinHostPort(base, strconv.Itoa(RESTPort)) {
		t.Fatalf("Busy = %q, %v", busy, err)
	}
	if busy, err := Busy(other, 1, nodePorts); err != nil || busy != "" {
		t.Fatalf("Busy(free) = %q, %v", busy, err)
	}
}

// TestStartOnTakenAddress: a cluster started on the addresses of a running
// one fails, naming what is taken and a free range, and starts nothing.
func TestStartOnTakenAddress(t *testing.T) {
	base := freeTestBase(t, 2)
	first := startCluster(t, testOptions(t, base, 1))
	opts := testOptions(t, base, 2)
	_, err := Start(context.Background(), opts)
	var taken *AddressTakenError
	if !errors.As(err, &taken) || taken.Busy == "" || !strings.HasPrefix(taken.Busy, base+":") || taken.Free == "" {
		t.Fatalf("Start on a taken base: %v", err)
	}
	if busy, err := Busy(taken.Free, 2, nodePorts); err != nil || busy != "" {
		t.Fatalf("the free range %s is not free: %q %v", taken.Free, busy, err)
	}
	if _, err := os.Stat(opts.Dir + "/node1.log"); !os.IsNotExist(err) {
		t.Fatalf("a node was started: %v", err)
	}
	if err := CheckServes(first.Nodes()[0].Pid, base, RESTPort, CQLPort); err != nil {
		t.Fatalf("the first cluster's node: %v", err)
	}
}

// TestNodeLosingItsAddressFails: when a node cannot bind (the address was
// taken after any check could see it), the wait fails with the node's own
// error, although the address's holder answers NORMAL: another cluster's
// node is never reported as ours.
func TestNodeLosingItsAddressFails(t *testing.T) {
	base := freeTestBase(t, 1)
	first := startCluster(t, testOptions(t, base, 1))
	for _, detached := range []bool{false, true} {
		opts := testOptions(t, base, 1)
		opts.Detached = detached
		if err := opts.defaults(); err != nil {
			t.Fatal(err)
		}
		c := &Cluster{opts: opts}
		// Past Start's own check, as when two clusters start at once.
		n, err := c.spawn(0, "rack1")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = c.waitNormal(ctx, []*Node{n})
		cancel()
		c.Close()
		if err == nil {
			t.Fatalf("detached=%v: a node that could not bind was reported NORMAL (answered by pid %d)", detached, first.Nodes()[0].Pid)
		}
		if !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("detached=%v: the error does not carry the node's own: %v", detached, err)
		}
		t.Logf("detached=%v: %v", detached, err)
	}
}

// runWrapped runs the node as a child (the wrapper's own group) until
// SIGTERM, which it passes on.
func runWrapped(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), wrapperEnv+"=0")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		return 1
	}
	go func() { <-term; cmd.Process.Signal(syscall.SIGTERM) }()
	if err := cmd.Wait(); err != nil {
		return 1
	}
	return 0
}

// TestNodeBehindWrapper: a node whose listeners belong to a child of the
// started process (a wrapper) is still the started node: its process
// group holds the address.
func TestNodeBehindWrapper(t *testing.T) {
	opts := testOptions(t, freeTestBase(t, 1), 1)
	opts.Env = append(opts.Env, wrapperEnv+"=1")
	c := startCluster(t, opts)
	n := c.Nodes()[0]
	if err := CheckServes(n.Pid, n.Addr, RESTPort, CQLPort); err != nil {
		t.Fatal(err)
	}
	if err := CheckServes(os.Getpid(), n.Addr, RESTPort); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("the test process took for the node's: %v", err)
	}
}

// A wildcard listener takes its port on every address: no range is free
// for what needs that port, and the error names the listener.
func TestHeldEverywhere(t *testing.T) {
	ls := []listener{{addr: netip.MustParseAddr("127.0.5.2"), port: 9042}, {addr: netip.IPv4Unspecified(), port: 22}, {addr: netip.IPv6Unspecified(), port: 9100}}
	if err := heldEverywhere(ls, []int{9042, 7000}); err != nil {
		t.Errorf("a listener on one address holds its port everywhere: %v", err)
	}
	if err := heldEverywhere(ls, []int{7000, 22}); err == nil || !strings.Contains(err.Error(), "port 22") || !strings.Contains(err.Error(), "0.0.0.0:22") {
		t.Errorf("0.0.0.0:22: %v", err)
	}
	if err := heldEverywhere(ls, []int{9100}); err == nil || !strings.Contains(err.Error(), "[::]:9100") {
		t.Errorf("[::]:9100: %v", err)
	}
}
