package stress

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/provision/local"
	"github.com/elasticity-dev/elasticity/results"
)

var acceptanceEmulator = flag.Bool("acceptance-emulator", false, "run TestAcceptanceEmulator (builds elasticity, starts 3 emulated nodes; ~2 min)")

// TestAcceptanceEmulator is the acceptance against a local emulated cluster
// (three `elasticity node` processes, RF 3, QUORUM): 2,000 ops/s for 30 s
// within 1%, then one node SIGSTOPped for 2 s mid-run.
//
//	go test -run TestAcceptanceEmulator -v -timeout 10m ./stress/ -args -acceptance-emulator
func TestAcceptanceEmulator(t *testing.T) {
	if !*acceptanceEmulator {
		t.Skip("needs -acceptance-emulator")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "elasticity")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", bin, "./cmd/elasticity")
	build.Dir = filepath.Join(filepath.Dir(file), "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building elasticity: %v\n%s", err, out)
	}
	p := local.New(local.Options{Binary: bin, BaseAddress: "127.0.3.31", Logf: t.Logf})
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	nodes, err := p.Create(cctx, provision.ClusterSpec{RunID: "stress-acceptance", Scenario: "stress", Dir: filepath.Join(dir, "run"),
		ClusterName: "stress", Flavour: "scylla", DC: "datacenter1", Racks: []string{"rack1"}, NodesPerRack: 3, InstanceType: "i4i.2xlarge"})
	cancel()
	t.Cleanup(func() {
		dctx, c := context.WithTimeout(context.Background(), time.Minute)
		defer c()
		_ = p.Destroy(dctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, n := range nodes {
		hosts = append(hosts, n.Address)
	}
	// Nodes start serving CQL once they have joined: retry until all three are seen.
	var s *gocql.Session
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err = NewSession(sctx, SessionConfig{Hosts: hosts, Port: nodes[0].CQLPort})
		cancel()
		if err == nil {
			var peers int
			iter := s.Query("SELECT peer FROM system.peers").Iter()
			for var_ := ""; iter.Scan(&var_); {
				peers++
			}
			_ = iter.Close()
			if peers == len(nodes)-1 {
				break
			}
			s.Close()
			err = fmt.Errorf("%d peers", peers)
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ready: %v", err)
		}
		time.Sleep(time.Second)
	}
	defer s.Close()
	if err := CreateSchema(ctx, s, Schema{Keyspace: "ks", Table: "kv", RF: 3}); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, 3*time.Second)
	keys, err := RunFill(fctx, s, Fill{Keyspace: "ks", Table: "kv", ValueSize: 200}, nil, nil, nil)
	fcancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("filled %d keys", keys)
	w := Workload{Keyspace: "ks", Table: "kv", WriteRatio: 1, ReadRatio: 1, Rate: 2000, Concurrency: 64,
		KeyCount: keys, ValueMin: 200, Warn: func(m string) { t.Log(m) }}

	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	sum, err := Run(rctx, s, w, nil)
	rcancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean run: %.2f s, intended %d, succeeded %d, errors %d %v, dropped %d, late %d, misses %d",
		sum.End.Sub(sum.Start).Seconds(), sum.Intended, sum.Succeeded, sum.Errors, sum.Ops[0].Errors, sum.Dropped, sum.Late, sum.ReadMisses)
	for _, o := range sum.Ops {
		t.Logf("  %s response %+v", o.Op, o.Response)
		t.Logf("  %s service  %+v", o.Op, o.Service)
	}
	if r := float64(sum.Succeeded) / 30; r < 1980 || r > 2020 {
		t.Errorf("achieved %.1f ops/s over 30 s, want 2000 within 1%%", r)
	}

	var recs []results.LatencyRecord
	rctx, rcancel = context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	var stopAt, contAt time.Time
	go func() {
		time.Sleep(10 * time.Second)
		stopAt = time.Now()
		if err := p.PauseNode(ctx, nodes[1]); err != nil {
			t.Error(err)
		}
		time.Sleep(2 * time.Second)
		if err := p.ResumeNode(ctx, nodes[1]); err != nil {
			t.Error(err)
		}
		contAt = time.Now()
	}()
	sum, err = Run(rctx, s, w, func(r results.LatencyRecord) { recs = append(recs, r) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stall run: intended %d = succeeded %d + errors %d (%v %v) + dropped %d; late %d",
		sum.Intended, sum.Succeeded, sum.Errors, sum.Ops[0].Errors, sum.Ops[1].Errors, sum.Dropped, sum.Late)
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
		r, sv := results.SummarizeHDR(x.w.Response), results.SummarizeHDR(x.w.Service)
		t.Logf("%-16s %2d records, %6d ok: response p50 %7.2f p99 %8.2f max %8.2f ms | service p50 %6.2f p99 %6.2f p99.9 %8.2f max %8.2f ms",
			x.name, x.w.Intervals, x.w.Count, r.P50, r.P99, r.Max, sv.P50, sv.P99, sv.P999, sv.Max)
	}
	rp, sp := results.SummarizeHDR(win.Response).P99, results.SummarizeHDR(win.Service).P99
	if rp < 500 || rp < 3*sp {
		t.Errorf("stall window response p99 %.1f ms does not show a 2 s stall (service p99 %.1f ms)", rp, sp)
	}
}
