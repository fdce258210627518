package localcluster

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/cpustat"
	"github.com/gocql/gocql"
)

// BenchmarkNodeCost is the emulator's cost per client operation (issue 17):
// three i4i.4xlarge node processes at the default capacity model, a mixed
// 1:1 workload (RF=3, QUORUM, 1 KiB values) at fixed rates, and for each
// rate the CPU time of the three node processes (utime+stime from
// /proc/PID/stat) divided by the client operations, the heap objects the
// node processes allocated per operation (their MemStats.Mallocs, read from
// the heap profile --pprof serves), the nodes' RSS and the client's P50/P99
// (measured from each operation's scheduled start, so a stalled client or
// node shows). Before the rates it measures the machine: a 1 KiB loopback
// round trip between busy goroutines (the system calls' floor) and between
// idle ones (the difference is the cost of waking them). Each rate's figure
// is then split: what the nodes cost idle, the CQL exchange alone
// (exchangeCPU), the stores alone (storeAloneCPU: the replica writes and
// reads on three stores in this process) and the node code around them,
// the rest; and beside it the floor at that rate (answerFloorCPU: a
// process that only answers requests arriving at the rate). Run it with
// `make bench-emulator`;
// BENCH_EMU_RATES (default "2000,10000") and BENCH_EMU_SECONDS (default 10)
// change the rates and the time per rate; BENCH_NODE_PROFILE writes a CPU
// profile per node process ("{addr}" in the path is the node's address;
// with BENCH_EMU_SHARED=1 the first node to start writes the process's,
// the others' files stay empty);
// BENCH_EMU_NODE_ENV adds VAR=value words to the nodes' environment (e.g.
// GOMAXPROCS=1, to compare runtime settings side by side);
// BENCH_EMU_SHARED=1 runs the three nodes in one process
// (Options.SharedProcess: internode messages in memory), to compare the cost
// of a process per node. Each rate also
// prints the machine's CPU steal (/proc/stat): runs compared side by side
// need it alike.
// BENCH_EMU_INSTANCE=i4i.large and BENCH_EMU_PREFILL=N measure the main
// job's nodes instead: three i4i.large written with keys 0..N-1 first (the
// workload then uses those keys); 78000 fills them to about 90%, where
// their flushes and compactions compete with requests.
func BenchmarkNodeCost(b *testing.B) {
	rates := []int{2000, 10000}
	if s := os.Getenv("BENCH_EMU_RATES"); s != "" {
		rates = nil
		for _, f := range strings.Split(s, ",") {
			r, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || r <= 0 {
				b.Fatalf("BENCH_EMU_RATES: %q is not a positive rate", f)
			}
			rates = append(rates, r)
		}
	}
	secs := 10
	if s := os.Getenv("BENCH_EMU_SECONDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("BENCH_EMU_SECONDS: %q is not a positive number", s)
		}
		secs = v
	}
	// The machine's floor first, before the nodes load it: a round trip
	// back to back (both ends busy: no one sleeps) and one between idle
	// goroutines (1 ms apart, as a node sees its messages at a few thousand
	// operations per second); the difference is what waking costs.
	busy, err := loopbackRoundTripCPU(20000, 0)
	if err != nil {
		b.Fatalf("measuring a busy loopback round trip: %v", err)
	}
	idle, err := loopbackRoundTripCPU(2000, time.Millisecond)
	if err != nil {
		b.Fatalf("measuring an idle loopback round trip: %v", err)
	}
	fmt.Printf("machine floor: one 1 KiB loopback TCP round trip (both ends) costs %.1f µs CPU busy, %.1f µs between idle goroutines: %.1f µs is waking them; a client operation costs the nodes about 2 round trips (the CQL exchange's server half, 1.5 internode): ≥ %.0f µs per op busy, %.0f µs if every message wakes its receiver\n",
		us(busy), us(idle), us(idle-busy), 2*us(busy), 2*us(idle))
	b.ReportMetric(2*us(busy), "µs-floor/op")
	b.ReportMetric(2*us(idle-busy), "µs-wakeups/op")
	b.ReportMetric(us(busy), "µs-busy-rtt")
	b.ReportMetric(us(idle-busy), "µs-wakeup-rtt")
	exe, _ := os.Executable()
	nodeExtraEnv := strings.Fields(os.Getenv("BENCH_EMU_NODE_ENV"))
	opts := Options{Binary: exe, Env: append([]string{nodeEnv + "=1"}, nodeExtraEnv...), Nodes: 3, Racks: 3, Dir: b.TempDir(), BaseAddress: "127.0.144.25",
		InstanceType: "i4i.4xlarge", VCPUs: 16, MemoryGB: 128, DiskGB: 3750,
		StartTimeout: 60 * time.Second, ExtraNodeArgs: []string{"--initial-tablets", "16", "--pprof"}}
	// One process for the three nodes, as the local backend runs them by
	// default (local.process: shared); BENCH_EMU_SHARED=0 measures a
	// process per node.
	opts.SharedProcess = os.Getenv("BENCH_EMU_SHARED") != "0"
	if opts.SharedProcess {
		fmt.Println("the three nodes run in one process (BENCH_EMU_SHARED=0: a process each)")
	} else {
		fmt.Println("the three nodes run in a process each (BENCH_EMU_SHARED=0)")
	}
	switch it := os.Getenv("BENCH_EMU_INSTANCE"); it {
	case "", "i4i.4xlarge":
	case "i4i.large":
		opts.InstanceType, opts.VCPUs, opts.MemoryGB, opts.DiskGB = it, 2, 16, 468
	default:
		b.Fatalf("BENCH_EMU_INSTANCE: %q is not i4i.large or i4i.4xlarge", it)
	}
	prefill := 0
	if s := os.Getenv("BENCH_EMU_PREFILL"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			b.Fatalf("BENCH_EMU_PREFILL: %q is not a key count", s)
		}
		prefill = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, s := startBenchCluster(ctx, b, opts, 1)
	value := make([]byte, 1024)
	crand.Read(value)
	keys := 100_000
	if prefill > 0 {
		keys = prefill
		t0 := time.Now()
		if err := writeKeys(ctx, s, value, keys); err != nil {
			b.Fatalf("prefilling %d keys: %v", keys, err)
		}
		fmt.Printf("prefilled %d keys in %.1fs\n", keys, time.Since(t0).Seconds())
	}
	b.ResetTimer()
	fmt.Printf("load average before: %s\n", loadAvg())
	// What the nodes cost with no load at all (heartbeats, timers,
	// background work left over): part of every operation's figure below,
	// in proportion to 1/rate.
	idle0 := nodesCPU(b, c)
	time.Sleep(5 * time.Second)
	idleCPU := (nodesCPU(b, c) - idle0) / 5
	fmt.Printf("idle: the nodes use %.1f ms of CPU per second with no load\n", idleCPU.Seconds()*1e3)
	b.ReportMetric(idleCPU.Seconds()*1e3, "ms-cpu-idle/s")
	for _, rate := range rates {
		// A short warm-up at the rate, then the measured interval.
		driveMixed(ctx, s, value, keys, rate, time.Second)
		cpu0 := nodesCPU(b, c)
		mallocs0 := nodesMallocs(c)
		steal0 := machineCPU()
		t0 := time.Now()
		lat, failed := driveMixed(ctx, s, value, keys, rate, time.Duration(secs)*time.Second)
		el := time.Since(t0)
		cpu := nodesCPU(b, c) - cpu0
		mallocs := nodesMallocs(c) - mallocs0
		steal := machineCPU().stealPct(steal0)
		ops := len(lat)
		slices.Sort(lat)
		q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		rss := nodesRSS(c)
		perOp := cpu.Seconds() * 1e6 / float64(ops)
		allocsPerOp := float64(mallocs) / float64(ops)
		fmt.Printf("rate %6d op/s: %6d ops in %.1fs, node CPU %.2f cores, %6.1f µs CPU/op, %.0f node allocs/op, RSS %s MiB, P50 %v P99 %v, %d failed, load %s, CPU steal %.1f%%\n",
			rate, ops, el.Seconds(), cpu.Seconds()/el.Seconds(), perOp, allocsPerOp, rss, q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), failed, loadAvg(), steal)
		b.ReportMetric(perOp, fmt.Sprintf("µs-cpu/op@%d", rate))
		b.ReportMetric(allocsPerOp, fmt.Sprintf("node-allocs/op@%d", rate))
		b.ReportMetric(float64(q(0.99).Microseconds()), fmt.Sprintf("µs-p99@%d", rate))
		// The hypervisor's share: runs compared side by side need it alike.
		b.ReportMetric(steal, fmt.Sprintf("%%-steal@%d", rate))
		if failed > ops/100 {
			b.Errorf("rate %d: %d of %d operations failed", rate, failed, ops)
		}
		exchange := exchangeCPU(ctx, b, c, s, rate, time.Duration(secs)*time.Second)
		fmt.Printf("rate %6d op/s: the CQL exchange alone (a request the coordinator refuses before the data path) costs %.1f µs CPU/op: the rest, %.1f µs, is the data path\n",
			rate, exchange, perOp-exchange)
		b.ReportMetric(exchange, fmt.Sprintf("µs-cpu-exchange/op@%d", rate))
		diskBytes := int64(opts.DiskGB * emulator.DefaultStorageScaleMiBPerGB * (1 << 20))
		store := storeAloneCPU(ctx, b, diskBytes, value, keys, rate, time.Duration(secs)*time.Second)
		fmt.Printf("rate %6d op/s: the stores alone (the same replica writes and reads called straight on three node stores in one process, no CQL, internode or node code) cost %.1f µs CPU/op: the node code around them, %.1f µs\n",
			rate, store, perOp-exchange-store)
		b.ReportMetric(store, fmt.Sprintf("µs-cpu-store/op@%d", rate))
		floor := answerFloorCPU(ctx, b, nodeExtraEnv, rate, time.Duration(secs)*time.Second)
		fmt.Printf("rate %6d op/s: a process that only answers 1 KiB requests arriving at this rate costs %.1f µs CPU/request, the floor under the CQL exchange's %.1f µs; with the stores alone added, %.1f µs of the %d µs target is left for the rest of the node\n",
			rate, floor, exchange, targetCPUPerOp-floor-store, targetCPUPerOp)
		b.ReportMetric(floor, fmt.Sprintf("µs-cpu-answer-floor/op@%d", rate))
	}
}

