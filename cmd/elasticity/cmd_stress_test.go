package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

func runStressCLI(t *testing.T, ctx context.Context, args ...string) (ExitCode, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	code := runCLI(ctx, e, append([]string{"stress"}, args...))
	return code, out.String(), errb.String()
}

func TestStressInvalidInput(t *testing.T) {
	cases := map[string][]string{
		"--hosts is required":       {},
		"--rate":                    {"--hosts", "127.0.3.1", "--rate", "fast"},
		"unknown operation":         {"--hosts", "127.0.3.1", "--mix", "scan=1"},
		"weights sum to zero":       {"--hosts", "127.0.3.1", "--mix", "write=0,read=0"},
		"--cl-write":                {"--hosts", "127.0.3.1", "--cl-write", "MOST"},
		"unknown key distribution":  {"--hosts", "127.0.3.1", "--distribution", "zipf"},
		"--value-size":              {"--hosts", "127.0.3.1", "--value-size", "4KiB..1KiB"},
		"--prefill needs":           {"--hosts", "127.0.3.1", "--prefill", "--keys", "0"},
		"--load-percent needs":      {"--hosts", "127.0.3.1", "--load-percent", "70"},
		"not a valid CQL":           {"--hosts", "127.0.3.1", "--create-schema", "--keyspace", "a-b"},
		"unknown flag":              {"--hosts", "127.0.3.1", "--bogus"},
		"--calibrate-only needs":    {"--hosts", "127.0.3.1", "--calibrate-only"},
		"--fill cannot be combined": {"--hosts", "127.0.3.1", "--fill", "--prefill"},
		"--key-stride must":         {"--hosts", "127.0.3.1", "--fill", "--key-stride", "0"},
		"--start-key must":          {"--hosts", "127.0.3.1", "--fill", "--start-key", "-5"},
		`unknown form "nosuch"`:     {"--hosts", "127.0.3.1", "--model", "nosuch:x"},
		"-foo":                      {"--hosts", "127.0.3.1", "--model", "cs:cassandra-stress write -foo"},
		"--calibrate-start-concurrency -2: must not be negative": {"--hosts", "127.0.3.1", "--calibrate-ceiling", "10ms", "--calibrate-only", "--calibrate-start-concurrency", "-2"},
	}
	for want, args := range cases {
		code, _, stderr := runStressCLI(t, context.Background(), args...)
		if code != ExitInvalid || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", args, code, stderr, want)
		}
	}
}

