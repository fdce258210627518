package engine

import "context"

// A request is served on its connection's reading goroutine when that can
// save a wake-up: at a few thousand operations per second handing every
// request from the goroutine that read it to a worker woke a sleeping
// goroutine per request (issue 45). The connection then reads no more
// requests until this one returns, so before a request waits (its shard's
// queue, a replica's answer, another node, a store holding writes back) it
// says so with WillWait, and the connection hands its reading to another
// goroutine: requests behind a waiting one do not wait for it.

type waitHookKey struct{}

// WithWaitHook returns ctx with f, which WillWait(ctx) calls: it may be
// called more than once and from several goroutines.
func WithWaitHook(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, waitHookKey{}, f)
}

// WillWait tells whoever serves ctx's request that it is about to wait.
func WillWait(ctx context.Context) {
	if f, ok := ctx.Value(waitHookKey{}).(func()); ok {
		f()
	}
}

// WaitReporter is a backend that calls WillWait before its single
// statement reads and writes wait; a CQL connection serves those on its
// reading goroutine only for such a backend.
type WaitReporter interface {
	ReportsWaits()
}
