package node

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Nodes of one process: internode connections between them are in memory.
//
// At a few thousand operations per second a node sleeps between messages,
// and a message over loopback TCP to another process costs its system
// calls and a wake-up of that process: at 2,000 op/s the wake-ups, not the
// model, were most of a node's CPU (issue 45). Nodes that a process runs
// together (emulator.Main with several nodes' flags) share a Peers, and a
// connection between two of them is a pair of in-memory buffers instead:
// the same frames (rpccodec.go), the same connection life (a closed node's
// connections end, the peer sees EOF and redials), no system call.
// Connections to nodes of other processes stay TCP.

// Peers registers the nodes of one process by internode address.
type Peers struct {
	mu sync.Mutex
	m  map[string]*transport
}

// NewPeers returns an empty registry.
func NewPeers() *Peers { return &Peers{m: map[string]*transport{}} }

func (p *Peers) add(addr string, t *transport) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.m[addr] = t
	p.mu.Unlock()
}

// remove forgets addr if t still holds it.
func (p *Peers) remove(addr string, t *transport) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.m[addr] == t {
		delete(p.m, addr)
	}
	p.mu.Unlock()
}

// dial connects to the node of this process at addr, if there is one
// still serving: the peer serves the other end as an accepted connection.
func (p *Peers) dial(addr, from string) net.Conn {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	t := p.m[addr]
	p.mu.Unlock()
	if t == nil || t.ctx.Err() != nil {
		return nil
	}
	a, b := memPipe(memAddr(from), memAddr(addr))
	t.accept(b)
	return a
}

// memAddr is an in-memory connection's end: the node's address.
type memAddr string

func (memAddr) Network() string  { return "mem" }
func (a memAddr) String() string { return string(a) }

// memBuf is one direction of an in-memory connection: writes append and
// never wait (as a socket with room in its buffer), a read takes what is
// there or waits for more.
type memBuf struct {
	mu     sync.Mutex
	buf    []byte
	closed bool
	ready  chan struct{} // one token: something was written or closed
}

func (b *memBuf) write(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	b.buf = append(b.buf, p...)
	b.mu.Unlock()
	b.signal()
	return len(p), nil
}

func (b *memBuf) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

func (b *memBuf) read(p []byte) (int, error) {
	for {
		b.mu.Lock()
		if len(b.buf) > 0 {
			n := copy(p, b.buf)
			b.buf = b.buf[n:]
			if len(b.buf) == 0 {
				b.buf = nil
			}
			b.mu.Unlock()
			return n, nil
		}
		if b.closed {
			b.mu.Unlock()
			return 0, io.EOF
		}
		b.mu.Unlock()
		<-b.ready
	}
}

func (b *memBuf) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
}

// memConn is one end of an in-memory connection.
type memConn struct {
	in, out       *memBuf
	local, remote memAddr
}

func memPipe(a, b memAddr) (net.Conn, net.Conn) {
	ab := &memBuf{ready: make(chan struct{}, 1)}
	ba := &memBuf{ready: make(chan struct{}, 1)}
	return &memConn{in: ba, out: ab, local: a, remote: b}, &memConn{in: ab, out: ba, local: b, remote: a}
}

func (c *memConn) Read(p []byte) (int, error)  { return c.in.read(p) }
func (c *memConn) Write(p []byte) (int, error) { return c.out.write(p) }

// Close ends both directions, as closing a socket does for its peer.
func (c *memConn) Close() error {
	c.in.close()
	c.out.close()
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

// Internode connections use no deadlines (calls bound their own waits).
var errMemDeadline = errors.New("in-memory internode connection: deadlines are not supported")

func (c *memConn) SetDeadline(time.Time) error      { return errMemDeadline }
func (c *memConn) SetReadDeadline(time.Time) error  { return errMemDeadline }
func (c *memConn) SetWriteDeadline(time.Time) error { return errMemDeadline }

// internodeAddr is this node's internode address as peers dial it.
func (n *Node) internodeAddr() string {
	return net.JoinHostPort(n.cfg.ListenAddress, strconv.Itoa(n.cfg.InternodePort))
}
