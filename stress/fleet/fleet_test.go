package fleet_test

import (
	"context"

	"golang.org/x/crypto/ssh"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/local"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/fleet"
	"github.com/elasticity-dev/elasticity/stress/fleet/sshshell"
	"github.com/elasticity-dev/elasticity/stress/fleet/sshshell/sshtest"
)

// buildElasticity builds the CLI the loaders run.
func buildElasticity(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "elasticity")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", bin, "./cmd/elasticity")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building elasticity: %v\n%s", err, out)
	}
	return bin
}

// emulatedCluster starts three emulated nodes (one rack) and the schema.
func emulatedCluster(t *testing.T, bin, base string) []string {
	t.Helper()
	dir := t.TempDir()
	p := local.New(local.Options{Binary: bin, BaseAddress: base, Logf: t.Logf})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		dctx, c := context.WithTimeout(context.Background(), time.Minute)
		defer c()
		_ = p.Destroy(dctx)
	})
	nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: "fleet-test", Scenario: "fleet", Dir: filepath.Join(dir, "run"),
		ClusterName: "fleet", Flavour: "scylla", DC: "datacenter1", Racks: []string{"rack1"}, NodesPerRack: 3, InstanceType: "i4i.2xlarge"})
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, n := range nodes {
		hosts = append(hosts, n.Address)
	}
	// Nodes serve CQL once they have joined: retry the schema until it takes.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sctx, c := context.WithTimeout(ctx, 10*time.Second)
		s, err := stress.NewSession(sctx, stress.SessionConfig{Hosts: hosts})
		c()
		if err == nil {
			err = stress.CreateSchema(ctx, s, stress.Schema{Keyspace: "fleet", Table: "kv", RF: 3, DC: "datacenter1"})
			s.Close()
			if err == nil {
				return hosts
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ready: %v", err)
		}
		time.Sleep(time.Second)
	}
}