func TestStressUnreachableClusterIsARunError(t *testing.T) {
	code, _, stderr := runStressCLI(t, context.Background(), "--hosts", "127.0.3.1", "--port", "1", "--duration", "1s", "--timeout", "500ms")
	if code != ExitRunError || !strings.Contains(stderr, "connecting to CQL hosts") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestStressAgainstInMemoryNode(t *testing.T) {
	hp := enginetest.StartServer(t, "127.0.3.3:0", enginetest.NewMemory("cli"))
	host, port, _ := net.SplitHostPort(hp)
	out := filepath.Join(t.TempDir(), "latency.jsonl")
	code, stdout, stderr := runStressCLI(t, context.Background(), "--hosts", host, "--port", port, "--create-schema", "--rf", "1",
		"--prefill", "--keys", "500", "--mix", "write=1,read=3", "--rate", "400/s", "--duration", "2s", "--interval", "500ms",
		"--value-size", "64..256", "--distribution", "gaussian", "--cl-write", "ONE", "--cl-read", "one", "--out", out,
		"--summary-json", filepath.Join(filepath.Dir(out), "summary.json"))
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if code != ExitPassed {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"schema elasticity.kv ready", "prefill: 500/500 keys", "p99 ms", "Summary: ", "intended ", "response", "service"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "reads of missing keys") {
		t.Errorf("reads missed prefilled keys:\n%s", stdout)
	}
	var sum struct {
		Intended  int64 `json:"intended"`
		Succeeded int64 `json:"succeeded"`
		Ops       []struct {
			Op string `json:"op"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(filepath.Dir(out), "summary.json"))), &sum); err != nil || sum.Intended < 700 || sum.Intended != sum.Succeeded || len(sum.Ops) != 2 {
		t.Fatalf("summary.json: %+v %v", sum, err)
	}
	ops := map[string]int64{}
	if err := results.ReadJSONL(out, func(_ int, r *results.LatencyRecord) error { ops[r.Op] += r.Count; return nil }); err != nil {
		t.Fatal(err)
	}
	if ops[results.OpFill] < 500 || ops[results.OpRead] < 400 || ops[results.OpWrite] < 100 {
		t.Fatalf("records: %v", ops)
	}
	// A corrupt line is an error naming the line.
	f, _ := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("{not json}\n")
	_ = f.Close()
	err := results.ReadJSONL(out, func(int, *results.LatencyRecord) error { return nil })
	var le *results.LineError
	if !errors.As(err, &le) || le.Line != len(strings.Split(strings.TrimSpace(readFile(t, out)), "\n")) {
		t.Fatalf("corrupt last line: %v", err)
	}
}

// --model runs a registered form's model (a cassandra-stress command line):
// its schema, its prefill and its operations, records named by operation.
func TestStressModelAgainstInMemoryNode(t *testing.T) {
	hp := enginetest.StartServer(t, "127.0.3.3:0", enginetest.NewMemory("cli"))
	host, port, _ := net.SplitHostPort(hp)
	out := filepath.Join(t.TempDir(), "latency.jsonl")
	code, stdout, stderr := runStressCLI(t, context.Background(), "--hosts", host, "--port", port, "--create-schema", "--rf", "1",
		"--model", "cs:cassandra-stress mixed ratio(write=1,read=3) cl=ONE -col size=FIXED(64) n=FIXED(2)",
		"--prefill", "--keys", "200", "--rate", "300/s", "--duration", "2s", "--interval", "500ms", "--out", out)
	if code != ExitPassed {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"schema keyspace1.standard1 ready", "cassandra-stress mixed on keyspace1.standard1: write (write, 25%, CL ONE), read (read, 75%, CL ONE)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	ops := map[string]int64{}
	if err := results.ReadJSONL(out, func(_ int, r *results.LatencyRecord) error { ops[r.Op+"/"+r.OpClass()] += r.Count; return nil }); err != nil {
		t.Fatal(err)
	}
	if ops["fill/fill"] < 200 || ops["read/read"] < 200 || ops["write/write"] < 50 || len(ops) != 3 {
		t.Fatalf("records: %v", ops)
	}
}

// --fill with a stride writes every stride'th key; --out - puts the records
// on standard output (one JSON line each) and the console on standard error.
func TestStressFillStrideToStdout(t *testing.T) {
	mem := enginetest.NewMemory("cli")
	hp := enginetest.StartServer(t, "127.0.3.4:0", mem)
	host, port, _ := net.SplitHostPort(hp)
	code, stdout, stderr := runStressCLI(t, context.Background(), "--hosts", host, "--port", port, "--create-schema", "--rf", "1",
		"--fill", "--start-key", "1", "--key-stride", "3", "--keys", "200", "--value-size", "32", "--out", "-", "--source", "loader-7")
	if code != ExitPassed {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "keys written of") || !strings.Contains(stderr, "stride 3), closed loop") {
		t.Fatalf("stderr lacks the fill summary:\n%s", stderr)
	}
	var n int64
	err := results.DecodeJSONL(strings.NewReader(stdout), "stdout", func(_ int, r *results.LatencyRecord) error {
		if r.Op != results.OpFill || r.Source != "loader-7" || r.ResponseHDR == "" {
			return fmt.Errorf("record %+v", r)
		}
		n += r.Count
		return nil
	})
	if err != nil || n < 200 {
		t.Fatalf("stdout records: %v, %d writes\n%s", err, n, stdout)
	}
	sess, err := stress.NewSession(context.Background(), stress.SessionConfig{Hosts: []string{hp}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for k := int64(0); k < 30; k++ {
		var v []byte
		err := sess.Query("SELECT value FROM elasticity.kv WHERE key = ?", k).Scan(&v)
		if want := k%3 == 1; (err == nil) != want {
			t.Fatalf("key %d: found %v, want %v (stride 3 from 1)", k, err == nil, want)
		}
	}
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStressInterruptedPrintsSummary(t *testing.T) {
	hp := enginetest.StartServer(t, "127.0.3.4:0", enginetest.NewMemory("cli"))
	host, port, _ := net.SplitHostPort(hp)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(1500 * time.Millisecond); cancel() }()
	code, stdout, stderr := runStressCLI(t, ctx, "--hosts", host, "--port", port, "--create-schema", "--rf", "1",
		"--keys", "0", "--rate", "200/s", "--duration", "30s")
	if code != ExitInterrupted || !strings.Contains(stdout, "Summary: ") || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
