package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/batchwriter"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Internode RPC: one persistent TCP connection per peer carrying framed
// messages (rpccodec.go) multiplexed by id. Senders encode and write their
// messages themselves through a batchwriter (concurrent ones share a
// write(2), no hand-off to a writer goroutine); requests are served by
// long-lived workers, not a goroutine each (a fresh goroutine grows its
// stack through the storage path on every request: 12% of the CPU).

// Message operations.
const (
	opHeartbeat = "heartbeat"
	opGetMeta   = "get_meta"
	opPushMeta  = "push_meta"
	opWrite     = "write"
	opRead      = "read"
	opCoord     = "coord" // forwarded to the topology coordinator
	opStream    = "stream"
	opScan      = "scan"
	opTruncate  = "truncate"
	// Counters: an increment sent to its leader replica, and the leader's
	// new shards sent to the other replicas (counter.go).
	opCounterLead  = "counter_lead"
	opCounterApply = "counter_apply"
	opRangeRead    = "range_read"
	// Repair: pull a range's rows from a peer and merge them (repair.go).
	opRepairPull = "repair_pull"
	// Bootstrap: a joining node streams its vnodes ranges (bootstrap.go).
	opVnodeBootstrap = "vnode_bootstrap"
	// Lightweight transactions: a partition's lease from its paxos leader,
	// and its release (paxos.go).
	opPaxosLock   = "paxos_lock"
	opPaxosUnlock = "paxos_unlock"
)

// msg is the union of all internode messages.
type msg struct {
	ID   uint64
	Resp bool
	Op   string

	Err     string
	ErrCode int

	Heartbeat *heartbeat
	Meta      *Meta
	Muts      []engine.Mutation
	Read      *engine.Read
	Rows      []engine.Row
	Coord     *coordOp
	Stream    *streamReq
	Scan      *scanReq
	KVs       []KV
	Next      []byte
	Table     [16]byte
	Bytes     int64
	CL        engine.Consistency
	Range     *rangeReq
	RangeRows []engine.RangeRow
	// Temp is a read answer's cache hit rate of the table (hitrate.go).
	Temp float32
}

type rpcHandler func(ctx context.Context, m *msg) (*msg, error)

type rpcConn struct {
	nc      net.Conn
	out     *batchwriter.Writer
	fw      *frameWriter // used under out's lock
	mu      sync.Mutex
	pending map[uint64]func(*msg)
	nextID  atomic.Uint64
	closed  chan struct{}
	once    sync.Once
	err     error
	handler rpcHandler // for requests arriving on this connection
	// now says whether the node serves a request at once (nil: never);
	// the reader then serves it itself (readLoop).
	now  func(*msg) bool
	ctx  context.Context
	work chan *msg // requests for idle workers
	// life holds the reader while the node is paused or killed (life.go).
	life *Life
}

// rpcWorkerIdle is how long an idle request worker waits before exiting.
const rpcWorkerIdle = 10 * time.Second

func newRPCConn(ctx context.Context, nc net.Conn, h rpcHandler, now func(*msg) bool, life *Life) *rpcConn {
	c := &rpcConn{nc: nc, out: batchwriter.New(nc), fw: newFrameWriter(nil), pending: map[uint64]func(*msg){}, closed: make(chan struct{}), handler: h, now: now, ctx: ctx, work: make(chan *msg), life: life}
	go c.readLoop()
	return c
}

func (c *rpcConn) close(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.closed)
		c.out.Close()
		c.nc.Close()
	})
}

// send writes m, or queues it for the write in progress; it does not wait
// for a write by another goroutine. A failure closes the connection.
func (c *rpcConn) send(m *msg) error {
	err := c.out.Encode(func(w io.Writer) error {
		c.fw.w = w
		return c.fw.write(m)
	}, false)
	if err != nil {
		c.close(fmt.Errorf("sending %s: %w", m.Op, err))
	}
	return err
}