func newFleet(t *testing.T, bin, dir string, n int) *fleet.Fleet {
	t.Helper()
	var loaders []provision.Loader
	for i := 1; i <= n; i++ {
		loaders = append(loaders, provision.Loader{Name: "loader-" + strconv.Itoa(i), ID: "local", Local: true})
	}
	f, err := fleet.New(fleet.Options{Loaders: loaders, Shell: fleet.LocalShell{}, Binary: bin, Dir: dir, Logf: t.Logf, Grace: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type sinkRecs struct {
	mu   sync.Mutex
	recs []results.LatencyRecord
}

func (s *sinkRecs) add(r results.LatencyRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
}

func (s *sinkRecs) total(op string) (count, errs, dropped int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		if r.Op != op {
			continue
		}
		count += r.Count
		dropped += r.Dropped
		for _, n := range r.Errors {
			errs += n
		}
	}
	return
}

// Two loader processes fill one key range together, then apply one fixed
// rate between them; their records arrive merged, one per interval and
// operation, and add up to what each loader wrote in its own file.
func TestFleetAgainstEmulatedCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an emulated cluster")
	}
	bin := buildElasticity(t)
	hosts := emulatedCluster(t, bin, "127.0.10.2")
	dir := t.TempDir()
	f := newFleet(t, bin, dir, 2)
	common := stress.DefaultJob()
	common.Hosts, common.Keyspace, common.Table, common.ValueMin, common.ValueMax = hosts, "fleet", "kv", 200, 200
	ctx := context.Background()

	// Fill: loader i writes keys i, i+2, i+4 ... 300 each.
	var fill sinkRecs
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	fillJob := common
	fillJob.Fill, fillJob.Keys, fillJob.Concurrency, fillJob.Rate = true, 300, 32, 0
	totals, err := f.Stream(fctx, func(i int) stress.Job { return fillJob.Share(i, 2) }, fill.add)
	cancel()
	if err != nil {
		t.Fatalf("fill: %v", err)
	}
	for _, tot := range totals {
		if tot.Ops < 300 || tot.Errors != 0 {
			t.Fatalf("fill totals %+v: want ≥300 writes and no error", tot)
		}
	}
	if n, _, _ := fill.total(results.OpFill); n != totals[0].Ops+totals[1].Ops {
		t.Fatalf("merged fill records count %d writes, loaders reported %d+%d", n, totals[0].Ops, totals[1].Ops)
	}
	s, err := stress.NewSession(ctx, stress.SessionConfig{Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k := 0; k < 600; k++ {
		var v []byte
		if err := s.Query("SELECT value FROM fleet.kv WHERE key = ?", k).Scan(&v); err != nil || len(v) != 200 {
			t.Fatalf("key %d after the fleet fill: %v (%d bytes)", k, err, len(v))
		}
	}

	// A fixed rate shared by the two: 150 ops/s each for 6 s.
	var run sinkRecs
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	runJob := common
	runJob.Rate, runJob.Duration, runJob.Keys = 300, 6*time.Second, 600
	totals, err = f.Stream(rctx, func(i int) stress.Job {
		j := runJob.Share(i, 2)
		j.Source = "loader-" + strconv.Itoa(i+1)
		return j
	}, run.add)
	cancel()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	w, we, wd := run.total(results.OpWrite)
	r, re, rd := run.total(results.OpRead)
	all := totals[0].Ops + totals[1].Ops
	if w+r != all || we+re != 0 || wd+rd != 0 {
		t.Fatalf("merged: %d writes + %d reads (errors %d, dropped %d), loaders reported %d ok", w, r, we+re, wd+rd, all)
	}
	if all < 1600 || all > 1900 { // 2 × 150/s × 6 s = 1800
		t.Fatalf("the fleet did %d ops, want about 1800", all)
	}
	seen := map[string]bool{}
	for _, rec := range run.recs {
		key := rec.Start.String() + rec.Op
		if seen[key] {
			t.Fatalf("interval %v %s merged twice", rec.Start, rec.Op)
		}
		seen[key] = true
		h, err := results.DecodeHDR(rec.ResponseHDR)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Source != "merged" || h.TotalCount() != rec.Count+countErrors(rec) {
			t.Fatalf("record %v %s: source %q, histogram %d values for %d ops", rec.Start, rec.Op, rec.Source, h.TotalCount(), rec.Count)
		}
	}
	// Each loader's own records are kept beside the merged stream.
	for i, tot := range totals {
		var n int64
		err := results.ReadJSONL(filepath.Join(dir, "loaders", tot.Loader+".jsonl"), func(_ int, r *results.LatencyRecord) error {
			if r.Op != results.OpFill {
				n += r.Count
			}
			return nil
		})
		if err != nil || n != tot.Ops {
			t.Fatalf("loader %d file: %v, %d ops vs %d reported", i+1, err, n, tot.Ops)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "loaders", "loader-1.log")); err != nil || !strings.Contains(string(b), "summary") && !strings.Contains(string(b), "ops") {
		t.Fatalf("loader-1.log: %v\n%s", err, b)
	}

	// Until interrupted: ctx ending stops the loaders, and their last
	// intervals still arrive.
	var open sinkRecs
	ictx, cancel := context.WithCancel(ctx)
	time.AfterFunc(4*time.Second, cancel)
	start := time.Now()
	openJob := common
	openJob.WriteRatio, openJob.ReadRatio, openJob.Rate, openJob.Duration, openJob.Keys = 1, 0, 200, 0, 600
	totals, err = f.Stream(ictx, func(i int) stress.Job { return openJob.Share(i, 2) }, open.add)
	if err != nil {
		t.Fatalf("interrupted stream: %v", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("interrupted loaders took %s to stop", took)
	}
	if n, _, _ := open.total(results.OpWrite); n < 500 || n != totals[0].Ops+totals[1].Ops {
		t.Fatalf("interrupted after 4 s at 2×100/s: %d merged writes, loaders %+v", n, totals)
	}

	// Calibration runs on both at once.
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	calJob := common
	calJob.Keys, calJob.CalibrateCeiling, calJob.CalibrateStep = 600, 200*time.Millisecond, time.Second
	cals, err := f.Calibrate(cctx, func(i int) stress.Job { return calJob })
	cancel()
	if err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	for i, c := range cals {
		if c.MaxOpsPerSec <= 0 || len(c.Steps) == 0 {
			t.Fatalf("loader %d calibration: %+v", i+1, c)
		}
	}

	// The same over SSH, as on cloud loader machines: the binary is copied
	// to each loader, then run there with its records streamed back.
	srv1, srv2 := sshtest.Start(t, "127.0.10.100:0"), sshtest.Start(t, "127.0.10.101:0")
	sh, err := sshshell.New(sshshell.Options{User: "loader", Signers: []ssh.Signer{srv1.ClientSigner(), srv2.ClientSigner()}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	remote := filepath.Join(t.TempDir(), "loader-home", "elasticity")
	sf, err := fleet.New(fleet.Options{Shell: sh, Binary: bin, RemotePath: remote, Dir: t.TempDir(), Logf: t.Logf,
		Loaders: []provision.Loader{{Name: "loader-1", Address: srv1.Addr()}, {Name: "loader-2", Address: srv2.Addr()}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sf.Install(ctx); err != nil {
		t.Fatal(err)
	}
	var viaSSH sinkRecs
	sctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(4*time.Second, cancel)
	sshJob := common
	sshJob.Rate, sshJob.Duration, sshJob.Keys = 200, 0, 600
	totals, err = sf.Stream(sctx, func(i int) stress.Job { return sshJob.Share(i, 2) }, viaSSH.add)
	if err != nil {
		t.Fatalf("stream over ssh: %v", err)
	}
	w, _, _ = viaSSH.total(results.OpWrite)
	r, _, _ = viaSSH.total(results.OpRead)
	if w+r < 500 || w+r != totals[0].Ops+totals[1].Ops {
		t.Fatalf("over ssh: %d merged ops, loaders %+v", w+r, totals)
	}
	for _, srv := range []*sshtest.Server{srv1, srv2} {
		cmds := srv.Commands()
		if len(cmds) != 2 || !strings.Contains(cmds[0], "cat >") || !strings.HasPrefix(cmds[1], "exec '"+remote+"' 'stress'") {
			t.Fatalf("commands run over ssh: %q", cmds)
		}
	}
}

func countErrors(r results.LatencyRecord) int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// A loader that cannot run is an error that names it; the others are stopped.
func TestFleetLoaderFailure(t *testing.T) {
	bin := buildElasticity(t)
	f := newFleet(t, bin, t.TempDir(), 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := f.Stream(ctx, func(i int) stress.Job {
		j := stress.DefaultJob()
		// Port 1: no CQL node, this test's or another's, is ever reached.
		j.Hosts, j.Port, j.Rate, j.WriteRatio, j.ReadRatio, j.Duration = []string{"127.0.10.250"}, 1, 10, 1, 0, time.Second
		if i == 1 {
			j.KeyStride = 0 // refused: exit status 2
		}
		return j
	}, func(results.LatencyRecord) {})
	if err == nil || !strings.Contains(err.Error(), "loader-2") || !strings.Contains(err.Error(), "status 2") {
		t.Fatalf("want an error naming loader-2 and its exit status 2, got %v", err)
	}
}
