package acceptance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"net/http"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"

	"github.com/elasticity-dev/elasticity/emulator/murmur3"
)

// TestToolsCQL runs, on a 3-node emulated cluster through gocql, the CQL
// that ScyllaDB's load and validation tools send: token-range scans that
// split the ring (scylla-bench's scan mode, modes.go; the Spark connector's
// token(pk) > ? AND token(pk) <= ? splits of the driver's ring) and
// scylla-bench's counter table under concurrent increments.
func TestToolsCQL(t *testing.T) {
	c := newCluster(t, scaleOpts, threeSmall()...)
	s := c.session(t)
	t.Run("TokenRangeScans", func(t *testing.T) { testTokenRangeScans(t, c, s) })
	t.Run("Counters", func(t *testing.T) { testCounters(t, c, s) })
	t.Run("LostReplicaData", func(t *testing.T) { testLostReplicaData(t, c, s) })
}

// testLostReplicaData: natural_endpoints names a key's replicas as
// ScyllaDB's REST API does, and the emulator's drop_local_data fault
// removes one replica's copy behind the cluster's back: a read at ONE
// coordinated (and answered locally) by that replica misses the rows, a
// read at ALL still finds them on the other replicas.
func testLostReplicaData(t *testing.T, c *tcluster, s *gocql.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const keys = 200
	mustExec(t, s, `CREATE KEYSPACE lost WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 3} AND tablets = {'initial': 4}`)
	mustExec(t, s, `CREATE TABLE lost.kv (key bigint PRIMARY KEY, value blob)`)
	for k := int64(0); k < keys; k++ {
		if err := s.Query(`INSERT INTO lost.kv (key, value) VALUES (?, ?)`, k, []byte("v")).Consistency(gocql.All).Exec(); err != nil {
			t.Fatalf("insert %d: %v", k, err)
		}
	}
	victim := c.Nodes[1].Addr
	rest := scyllarest.New(victim, localcluster.RESTPort)
	eps, err := rest.NaturalEndpoints(ctx, "lost", "kv", "42")
	if err != nil || len(eps) != 3 {
		t.Fatalf("natural_endpoints of key 42: %v, %v; want the 3 replicas", eps, err)
	}
	if _, err := rest.NaturalEndpoints(ctx, "lost", "kv", "forty-two"); err == nil {
		t.Fatal("natural_endpoints accepted a key that is not a bigint")
	}
	resp, err := http.Post(fmt.Sprintf("http://%s:%d/elasticity/fault/drop_local_data?keyspace=lost&table=kv", victim, localcluster.RESTPort), "", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("drop_local_data: %v %v", resp, err)
	}
	resp.Body.Close()
	// Only the victim coordinates: it reads its own copy first at ONE.
	cl := gocql.NewCluster(victim)
	cl.PoolConfig.HostSelectionPolicy = gocql.RoundRobinHostPolicy()
	cl.HostFilter = gocql.WhiteListHostFilter(victim)
	cl.Timeout = 10 * time.Second
	only, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	missing := func(cons gocql.Consistency) int {
		n := 0
		for k := int64(0); k < keys; k++ {
			var v []byte
			err := only.Query(`SELECT value FROM lost.kv WHERE key = ?`, k).Consistency(cons).Scan(&v)
			switch {
			case errors.Is(err, gocql.ErrNotFound):
				n++
			case err != nil:
				t.Fatalf("read %d at %v: %v", k, cons, err)
			}
		}
		return n
	}
	if m := missing(gocql.One); m != keys {
		t.Errorf("at ONE through the victim %d of %d keys are missing, want all", m, keys)
	}
	if m := missing(gocql.All); m != 0 {
		t.Errorf("at ALL %d keys are missing, want 0", m)
	}
}

