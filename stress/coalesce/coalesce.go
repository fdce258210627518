// Package coalesce wraps a client's TCP connection so that frames written
// while an earlier write is on its way leave together in one syscall, without
// holding any frame back, and so that reads and deadlines cost less per frame.
//
// Why: gocql writes each request frame with its own write(2) under a
// per-connection semaphore (WriteCoalesceWaitTime 0), so at tens of thousands
// of operations per second half of the generator's CPU went into the kernel's
// TCP send path and the server paid one read(2) and one wake-up per frame.
// gocql's own coalescer (WriteCoalesceWaitTime > 0) fixes that by holding
// every frame for a timer (200 µs by default): latency the database did not
// cause, which a latency-measuring tool must not add. Here Write copies the
// frame into a buffer and returns; one flusher goroutine per connection
// writes whatever has accumulated as soon as it runs, so an idle connection
// sends a frame immediately and a busy one sends the frames that arrived
// during the previous write(2) in the next one (the way Seastar's output
// streams and nullcql's writer batch: no timer, only what is already queued).
//
// Reads go through a 64 KiB buffer (gocql's own is 4 KiB, ~3 one-KiB rows per
// read(2)). Read and write deadlines are applied lazily and rounded up by up
// to Slack: gocql sets a read deadline three times per frame and a write
// deadline per frame, each a runtime timer update; here a deadline reaches the
// socket only when a read(2) or write(2) is actually issued and the one already
// armed does not cover it, so a timeout fires at most Slack late.
package coalesce

import (
	"bufio"
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"time"
)

// Slack is how much later than asked a deadline may fire (see the package doc).
const Slack = 10 * time.Millisecond

const (
	readBufSize = 64 << 10
	// maxPending bounds the bytes queued behind a stalled socket; Write blocks
	// beyond it, so a dead peer holds memory to this much per connection.
	maxPending = 4 << 20
	// Buffers that grew past this are not kept for reuse.
	keepBuf = 256 << 10
)

// Dialer returns connections wrapped by Wrap.
type Dialer struct {
	// Dialer dials the underlying connection, e.g. gocql.ScyllaShardAwareDialer
	// (it reads the shard-aware source port from ctx).
	Dialer interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}
}

// DialContext dials and wraps the connection.
func (d Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}

// Conn is a net.Conn whose writes are coalesced and whose reads are buffered.
// Write never blocks on the network (only when maxPending bytes are queued);
// a write error is returned by later Writes, and closes the connection so
// that the reader fails too and requests in flight are failed by the driver.
type Conn struct {
	net.Conn

	mu       sync.Mutex
	space    sync.Cond // signalled when queued bytes are written or the connection fails
	pending  []byte    // frames not yet handed to write(2)
	spare    []byte
	flushing bool  // the flusher has been woken and not yet found pending empty
	err      error // sticky: the first write error or net.ErrClosed after Close
	wdl      time.Time
	wake     chan struct{}
	done     chan struct{}
	closeMu  sync.Once

	rmu     sync.Mutex // guards the read deadline state below
	rdl     time.Time  // asked for by SetReadDeadline
	rArmed  time.Time  // on the socket
	reading bool       // a read(2) is in progress
	br      *bufio.Reader

	wArmed time.Time // on the socket; owned by the flusher
}