func (c *rpcConn) readLoop() {
	fr := newFrameReader(bufio.NewReaderSize(c.nc, 64<<10))
	for {
		m := new(msg)
		if err := fr.read(m); err != nil {
			c.close(err)
			c.mu.Lock()
			cbs := c.pending
			c.pending = map[uint64]func(*msg){}
			c.mu.Unlock()
			for _, cb := range cbs {
				cb(nil)
			}
			return
		}
		// A paused node's process reads nothing: the frame waits.
		c.life.Hold()
		if m.Resp {
			c.mu.Lock()
			cb := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if cb != nil {
				cb(m)
			}
			continue
		}
		// A replica write or read that its shard serves at once is served
		// here: handing it to a worker woke a sleeping goroutine per
		// request. Answers behind it on this connection wait that long.
		if c.now != nil && directOp(m.Op) && c.now(m) {
			c.serve(m)
			continue
		}
		select {
		case c.work <- m:
		default:
			go c.worker(m)
		}
	}
}

// worker serves m, then further requests until idle for rpcWorkerIdle.
func (c *rpcConn) worker(m *msg) {
	c.serve(m)
	idle := time.NewTimer(rpcWorkerIdle)
	defer idle.Stop()
	for {
		select {
		case m := <-c.work:
			c.serve(m)
			idle.Reset(rpcWorkerIdle)
		case <-idle.C:
			return
		case <-c.closed:
			return
		}
	}
}

func (c *rpcConn) serve(m *msg) {
	resp, err := c.handler(c.ctx, m)
	if resp == nil {
		resp = &msg{}
	}
	resp.ID, resp.Resp, resp.Op = m.ID, true, m.Op
	resp.Err, resp.ErrCode = wireError(err)
	_ = c.send(resp) // a failed connection fails the caller's call
}

// wireError is how an answer carries a handler's error: its text, and the
// engine error code (-1: not an engine error).
func wireError(err error) (string, int) {
	if err == nil {
		return "", 0
	}
	var ee *engine.Error
	if errors.As(err, &ee) {
		return err.Error(), int(ee.Code)
	}
	return err.Error(), -1
}

// answerError is the caller's side of wireError: the error an answer
// carries (nil: none), as the caller sees it.
func answerError(r *msg) error {
	switch {
	case r.Err == "":
		return nil
	case r.ErrCode >= 0:
		return &engine.Error{Code: engine.ErrorCode(r.ErrCode), Message: r.Err}
	}
	return errors.New(r.Err)
}

// start sends a request; done is called exactly once with the response or
// an error (from the connection's reader or the caller: it must not block).
// Sending does not wait for the peer (unless this goroutine does the
// connection's write); callers bound the wait for the answer themselves.
func (c *rpcConn) start(ctx context.Context, m *msg, done func(*msg, error)) {
	var once sync.Once
	finish := func(r *msg, err error) { once.Do(func() { done(r, err) }) }
	m.ID = c.nextID.Add(1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		finish(nil, err)
		return
	}
	c.pending[m.ID] = func(r *msg) {
		if r == nil {
			finish(nil, errConnClosed)
			return
		}
		finish(r, answerError(r))
	}
	c.mu.Unlock()
	if ctx.Err() != nil {
		c.forget(m.ID)
		finish(nil, ctx.Err())
		return
	}
	if c.send(m) != nil {
		c.forget(m.ID)
		finish(nil, errConnClosed)
	}
}

func (c *rpcConn) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// call sends a request and waits for its response or ctx's end.
func (c *rpcConn) call(ctx context.Context, m *msg) (*msg, error) {
	type result struct {
		r   *msg
		err error
	}
	ch := make(chan result, 1)
	c.start(ctx, m, func(r *msg, err error) { ch <- result{r, err} })
	engine.WillWait(ctx)
	select {
	case r := <-ch:
		return r.r, r.err
	case <-ctx.Done():
		c.forget(m.ID)
		return nil, ctx.Err()
	}
}

var errConnClosed = errors.New("internode connection closed")

