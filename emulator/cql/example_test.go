package cql_test

import (
	"context"
	"fmt"
	"net"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// How a node starts its CQL front end: a listener on the node's address,
// a Backend, and Serve until the node stops.
func ExampleNewServer() {
	backend := enginetest.NewMemory("example") // a real node passes its engine
	ln, err := net.Listen("tcp", "127.0.1.18:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := cql.NewServer(backend, cql.Options{
		Shards: 2,
		Logf: func(level, logger, format string, args ...any) {
			// e.g. scyllalog: "INFO  2025-... [shard 0] cql_server - ..."
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	// ... the node runs ...

	cancel() // or srv.Close()
	fmt.Println(<-done, srv.Close())
	// Output: <nil> <nil>
}
