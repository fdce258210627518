package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The floor under a node's CQL exchange at a given rate (issue 45 item 1):
// the CPU that a process which only answers spends per request when 1 KiB
// requests arrive at that rate over loopback TCP, sleeping between them as
// a node does at a few thousand operations per second. No node can answer
// for less on this machine without spinning; what the node costs above it
// is the data path (CQL, coordination, replicas, stores). Measured in the
// same run as the nodes, so the two are compared side by side.

// answerEnv makes the test binary such a process: it listens on the
// address the variable holds, prints "ready ADDR" and answers each 1 KiB
// request with 1 KiB until killed.
const answerEnv = "ELASTICITY_LOCALCLUSTER_TEST_ANSWER"

// answerConns is how many connections carry the requests: about what the
// benchmark's driver session opens to three nodes.
const answerConns = 16

func serveAnswers(addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "answering on %s: %v\n", addr, err)
		return 1
	}
	fmt.Printf("ready %s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		go answerEach(c)
	}
}

// answerEach answers each 1 KiB request on c with 1 KiB until c fails,
// then closes it.
func answerEach(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 1024)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}

// answerFloorCPU is the answering process's CPU per request at rate for d,
// in µs, with the nodes' extra environment (BENCH_EMU_NODE_ENV), so a
// runtime setting compared on the nodes applies to their floor too.
func answerFloorCPU(ctx context.Context, b *testing.B, env []string, rate int, d time.Duration) float64 {
	exe, err := os.Executable()
	if err != nil {
		b.Fatalf("finding the test binary: %v", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(append(os.Environ(), answerEnv+"=127.0.0.26:0"), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatalf("starting the answering process: %v", err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting the answering process: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if err != nil || !ok {
		b.Fatalf("the answering process did not say it was ready (%q): %v", line, err)
	}
	pool := make(chan net.Conn, answerConns)
	for range answerConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatalf("connecting to the answering process at %s: %v", addr, err)
		}
		defer c.Close()
		pool <- c
	}
	req := make([]byte, 1024)
	ask := func(int64) error {
		c := <-pool
		defer func() { pool <- c }()
		buf := make([]byte, 1024)
		if _, err := c.Write(req); err != nil {
			return err
		}
		_, err := io.ReadFull(c, buf)
		return err
	}
	drive(ctx, rate, time.Second, ask) // warm-up, as the nodes get
	cpu0 := processCPU(b, cmd.Process.Pid)
	lat, failed := drive(ctx, rate, d, ask)
	cpu := processCPU(b, cmd.Process.Pid) - cpu0
	if failed > 0 || len(lat) == 0 {
		b.Fatalf("the answering process: %d of %d requests failed", failed, failed+len(lat))
	}
	return us(cpu) / float64(len(lat))
}