// transport manages outgoing connections by address and serves incoming
// ones; connections to nodes of this process registered in peers are in
// memory (mempeers.go).
type transport struct {
	ctx     context.Context
	handler rpcHandler
	mu      sync.Mutex
	conns   map[string]*rpcConn
	dialing map[string]chan struct{}
	laddr   string
	peers   *Peers
	// direct serves the data path's requests of nodes of this process
	// (mempeers.go); nil without peers.
	direct *directServer
	// now says whether the node serves a data path request at once
	// (Node.servesAtOnce); set before the transport serves or dials.
	now func(*msg) bool
	// life is the node's (life.go; nil: its own process).
	life *Life
}

func newTransport(ctx context.Context, localAddr string, h rpcHandler, peers *Peers, life *Life) *transport {
	t := &transport{ctx: ctx, handler: h, conns: map[string]*rpcConn{}, dialing: map[string]chan struct{}{}, laddr: localAddr, peers: peers, life: life}
	if peers != nil {
		t.direct = newDirectServer(ctx, h)
		t.direct.life = life
	}
	return t
}

// setServesAtOnce sets the node's says-whether-it-serves-at-once, before
// the transport serves or dials.
func (t *transport) setServesAtOnce(now func(*msg) bool) {
	t.now = now
	if t.direct != nil {
		t.direct.now = now
	}
}

func (t *transport) serve(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		t.accept(nc)
	}
}

// accept serves an incoming connection until it or this node closes.
func (t *transport) accept(nc net.Conn) {
	c := newRPCConn(t.ctx, nc, t.handler, t.now, t.life)
	go func() {
		select {
		case <-c.closed:
		case <-t.ctx.Done():
			c.close(t.ctx.Err())
		}
	}()
}

// dial connects to addr: in memory to a node of this process, else TCP.
func (t *transport) dial(ctx context.Context, addr string) (net.Conn, error) {
	if nc := t.peers.dial(addr, t.laddr); nc != nil {
		return nc, nil
	}
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(t.laddr)}}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return nc, nil
}

// get returns a live connection to addr (host:port), dialling when needed.
func (t *transport) get(ctx context.Context, addr string) (*rpcConn, error) {
	for {
		t.mu.Lock()
		if c := t.conns[addr]; c != nil {
			select {
			case <-c.closed:
				delete(t.conns, addr)
			default:
				t.mu.Unlock()
				return c, nil
			}
		}
		if wait := t.dialing[addr]; wait != nil {
			t.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		t.dialing[addr] = done
		t.mu.Unlock()

		nc, err := t.dial(ctx, addr)
		t.mu.Lock()
		delete(t.dialing, addr)
		close(done)
		if err != nil {
			t.mu.Unlock()
			return nil, fmt.Errorf("connecting to %s: %w", addr, err)
		}
		c := newRPCConn(t.ctx, nc, t.handler, t.now, t.life)
		t.conns[addr] = c
		t.mu.Unlock()
		return c, nil
	}
}

func (t *transport) call(ctx context.Context, addr string, m *msg) (*msg, error) {
	c, err := t.get(ctx, addr)
	if err != nil {
		return nil, err
	}
	return c.call(ctx, m)
}

// drop closes the connection to addr (after a failure), so that the next
// call dials again.
func (t *transport) drop(addr string) {
	t.mu.Lock()
	c := t.conns[addr]
	delete(t.conns, addr)
	t.mu.Unlock()
	if c != nil {
		c.close(errConnClosed)
	}
}

func (t *transport) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for a, c := range t.conns {
		c.close(errConnClosed)
		delete(t.conns, a)
	}
}

// workPool runs functions on long-lived goroutines: a fresh goroutine per
// local replica read grew its stack through Pebble each time (copystack
// was a tenth of a node's CPU). An idle worker takes the function, else a
// new one starts; workers exit after rpcWorkerIdle without work.
type workPool struct{ ch chan func() }

func newWorkPool() *workPool { return &workPool{ch: make(chan func())} }

func (p *workPool) run(f func()) {
	select {
	case p.ch <- f:
	default:
		go p.loop(f)
	}
}

func (p *workPool) loop(f func()) {
	f()
	idle := time.NewTimer(rpcWorkerIdle)
	defer idle.Stop()
	for {
		select {
		case f := <-p.ch:
			f()
			idle.Reset(rpcWorkerIdle)
		case <-idle.C:
			return
		}
	}
}