// targetCPUPerOp is issue 45's target for the nodes' CPU per client
// operation, in µs.
const targetCPUPerOp = 60

// exchangeCPU is the node CPU per request, at rate for d, of a request
// that costs the nodes one CQL exchange and nothing of the data path: a
// prepared read whose bound LIMIT 0 the coordinator refuses before it reads
// (select_statement.cc get_limit). With the same client, connections and
// arrivals as the mixed load, it is what answering a request costs the
// nodes before any replica does any work: waking for it, reading, parsing
// and binding it, and writing the answer.
func exchangeCPU(ctx context.Context, b *testing.B, c *Cluster, s *gocql.Session, rate int, d time.Duration) float64 {
	refused := func(k int64) error {
		var v []byte
		// No retry: the driver's default policy sends a refused request
		// to the next host three more times.
		err := s.Query(`SELECT v FROM ks.t WHERE k = ? LIMIT ?`, k, 0).Consistency(gocql.Quorum).
			RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 0}).Scan(&v)
		if err != nil && strings.Contains(err.Error(), "strictly positive") {
			return nil
		}
		return fmt.Errorf("LIMIT 0 not refused: %v", err)
	}
	drive(ctx, rate, time.Second, refused)
	cpu0 := nodesCPU(b, c)
	lat, failed := drive(ctx, rate, d, refused)
	cpu := nodesCPU(b, c) - cpu0
	if failed > 0 {
		b.Fatalf("rate %d: %d of %d refused reads were not refused as LIMIT 0", rate, failed, len(lat)+failed)
	}
	return cpu.Seconds() * 1e6 / float64(len(lat))
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// loopbackRoundTripCPU is the CPU (this process's utime+stime) of one 1 KiB
// request and answer over loopback TCP, both ends in this process, n times
// with pause between round trips. With a pause, as a node sees its messages
// at a few thousand operations per second, each side sleeps in between, so
// each message costs a wake-up as well as its read and write system calls;
// with none, the floor of the system calls alone.
func loopbackRoundTripCPU(n int, pause time.Duration) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.25:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			answerEach(c)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	buf := make([]byte, 1024)
	c0 := selfCPU()
	for range n {
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return 0, err
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
	return (selfCPU() - c0) / time.Duration(n), nil
}

