// Package acceptance holds the issue-5 acceptance tests of the emulated
// node: scale-out with tablets, decommission, latency under load, a full
// disk, and the streaming-bandwidth benchmark. They run real node
// processes or in-process nodes through emulator/localcluster, on
// 127.0.8.x, and talk to them only as the framework does: CQL (gocql),
// the ScyllaDB REST API and Prometheus metrics.
package acceptance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

const (
	keyspace = "ks"
	table    = "kv"
	valueLen = 4096
)

func createSchema(t testing.TB, s *gocql.Session, rf, tablets int) {
	t.Helper()
	stmts := []string{
		fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': %d} AND tablets = {'initial': %d}`, keyspace, rf, tablets),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s.%s (k bigint PRIMARY KEY, v blob)`, keyspace, table),
	}
	for _, st := range stmts {
		if err := s.Query(st).Exec(); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// value is key k's value: pseudo-random (incompressible, so that disk
// usage is real after Pebble's compression) and reproducible for checks.
func value(k int64) []byte {
	r := rand.New(rand.NewPCG(uint64(k), 0x5eed))
	v := make([]byte, valueLen)
	for i := 0; i < len(v); i += 8 {
		binary.LittleEndian.PutUint64(v[i:], r.Uint64())
	}
	return v
}

// writeRows writes keys [from, to) with conc writers at QUORUM.
func writeRows(ctx context.Context, s *gocql.Session, from, to int64, conc int) error {
	var next atomic.Int64
	next.Store(from)
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1) - 1
				if k >= to || ctx.Err() != nil {
					return
				}
				q := s.Query(fmt.Sprintf(`INSERT INTO %s.%s (k, v) VALUES (?, ?)`, keyspace, table), k, value(k)).
					Consistency(gocql.Quorum).WithContext(ctx)
				if err := q.Exec(); err != nil {
					errs <- fmt.Errorf("writing key %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// checkRows reads keys [from, to) at QUORUM and returns the missing or wrong ones.
func checkRows(ctx context.Context, s *gocql.Session, from, to int64, conc int) (bad []int64, err error) {
	var next atomic.Int64
	next.Store(from)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1) - 1
				if k >= to || ctx.Err() != nil {
					return
				}
				var v []byte
				err := s.Query(fmt.Sprintf(`SELECT v FROM %s.%s WHERE k = ?`, keyspace, table), k).
					Consistency(gocql.Quorum).WithContext(ctx).Scan(&v)
				mu.Lock()
				switch {
				case errors.Is(err, gocql.ErrNotFound):
					bad = append(bad, k)
				case err != nil:
					if firstErr == nil {
						firstErr = fmt.Errorf("reading key %d: %w", k, err)
					}
				case string(v) != string(value(k)):
					bad = append(bad, k)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return bad, firstErr
}

// fillTo writes rows until every node of nodes has at least frac of its
// emulated disk in use (node_filesystem_* metrics), and returns the number
// of keys written (0..n-1).
func fillTo(ctx context.Context, t testing.TB, c *tcluster, s *gocql.Session, nodes []*tnode, frac float64) int64 {
	t.Helper()
	var n int64
	const step = 256 // rows per step (1 MiB of values)
	for {
		low := ""
		for _, nd := range nodes {
			u, err := nd.diskUsage(ctx)
			if err != nil {
				t.Fatalf("disk usage of %s: %v", nd.Addr, err)
			}
			if u < frac {
				low = fmt.Sprintf("%s at %.0f%%", nd.Addr, 100*u)
			}
		}
		if low == "" {
			return n
		}
		if n > 1<<20 {
			t.Fatalf("wrote %d rows and %s is still below %.0f%%", n, low, 100*frac)
		}
		if err := writeRows(ctx, s, n, n+step, 16); err != nil {
			t.Fatalf("filling (%s): %v", low, err)
		}
		n += step
	}
}

// mustContainLog waits for a line containing sub in the node's log.
func mustContainLog(ctx context.Context, t *testing.T, nd *tnode, sub string) string {
	t.Helper()
	var line string
	err := eventually(ctx, 100*time.Millisecond, func() error {
		b, err := os.ReadFile(nd.LogPath)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, sub) {
				line = l
				return nil
			}
		}
		return fmt.Errorf("no %q in %s", sub, nd.LogPath)
	})
	if err != nil {
		t.Fatal(err)
	}
	return line
}