func mustExec(t *testing.T, s *gocql.Session, stmt string, args ...any) {
	t.Helper()
	if err := s.Query(stmt, args...).Exec(); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func testTokenRangeScans(t *testing.T, c *tcluster, s *gocql.Session) {
	const parts, rowsPer = 300, 4
	for _, ks := range []struct{ name, tablets string }{
		{"scan_tablets", "{'initial': 8}"},
		{"scan_vnodes", "{'enabled': false}"},
	} {
		t.Run(ks.name, func(t *testing.T) {
			mustExec(t, s, fmt.Sprintf(`CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 3} AND tablets = %s`, ks.name, ks.tablets))
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s.t (pk bigint, ck bigint, v blob, PRIMARY KEY (pk, ck)) WITH compression = { }`, ks.name))
			ins := fmt.Sprintf(`INSERT INTO %s.t (pk, ck, v) VALUES (?, ?, ?)`, ks.name)
			for pk := int64(0); pk < parts; pk++ {
				for ck := int64(0); ck < rowsPer; ck++ {
					if err := s.Query(ins, pk, ck, []byte("x")).Consistency(gocql.Quorum).Exec(); err != nil {
						t.Fatalf("insert %d/%d: %v", pk, ck, err)
					}
				}
			}

			// token(pk) is the Murmur3 token drivers route by.
			var tok, pk int64
			if err := s.Query(fmt.Sprintf(`SELECT token(pk), pk FROM %s.t WHERE pk = ? LIMIT 1`, ks.name), int64(7)).Scan(&tok, &pk); err != nil {
				t.Fatal(err)
			}
			if want := murmur3.Token(binary.BigEndian.AppendUint64(nil, 7)); tok != want || pk != 7 {
				t.Fatalf("token(pk) of 7 = %d, want %d", tok, want)
			}

			// scylla-bench's scan: the ring cut into equal ranges from the
			// minimum token, the last ending at the maximum.
			scan := fmt.Sprintf(`SELECT * FROM %s.t WHERE token(pk) >= ? AND token(pk) <= ?`, ks.name)
			var ranges [][2]int64
			const n = 7
			step := int64(math.MaxUint64 / n)
			for i := int64(0); i < n; i++ {
				first := math.MinInt64 + i*step
				last := first + step - 1
				if i == n-1 {
					last = math.MaxInt64
				}
				ranges = append(ranges, [2]int64{first, last})
			}
			checkScan(t, s, parts, rowsPer, scan, ranges)

			// The driver's ring: (t_i, t_i+1] between the nodes' tokens and
			// the wrap-around range, sent as token > last and token <= first.
			var toks []int64
			for _, q := range []string{`SELECT tokens FROM system.local`, `SELECT tokens FROM system.peers`} {
				it := s.Query(q).Iter()
				var ts []string
				for it.Scan(&ts) {
					for _, x := range ts {
						v, err := strconv.ParseInt(x, 10, 64)
						if err != nil {
							t.Fatal(err)
						}
						toks = append(toks, v)
					}
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
			sort.Slice(toks, func(i, j int) bool { return toks[i] < toks[j] })
			if len(toks) < 3 {
				t.Fatalf("ring tokens %v", toks)
			}
			spark := fmt.Sprintf(`SELECT pk, ck, v FROM %s.t WHERE token("pk") > ? AND token("pk") <= ?`, ks.name)
			ranges = ranges[:0]
			for i := 1; i < len(toks); i++ {
				ranges = append(ranges, [2]int64{toks[i-1], toks[i]})
			}
			got := scanRows(t, s, spark, ranges)
			got = append(got, scanRows(t, s, fmt.Sprintf(`SELECT pk, ck, v FROM %s.t WHERE token(pk) > ?`, ks.name), [][2]int64{{toks[len(toks)-1]}})...)
			got = append(got, scanRows(t, s, fmt.Sprintf(`SELECT pk, ck, v FROM %s.t WHERE token(pk) <= ?`, ks.name), [][2]int64{{toks[0]}})...)
			checkOnce(t, got, parts, rowsPer)

			// A full scan, its count, and an empty intersection.
			checkOnce(t, scanRows(t, s, fmt.Sprintf(`SELECT pk, ck, v FROM %s.t`, ks.name), [][2]int64{{}}), parts, rowsPer)
			var count int64
			if err := s.Query(fmt.Sprintf(`SELECT COUNT(*) FROM %s.t`, ks.name)).Scan(&count); err != nil || count != parts*rowsPer {
				t.Fatalf("COUNT(*) = %d, %v; want %d", count, err, parts*rowsPer)
			}
			if rows := scanRows(t, s, fmt.Sprintf(`SELECT pk, ck, v FROM %s.t WHERE token(pk) > ? AND token(pk) < ?`, ks.name), [][2]int64{{5, 3}}); len(rows) != 0 {
				t.Fatalf("token(pk) > 5 AND token(pk) < 3 returned %d rows", len(rows))
			}
		})
	}
}

// scanRows runs q once per range (binding the range's bounds, as many as
// q has markers) with a small page size, so that every scan pages.
func scanRows(t *testing.T, s *gocql.Session, q string, ranges [][2]int64) [][2]int64 {
	t.Helper()
	var out [][2]int64
	for _, r := range ranges {
		var args []any
		for i := 0; i < strings.Count(q, "?"); i++ {
			args = append(args, r[i])
		}
		it := s.Query(q, args...).Consistency(gocql.Quorum).PageSize(37).Iter()
		var pk, ck int64
		var v []byte
		for it.Scan(&pk, &ck, &v) {
			out = append(out, [2]int64{pk, ck})
		}
		if err := it.Close(); err != nil {
			t.Fatalf("%s %v: %v", q, r, err)
		}
	}
	return out
}

func checkScan(t *testing.T, s *gocql.Session, parts, rowsPer int64, q string, ranges [][2]int64) {
	t.Helper()
	checkOnce(t, scanRows(t, s, q, ranges), parts, rowsPer)
}

// checkOnce asserts that rows hold every (pk, ck) of the table once.
func checkOnce(t *testing.T, rows [][2]int64, parts, rowsPer int64) {
	t.Helper()
	seen := map[[2]int64]int{}
	for _, r := range rows {
		seen[r]++
	}
	for pk := int64(0); pk < parts; pk++ {
		for ck := int64(0); ck < rowsPer; ck++ {
			if k := seen[[2]int64{pk, ck}]; k != 1 {
				t.Fatalf("row (%d, %d) seen %d times (%d rows in all)", pk, ck, k, len(rows))
			}
		}
	}
	if int64(len(rows)) != parts*rowsPer {
		t.Fatalf("%d rows, want %d", len(rows), parts*rowsPer)
	}
}

// serverMessage is the message of the error the server answered with.
func serverMessage(err error) string {
	var re interface{ GetMessage() string } // gocql's error frames
	if errors.As(err, &re) {
		return re.GetMessage()
	}
	return fmt.Sprint(err)
}

func testCounters(t *testing.T, c *tcluster, s *gocql.Session) {
	// scylla-bench's counter schema (main.go). ScyllaDB 2025.1-2025.4 refuse
	// counters in a tablets keyspace (create_table_statement.cc).
	schema := `CREATE TABLE IF NOT EXISTS %s.test_counters (pk bigint, ck bigint, c1 counter, c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY(pk, ck)) WITH compression = { }`
	mustExec(t, s, `CREATE KEYSPACE cnt_tablets WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 3}`)
	err := s.Query(fmt.Sprintf(schema, "cnt_tablets")).Exec()
	if msg := serverMessage(err); msg != "Cannot use the 'counter' type for table cnt_tablets.test_counters: Counters are not yet supported with tablets" {
		t.Fatalf("counter table in a tablets keyspace: %v", err)
	}
	mustExec(t, s, `CREATE KEYSPACE cnt WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 3} AND tablets = {'enabled': false}`)
	mustExec(t, s, fmt.Sprintf(schema, "cnt"))

	// Several clients (sessions) with several workers each increment a few
	// rows concurrently at QUORUM, through every node.
	const clients, workers, ops = 3, 6, 60
	const keys = 4
	upd := `UPDATE cnt.test_counters SET c1 = c1 + ?, c2 = c2 + ?, c3 = c3 - ?, c4 = c4 + ?, c5 = c5 + ? WHERE pk = ? AND ck = ?`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, clients*workers)
	for cl := 0; cl < clients; cl++ {
		cs := c.session(t)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < ops; i++ {
					k := int64((w + i) % keys)
					if err := cs.Query(upd, int64(1), int64(2), int64(3), k, int64(-1), k, k+10).Consistency(gocql.Quorum).WithContext(ctx).Exec(); err != nil {
						errs <- fmt.Errorf("client %d worker %d increment %d: %w", cl, w, i, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	perKey := int64(clients * workers * ops / keys)
	for _, cons := range []gocql.Consistency{gocql.Quorum, gocql.All} {
		for k := int64(0); k < keys; k++ {
			var c1, c2, c3, c4, c5 int64
			if err := s.Query(`SELECT c1, c2, c3, c4, c5 FROM cnt.test_counters WHERE pk = ? AND ck = ?`, k, k+10).Consistency(cons).Scan(&c1, &c2, &c3, &c4, &c5); err != nil {
				t.Fatal(err)
			}
			if c1 != perKey || c2 != 2*perKey || c3 != -3*perKey || c4 != k*perKey || c5 != -perKey {
				t.Fatalf("%v: row %d counts %d %d %d %d %d, want %d %d %d %d %d", cons, k, c1, c2, c3, c4, c5, perKey, 2*perKey, -3*perKey, k*perKey, -perKey)
			}
		}
	}
	// A scan of the counter table sums the same.
	it := s.Query(`SELECT pk, c1 FROM cnt.test_counters WHERE token(pk) >= ?`, int64(math.MinInt64)).PageSize(2).Iter()
	var pk, c1, total int64
	for it.Scan(&pk, &c1) {
		total += c1
	}
	if err := it.Close(); err != nil || total != keys*perKey {
		t.Fatalf("scan total %d, %v; want %d", total, err, keys*perKey)
	}

	// What stays unsupported, with ScyllaDB's messages.
	for q, want := range map[string]string{
		`INSERT INTO cnt.test_counters (pk, ck, c1) VALUES (1, 1, 1)`:                               "INSERT statement are not allowed on counter tables, use UPDATE instead",
		`UPDATE cnt.test_counters SET c1 = 5 WHERE pk = 1 AND ck = 1`:                               "Cannot set the value of counter column c1 (counters can only be incremented/decremented, not set)",
		`UPDATE cnt.test_counters USING TTL 5 SET c1 = c1 + 1 WHERE pk = 1 AND ck = 1`:              "Cannot provide custom TTL for counter updates",
		`CREATE TABLE cnt.mixed (pk bigint PRIMARY KEY, c counter, v text)`:                         "Cannot add a non counter column (v) in a counter column family",
		`CREATE TABLE cnt.bad (pk counter PRIMARY KEY, c counter)`:                                  "counter type is not supported for PRIMARY KEY part pk",
		`BEGIN BATCH UPDATE cnt.test_counters SET c1 = c1 + 1 WHERE pk = 1 AND ck = 1; APPLY BATCH`: "Cannot include a counter statement in a logged batch",
	} {
		if err := s.Query(q).Exec(); serverMessage(err) != want {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
}