// writeKeys writes keys 0..n-1 at QUORUM, closed loop with 64 workers.
func writeKeys(ctx context.Context, s *gocql.Session, value []byte, n int) error {
	var next atomic.Int64
	errc := make(chan error, 64)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := next.Add(1) - 1; k < int64(n) && ctx.Err() == nil; k = next.Add(1) - 1 {
				if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, k, value).Consistency(gocql.Quorum).Exec(); err != nil {
					errc <- fmt.Errorf("key %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	return errors.Join(<-errc, ctx.Err())
}

// driveMixed issues rate op/s for d, alternating writes and reads of random
// keys, from a pool of workers; latencies count from the scheduled start.
func driveMixed(ctx context.Context, s *gocql.Session, value []byte, keys, rate int, d time.Duration) ([]time.Duration, int) {
	var n atomic.Int64
	return drive(ctx, rate, d, func(k int64) error {
		k %= int64(keys)
		if n.Add(1)%2 == 1 {
			return s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, k, value).Consistency(gocql.Quorum).Exec()
		}
		var v []byte
		err := s.Query(`SELECT v FROM ks.t WHERE k = ?`, k).Consistency(gocql.Quorum).Scan(&v)
		if err == gocql.ErrNotFound {
			err = nil
		}
		return err
	})
}

// drive calls op with a random key rate times a second for d (an open
// model: each call is due at its own time), from a pool of workers; the
// latencies of the calls that succeeded, counted from when each was due,
// and how many failed.
func drive(ctx context.Context, rate int, d time.Duration, op func(k int64) error) ([]time.Duration, int) {
	total := int(float64(rate) * d.Seconds())
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	var next atomic.Int64
	var failed atomic.Int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, total)
	var wg sync.WaitGroup
	for w := 0; w < 256; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, total/256+1)
			defer func() { mu.Lock(); lat = append(lat, local...); mu.Unlock() }()
			for {
				i := next.Add(1) - 1
				if i >= int64(total) || ctx.Err() != nil {
					return
				}
				due := start.Add(time.Duration(i) * interval)
				if w := time.Until(due); w > 0 {
					time.Sleep(w)
				}
				if err := op(rand.Int64N(math.MaxInt64)); err != nil {
					failed.Add(1)
					continue
				}
				local = append(local, time.Since(due))
			}
		}()
	}
	wg.Wait()
	return lat, int(failed.Load())
}

