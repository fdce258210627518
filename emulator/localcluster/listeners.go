package localcluster

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Which process answers on a node's address. Every node of a local cluster
// listens on the same ports of its own loopback address, so a node that
// could not bind (another cluster, a leftover node) dies while the one
// holding the address answers every probe as if it were ours: a readiness
// check that only asks "is something NORMAL there?" then reports another
// cluster's node as its own. The launchers (Cluster here, provision/local)
// therefore check, from the kernel's socket table, that the listener on the
// address is a socket of the process they started.

// listener is one listening TCP socket of the host's network namespace.
type listener struct {
	addr  netip.Addr // unspecified (0.0.0.0, ::) for a wildcard listener
	port  int
	inode string
}

// listeners reads the listening TCP sockets from /proc/net/tcp and tcp6.
func listeners() ([]listener, error) {
	var out []listener
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		ls, err := readListeners(f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && f == "/proc/net/tcp6" {
				continue // no IPv6 in this kernel
			}
			return nil, fmt.Errorf("reading the socket table: %w", err)
		}
		out = append(out, ls...)
	}
	return out, nil
}

// tcpListen is the TCP_LISTEN state in /proc/net/tcp (include/net/tcp_states.h).
const tcpListen = "0A"

func readListeners(path string) ([]listener, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []listener
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != tcpListen {
			continue
		}
		addr, port, err := parseProcAddr(fs[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, listener{addr: addr, port: port, inode: fs[9]})
	}
	return out, sc.Err()
}

// parseProcAddr parses "0200007F:2710": the address as the kernel's 32-bit
// words printed in host byte order (net/ipv4/tcp_ipv4.c get_tcp4_sock,
// tcp6 likewise per word), the port in hex.
func parseProcAddr(s string) (netip.Addr, int, error) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	raw, herr := hex.DecodeString(h)
	if !ok || err != nil || herr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.Addr{}, 0, fmt.Errorf("unexpected socket address %q", s)
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return addr.Unmap(), int(port), nil
}

// answers reports whether l accepts connections to addr:port.
func (l listener) answers(addr netip.Addr, port int) bool {
	return l.port == port && (l.addr == addr || l.addr.IsUnspecified())
}

// groupSockets returns the inodes of the sockets open in the process group
// that pid leads. Both launchers start each node in a group of its own
// (Setpgid), so a node started through a wrapper, whose listeners belong to
// the wrapper's child, is still recognised.
func groupSockets(pid int) (map[string]bool, error) {
	out := map[string]bool{}
	if err := addSockets(out, pid); err != nil {
		return nil, err
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range procs {
		other, err := strconv.Atoi(e.Name())
		if err != nil || other == pid || processGroup(other) != pid {
			continue
		}
		_ = addSockets(out, other) // gone meanwhile, or not ours to read
	}
	return out, nil
}

// processGroup is pid's process group, or -1 (field 5 of /proc/<pid>/stat,
// counted after the parenthesised command name, which may hold spaces).
func processGroup(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp ...
	if i < 0 || len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return g
}

// addSockets adds the inodes of pid's open sockets to set.
func addSockets(set map[string]bool, pid int) error {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		t, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if in, ok := strings.CutPrefix(t, "socket:["); ok {
			set[strings.TrimSuffix(in, "]")] = true
		}
	}
	return nil
}

// ErrNotOurs marks an address whose listener is not the started process's.
var ErrNotOurs = errors.New("another process answers on the node's address")

// CheckServes fails unless process pid (or its process group, when pid
// leads one) holds the listener that answers on addr at every one of ports:
// it is what a client reaching addr:port talks to. A process that has
// exited holds nothing.
func CheckServes(pid int, addr string, ports ...int) error {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return fmt.Errorf("checking who answers on %s: %w", addr, err)
	}
	ls, err := listeners()
	if err != nil {
		return fmt.Errorf("checking who answers on %s: %w", addr, err)
	}
	own, err := groupSockets(pid)
	if err != nil {
		return fmt.Errorf("checking who answers on %s: reading the sockets of pid %d: %w", addr, pid, err)
	}
	for _, port := range ports {
		hp := netip.AddrPortFrom(a, uint16(port)).String()
		var found *listener
		for i, l := range ls {
			// The kernel prefers a listener on the exact address to a wildcard one.
			if l.answers(a, port) && (found == nil || found.addr.IsUnspecified()) {
				found = &ls[i]
			}
		}
		switch {
		case found == nil:
			return fmt.Errorf("nothing listens on %s (pid %d is not serving it)", hp, pid)
		case !own[found.inode]:
			return fmt.Errorf("%w: %s is held by another process, not pid %d or its group", ErrNotOurs, hp, pid)
		}
	}
	return nil
}

// Busy returns the first "addr:port" among the n addresses from base that
// something listens on at one of ports (a wildcard listener on a port takes
// it on every address), or "" when the whole range is free.
func Busy(base string, n int, ports []int) (string, error) {
	ls, err := listeners()
	if err != nil {
		return "", err
	}
	return busyIn(ls, base, n, ports)
}

func busyIn(ls []listener, base string, n int, ports []int) (string, error) {
	for i := range n {
		s, err := Address(base, i)
		if err != nil {
			return "", err
		}
		a := netip.MustParseAddr(s)
		for _, port := range ports {
			for _, l := range ls {
				if l.answers(a, port) {
					return netip.AddrPortFrom(a, uint16(port)).String(), nil
				}
			}
		}
	}
	return "", nil
}

// FreeBase returns a base address, after base's own /24 block, whose n
// addresses (from .2 of their block, as the default 127.0.0.2 starts) have
// nothing listening on ports: where to put a cluster when base is taken.
// It searches 127.0.0.0/8 block by block.
func FreeBase(base string, n int, ports []int) (string, error) {
	b, err := netip.ParseAddr(base)
	if err != nil || !b.Is4() {
		return "", fmt.Errorf("base address %q is not IPv4", base)
	}
	if n < 1 || n > 253 {
		return "", fmt.Errorf("no /24 block holds %d nodes", n)
	}
	ls, err := listeners()
	if err != nil {
		return "", err
	}
	if err := heldEverywhere(ls, ports); err != nil {
		return "", err
	}
	v := b.As4()
	block := int(v[1])<<8 | int(v[2])
	for k := 1; k < 1<<16; k++ {
		blk := (block + k) % (1 << 16)
		cand := netip.AddrFrom4([4]byte{127, byte(blk >> 8), byte(blk), 2}).String()
		if busy, err := busyIn(ls, cand, n, ports); err != nil {
			return "", err
		} else if busy == "" {
			return cand, nil
		}
	}
	return "", errors.New("no free loopback range")
}

// HeldEverywhere fails when a wildcard listener (0.0.0.0, ::) holds one of
// ports: that port is then taken on every loopback address, and no range
// is free for whatever needs it.
func HeldEverywhere(ports []int) error {
	ls, err := listeners()
	if err != nil {
		return err
	}
	return heldEverywhere(ls, ports)
}

func heldEverywhere(ls []listener, ports []int) error {
	for _, l := range ls {
		for _, port := range ports {
			if l.port == port && l.addr.IsUnspecified() {
				return fmt.Errorf("port %d is taken on every address (a process listens on %s)", port, netip.AddrPortFrom(l.addr, uint16(port)))
			}
		}
	}
	return nil
}
