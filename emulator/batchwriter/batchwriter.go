// Package batchwriter writes a connection's frames from the goroutines that
// produce them, with no writer goroutine: the first producer to find no
// write in progress writes everything pending, its own frame and those
// others append meanwhile, one write(2) per batch. A hand-off to a writer
// goroutine cost a wake-up per frame, and on the machines the emulator runs
// on a wake-up costs as much as the write itself (issue 17's profile: the
// Go scheduler and futex were a third of a node's CPU).
package batchwriter

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// ErrClosed is returned once the writer has failed or been closed.
var ErrClosed = errors.New("batchwriter: closed")

// maxKeep is the largest buffer kept for the next batch.
const maxKeep = 1 << 20

// Writer batches frames onto w. Safe for concurrent use.
type Writer struct {
	w        io.Writer
	mu       sync.Mutex
	idle     sync.Cond // signalled when a batch has been written
	pend     *bytes.Buffer
	spare    *bytes.Buffer
	flushing bool
	err      error
	// frames counts the frames in pend; together is set when the last
	// batch written carried more than one: producers are appending
	// concurrently, and a write first lets them append (encode's yield).
	frames   int
	together bool
}

// New returns a Writer onto w.
func New(w io.Writer) *Writer {
	bw := &Writer{w: w, pend: new(bytes.Buffer), spare: new(bytes.Buffer)}
	bw.idle.L = &bw.mu
	return bw
}

// Write queues b and writes it unless another goroutine is writing, which
// then writes it in its next batch. The frame is on the wire (or the write
// failed) when Write returns only if wait is set; otherwise it returns as
// soon as b is queued, so a caller never waits behind another's write. The
// goroutine that writes blocks while the peer does not read, as a writer
// goroutine would.
func (bw *Writer) Write(b []byte, wait bool) error {
	return bw.Encode(func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}, wait)
}

// Encode is Write for a frame that enc appends to w, under the writer's
// lock, so frames are on the wire in the order they were encoded (a
// stateful encoder such as gob's relies on that).
func (bw *Writer) Encode(enc func(w io.Writer) error, wait bool) error {
	bw.mu.Lock()
	if bw.err != nil {
		err := bw.err
		bw.mu.Unlock()
		return err
	}
	n := bw.pend.Len()
	if err := enc(bw.pend); err != nil {
		bw.pend.Truncate(n)
		bw.mu.Unlock()
		return err
	}
	bw.frames++
	if bw.flushing {
		if !wait {
			bw.mu.Unlock()
			return nil
		}
		// The writing goroutine writes until nothing is pending, ours included.
		for bw.flushing && bw.err == nil {
			bw.idle.Wait()
		}
		err := bw.err
		bw.mu.Unlock()
		return err
	}
	bw.flushing = true
	if bw.together {
		// Let runnable producers append theirs first: at high rates one
		// write(2) then carries many frames (without this, a producer's
		// frame went out alone and throughput at 10,000 op/s fell by a
		// sixth). Only while batches show concurrent producers: with one
		// producer at a time (a few thousand operations per second) the
		// yield found nobody to wait for and cost a scheduler round and
		// often an idle thread's wake-up per frame (issue 45: 8% of a node
		// process's CPU at 2,000 op/s, internode frames).
		bw.mu.Unlock()
		runtime.Gosched()
		bw.mu.Lock()
	}
	return bw.writePending()
}

// Queue appends b without writing it: the write in progress, the next
// Write, or Flush carries it. A producer that has more frames
// at hand (a connection's reader with more requests read) queues its
// answers and flushes them together, one write(2) for all (as Seastar's
// output_stream batches a connection's answers until it is flushed); it
// must Flush before it waits for anything. It returns how many frames
// are queued.
func (bw *Writer) Queue(b []byte) (int, error) {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if bw.err != nil {
		return 0, bw.err
	}
	bw.pend.Write(b)
	bw.frames++
	return bw.frames, nil
}

// Flush writes what is queued, unless a write in progress carries it.
func (bw *Writer) Flush() error {
	bw.mu.Lock()
	if bw.err != nil || bw.flushing || bw.pend.Len() == 0 {
		err := bw.err
		bw.mu.Unlock()
		return err
	}
	bw.flushing = true
	return bw.writePending()
}

// writePending writes until nothing is pending; called with mu held and
// flushing set, it returns with mu released.
func (bw *Writer) writePending() error {
	for bw.pend.Len() > 0 && bw.err == nil {
		out := bw.pend
		bw.pend, bw.spare = bw.spare, nil
		bw.together, bw.frames = bw.frames > 1, 0
		bw.mu.Unlock()
		_, err := bw.w.Write(out.Bytes())
		out.Reset()
		if out.Cap() > maxKeep {
			out = new(bytes.Buffer) // a streaming chunk's buffer is not kept
		}
		bw.mu.Lock()
		bw.spare = out
		if err != nil && bw.err == nil {
			bw.err = err
		}
	}
	bw.flushing = false
	err := bw.err
	bw.idle.Broadcast()
	bw.mu.Unlock()
	return err
}

// Close makes further writes fail with ErrClosed (the connection itself is
// the caller's to close).
func (bw *Writer) Close() {
	bw.mu.Lock()
	if bw.err == nil {
		bw.err = ErrClosed
	}
	bw.idle.Broadcast()
	bw.mu.Unlock()
}
