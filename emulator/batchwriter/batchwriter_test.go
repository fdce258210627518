package batchwriter

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Frames from many goroutines arrive whole and each goroutine's in order.
func TestConcurrentFramesArriveWholeAndInOrder(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	bw := New(a)
	const writers, each = 8, 200
	got := make(chan []byte, 1)
	go func() {
		all, _ := io.ReadAll(b)
		got <- all
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := bw.Write([]byte{byte(w), byte(i), byte(i >> 8), '\n'}, false); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// A waiting write returns once everything queued before it is written.
	if err := bw.Write([]byte{0xff, 0, 0, '\n'}, true); err != nil {
		t.Fatal(err)
	}
	a.Close()
	all := <-got
	if len(all) != (writers*each+1)*4 {
		t.Fatalf("read %d bytes, want %d", len(all), (writers*each+1)*4)
	}
	next := make([]int, writers)
	for i := 0; i+4 <= len(all)-4; i += 4 {
		f := all[i : i+4]
		w, n := int(f[0]), int(f[1])|int(f[2])<<8
		if f[3] != '\n' || w >= writers || n != next[w] {
			t.Fatalf("frame %d = %v: torn or out of order (writer %d expected %d)", i/4, f, w, next[min(w, writers-1)])
		}
		next[w]++
	}
}

// A failed write fails later writes, and a failed encoding leaves nothing behind.
func TestErrorsStick(t *testing.T) {
	var buf bytes.Buffer
	bw := New(&buf)
	boom := errors.New("boom")
	if err := bw.Encode(func(w io.Writer) error { w.Write([]byte("half")); return boom }, false); err != boom {
		t.Fatalf("Encode error = %v, want boom", err)
	}
	if err := bw.Write([]byte("ok"), false); err != nil || buf.String() != "ok" {
		t.Fatalf("after a failed encoding: err %v, wire %q, want ok", err, buf.String())
	}
	bw.Close()
	if err := bw.Write([]byte("late"), false); !errors.Is(err, ErrClosed) || buf.String() != "ok" {
		t.Fatalf("after Close: err %v, wire %q", err, buf.String())
	}
	a, b := net.Pipe()
	b.Close()
	bw = New(a)
	if err := bw.Write([]byte("x"), false); err == nil {
		t.Fatal("write to a closed pipe succeeded")
	}
	if err := bw.Write([]byte("y"), false); err == nil {
		t.Fatal("write after a failed write succeeded")
	}
}

// countingWriter records each write(2)-like call.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(b)
}

// Queued frames wait for a flush or the next write, and then go out in
// one write with it, in order.
func TestQueuedFramesGoOutTogether(t *testing.T) {
	var w countingWriter
	bw := New(&w)
	for _, f := range []string{"a", "b", "c"} {
		if _, err := bw.Queue([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if w.writes != 0 {
		t.Fatalf("%d writes before the flush, want none", w.writes)
	}
	if err := bw.Flush(); err != nil || w.writes != 1 || w.String() != "abc" {
		t.Fatalf("after Flush: err %v, %d writes, wire %q; want 1 write of abc", err, w.writes, w.String())
	}
	if err := bw.Flush(); err != nil || w.writes != 1 {
		t.Fatalf("an empty Flush wrote: err %v, %d writes", err, w.writes)
	}
	bw.Queue([]byte("d"))
	if n, _ := bw.Queue([]byte("e")); n != 2 {
		t.Fatalf("Queue says %d frames queued, want 2", n)
	}
	if err := bw.Write([]byte("f"), false); err != nil || w.writes != 2 || w.String() != "abcdef" {
		t.Fatalf("after Write: err %v, %d writes, wire %q; want 2 writes of abcdef", err, w.writes, w.String())
	}
	bw.Close()
	if _, err := bw.Queue([]byte("h")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Queue after Close: %v, want ErrClosed", err)
	}
	if err := bw.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v, want ErrClosed", err)
	}
}
