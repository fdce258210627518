package stress

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/elasticity-dev/elasticity/results"
)

var acceptance = flag.Bool("acceptance", false, "run TestAcceptance (about 65 s): 3 node processes, 2,000 ops/s, SIGSTOP one node for 2 s")

const nodeEnv = "ELASTICITY_STRESS_TEST_NODE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(nodeEnv); spec != "" {
		os.Exit(serveTestNode(spec))
	}
	os.Exit(m.Run())
}

// testNodeInfo describes node i of the addresses: tokens interleaved so that
// each node owns a third of the ring.
func testNodeInfo(i int, addrs []string, port int) engine.NodeInfo {
	n := len(addrs)
	var tokens []string
	step := ^uint64(0) / uint64(16*n)
	for j := 0; j < 16*n; j++ {
		if j%n == i {
			tokens = append(tokens, strconv.FormatInt(int64(uint64(1)<<63+uint64(j)*step), 10))
		}
	}
	var id [16]byte
	id[0], id[6], id[8] = byte(i+1), 0x40, 0x80
	return engine.NodeInfo{HostID: id, Addr: net.ParseIP(addrs[i]), CQLPort: port, DC: "datacenter1", Rack: "rack1",
		Tokens: tokens, ReleaseVersion: "3.0.8", ScyllaVersion: "2025.1.0-emulated", State: engine.StateNormal, Up: true, Shards: 1}
}

// serveTestNode is the child process: one in-memory CQL node of a
// three-node ring (no replication; RF 1 so that every key has one owner).
// spec is "index;port;addr1,addr2,addr3[;null]".
func serveTestNode(spec string) int {
	parts := strings.Split(spec, ";")
	i, _ := strconv.Atoi(parts[0])
	port, _ := strconv.Atoi(parts[1])
	addrs := strings.Split(parts[2], ",")
	m := enginetest.NewMemory("acceptance")
	if len(parts) > 3 && parts[3] == "null" {
		m = enginetest.NewNull()
	}
	m.SetLocal(testNodeInfo(i, addrs, port))
	var peers []engine.NodeInfo
	for j := range addrs {
		if j != i {
			peers = append(peers, testNodeInfo(j, addrs, port))
		}
	}
	m.SetPeers(peers)
	ln, err := net.Listen("tcp", net.JoinHostPort(addrs[i], strconv.Itoa(port)))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { // die with the parent
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		stop()
	}()
	fmt.Println("ready")
	_ = cql.NewServer(m, cql.Options{}).Serve(ctx, ln)
	return 0
}

// startNodes starts one node process per address (backend "memory" or
// "null"), creates the schema on each and returns the CQL port and processes.
func startNodes(t testing.TB, addrs []string, backend string) (int, []*exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", addrs[0]+":0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var procs []*exec.Cmd
	for i := range addrs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d;%d;%s;%s", nodeEnv, i, port, strings.Join(addrs, ","), backend))
		stdin, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = stdin.Close()
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		})
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			t.Fatalf("node %d: %q", i, line)
		}
		procs = append(procs, cmd)
	}
	// The nodes do not share schema: create it on each one directly.
	for _, a := range addrs {
		c := gocql.NewCluster(a)
		c.Port, c.ProtoVersion, c.DisableInitialHostLookup, c.Logger = port, 4, true, quietLogger{}
		s, err := c.CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		err = CreateSchema(context.Background(), s, Schema{Keyspace: "ks", Table: "kv", RF: 1, Tablets: -1})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return port, procs
}