// nodePids are the node processes, each once (nodes may share one).
func nodePids(c *Cluster) []int {
	var pids []int
	for _, n := range c.Nodes() {
		if pid := c.pidOf(n); !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// nodesCPU sums the CPU time of the node processes.
func nodesCPU(b *testing.B, c *Cluster) time.Duration {
	var cpu time.Duration
	for _, pid := range nodePids(c) {
		cpu += processCPU(b, pid)
	}
	return cpu
}

// processCPU is a process's utime+stime (/proc/PID/stat fields 14 and 15,
// in clock ticks of 1/100 s on Linux).
func processCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatalf("reading CPU time of process %d: %v", pid, err)
	}
	// The command name (field 2) may hold spaces: fields count after ')'.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// nodesMallocs sums the heap objects the node processes have allocated
// (runtime.MemStats.Mallocs, which the heap profile's text form ends with;
// the nodes run with --pprof), once per process. A process whose figure
// cannot be read counts 0 both times.
func nodesMallocs(c *Cluster) int64 {
	var total int64
	var seen []int
	for _, n := range c.Nodes() {
		pid := c.pidOf(n)
		if slices.Contains(seen, pid) {
			continue
		}
		seen = append(seen, pid)
		resp, err := http.Get("http://" + net.JoinHostPort(n.Addr, strconv.Itoa(RESTPort)) + "/debug/pprof/heap?debug=1")
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "# Mallocs = "); ok {
				m, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				total += m
			}
		}
		resp.Body.Close()
	}
	return total
}

// nodesRSS lists the node processes' VmRSS in MiB.
func nodesRSS(c *Cluster) string {
	var out []string
	for _, pid := range nodePids(c) {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			out = append(out, "?")
			continue
		}
		sc := bufio.NewScanner(f)
		v := "?"
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				v = strconv.FormatInt(kb>>10, 10)
			}
		}
		f.Close()
		out = append(out, v)
	}
	return strings.Join(out, "/")
}

// cpuTimes is the machine's CPU time (/proc/stat), in steal and in all.
type cpuTimes struct{ steal, all float64 }

func machineCPU() cpuTimes {
	steal, all, err := cpustat.Machine()
	if err != nil {
		return cpuTimes{}
	}
	return cpuTimes{steal, all}
}

// stealPct is the share of the CPU time since from that was steal.
func (c cpuTimes) stealPct(from cpuTimes) float64 {
	if c.all <= from.all {
		return 0
	}
	return 100 * (c.steal - from.steal) / (c.all - from.all)
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}
