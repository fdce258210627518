// Package cql is the emulated node's CQL native protocol front end.
//
// It speaks protocol v4 (and v3) with its own accept loop, one reader and one
// writer goroutine per connection and one goroutine per in-flight request
// (bounded by Options.MaxInFlight). v5 and v1/v2 clients get the
// PROTOCOL_ERROR drivers use to downgrade. OPTIONS advertises the ScyllaDB
// sharding options, so the ScyllaDB gocql fork opens one connection per
// shard (shards are assigned round-robin over connections).
//
// Statements (parsed by package cqlparse) become engine.Backend calls:
// CREATE/DROP KEYSPACE and TABLE -> ApplySchema; INSERT, UPDATE, DELETE and
// batches -> one Write (counter increments as Mutation.Counters); SELECT of
// one or more partitions (IN) -> Read, with clustering prefixes, ranges,
// LIMIT, COUNT(*) and paging; full scans and token(pk) restrictions ->
// ReadRange, paged by the last row's key; TRUNCATE -> Truncate. system.local, system.peers(_v2) and system_schema.* are answered
// here from Schema, Local, Peers and ClusterName. Backend *engine.Error
// values reach clients as the matching protocol errors; a panic while
// serving a request becomes SERVER_ERROR.
//
// Row encoding: Mutation.PartitionKey is the key drivers hash for tokens;
// Clustering is an order-preserving, self-delimiting encoding of the
// clustering columns (DESC components bit-inverted); Cells hold the
// CQL-serialized regular column values.
package cql

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Options configure a Server.
type Options struct {
	// Shards is the advertised SCYLLA_NR_SHARDS (vCPUs); 0 => 1.
	Shards int
	// MaxFrameBytes bounds a request frame body; default 16 MiB. A larger
	// frame gets a protocol error and its connection is closed.
	MaxFrameBytes int
	// RequestTimeout is the ctx deadline passed to the Backend; default 5s.
	RequestTimeout time.Duration
	// MaxInFlight bounds concurrently executing requests per connection;
	// default 1024. The reader stops reading while the bound is reached.
	MaxInFlight int
	// Authenticator is scylla.yaml's authenticator: AllowAllAuthenticator
	// (default: every client is anonymous) or PasswordAuthenticator (clients
	// log in; the default superuser is cassandra/cassandra).
	Authenticator string
	// Logf logs with level INFO/WARN/ERROR and a logger name such as
	// "cql_server". May be nil.
	Logf func(level, logger, format string, args ...any)
	// TTLPeriod is alternator_ttl_period_in_seconds: the expiration
	// service's scan period (RunExpiration); 0 = DefaultTTLPeriod.
	TTLPeriod time.Duration
	// UserDefinedFunctions is enable_user_defined_functions together with
	// experimental_features udf (init.cc): CREATE FUNCTION/AGGREGATE are
	// accepted, with Lua bodies.
	UserDefinedFunctions bool
	// Hold, when set, is called before each request frame is served: it
	// waits while the node is paused (a node sharing its process with
	// others, emulator.Host: a stopped process reads no frame).
	Hold func()
}

const (
	defaultMaxFrame   = 16 << 20
	defaultTimeout    = 5 * time.Second
	defaultMaxInFlite = 1024
	loggerName        = "cql_server"
)

// Server serves CQL connections for one Backend.
type Server struct {
	b engine.Backend
	// waitHints: b reports its requests' waits (engine.WaitReporter), so
	// connections serve plain EXECUTEs on their reading goroutine.
	waitHints bool
	router    engine.TabletRouter // nil: b has no tablets
	opts      Options
	codec     frame.RawCodec

	prepared *preparedCache
	auth     *authStore

	shardSeq atomic.Uint64
	// shardAwarePort is the shard-aware listener's port (0: none).
	shardAwarePort atomic.Int32

	requests, errors, accepted atomic.Uint64
	inFlight                   atomic.Int64

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup

	// Lightweight transactions' partition locks when the backend has no
	// Paxos of its own (lwt.go lockPartition).
	casMu   sync.Mutex
	casHeld map[string]chan struct{}

	// config holds the options changed through system.config (config.go).
	config nodeConfig

	// The expiration service's counters (expiration.go).
	expPasses, expTables, expDeleted atomic.Uint64
}

