package node

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
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

// direct is the data path server of the node of this process at addr
// (nil: none, or it is closing).
func (p *Peers) direct(addr string) *directServer {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	t := p.m[addr]
	p.mu.Unlock()
	if t == nil {
		return nil
	}
	return t.direct
}

// The data path between nodes of one process is calls, not messages.
//
// Replica writes and reads are nearly all of a client operation's internode
// traffic. Between nodes of one process they are not encoded, written,
// read by the peer's connection reader, decoded and handed to one of its
// workers, and their answers the same way back (a wake-up of a sleeping
// goroutine at every hand-off: two to four per replica request): the
// coordinator calls the replica's handler with the request itself, on its
// own goroutine when the replica would serve it at once (its shard has no
// queue, its store takes writes; Node.servesAtOnce), else on a worker of
// the replica's, so a queued replica delays no other. An answer is what
// the wire would carry (wireError: an error's text and code only). A node
// that is closing serves no more calls, and waits for those in progress
// before it closes its store; its peers' calls then go through the
// transport, which fails them as connections to a dead node fail.

// directOp: the requests nodes of one process make by calls.
func directOp(op string) bool {
	switch op {
	case opWrite, opCounterApply, opRead:
		return true
	}
	return false
}

// metaCall sends a cluster metadata request (push_meta, get_meta) to the
// member at addr. A node of this process is called with the *Meta itself,
// which every node treats as immutable once published (the coordinator's
// own view holds the epoch it pushes): with 1,024 tablets every migration
// step is an epoch, and gob-encoding and decoding the whole map for each
// member was most of the host's allocation while tablets moved, about a
// tenth of its CPU, and the main job's client P99 in those cycles rose
// with it (issue 45). Members of other processes get it over the wire.
func (n *Node) metaCall(ctx context.Context, addr string, m *msg) (*msg, error) {
	if d := n.tr.peers.direct(addr); d != nil {
		type answer struct {
			r   *msg
			err error
		}
		done := make(chan answer, 1)
		if d.call(m, func(r *msg, err error) { done <- answer{r, err} }) {
			select {
			case a := <-done:
				return a.r, a.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return n.tr.call(ctx, addr, m)
}

// directServer serves a node's data path requests from nodes of its process.
type directServer struct {
	ctx     context.Context
	handler rpcHandler
	pool    *workPool
	// now says whether the node serves m without waiting; set once, before
	// the node is registered in its Peers (nil: never at once).
	now func(m *msg) bool
	// mu is held for reading by each call in progress: closing takes it
	// for writing, so it waits for them.
	mu     sync.RWMutex
	closed bool
	// stop: the node was killed (Node.Kill); no call is served, and
	// nobody waits for those in progress.
	stop atomic.Bool
	// life is the node's (life.go): a paused node serves no call, which
	// then goes through the transport and waits there as on a socket.
	life *Life
}

func newDirectServer(ctx context.Context, h rpcHandler) *directServer {
	return &directServer{ctx: ctx, handler: h, pool: newWorkPool()}
}

// call serves m and gives done its answer (on this goroutine, or on a
// worker of the serving node's when the request must wait there); false
// when the node is closing (done is not called).
func (d *directServer) call(m *msg, done func(*msg, error)) bool {
	if d.stop.Load() || d.life.Paused() {
		return false
	}
	d.mu.RLock()
	if d.closed || d.ctx.Err() != nil {
		d.mu.RUnlock()
		return false
	}
	if d.now != nil && d.now(m) {
		d.serve(m, done)
		d.mu.RUnlock()
		return true
	}
	d.pool.run(func() {
		defer d.mu.RUnlock()
		d.serve(m, done)
	})
	return true
}

func (d *directServer) serve(m *msg, done func(*msg, error)) {
	resp, err := d.handler(d.ctx, m)
	if err == nil {
		if resp == nil {
			resp = &noAnswer
		}
		done(resp, nil)
		return
	}
	if resp == nil {
		resp = &msg{}
	}
	resp.Err, resp.ErrCode = wireError(err)
	done(resp, answerError(resp))
}

// noAnswer is the answer of a call whose handler answered nothing (a
// replica write): shared, so callAsync's callbacks must not change it.
var noAnswer msg

// close ends serving calls once those in progress have returned (the
// node's context is cancelled first, so waits in them end).
func (d *directServer) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
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
