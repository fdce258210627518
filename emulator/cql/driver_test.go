package cql_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// newSession connects the ScyllaDB gocql fork to hostport with
// token-aware routing and protocol negotiation.
func newSession(t testing.TB, hostport string, keyspace string) *gocql.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(hostport)
	p, _ := strconv.Atoi(port)
	cluster := gocql.NewCluster(host)
	cluster.Port = p
	cluster.Keyspace = keyspace
	cluster.Timeout = 5 * time.Second
	cluster.ConnectTimeout = 5 * time.Second
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cluster.Consistency = gocql.Quorum
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connecting gocql to %s: %v", hostport, err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestDriverHandshake(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	hp := enginetest.StartServer(t, "127.0.1.1:0", mem)
	s := newSession(t, hp, "")
	var cluster, partitioner string
	var hostID gocql.UUID
	var tokens []string
	if err := s.Query("SELECT cluster_name, partitioner, host_id, tokens FROM system.local WHERE key='local'").Scan(&cluster, &partitioner, &hostID, &tokens); err != nil {
		t.Fatal(err)
	}
	if cluster != "test-cluster" || partitioner != "org.apache.cassandra.dht.Murmur3Partitioner" || len(tokens) != 16 {
		t.Fatalf("system.local: %q %q %v", cluster, partitioner, tokens)
	}
	if hostID != gocql.UUID(mem.Local().HostID) {
		t.Fatalf("host_id %v", hostID)
	}
	_ = fmt.Sprint
	_ = engine.One
}