// TestAcceptance runs the load generator's acceptance against three node
// processes (in-memory CQL nodes of one token ring, standing in for the
// emulated cluster): the rate is kept within 1% at 2,000 ops/s for 30 s, and
// with one node SIGSTOPped for 2 s the response-time P99 of the stall window
// shows it while the service time does not, with every intended operation
// accounted for.
//
//	go test -run TestAcceptance -v ./stress/ -args -acceptance
func TestAcceptance(t *testing.T) {
	if !*acceptance {
		t.Skip("needs -acceptance")
	}
	addrs := []string{"127.0.3.11", "127.0.3.12", "127.0.3.13"}
	port, procs := startNodes(t, addrs, "memory")
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	s, err := NewSession(sctx, SessionConfig{Hosts: addrs, Port: port})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
	keys, err := RunFill(fctx, s, Fill{Keyspace: "ks", Table: "kv", ValueSize: 200}, nil, nil, nil)
	fcancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("filled %d keys", keys)
	w := Workload{Keyspace: "ks", Table: "kv", WriteRatio: 1, ReadRatio: 1, Rate: 2000, Concurrency: 16,
		KeyCount: keys, ValueMin: 200, Warn: func(m string) { t.Log(m) }}

	// 1. The rate is kept.
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	sum, err := Run(rctx, s, w, nil)
	rcancel()
	if err != nil {
		t.Fatal(err)
	}
	el := sum.End.Sub(sum.Start).Seconds()
	t.Logf("clean run: %.2f s, intended %d, succeeded %d, errors %d, dropped %d, late %d, achieved %.1f ops/s, misses %d",
		el, sum.Intended, sum.Succeeded, sum.Errors, sum.Dropped, sum.Late, sum.AchievedRate, sum.ReadMisses)
	for _, o := range sum.Ops {
		t.Logf("  %s response %+v", o.Op, o.Response)
		t.Logf("  %s service  %+v", o.Op, o.Service)
	}
	if r := float64(sum.Succeeded) / 30; r < 1980 || r > 2020 {
		t.Errorf("achieved %.1f ops/s over 30 s, want 2000 within 1%%", r)
	}
	if sum.Errors != 0 || sum.Dropped != 0 || sum.ReadMisses != 0 {
		t.Errorf("clean run: errors %d dropped %d misses %d", sum.Errors, sum.Dropped, sum.ReadMisses)
	}

	// 2. One node stopped for 2 s, 10 s into a 30 s run.
	var recs []results.LatencyRecord
	rctx, rcancel = context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	var stopAt, contAt time.Time
	go func() {
		time.Sleep(10 * time.Second)
		stopAt = time.Now()
		_ = syscall.Kill(procs[1].Process.Pid, syscall.SIGSTOP)
		time.Sleep(2 * time.Second)
		_ = syscall.Kill(procs[1].Process.Pid, syscall.SIGCONT)
		contAt = time.Now()
	}()
	sum, err = Run(rctx, s, w, func(r results.LatencyRecord) { recs = append(recs, r) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stall run: intended %d = succeeded %d + errors %d (%v) + dropped %d; late %d",
		sum.Intended, sum.Succeeded, sum.Errors, sum.Ops[0].Errors, sum.Dropped, sum.Late)
	if sum.Intended != sum.Succeeded+sum.Errors+sum.Dropped {
		t.Errorf("operations skipped silently")
	}
	whole, _ := results.MergeWindow(recs, time.Time{}, time.Time{}, "")
	win, _ := results.MergeWindow(recs, stopAt.Add(-time.Second), contAt.Add(2*time.Second), "")
	before, _ := results.MergeWindow(recs, time.Time{}, stopAt.Add(-time.Second), "")
	for _, x := range []struct {
		name string
		w    *results.Window
	}{{"before the stall", before}, {"stall window", win}, {"whole run", whole}} {
		t.Logf("%-16s %2d records, %6d ok: response p50 %7.2f p99 %8.2f max %8.2f ms | service p50 %6.2f p99 %6.2f p99.9 %8.2f max %8.2f ms",
			x.name, x.w.Intervals, x.w.Count,
			results.SummarizeHDR(x.w.Response).P50, results.SummarizeHDR(x.w.Response).P99, results.SummarizeHDR(x.w.Response).Max,
			results.SummarizeHDR(x.w.Service).P50, results.SummarizeHDR(x.w.Service).P99, results.SummarizeHDR(x.w.Service).P999, results.SummarizeHDR(x.w.Service).Max)
	}
	// Waiting operations are dropped after MaxLag (1 s), so the response
	// time of the waiting ones tops out near 1 s; the in-flight ones show 2 s.
	rp, sp := results.SummarizeHDR(win.Response).P99, results.SummarizeHDR(win.Service).P99
	if rp < 500 || rp < 10*sp {
		t.Errorf("stall window response p99 %.1f ms does not show a 2 s stall (service p99 %.1f ms)", rp, sp)
	}
	if sp > 200 {
		t.Errorf("stall window service p99 %.1f ms shows the stall", sp)
	}
	if results.SummarizeHDR(win.Response).Max < 1900 {
		t.Errorf("stall window response max %.1f ms misses the stalled operations", results.SummarizeHDR(win.Response).Max)
	}
}

// BenchmarkCQLNullProcess is the whole client path per operation (scheduler,
// recording, gocql, frame coalescing, loopback) against a do-nothing CQL node
// (the emulator's front end on a null backend) in another process, so that
// allocations and client-cpu-ns/op are the client's alone; server-cpu-ns/op
// is the node's CPU per operation (frames and syscalls the client causes).
// Closed loop, 32 in flight:
//
//	go test -run '^$' -bench CQLNullProcess -benchtime 20000x ./stress/
func BenchmarkCQLNullProcess(b *testing.B) {
	addrs := []string{"127.0.3.21"}
	port, procs := startNodes(b, addrs, "null")
	serverPID = procs[0].Process.Pid
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s, err := NewSession(sctx, SessionConfig{Hosts: addrs, Port: port})
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchClosedLoop(b, s, true)
}

// serverPID is the node process whose CPU benchClosedLoop reports (0: none).
var serverPID int

// procCPU is the CPU time of process pid from /proc (0 if unreadable).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are the 14th and 15th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
