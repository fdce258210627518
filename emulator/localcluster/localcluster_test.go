package localcluster

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/gocql/gocql"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The test binary doubles as the node binary: with this variable set it runs
// emulator.Main instead of the tests, so tests do not depend on building
// cmd/elasticity.
const nodeEnv = "ELASTICITY_LOCALCLUSTER_TEST_NODE"

// With this variable set (and nodeEnv) the test binary is a wrapper that
// runs the node as its child, in its process group.
const wrapperEnv = "ELASTICITY_LOCALCLUSTER_TEST_WRAPPER"

func TestMain(m *testing.M) {
	if os.Getenv(wrapperEnv) == "1" {
		os.Exit(runWrapped(os.Args[1:]))
	}
	if addr := os.Getenv(answerEnv); addr != "" {
		os.Exit(serveAnswers(addr))
	}
	if os.Getenv(nodeEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := emulator.Main(ctx, os.Args[1:], os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// testOptions: each test's cluster has a range of its own, never
// 127.0.0.2 onwards, where `cluster up` and the local backend start by
// default (Start fails naming a free range if the range is taken anyway).
func testOptions(t *testing.T, base string, nodes int) Options {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Binary: exe, Env: []string{nodeEnv + "=1"}, Nodes: nodes, Racks: 3, Dir: t.TempDir(), BaseAddress: base,
		StartTimeout: 30 * time.Second, ExtraNodeArgs: []string{"--initial-tablets", "8", "--ops-per-vcpu", "20000"},
		SharedProcess: os.Getenv(sharedEnv) == "1"}
}

// sharedEnv=1 runs every test cluster's nodes in one host process
// (Options.SharedProcess): the lifecycle tests then check that a node of a
// host is killed, paused, stopped and restarted as a node process is.
const sharedEnv = "LOCALCLUSTER_SHARED"

func startCluster(t *testing.T, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("closing cluster: %v", err)
		}
		// Node processes are this test binary: under -race they report here.
		for _, n := range c.Nodes() {
			if b, _ := os.ReadFile(n.LogPath + ".out"); strings.Contains(string(b), "DATA RACE") || strings.Contains(string(b), "panic:") {
				t.Errorf("node %d output:\n%s", n.Index+1, b)
			}
		}
		if t.Failed() {
			for _, n := range c.Nodes() {
				b, _ := os.ReadFile(n.LogPath)
				var keep []string
				for _, l := range strings.Split(string(b), "\n") {
					if strings.Contains(l, "DOWN") || strings.HasPrefix(l, "ERROR") || (strings.HasPrefix(l, "WARN") && !strings.Contains(l, "Reactor stalled")) {
						keep = append(keep, l)
					}
				}
				t.Logf("node %d (%s): warnings and errors:\n%s", n.Index+1, n.Addr, strings.Join(keep[max(0, len(keep)-20):], "\n"))
			}
		}
	})
	return c
}

func session(t *testing.T, hosts ...string) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(hosts...)
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cl.Timeout = 10 * time.Second
	cl.ConnectTimeout = 5 * time.Second
	cl.NumConns = 1
	// Like any production client: retry when a node leaves mid-request.
	cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func restGet(t *testing.T, addr, path string, out any) {
	t.Helper()
	resp, err := http.Get("http://" + addr + ":10000" + path)
	if err != nil {
		t.Fatalf("GET %s on %s: %v", path, addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s on %s: %s", path, addr, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("decoding %s of %s: %v", path, addr, err)
	}
}

func restPost(ctx context.Context, addr, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+":10000"+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("POST %s: %s", path, resp.Status)
	}
	return nil
}

func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	return scrapePort(t, addr, MetricsPort)
}

func scrapePort(t *testing.T, addr string, port int) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/metrics", addr, port))
	if err != nil {
		t.Fatalf("scraping %s: %v", addr, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing metrics of %s: %v", addr, err)
	}
	return fams
}

