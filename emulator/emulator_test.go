package emulator

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/localcluster"
)

// api_address moves the REST API off the listen address, as scylla.yaml's
// api_address does (conf/scylla.yaml ships api_address: 127.0.0.1): REST
// answers there and the listen address refuses the port.
func TestAPIAddressMovesREST(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := DefaultConfig()
	c.ListenAddress, c.APIAddress, c.DataDir = "127.0.77.1", "127.0.77.2", t.TempDir()
	c.Stderr = io.Discard
	// The test probes these addresses: another process on them would answer.
	if busy, err := localcluster.Busy("127.0.77.1", 2, []int{c.CQLPort, c.RESTPort, c.MetricsPort, c.InternodePort, c.NodeExporterPort}); err != nil || busy != "" {
		t.Fatalf("this test's addresses 127.0.77.1-2 are not free: %q in use (%v)", busy, err)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	var body string
	for {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("the node stopped before answering: %v", err)
		default:
		}
		resp, err := http.Get("http://127.0.77.2:10000/storage_service/operation_mode")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, "NORMAL") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("REST at the api address never answered NORMAL: %v %q", err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err := net.DialTimeout("tcp", "127.0.77.1:10000", time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("REST at the listen address: got %v, want connection refused", err)
	}
	// CQL still listens on the listen address (it opens after the join).
	for {
		cn, err := net.DialTimeout("tcp", "127.0.77.1:9042", time.Second)
		if err == nil {
			cn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CQL at the listen address: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestAPIAddressMustBeAnIP(t *testing.T) {
	c := DefaultConfig()
	c.DataDir, c.APIAddress, c.Stderr = t.TempDir(), "localhost", io.Discard
	if err := Run(context.Background(), c); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--api-address") {
		t.Fatalf("got %v, want an invalid --api-address error", err)
	}
}

// --inject-error logs its message as a ScyllaDB ERROR line after startup,
// in the format the framework's log watcher reads (scyllalog.Format).
func TestInjectErrorLogsAnErrorLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := DefaultConfig()
	c.ListenAddress, c.DataDir = "127.0.77.3", t.TempDir()
	c.NodeExporterPort = 0
	c.InjectError = "200ms:compaction - Compaction failed: injected"
	w := &syncBuf{}
	c.Stderr = w
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node: %v", err)
		}
	}()
	re := regexp.MustCompile(`(?m)^ERROR \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[shard 0:main\] compaction - Compaction failed: injected$`)
	deadline := time.Now().Add(20 * time.Second)
	for !re.MatchString(w.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no injected ERROR line in the log:\n%s", w.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	log := w.String()
	if strings.Index(log, "initialization completed") > strings.Index(log, "Compaction failed") {
		t.Fatalf("the error came before startup completed:\n%s", log)
	}
}

func TestInjectErrorMustBeAfterColonMessage(t *testing.T) {
	for _, v := range []string{"3s", "soon:boom", "3s:", "-1s:x"} {
		c := DefaultConfig()
		c.DataDir, c.InjectError, c.Stderr = t.TempDir(), v, io.Discard
		if err := Run(context.Background(), c); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--inject-error") {
			t.Errorf("%q: got %v, want an invalid --inject-error error", v, err)
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A node prints its command line as ScyllaDB does as it starts (scylladb
// main.cc print_starting_message: raw lines, before anything can fail), so
// a reader of its log sees the stall threshold it really runs with.
func TestStartingMessageShowsTheCommandLine(t *testing.T) {
	var out bytes.Buffer
	code := Main(context.Background(), []string{"--fail-startup", "injected", "--blocked-reactor-notify-ms", "40"}, &out)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (startup failed):\n%s", code, out.String())
	}
	for _, re := range []string{
		`(?m)^Scylla version \S+ with build-id 0 starting \.\.\.$`,
		`(?m)^command used: "\S+ node --fail-startup injected --blocked-reactor-notify-ms 40"$`,
		`(?m)^pid: \d+$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("no line matching %s in:\n%s", re, out.String())
		}
	}
}

// init.cc: --enable-user-defined-functions alone fails the start; db/config.cc
// experimental_features_t::map names the features that exist.
func TestUDFNeedsExperimentalFeature(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--enable-user-defined-functions=1"}, "You must use both enable_user_defined_functions and experimental_features:udf"},
		{[]string{"--experimental-features=udf,nosuch"}, `--experimental-features: invalid value "nosuch"`},
	} {
		c := DefaultConfig()
		if err := Flags(&c).Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		c.DataDir, c.Stderr = t.TempDir(), io.Discard
		if err := Run(context.Background(), c); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
	c := DefaultConfig()
	if err := Flags(&c).Parse([]string{"--enable-user-defined-functions=1", "--experimental-features=lwt", "--experimental-features", "udf"}); err != nil {
		t.Fatal(err)
	}
	if errs := experimentalErrors(&c); len(errs) != 0 || !c.EnableUDF {
		t.Fatalf("repeated --experimental-features: %v (enabled %v)", errs, c.EnableUDF)
	}
}
