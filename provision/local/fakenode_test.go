package local

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/fakescylla"
	"github.com/elasticity-dev/elasticity/emulator"
)

// The test binary doubles as a fake node when this variable is set: it
// serves the REST API, metrics and CQL OPTIONS of one node, writes a
// ScyllaDB-format log and starts a child process (to check that process
// groups are cleaned up).
const fakeNodeEnv = "ELASTICITY_LOCAL_FAKE_NODE"

// With this variable set the test binary runs the real emulated node
// (emulator.Main), for the integration test.
const emulatorNodeEnv = "ELASTICITY_LOCAL_EMULATOR_NODE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeNodeEnv) == "1" {
		os.Exit(fakeNode(os.Args[1:]))
	}
	if os.Getenv(emulatorNodeEnv) == "1" {
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "node" {
			args = args[1:]
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := emulator.Main(ctx, args, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func logLine(f *os.File, level, msg string) {
	fmt.Fprintf(f, "%-5s %s [shard 0:main] %s\n", level, time.Now().Format("2006-01-02 15:04:05,000"), msg)
}

func fakeNode(args []string) int {
	if len(args) == 0 || args[0] != "node" {
		fmt.Fprintln(os.Stderr, "fake node: want the node subcommand, got", args)
		return 2
	}
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	str := map[string]*string{}
	for _, name := range []string{"listen-address", "data-dir", "cluster-name", "dc", "rack", "instance-type", "vcpus", "memory-gb",
		"disk-gb", "seeds", "log-file", "cql-port", "rest-port", "metrics-port", "internode-port", "storage-scale-mib-per-gb",
		"ops-per-vcpu", "stream-mib-per-vcpu", "blocked-reactor-notify-ms", "fail-startup", "slow-factor", "time-scale", "version"} {
		str[name] = fs.String(name, "", "")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	logf, err := os.OpenFile(*str["log-file"], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	logLine(logf, "INFO", "init - starting fake node "+*str["listen-address"]+" rack "+*str["rack"]+" vcpus "+*str["vcpus"]+" disk-gb "+*str["disk-gb"]+" seeds "+*str["seeds"]+" version "+*str["version"])
	if msg := *str["fail-startup"]; msg != "" {
		logLine(logf, "ERROR", "init - Startup failed: std::runtime_error ("+msg+")")
		return 1
	}
	term := make(chan os.Signal, 1)
	if os.Getenv("FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	child := exec.Command("sleep", "300")
	if err := child.Start(); err == nil {
		os.WriteFile(filepath.Join(*str["data-dir"], "child.pid"), []byte(strconv.Itoa(child.Process.Pid)), 0o644)
	}
	port := func(s string) int { n, _ := strconv.Atoi(*str[s]); return n }
	fc := fakescylla.New()
	addr := *str["listen-address"]
	if err := fc.Start(addr, fakescylla.Ports{REST: port("rest-port"), Metrics: port("metrics-port"), CQL: port("cql-port")}, nil); err != nil {
		logLine(logf, "ERROR", "init - Startup failed: "+err.Error())
		return 1
	}
	logLine(logf, "INFO", "init - serving")
	logLine(logf, "WARN", "seastar - Reactor stalled for 30 ms on shard 0. Backtrace: 0x1")
	<-term
	logLine(logf, "INFO", "init - shutting down on SIGTERM")
	fc.Close()
	if child.Process != nil {
		child.Process.Kill()
	}
	return 0
}
