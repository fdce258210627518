package enginetest

import (
	"context"
	"net"
	"testing"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

type addrSetter interface{ SetAddr(ip net.IP, port int) }

// StartServer runs a CQL server for b on addr ("127.0.1.5:0" picks a free
// port) until the test ends and returns its host:port. Backends with a
// SetAddr method (Memory, Null, Faulty) are told the address, so
// system.local agrees with what the driver dialled.
func StartServer(t testing.TB, addr string, b engine.Backend) string {
	t.Helper()
	_, hp := StartServerOpts(t, addr, b, cql.Options{})
	return hp
}

// StartServerOpts is StartServer with options; it also returns the server.
func StartServerOpts(t testing.TB, addr string, b engine.Backend, opts cql.Options) (*cql.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening for CQL on %s: %v", addr, err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	if s, ok := b.(addrSetter); ok {
		s.SetAddr(tcp.IP, tcp.Port)
	}
	srv := cql.NewServer(b, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-done
	})
	return srv, tcp.String()
}
