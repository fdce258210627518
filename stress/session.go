package stress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress/coalesce"
)

// SessionConfig says how to reach a cluster.
type SessionConfig struct {
	Hosts    []string // contact points (host or host:port)
	Port     int      // default 9042
	Keyspace string   // optional default keyspace
	// Timeout is the client-side request timeout; default 10 s, long enough
	// that a stall shows as latency rather than as a timeout.
	Timeout        time.Duration
	ConnectTimeout time.Duration // default 10 s
	LocalDC        string        // prefer this DC (DC-aware fallback under token awareness)
	// NumConns is the number of connections per host (per shard on ScyllaDB); default 1.
	NumConns int
	// Logger receives gocql's log lines; nil discards them.
	Logger gocql.StdLogger
	// Translate maps an address the cluster reports for a node (its
	// system.peers rpc_address: the private address in a cloud network) to
	// the one this client reaches it at; nil or "" keeps the address.
	Translate func(addr string) string
	// Connection write path, for comparisons (see the stress README):
	// by default frames are coalesced without delay (package coalesce).
	// PlainWrites gives gocql's one write(2) per frame; CoalesceWait > 0
	// gives gocql's timer coalescer instead (every frame held up to that long).
	PlainWrites  bool
	CoalesceWait time.Duration
}

type quietLogger struct{}

func (quietLogger) Print(...any)          {}
func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}

// ClusterConfig returns the gocql configuration NewSession uses: protocol v4,
// token-aware routing over (DC-aware) round robin,
// shard-aware connections (the ScyllaDB fork's default against ScyllaDB),
// no retries and no speculative execution so that every measured operation
// is exactly one request.
func ClusterConfig(cfg SessionConfig) (*gocql.ClusterConfig, error) {
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("no CQL hosts given")
	}
	hosts := make([]string, 0, len(cfg.Hosts))
	for _, h := range cfg.Hosts {
		if h == "" {
			return nil, errors.New("empty CQL host")
		}
		if _, _, err := net.SplitHostPort(h); err != nil && cfg.Port > 0 {
			h = net.JoinHostPort(h, strconv.Itoa(cfg.Port))
		}
		hosts = append(hosts, h)
	}
	c := gocql.NewCluster(hosts...)
	if cfg.Port > 0 {
		c.Port = cfg.Port
	}
	c.ProtoVersion = 4
	c.Keyspace = cfg.Keyspace
	c.Timeout = orDefault(cfg.Timeout, 10*time.Second)
	c.ReadTimeout = c.Timeout
	c.WriteTimeout = c.Timeout
	c.ConnectTimeout = orDefault(cfg.ConnectTimeout, 10*time.Second)
	c.NumConns = max(cfg.NumConns, 1)
	c.Consistency = gocql.Quorum
	c.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0}
	// gocql's coalescer holds every frame for a timer (200 µs by default):
	// latency the database did not cause. Frames are coalesced without delay
	// by the connections' own writer instead (package coalesce): one write(2)
	// carries what queued during the previous one, which cut the client's and
	// the server's CPU per operation by about half at high rates.
	c.WriteCoalesceWaitTime = max(cfg.CoalesceWait, 0)
	if !cfg.PlainWrites && cfg.CoalesceWait <= 0 {
		// The default dialer gocql would build, wrapped; ScyllaShardAwareDialer
		// keeps the shard-aware source ports.
		c.Dialer = coalesce.Dialer{Dialer: &gocql.ScyllaShardAwareDialer{Dialer: net.Dialer{Timeout: c.ConnectTimeout}}}
	}
	if tr := cfg.Translate; tr != nil {
		// Without this the driver replaces the contact points with the
		// peers' private addresses, which a runner outside the VPC cannot reach.
		c.AddressTranslator = gocql.AddressTranslatorFunc(func(addr net.IP, port int) (net.IP, int) {
			if to := net.ParseIP(tr(addr.String())); to != nil {
				return to, port
			}
			return addr, port
		})
	}
	c.ReconnectInterval = 2 * time.Second
	c.ReconnectionPolicy = &gocql.ConstantReconnectionPolicy{MaxRetries: 1 << 20, Interval: time.Second}
	fallback := gocql.RoundRobinHostPolicy()
	if cfg.LocalDC != "" {
		fallback = gocql.DCAwareRoundRobinPolicy(cfg.LocalDC)
	}
	// Token-aware with the fork's default replica shuffling: an operation goes
	// to one of its key's replicas (on its shard), spreading coordinator work.
	c.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(fallback)
	c.Logger = cfg.Logger
	if c.Logger == nil {
		c.Logger = quietLogger{}
	}
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// NewSession connects to the cluster. ctx bounds the connection attempt.
func NewSession(ctx context.Context, cfg SessionConfig) (*gocql.Session, error) {
	c, err := ClusterConfig(cfg)
	if err != nil {
		return nil, err
	}
	type res struct {
		s   *gocql.Session
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := c.CreateSession()
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("connecting to CQL hosts %v: %w", c.Hosts, r.err)
		}
		return r.s, nil
	case <-ctx.Done():
		go func() { // close the session if it arrives after all
			if r := <-ch; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, fmt.Errorf("connecting to CQL hosts %v: %w", c.Hosts, ctx.Err())
	}
}
