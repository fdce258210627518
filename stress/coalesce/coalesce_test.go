package coalesce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pair returns a wrapped client connection and the server's end of a
// loopback TCP connection; write and read calls on the client's socket are counted.
func pair(t *testing.T) (*Conn, net.Conn, *counts) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		acc <- c
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n := new(counts)
	c := Wrap(countingConn{raw, n})
	srv := <-acc
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c, srv, n
}

type counts struct{ writes, reads atomic.Int64 }

type countingConn struct {
	net.Conn
	n *counts
}

func (c countingConn) Write(p []byte) (int, error) {
	c.n.writes.Add(1)
	return c.Conn.Write(p)
}

func (c countingConn) Read(p []byte) (int, error) {
	c.n.reads.Add(1)
	return c.Conn.Read(p)
}

// Frames written concurrently arrive whole and in each writer's order, and
// frames queued during a write(2) leave together in the next one.
func TestConcurrentFramesArriveWholeAndCoalesced(t *testing.T) {
	c, srv, calls := pair(t)
	const writers, frames = 64, 200
	got := make(chan map[uint32][]uint32, 1)
	go func() {
		seen := map[uint32][]uint32{}
		var hdr [12]byte
		for n := 0; n < writers*frames; n++ {
			if _, err := io.ReadFull(srv, hdr[:]); err != nil {
				t.Error(err)
				break
			}
			w, i, size := binary.BigEndian.Uint32(hdr[0:]), binary.BigEndian.Uint32(hdr[4:]), binary.BigEndian.Uint32(hdr[8:])
			body := make([]byte, size)
			if _, err := io.ReadFull(srv, body); err != nil {
				t.Error(err)
				break
			}
			if !bytes.Equal(body, bytes.Repeat([]byte{byte(w + i)}, int(size))) {
				t.Errorf("writer %d frame %d: body corrupted", w, i)
			}
			seen[w] = append(seen[w], i)
		}
		got <- seen
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex // the driver serialises writes to one connection
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range frames {
				size := 10 + (w*7+i*13)%2000
				f := make([]byte, 12+size)
				binary.BigEndian.PutUint32(f[0:], uint32(w))
				binary.BigEndian.PutUint32(f[4:], uint32(i))
				binary.BigEndian.PutUint32(f[8:], uint32(size))
				copy(f[12:], bytes.Repeat([]byte{byte(w + i)}, size))
				mu.Lock()
				_, err := c.Write(f)
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				clear(f) // the caller may reuse its buffer at once
			}
		}()
	}
	wg.Wait()
	seen := <-got
	for w := range uint32(writers) {
		if len(seen[w]) != frames {
			t.Fatalf("writer %d: %d frames arrived, want %d", w, len(seen[w]), frames)
		}
		for i, v := range seen[w] {
			if v != uint32(i) {
				t.Fatalf("writer %d: frame %d arrived as number %d", w, v, i)
			}
		}
	}
	n := calls.writes.Load()
	t.Logf("%d frames in %d write calls", writers*frames, n)
	if n >= writers*frames {
		t.Fatalf("%d frames took %d write calls: nothing was coalesced", writers*frames, n)
	}
}

// A lone frame leaves at once: no timer holds it back.
func TestLoneFrameIsNotDelayed(t *testing.T) {
	c, srv, _ := pair(t)
	buf := make([]byte, 5)
	var worst time.Duration
	for range 20 {
		t0 := time.Now()
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(srv, buf); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
	}
	// A timer coalescer would add its wait to every round trip; on a loaded
	// machine a round trip can still take a few ms, so only a gross delay fails.
	if worst > 200*time.Millisecond {
		t.Fatalf("worst round trip %v", worst)
	}
}

// Reads are buffered: several frames sent at once come out of one read(2),
// and a read deadline fires (at most Slack late).
func TestReadBufferAndDeadline(t *testing.T) {
	c, srv, calls := pair(t)
	if _, err := srv.Write(bytes.Repeat([]byte("x"), 10000)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 10000)
	for i := 0; i < len(got); i += 100 { // frame-sized reads, as a driver does
		if _, err := io.ReadFull(c, got[i:i+100]); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.reads.Load(); n > 10 {
		t.Fatalf("100 reads of 100 bytes took %d read calls on the socket", n)
	}
	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := c.Read(got[:1])
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	if el := time.Since(t0); el < 50*time.Millisecond {
		t.Fatalf("deadline fired after %v, before the 50 ms asked", el)
	}
	// A cleared deadline lets a read wait; an earlier deadline set while it
	// waits ends it.
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Read(got[:1]); done <- err }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("read without a deadline returned %v", err)
	default:
	}
	if err := c.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("interrupted read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a deadline set during a read did not end it")
	}
}

// A peer that stops reading: the write deadline fails the flush, Write
// reports the error and the connection is closed, so a reader fails too.
func TestWriteDeadlineFailsTheConnection(t *testing.T) {
	c, _, _ := pair(t) // the server never reads
	frame := make([]byte, 64<<10)
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err = c.Write(frame); err != nil {
			break
		}
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writes to a peer that never reads: %v", err)
	}
	if _, err := c.Read(frame[:1]); err == nil {
		t.Fatal("read on a failed connection succeeded")
	}
}

// After Close, Write fails instead of queueing.
func TestWriteAfterClose(t *testing.T) {
	c, _, _ := pair(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}
