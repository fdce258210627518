package cluster_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// PingCQL must work against the emulator's real CQL server, not only the fake.
func TestPingCQLAgainstEmulatorServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.4.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := cql.NewServer(enginetest.NewNull(), cql.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if err := cluster.PingCQL(ctx, "127.0.4.1", port, 2*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestPingCQLFailures(t *testing.T) {
	ctx := context.Background()
	// Nothing listens.
	ln, _ := net.Listen("tcp", "127.0.4.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if err := cluster.PingCQL(ctx, "127.0.4.1", port, time.Second); err == nil {
		t.Fatal("closed port answered")
	}
	// Something that is not CQL and never answers: bounded by the timeout.
	ln, _ = net.Listen("tcp", "127.0.4.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	err := cluster.PingCQL(ctx, "127.0.4.1", ln.Addr().(*net.TCPAddr).Port, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "reading CQL answer") || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}