func metricSum(fams map[string]*dto.MetricFamily, name string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	s := 0.0
	for _, m := range f.Metric {
		switch {
		case m.Counter != nil:
			s += m.Counter.GetValue()
		case m.Gauge != nil:
			s += m.Gauge.GetValue()
		case m.Histogram != nil:
			s += float64(m.Histogram.GetSampleCount())
		}
	}
	return s, true
}

const ddlTable = `CREATE TABLE IF NOT EXISTS ks.t (k bigint PRIMARY KEY, v blob)`

func createSchema(t *testing.T, s *gocql.Session) {
	t.Helper()
	if err := s.Query(`CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND tablets = {'enabled': true, 'initial': 8}`).Exec(); err != nil {
		t.Fatalf("create keyspace: %v", err)
	}
	if err := s.Query(ddlTable).Exec(); err != nil {
		t.Fatalf("create table: %v", err)
	}
}

func writeRows(t *testing.T, s *gocql.Session, from, to int, value []byte) {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Pointer[error] // errors differ in concrete type: atomic.Value would panic
	ch := make(chan int, 64)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range ch {
				if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(k), value).Consistency(gocql.Quorum).Exec(); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	for k := from; k < to; k++ {
		ch <- k
	}
	close(ch)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d writes failed, first: %v", n, derefErr(firstErr.Load()))
	}
}

