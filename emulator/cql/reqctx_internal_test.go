package cql

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A request's context ends at its timeout whether or not anything waited
// on Done before, ends with its parent, and is canceled once the request
// stops it, as context.WithTimeout's.
func TestRequestContextIsWithTimeouts(t *testing.T) {
	ec := &execCtx{s: &Server{opts: Options{RequestTimeout: 20 * time.Millisecond}}, parent: context.Background()}

	ctx := ec.context(0)
	stop := ctx.stop
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("deadline %v %v, want within the request timeout", d, ok)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err before the deadline: %v", err)
	}
	time.Sleep(25 * time.Millisecond)
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err after the deadline, before Done: %v", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed after the deadline")
	}
	stop()

	ctx = ec.context(time.Hour)
	stop = ctx.stop // the request timeout is the shorter
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("Done (armed before the deadline) not closed at it")
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err: %v", err)
	}
	stop()

	parent, cancel := context.WithCancel(context.Background())
	ec.parent = parent
	ctx = ec.context(0)
	stop = ctx.stop
	cancel()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err once the parent is canceled: %v", err)
	}
	<-ctx.Done()
	stop()

	ec.parent = context.WithValue(context.Background(), ec, "v")
	ctx = ec.context(0)
	stop = ctx.stop
	if ctx.Value(ec) != "v" {
		t.Fatal("the parent's values are not the request's")
	}
	stop()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err after stop: %v", err)
	}
	<-ctx.Done()
}
