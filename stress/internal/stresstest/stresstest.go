// Package stresstest is what the workload models' tests share: a one-node
// emulated cluster (the emulator's CQL server on an engine backend) and a
// session on it, and a model's schema created there. Package stress's own
// tests cannot import it (it imports stress); they have their session in
// cql_test.go.
package stresstest

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// nodeAddr is where the node listens: port 0, so the system picks a free
// port and no address or port is assumed free.
const nodeAddr = "127.0.3.2:0"

// Session starts a one-node emulated cluster on b until the test ends and
// returns a session on it (stress.NewSession, as the load generator
// connects), closed when the test ends.
func Session(t testing.TB, b engine.Backend) *gocql.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(enginetest.StartServer(t, nodeAddr, b))
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := stress.NewSession(ctx, stress.SessionConfig{Hosts: []string{host}, Port: p, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to the emulated node at %s:%d: %v", host, p, err)
	}
	t.Cleanup(s.Close)
	return s
}

// Memory is Session on an in-memory engine named name.
func Memory(t testing.TB, name string) *gocql.Session {
	t.Helper()
	return Session(t, enginetest.NewMemory(name))
}

// DC is the data centre s's node reports.
func DC(t testing.TB, s *gocql.Session) string {
	t.Helper()
	var dc string
	if err := s.Query("SELECT data_center FROM system.local").Scan(&dc); err != nil {
		t.Fatalf("reading the node's data centre: %v", err)
	}
	return dc
}

// CreateSchema runs m's schema for target on s, target's DC the node's
// when empty and its RF 1 when 0.
func CreateSchema(t testing.TB, s *gocql.Session, m stress.Model, target stress.SchemaTarget) {
	t.Helper()
	if target.DC == "" {
		target.DC = DC(t, s)
	}
	if target.RF == 0 {
		target.RF = 1
	}
	stmts, err := m.Schema(target)
	if err != nil {
		t.Fatalf("the model's schema: %v", err)
	}
	for _, st := range stmts {
		if err := s.Query(st).Exec(); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// Run schedules op, m's operations by their names and weights (as the
// engine schedules a model), with cfg's rate, concurrency and interval,
// for d, and returns the summary.
func Run(t testing.TB, m stress.Model, op sched.Op, cfg sched.Config, d time.Duration) sched.Summary {
	t.Helper()
	cfg.Ops, cfg.Weights = nil, nil
	for _, o := range m.Ops() {
		cfg.Ops, cfg.Weights = append(cfg.Ops, o.Name), append(cfg.Weights, o.Weight)
	}
	cfg.Classify = stress.ClassifyError
	sch, err := sched.New(cfg, op)
	if err != nil {
		t.Fatalf("scheduling the model's operations: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sum, err := sch.Run(ctx)
	if err != nil {
		t.Fatalf("running the model's operations: %v", err)
	}
	return sum
}
