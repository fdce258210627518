package localcluster

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocql/gocql"
)

// pinnedSession connects to one node only, so that it coordinates every
// request of the session.
func pinnedSession(t *testing.T, host string) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(host)
	cl.HostFilter = gocql.WhiteListHostFilter(host)
	cl.Consistency = gocql.Quorum
	cl.SerialConsistency = gocql.Serial
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("connecting to %s: %v", host, err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestStaticAndLWTAcrossCoordinators checks on three node processes what
// the emulator/cql tests check on one: a static column has one value per
// partition whichever node coordinates (the node stores it as the
// partition's row with an empty clustering key), and compare-and-set
// increments through three coordinators at once are linearizable (the
// node's Paxos lease, emulator/node/paxos.go, in place of ScyllaDB's
// service/paxos rounds; 2025.1 runs LWT only without tablets): the counter ends at the number of applied
// updates, none lost to a race.
func TestStaticAndLWTAcrossCoordinators(t *testing.T) {
	c := startCluster(t, testOptions(t, "127.0.142.1", 3))
	hosts := c.Hosts()
	s := session(t, hosts...)
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND tablets = {'enabled': false}`,
		`CREATE TABLE ks.st (p int, c int, s text STATIC, v int, PRIMARY KEY (p, c))`,
		`CREATE TABLE ks.cas (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sessions := make([]*gocql.Session, len(hosts))
	for i, h := range hosts {
		sessions[i] = pinnedSession(t, h)
	}
	for i, ps := range sessions {
		if err := ps.Query(`INSERT INTO ks.st (p, c, s, v) VALUES (1, ?, ?, ?)`, i, hosts[i], i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for i, ps := range sessions {
		iter := ps.Query(`SELECT c, s FROM ks.st WHERE p = 1`).Iter()
		var ck int
		var sv string
		n := 0
		for iter.Scan(&ck, &sv) {
			n++
			if sv != hosts[len(hosts)-1] {
				t.Errorf("through %s: row %d has static %q, want the last write %q", hosts[i], ck, sv, hosts[len(hosts)-1])
			}
		}
		if err := iter.Close(); err != nil || n != len(hosts) {
			t.Errorf("through %s: %d rows, %v", hosts[i], n, err)
		}
	}

	if applied, err := s.Query(`INSERT INTO ks.cas (k, v) VALUES (1, 0) IF NOT EXISTS`).MapScanCAS(map[string]any{}); err != nil || !applied {
		t.Fatalf("INSERT IF NOT EXISTS: %v %v", applied, err)
	}
	var applied atomic.Int64
	var wg sync.WaitGroup
	for _, ps := range sessions {
		wg.Add(1)
		go func(ps *gocql.Session) {
			defer wg.Done()
			for range 15 {
				var v int
				if err := ps.Query(`SELECT v FROM ks.cas WHERE k = 1`).Consistency(gocql.Serial).Scan(&v); err != nil {
					t.Errorf("SERIAL read: %v", err)
					return
				}
				ok, err := ps.Query(`UPDATE ks.cas SET v = ? WHERE k = 1 IF v = ?`, v+1, v).MapScanCAS(map[string]any{})
				if err != nil {
					t.Errorf("UPDATE IF: %v", err)
					return
				}
				if ok {
					applied.Add(1)
				}
			}
		}(ps)
	}
	wg.Wait()
	var v int
	if err := s.Query(`SELECT v FROM ks.cas WHERE k = 1`).Consistency(gocql.Serial).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if int64(v) != applied.Load() || v < 15 {
		t.Errorf("counter %d after %d applied compare-and-sets through 3 coordinators (want equal, at least 15)", v, applied.Load())
	}
}

// TestReAddedColumnHidesOlderCells checks on a node process what the
// emulator/cql tests check on the memory backend: a column dropped USING
// TIMESTAMP and added again hides its cells written at or before the drop
// (schema.cc dropped_columns; the node's replica reads leave them out), on
// a partition read and on a range scan.
func TestReAddedColumnHidesOlderCells(t *testing.T) {
	c := startCluster(t, testOptions(t, "127.0.218.1", 1))
	s := session(t, c.Hosts()...)
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}`,
		`CREATE TABLE ks.t (p int, c int, d int, PRIMARY KEY (p, c))`,
		`INSERT INTO ks.t (p, c, d) VALUES (1, 1, 1) USING TIMESTAMP 10`,
		`INSERT INTO ks.t (p, c, d) VALUES (1, 2, 2) USING TIMESTAMP 30`,
		`ALTER TABLE ks.t DROP d USING TIMESTAMP 20`,
		`ALTER TABLE ks.t ADD d int`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{`SELECT c, d FROM ks.t WHERE p = 1`, `SELECT c, d FROM ks.t`} {
		rows, err := s.Query(q).Iter().SliceMap()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%s: %v %v", q, rows, err)
		}
		if rows[0]["d"] != 0 || rows[1]["d"] != 2 { // gocql reads a null int as 0
			t.Errorf("%s: %v, want d null for c=1 (written before the drop) and 2 for c=2", q, rows)
		}
	}
	var d *int
	if err := s.Query(`SELECT d FROM ks.t WHERE p = 1 AND c = 1`).Scan(&d); err != nil || d != nil {
		t.Errorf("c=1: d = %v, want null (%v)", d, err)
	}
}