// Wrap wraps c and starts its flusher, which ends when the Conn is closed or
// a write fails.
func Wrap(c net.Conn) *Conn {
	w := &Conn{Conn: c, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.space.L = &w.mu
	w.br = bufio.NewReaderSize(socketReader{w}, readBufSize)
	go w.flushLoop()
	return w
}

// Write queues p (copied) for the flusher and returns len(p).
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	for c.err == nil && len(c.pending) >= maxPending {
		c.space.Wait()
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	c.pending = append(c.pending, p...)
	if !c.flushing {
		c.flushing = true
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	return len(p), nil
}

func (c *Conn) flushLoop() {
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		for {
			// Let the goroutines already runnable (workers with a reply in
			// hand, about to send their next request) queue their frames
			// first: without this the woken flusher runs next on this P
			// and writes each frame alone. It waits only for CPU work that
			// is ready now, never for a timer.
			runtime.Gosched()
			c.mu.Lock()
			if c.err != nil || len(c.pending) == 0 {
				c.flushing = false
				c.mu.Unlock()
				break
			}
			buf := c.pending
			c.pending, c.spare = c.spare[:0], nil
			dl := c.wdl
			c.space.Broadcast()
			c.mu.Unlock()

			err := c.armWrite(dl)
			if err == nil {
				_, err = c.Conn.Write(buf)
			}

			c.mu.Lock()
			if cap(buf) <= keepBuf {
				c.spare = buf[:0]
			}
			if err != nil && c.err == nil {
				c.err = err
			}
			failed := c.err != nil
			if failed {
				c.flushing = false
				c.pending = nil
				c.space.Broadcast()
			}
			c.mu.Unlock()
			if failed {
				// The bytes of frames already acknowledged to the driver are
				// lost: closing makes the reader fail, so the driver fails
				// their requests instead of waiting for replies that never come.
				_ = c.Conn.Close()
				return
			}
		}
	}
}

// armWrite puts the write deadline dl on the socket unless the armed one
// already covers it (no earlier than dl, at most Slack later).
func (c *Conn) armWrite(dl time.Time) error {
	if covers(c.wArmed, dl) {
		return nil
	}
	armed := roundUp(dl)
	if err := c.Conn.SetWriteDeadline(armed); err != nil {
		return err
	}
	c.wArmed = armed
	return nil
}

// covers says whether the deadline armed on the socket serves one asked for.
func covers(armed, asked time.Time) bool {
	if asked.IsZero() || armed.IsZero() {
		return asked.IsZero() && armed.IsZero()
	}
	return !armed.Before(asked) && armed.Sub(asked) <= Slack
}

func roundUp(dl time.Time) time.Time {
	if dl.IsZero() {
		return dl
	}
	return dl.Add(Slack)
}

// SetWriteDeadline sets the deadline of the write(2) that will carry frames
// queued from now on.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return nil
}

// SetReadDeadline records t for the next read(2); a read(2) already waiting
// gets it at once when it is earlier than the one armed.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.rdl = t
	if c.reading && !t.IsZero() && (c.rArmed.IsZero() || t.Before(c.rArmed)) {
		if err := c.Conn.SetReadDeadline(t); err != nil {
			return err
		}
		c.rArmed = t
	}
	return nil
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// Read reads through the connection's buffer. Not for concurrent use (one
// reader per connection, as in every CQL driver).
func (c *Conn) Read(p []byte) (int, error) { return c.br.Read(p) }

// socketReader is what the read buffer fills from: the socket, with the read
// deadline armed first.
type socketReader struct{ c *Conn }

func (s socketReader) Read(p []byte) (int, error) {
	c := s.c
	c.rmu.Lock()
	if !covers(c.rArmed, c.rdl) {
		armed := roundUp(c.rdl)
		if err := c.Conn.SetReadDeadline(armed); err != nil {
			c.rmu.Unlock()
			return 0, err
		}
		c.rArmed = armed
	}
	c.reading = true
	c.rmu.Unlock()
	n, err := c.Conn.Read(p)
	c.rmu.Lock()
	c.reading = false
	c.rmu.Unlock()
	return n, err
}

// Close closes the connection; queued frames are discarded.
func (c *Conn) Close() error {
	var err error
	c.closeMu.Do(func() {
		c.mu.Lock()
		if c.err == nil {
			c.err = net.ErrClosed
		}
		c.space.Broadcast()
		c.mu.Unlock()
		close(c.done)
		err = c.Conn.Close()
	})
	return err
}
