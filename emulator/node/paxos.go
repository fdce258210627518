package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Lightweight transactions. ScyllaDB runs a Paxos round among a partition's
// replicas for every conditional statement and SERIAL read
// (service/paxos/paxos_state.cc prepare/accept/learn, driven by
// service/storage_proxy.cc cas): a coordinator's ballot, once promised by a
// quorum, keeps every other coordinator's round on that partition out until
// it has read, decided and committed, which makes a partition's LWTs
// linearizable. The emulator gets the same outcome with less machinery:
// the coordinator takes a lease on the partition from its paxos leader
// (the first live natural replica, which every node computes alike from
// the same topology), reads at QUORUM, decides and writes at the
// statement's consistency, then gives the lease back. A coordinator that
// dies holding a lease loses it after paxosLease, as a stale ballot loses
// to a newer one. Differences: no ballots, no accepted-but-uncommitted
// proposals replayed by the next round, and a leader that dies drops its
// leases (ScyllaDB's Paxos state lives on every replica).

// paxosLease bounds how long a lease is held without being released, and
// how long a coordinator waits for one (ScyllaDB's cas_contention_timeout_in_ms
// is 1 s; a round under contention retries until the write timeout).
const paxosLease = 10 * time.Second

// paxosLocks are a leader's leases, by table and partition.
type paxosLocks struct {
	mu     sync.Mutex
	held   map[string]*paxosHold
	nextID atomic.Int64
}

type paxosHold struct {
	id    int64
	done  chan struct{}
	timer *time.Timer
}

// acquire waits for the partition's lease and returns its id.
func (l *paxosLocks) acquire(ctx context.Context, key string) (int64, error) {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[string]*paxosHold{}
		}
		h := l.held[key]
		if h == nil {
			h = &paxosHold{id: l.nextID.Add(1), done: make(chan struct{})}
			l.held[key] = h
			h.timer = time.AfterFunc(paxosLease, func() { l.release(key, h.id) })
			l.mu.Unlock()
			return h.id, nil
		}
		l.mu.Unlock()
		select {
		case <-h.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// release gives a lease back (a no-op when it already expired).
func (l *paxosLocks) release(key string, id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.held[key]; h != nil && h.id == id {
		h.timer.Stop()
		delete(l.held, key)
		close(h.done)
	}
}

func paxosKey(r *engine.Read) string {
	return r.Keyspace + "\x00" + r.Table + "\x00" + string(r.PartitionKey)
}

// LockPartition implements engine.PartitionLocker: it takes the lease on a
// partition from its paxos leader.
func (n *Node) LockPartition(ctx context.Context, keyspace, table string, partitionKey []byte) (func(), error) {
	v := n.view.Load()
	ks, t, err := n.lookup(v, keyspace, table)
	if err != nil {
		return nil, err
	}
	reps, _ := v.replicasOf(ks, t, Token(partitionKey))
	leader := ""
	for _, r := range reps {
		if n.isUp(r.Host) {
			leader = r.Host
			break
		}
	}
	if leader == "" {
		need := blockFor(engine.Quorum, len(reps))
		return nil, &engine.Error{Code: engine.CodeUnavailable, Message: fmt.Sprintf("Cannot achieve consistency level for cl SERIAL. Requires %d, alive 0", need),
			Consistency: engine.Quorum, Required: need}
	}
	r := &engine.Read{Keyspace: keyspace, Table: table, PartitionKey: partitionKey}
	resp, err := n.call(ctx, leader, &msg{Op: opPaxosLock, Read: r})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			// storage_proxy.cc: a contended round that runs out of time.
			return nil, &engine.Error{Code: engine.CodeWriteTimeout, Message: "Operation timed out for a lightweight transaction: the partition is contended",
				Consistency: engine.Quorum, Required: blockFor(engine.Quorum, len(reps)), WriteType: "CAS"}
		}
		return nil, err
	}
	id := resp.Bytes
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = n.call(ctx, leader, &msg{Op: opPaxosUnlock, Read: r, Bytes: id})
	}, nil
}

// servePaxosLock is the leader's side of opPaxosLock and opPaxosUnlock.
func (n *Node) servePaxosLock(ctx context.Context, m *msg) (*msg, error) {
	if m.Read == nil {
		return nil, errors.New("paxos lease request without a partition")
	}
	key := paxosKey(m.Read)
	if m.Op == opPaxosUnlock {
		n.paxos.release(key, m.Bytes)
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, paxosLease)
	defer cancel()
	id, err := n.paxos.acquire(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("waiting for the paxos lease: %w", err)
	}
	return &msg{Bytes: id}, nil
}