func readRows(t *testing.T, s *gocql.Session, from, to int, cl gocql.Consistency) {
	t.Helper()
	var wg sync.WaitGroup
	var missing, failed atomic.Int64
	var firstErr atomic.Pointer[error] // errors differ in concrete type: atomic.Value would panic
	ch := make(chan int, 64)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range ch {
				var v []byte
				err := s.Query(`SELECT v FROM ks.t WHERE k = ?`, int64(k)).Consistency(cl).Scan(&v)
				if errors.Is(err, gocql.ErrNotFound) {
					missing.Add(1)
				} else if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	for k := from; k < to; k++ {
		ch <- k
	}
	close(ch)
	wg.Wait()
	if missing.Load() > 0 || failed.Load() > 0 {
		t.Fatalf("reading %d rows: %d missing, %d failed (first error %v)", to-from, missing.Load(), failed.Load(), derefErr(firstErr.Load()))
	}
}

// TestThreeNodes is the issue 2 acceptance: 3 nodes, one per rack, RF=3
// with tablets, 10,000 rows at QUORUM through a token-aware driver, REST and
// metrics, then one node killed: QUORUM works and ALL is unavailable.
func TestThreeNodes(t *testing.T) {
	c := startCluster(t, testOptions(t, "127.0.144.2", 3))
	s := session(t, c.Hosts()...)
	createSchema(t, s)

	km, err := s.KeyspaceMetadata("ks")
	if err != nil {
		t.Fatalf("keyspace metadata: %v", err)
	}
	if km.StrategyClass == "" || km.Tables["t"] == nil {
		t.Fatalf("keyspace metadata lacks the strategy or table: %+v", km)
	}
	value := make([]byte, 1024)
	start := time.Now()
	writeRows(t, s, 0, 10000, value)
	t.Logf("10,000 QUORUM writes in %v", time.Since(start))
	readRows(t, s, 0, 10000, gocql.Quorum)

	// Every node agrees on membership and schema.
	var versions []string
	coordinated := map[string]float64{}
	for _, h := range c.Hosts() {
		var mode string
		restGet(t, h, "/storage_service/operation_mode", &mode)
		var live []string
		restGet(t, h, "/gossiper/endpoint/live/", &live)
		var ids []map[string]string
		restGet(t, h, "/storage_service/host_id", &ids)
		if mode != "NORMAL" || len(live) != 3 || len(ids) != 3 {
			t.Errorf("%s: mode %s, live %v, host ids %v", h, mode, live, ids)
		}
		var rack string
		restGet(t, h, "/snitch/rack", &rack)
		fams := scrape(t, h)
		for _, name := range []string{"scylla_storage_proxy_coordinator_write_latency", "scylla_reactor_utilization", "scylla_stall_detector_reported", "scylla_tablets_count", "scylla_streaming_finished_percentage"} {
			if _, ok := metricSum(fams, name); !ok {
				t.Errorf("%s: metric %s missing", h, name)
			}
		}
		// node_exporter's series are on its own port, never on ScyllaDB's.
		exp := scrapePort(t, h, NodeExporterPort)
		for _, name := range []string{"node_filesystem_size_bytes", "node_filesystem_avail_bytes", "node_cpu_seconds_total"} {
			if _, ok := metricSum(fams, name); ok {
				t.Errorf("%s: %s served on ScyllaDB's port %d", h, name, MetricsPort)
			}
			if _, ok := metricSum(exp, name); !ok {
				t.Errorf("%s: %s missing on node_exporter's port %d", h, name, NodeExporterPort)
			}
		}
		coordinated[h], _ = metricSum(fams, "scylla_storage_proxy_coordinator_write_latency")
		if n, _ := metricSum(fams, "scylla_tablets_count"); n != 8 {
			t.Errorf("%s (%s): %v tablet replicas, want 8 (8 tablets x RF 3 over 3 nodes)", h, rack, n)
		}
		var v string
		cs := session(t, h)
		if err := cs.Query(`SELECT schema_version FROM system.local`).Scan(&v); err == nil {
			versions = append(versions, v)
		}
	}
	for _, v := range versions[1:] {
		if v != versions[0] {
			t.Errorf("schema versions differ: %v", versions)
		}
	}
	// Every node is a replica of every tablet, and the driver picks one of a
	// key's replicas at random to coordinate: each takes about a third of
	// the writes. (A driver that takes every statement for an LWT sends all
	// of them to each tablet's first replica.)
	for h, n := range coordinated {
		if n < 10000*0.2 || n > 10000*0.47 {
			t.Errorf("%s coordinated %.0f of the 10,000 writes, want about a third: %v", h, n, coordinated)
		}
	}

	if err := c.Kill(2); err != nil {
		t.Fatal(err)
	}
	// The driver lets any live replica coordinate the writes below, so
	// every live node must have marked the killed one down: a coordinator
	// that has not yet tries it and fails, where Unavailable is wanted.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, h := range c.Hosts()[:2] {
		for {
			var down []string
			restGet(t, h, "/gossiper/endpoint/down/", &down)
			if len(down) == 1 {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("killed node never reported down by %s", h)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	s2 := session(t, c.Hosts()[0])
	if err := s2.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(-1), value).Consistency(gocql.Quorum).Exec(); err != nil {
		t.Errorf("QUORUM write with one node down: %v", err)
	}
	readRows(t, s2, 0, 200, gocql.Quorum)
	err = s2.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(-2), value).Consistency(gocql.All).Exec()
	var unavail *gocql.RequestErrUnavailable
	if !errors.As(err, &unavail) {
		t.Errorf("ALL write with one node down: got %v, want RequestErrUnavailable", err)
	}
}

func tabletsOn(t *testing.T, addr string) float64 {
	n, _ := metricSum(scrape(t, addr), "scylla_tablets_count")
	return n
}

// TestJoinAndDecommission is the issue 5 acceptance: 3 nodes + 3 joining in
// parallel; after quiesce every new node holds tablets and every row reads
// back at QUORUM; then a decommission loses nothing and frees the node.
func TestJoinAndDecommission(t *testing.T) {
	opts := testOptions(t, "127.0.144.5", 3)
	c := startCluster(t, opts)
	s := session(t, c.Hosts()...)
	createSchema(t, s)
	value := make([]byte, 1024)
	crand.Read(value) // incompressible, so that disk usage is real
	writeRows(t, s, 0, 5000, value)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// Keep writing while the cluster grows: acknowledged writes must survive.
	bg := make(chan struct{})
	go func() {
		defer close(bg)
		writeRows(t, s, 5000, 7000, value)
	}()
	start := time.Now()
	added, err := c.AddNodes(ctx, 3, "")
	if err != nil {
		t.Fatalf("adding nodes: %v", err)
	}
	// quiesce_topology alone may return before the balancer has the new
	// nodes' load stats (scylladb service/topology_coordinator.cc): wait for
	// them to hold tablets, then quiesce.
	waitFor(t, "new nodes to hold tablets", 60*time.Second, func() bool {
		for _, n := range added {
			if tabletsOn(t, n.Addr) == 0 {
				return false
			}
		}
		return true
	})
	if err := restPost(ctx, c.Hosts()[0], "/storage_service/quiesce_topology"); err != nil {
		t.Fatalf("quiesce: %v", err)
	}
	<-bg
	t.Logf("3 nodes joined and balanced in %v", time.Since(start))
	for _, n := range added {
		if got := tabletsOn(t, n.Addr); got == 0 {
			t.Errorf("new node %s holds no tablets", n.Addr)
		}
	}
	var total float64
	for _, h := range c.Hosts() {
		total += tabletsOn(t, h)
	}
	if total != 24 {
		t.Errorf("tablet replicas across the cluster = %v, want 24", total)
	}
	if n, _ := metricSum(scrape(t, c.Hosts()[0]), "scylla_load_balancer_migrations_produced"); n == 0 {
		t.Errorf("no migrations produced by the coordinator")
	}
	readRows(t, s, 0, 7000, gocql.Quorum)

	// Decommission an original node.
	victim := c.Hosts()[1]
	var before float64
	restGet(t, victim, "/storage_service/load", &before)
	if err := restPost(ctx, victim, "/storage_service/decommission"); err != nil {
		t.Fatalf("decommission: %v", err)
	}
	var mode string
	restGet(t, victim, "/storage_service/operation_mode", &mode)
	if mode != "DECOMMISSIONED" {
		t.Errorf("mode after decommission = %s", mode)
	}
	if got := tabletsOn(t, victim); got != 0 {
		t.Errorf("decommissioned node still holds %v tablets", got)
	}
	readRows(t, s, 0, 7000, gocql.Quorum)
	var ids []map[string]string
	restGet(t, c.Hosts()[0], "/storage_service/host_id", &ids)
	if len(ids) != 5 {
		t.Errorf("host ids after decommission: %v", ids)
	}
	// The decommissioned node freed its disk.
	deadline := time.Now().Add(10 * time.Second)
	var after float64
	for time.Now().Before(deadline) {
		restGet(t, victim, "/storage_service/load", &after)
		if before-after > 1<<20 {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("decommissioned node load: %.0f -> %.0f bytes", before, after)
	// About 3.5 MiB of rows lived there; write-ahead log files remain.
	if before-after <= 1<<20 {
		t.Errorf("decommissioned node's load did not fall: %.0f -> %.0f", before, after)
	}
}

func waitFor(t *testing.T, what string, d time.Duration, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCoordinatorFailoverRemoveNodeRestart kills the topology coordinator,
// changes the schema through another node, removes the dead node (its
// tablets are rebuilt from the other replicas) and restarts a stopped node.
func TestCoordinatorFailoverRemoveNodeRestart(t *testing.T) {
	c := startCluster(t, testOptions(t, "127.0.2.2", 4))
	hosts := c.Hosts()
	s := session(t, hosts[1:]...)
	createSchema(t, s)
	value := make([]byte, 512)
	writeRows(t, s, 0, 2000, value)

	var deadID string
	restGet(t, hosts[0], "/storage_service/hostid/local", &deadID)
	if err := c.Kill(0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 1 down", 10*time.Second, func() bool {
		var down []string
		restGet(t, hosts[1], "/gossiper/endpoint/down/", &down)
		return len(down) == 1
	})
	if err := s.Query(`CREATE TABLE ks.t2 (k int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatalf("DDL after the coordinator died: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := restPost(ctx, hosts[1], "/storage_service/remove_node?host_id="+deadID); err != nil {
		t.Fatalf("remove_node: %v", err)
	}
	var ids []map[string]string
	restGet(t, hosts[2], "/storage_service/host_id", &ids)
	if len(ids) != 3 {
		t.Errorf("host ids after removenode: %v", ids)
	}
	if got := tabletsOn(t, hosts[3]); got != 16 {
		t.Errorf("node 4 (rack1) holds %v tablets after removing node 1, want all 16 of rack1 (ks.t and ks.t2)", got)
	}
	for _, h := range hosts[1:] {
		var live, down []string
		restGet(t, h, "/gossiper/endpoint/live/", &live)
		restGet(t, h, "/gossiper/endpoint/down/", &down)
		t.Logf("%s: live %v down %v", h, live, down)
	}
	readRows(t, s, 0, 2000, gocql.All)

	// SIGTERM, restart on the same data: the node is NORMAL again with its rows.
	if err := c.Stop(2); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(ctx, 2); err != nil {
		t.Fatalf("restart: %v", err)
	}
	waitFor(t, "restarted node up everywhere", 10*time.Second, func() bool {
		var live []string
		restGet(t, hosts[1], "/gossiper/endpoint/live/", &live)
		return len(live) == 3
	})
	readRows(t, session(t, hosts[2]), 0, 2000, gocql.All)
}

// TestDiskFullAndFailStartup: a node whose emulated disk fills refuses
// writes with "No space left on device" (logged as ScyllaDB does) and keeps
// serving reads; --fail-startup exits 1 with ScyllaDB's startup failure line.
func TestDiskFullAndFailStartup(t *testing.T) {
	opts := testOptions(t, "127.0.2.10", 1)
	opts.ExtraNodeArgs = append(opts.ExtraNodeArgs, "--disk-gb", "16", "--storage-scale-mib-per-gb", "0.5") // 8 MiB
	c := startCluster(t, opts)
	s := session(t, c.Hosts()...)
	if err := s.Query(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(ddlTable).Exec(); err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 4096)
	var werr error
	k := 0
	for ; k < 10000; k++ {
		crand.Read(value)
		if werr = s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(k), value).Exec(); werr != nil {
			break
		}
	}
	if werr == nil || !strings.Contains(werr.Error(), "No space left on device") {
		t.Fatalf("after %d rows: write error %v, want No space left on device", k, werr)
	}
	t.Logf("disk full after %d rows of 4 KiB: %v", k, werr)
	readRows(t, s, 0, k, gocql.One)
	var avail float64
	fams := scrapePort(t, c.Hosts()[0], NodeExporterPort)
	avail, _ = metricSum(fams, "node_filesystem_avail_bytes")
	if avail > 4<<20 { // half the 8 MiB disk: compaction may have freed some since
		t.Errorf("node_filesystem_avail_bytes = %v on a full disk", avail)
	}
	waitFor(t, "ENOSPC in the log", 5*time.Second, func() bool {
		b, _ := os.ReadFile(c.Nodes()[0].LogPath)
		return strings.Contains(string(b), "No space left on device")
	})

	// --fail-startup: exit 1, ScyllaDB's line in the log.
	exe, _ := os.Executable()
	logPath := t.TempDir() + "/fail.log"
	cmd := exec.Command(exe, "--listen-address", "127.0.2.11", "--data-dir", t.TempDir(), "--log-file", logPath, "--fail-startup", "injected fault")
	cmd.Env = append(os.Environ(), nodeEnv+"=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("--fail-startup: %v, want exit status 1", err)
	}
	// ScyllaDB logs its starting message first (main.cc
	// print_starting_message), then the failure as an ERROR line.
	b, _ := os.ReadFile(logPath)
	failed := false
	for _, line := range strings.Split(string(b), "\n") {
		failed = failed || (strings.HasPrefix(line, "ERROR ") && strings.Contains(line, "] init - Startup failed: injected fault"))
	}
	if !failed || !strings.HasPrefix(string(b), "Scylla version ") {
		t.Errorf("--fail-startup log: %q", b)
	}
}

// TestPausedReplica: with one replica SIGSTOPped, QUORUM writes and reads
// coordinated by a live node keep succeeding; the node is DOWN, then UP
// again after SIGCONT.
func TestPausedReplica(t *testing.T) {
	c := startCluster(t, testOptions(t, "127.0.2.13", 3))
	hosts := c.Hosts()
	cl := gocql.NewCluster(hosts[0])
	cl.HostFilter = gocql.WhiteListHostFilter(hosts[0])
	cl.Timeout = 5 * time.Second
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	createSchema(t, s)
	value := make([]byte, 256)
	if err := c.Signal(2, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer c.Signal(2, syscall.SIGCONT)
	stopped := time.Now()
	start := time.Now()
	writeRows(t, s, 0, 1000, value)
	readRows(t, s, 0, 1000, gocql.Quorum)
	t.Logf("1000 QUORUM writes and reads with a paused replica in %v", time.Since(start))
	waitFor(t, "paused node DOWN", 5*time.Second, func() bool {
		var down []string
		restGet(t, hosts[0], "/gossiper/endpoint/down/", &down)
		return len(down) == 1 && down[0] == hosts[2]
	})
	c.Signal(2, syscall.SIGCONT)
	paused := time.Since(stopped)
	waitFor(t, "resumed node UP", 5*time.Second, func() bool {
		var down []string
		restGet(t, hosts[0], "/gossiper/endpoint/down/", &down)
		return len(down) == 0
	})
	// The pause is the node's scheduling lag: steal time, per shard
	// (scylla_reactor_cpu_steal_time_ms), the host noise it reports.
	fams := scrape(t, hosts[2])
	steal, ok := metricSum(fams, "scylla_reactor_cpu_steal_time_ms")
	if shards := float64(len(fams["scylla_reactor_cpu_steal_time_ms"].GetMetric())); !ok || shards == 0 || steal/shards < 0.8*float64(paused.Milliseconds()) {
		t.Errorf("paused node's steal time %v ms over its shards after a %v pause", steal, paused)
	}
	t.Logf("paused %v: steal time %v ms summed over the shards", paused, steal)
	// Writes made while it was paused are not replayed (no hints): ONE
	// reads through it may miss them, QUORUM reads do not.
	readRows(t, s, 0, 1000, gocql.Quorum)
}

func derefErr(p *error) error {
	if p == nil {
		return nil
	}
	return *p
}

func TestNodeEnvAddsRuntimeSettingsUnlessGODEBUGSaysOtherwise(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"PATH=/bin"}, "GODEBUG=gcshrinkstackoff=1,schedtrace=2147483647"},
		{[]string{"GODEBUG=madvdontneed=1", "X=1"}, "GODEBUG=madvdontneed=1,gcshrinkstackoff=1,schedtrace=2147483647"},
		{[]string{"GODEBUG=gcshrinkstackoff=0"}, "GODEBUG=gcshrinkstackoff=0,schedtrace=2147483647"},
		{[]string{"GODEBUG=schedtrace=0,gcshrinkstackoff=0"}, "GODEBUG=schedtrace=0,gcshrinkstackoff=0"},
		{[]string{"GODEBUG=xschedtrace=1"}, "GODEBUG=xschedtrace=1,gcshrinkstackoff=1,schedtrace=2147483647"},
		{[]string{"GODEBUG="}, "GODEBUG=gcshrinkstackoff=1,schedtrace=2147483647"},
	} {
		got := NodeEnv(tc.in)
		var gd []string
		for _, kv := range got {
			if strings.HasPrefix(kv, "GODEBUG=") {
				gd = append(gd, kv)
			}
		}
		if len(gd) != 1 || gd[0] != tc.want {
			t.Errorf("NodeEnv(%q) GODEBUG = %q, want [%q]", tc.in, gd, tc.want)
		}
	}
	in := []string{"GODEBUG=a=1"}
	NodeEnv(in)
	if in[0] != "GODEBUG=a=1" {
		t.Errorf("NodeEnv changed its argument: %q", in)
	}
}