// NewServer returns a server for b. Call Serve to accept connections.
func NewServer(b engine.Backend, opts Options) *Server {
	if opts.Shards <= 0 {
		opts.Shards = 1
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = defaultMaxFrame
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = defaultTimeout
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = defaultMaxInFlite
	}
	router, _ := b.(engine.TabletRouter)
	_, waitHints := b.(engine.WaitReporter)
	return &Server{
		b:         b,
		router:    router,
		waitHints: waitHints,
		opts:      opts,
		codec:     frame.NewRawCodec(),
		prepared:  newPreparedCache(20000),
		auth:      newAuthStore(opts.Authenticator),
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
	}
}

func (s *Server) logf(level, format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(level, loggerName, format, args...)
	}
}

// ErrServerClosed is returned by a Serve call made after Close.
var ErrServerClosed = errors.New("cql: server closed")

// Serve accepts connections on ln until ctx ends, ln is closed or Close is
// called, and then returns nil; accept errors such as running out of file
// descriptors are logged and retried. Returning, it closes ln, and the
// connections it accepted are closed too.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.serve(ctx, ln, false)
}

// ServeShardAware is Serve for ScyllaDB's shard-aware port
// (native_shard_aware_transport_port, transport/controller.cc): a
// connection lands on the shard its source port names, port % shards, so
// a driver that picks its source port picks the shard. SUPPORTED then
// lists the port as SCYLLA_SHARD_AWARE_PORT on every connection.
func (s *Server) ServeShardAware(ctx context.Context, ln net.Listener) error {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.shardAwarePort.Store(int32(a.Port))
	}
	return s.serve(ctx, ln, true)
}

func (s *Server) serve(ctx context.Context, ln net.Listener, shardAware bool) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	kind := "non-shard-aware"
	if shardAware {
		kind = "shard-aware"
	}
	s.logf("INFO", "Starting listening for CQL clients on %s (unencrypted, %s)", ln.Addr(), kind)

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// E.g. too many open files: back off and keep serving.
			backoff = min(max(backoff*2, 5*time.Millisecond), time.Second)
			s.logf("WARN", "accepting CQL connection: %v; retrying in %v", err, backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		backoff = 0
		c := s.newConn(ctx, nc, shardAware)
		if c == nil {
			nc.Close()
			continue
		}
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) newConn(ctx context.Context, nc net.Conn, shardAware bool) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.accepted.Add(1)
	shard := int(s.shardSeq.Add(1)-1) % s.opts.Shards
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok && shardAware {
		shard = a.Port % s.opts.Shards
	}
	c := newConn(ctx, s, nc, shard)
	s.conns[c] = struct{}{}
	s.wg.Add(1) // under mu, so Close's Wait cannot start in between
	return c
}

func (s *Server) closeConns() {
	s.mu.Lock()
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
}

// Close closes all listeners and connections and waits for the connection
// goroutines to finish.
func (s *Server) Close() error {
	s.Abort()
	s.wg.Wait()
	return nil
}

// Abort closes all listeners and connections at once and waits for
// nothing: a killed node's (emulator.Host), whose requests in progress
// never finish.
func (s *Server) Abort() {
	s.mu.Lock()
	s.closed = true
	lns := make([]net.Listener, 0, len(s.listeners))
	for ln := range s.listeners {
		lns = append(lns, ln)
	}
	s.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	s.closeConns()
}

// Stats are counters for the node's metrics.
type Stats struct {
	Connections int    // open client connections
	Accepted    uint64 // connections accepted since start
	Requests    uint64 // requests answered
	Errors      uint64 // requests answered with an error
	InFlight    int64  // requests being executed now
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Connections: s.NumConns(),
		Accepted:    s.accepted.Load(),
		Requests:    s.requests.Load(),
		Errors:      s.errors.Load(),
		InFlight:    s.inFlight.Load(),
	}
}

// NumConns reports the number of open client connections.
func (s *Server) NumConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
