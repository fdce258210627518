package static

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

type logs struct {
	mu sync.Mutex
	l  []string
}

func (l *logs) logf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, strings.TrimSpace(fmt.Sprintf(f, a...)))
}

func (l *logs) joined() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.l, "\n")
}

func TestCreateAndHooks(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	lg := &logs{}
	p := New(Options{
		Hosts: []Host{{Address: "10.0.0.1", Rack: "rack1"}, {Address: "10.0.0.2", Rack: "rack2"}, {Address: "10.0.0.3"}},
		AddHook: Hook{Command: []string{"sh", "-c", `echo "RUN_ID=$RUN_ID NODE_RACK=$NODE_RACK INSTANCE_TYPE=$INSTANCE_TYPE SEEDS=$SEEDS EXTRA=$EXTRA" >> ` + envFile + `; echo provisioning; echo "NODE_ADDRESS=10.0.1.$NODE_NAME"`},
			Env: map[string]string{"EXTRA": "x"}},
		RemoveHook: Hook{Command: []string{"sh", "-c", `echo "removed $NODE_NAME $NODE_ADDRESS" >> ` + envFile}},
		Logf:       lg.logf,
	})
	ctx := context.Background()
	nodes, err := p.Create(ctx, provision.ClusterSpec{RunID: "run-7", Dir: dir, DC: "dc1", Racks: []string{"rack1", "rack2", "rack3"}, InstanceType: "i4i.large"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[2].Name != "node-3" || nodes[2].Rack != "rack1" || nodes[0].RESTPort != 10000 || nodes[1].InstanceType != "i4i.large" {
		t.Fatalf("nodes = %+v", nodes)
	}
	added, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "rack2", InstanceType: "i4i.4xlarge"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || added[0].Address != "10.0.1.node-4" || added[0].Rack != "rack2" {
		t.Fatalf("added = %+v", added)
	}
	if err := p.RemoveNode(ctx, added[0]); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(envFile)
	want := "RUN_ID=run-7 NODE_RACK=rack2 INSTANCE_TYPE=i4i.4xlarge SEEDS=10.0.0.1,10.0.0.2,10.0.0.3 EXTRA=x\nremoved node-4 10.0.1.node-4\n"
	if string(b) != want {
		t.Fatalf("hook saw:\n%s\nwant:\n%s", b, want)
	}
	if !strings.Contains(lg.joined(), "add hook node-4 | provisioning") {
		t.Fatalf("hook output not logged:\n%s", lg.joined())
	}
	if hl, _ := os.ReadFile(filepath.Join(dir, "logs", "hooks.log")); !strings.Contains(string(hl), "add hook for node-4") || !strings.Contains(string(hl), "NODE_ADDRESS=10.0.1.node-4") {
		t.Fatalf("hooks.log:\n%s", hl)
	}
	if err := p.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestUnsupportedAndFailures(t *testing.T) {
	p := New(Options{Hosts: []Host{{Address: "10.0.0.1"}},
		StopHook: Hook{Command: []string{"sh", "-c", "echo boom >&2; exit 3"}},
		KillHook: Hook{Command: []string{"sleep", "10"}, Timeout: 200 * time.Millisecond},
	})
	ctx := context.Background()
	nodes, err := p.Create(ctx, provision.ClusterSpec{InstanceType: "i4i.large"})
	if err != nil {
		t.Fatal(err)
	}
	n := nodes[0]
	for name, err := range map[string]error{
		"AddNodes": func() error { _, err := p.AddNodes(ctx, []provision.NodeSpec{{Rack: "r"}}); return err }(),
		"Start":    p.StartNode(ctx, n),
		"Logs":     func() error { _, err := p.Logs(ctx, n); return err }(),
	} {
		if !errors.Is(err, ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", name, err)
		}
	}
	if err := p.StopNode(ctx, n); err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("StopNode = %v", err)
	}
	start := time.Now()
	if err := p.KillNode(ctx, n); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("KillNode = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("timeout took %s", d)
	}
	if err := p.RemoveNode(ctx, n); err != nil {
		t.Fatalf("RemoveNode without hook: %v", err)
	}
	if _, err := New(Options{}).Create(ctx, provision.ClusterSpec{}); err == nil {
		t.Fatal("no hosts accepted")
	}
}

func TestParseAddress(t *testing.T) {
	for in, want := range map[string]string{
		"starting\n10.1.2.3\n":             "10.1.2.3",
		"NODE_ADDRESS=10.9.9.9\nok done\n": "10.9.9.9",
		"10.1.2.3:9042":                    "10.1.2.3",
		"host-a.internal\n":                "host-a.internal",
		"done with it":                     "",
		"":                                 "",
	} {
		if got := parseAddress(in); got != want {
			t.Errorf("parseAddress(%q) = %q, want %q", in, got, want)
		}
	}
}
